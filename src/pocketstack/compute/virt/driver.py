"""The hypervisor driver interface the compute manager calls (nova's ComputeDriver, cut
to what pocketstack uses). Drivers get plain dicts, never ORM rows."""
from __future__ import annotations


class ComputeDriver:
    def init_host(self, host: str, instances: list[dict]) -> None:
        """Start-up: adopt the guests this host should be running."""

    def cache_image(self, ctx, image_meta: dict, cache_dir: str) -> bool:
        """Seed steps 19-21: bring the image's data onto this host (``cache_dir`` is the
        manager's per-host cache); returns whether it was there already. This default
        keeps one file per image id; the libvirt driver verifies hashes and fetches
        kernel and ramdisk too."""
        import os

        from pocketstack.compute.clients.image import ImageClient

        path = os.path.join(cache_dir, image_meta["id"])
        if os.path.exists(path):
            return True
        ImageClient(ctx).download(image_meta["id"], path)
        return False

    def resources(self) -> dict:
        """{"vcpus", "memory_mb", "local_gb", "hypervisor_type", "hypervisor_version"}"""
        raise NotImplementedError

    def spawn(self, instance: dict, image_meta: dict, network_info: list,
              block_device_info: dict | None) -> None:
        raise NotImplementedError

    def destroy(self, instance: dict) -> None:
        raise NotImplementedError

    def power_off(self, instance: dict) -> None:
        raise NotImplementedError

    def power_on(self, instance: dict) -> None:
        raise NotImplementedError

    def reboot(self, instance: dict, reboot_type: str) -> None:
        raise NotImplementedError

    def pause(self, instance: dict) -> None:
        raise NotImplementedError

    def unpause(self, instance: dict) -> None:
        raise NotImplementedError

    def suspend(self, instance: dict) -> None:
        raise NotImplementedError

    def resume(self, instance: dict) -> None:
        raise NotImplementedError

    def snapshot(self, instance: dict) -> bytes:
        raise NotImplementedError

    def attach_interface(self, instance: dict, vif: dict) -> None:
        """Hot-plug a port (the vif as compute/manager/network.py records it)."""
        raise NotImplementedError

    def detach_interface(self, instance: dict, vif: dict) -> None:
        raise NotImplementedError

    # resize (the instance dicts carry the flavor the step works with)
    def prep_resize(self, instance: dict) -> None:
        """On the destination, before anything moves."""

    def migrate_disk_and_power_off(self, instance: dict, new_flavor: dict) -> None:
        """On the source: stop the guest and hand its disk over (kept until confirm)."""
        raise NotImplementedError

    def finish_migration(self, instance: dict, network_info: list, power_on: bool) -> None:
        """On the destination: the guest with the new flavor."""
        raise NotImplementedError

    def confirm_migration(self, instance: dict) -> None:
        """On the source: drop what migrate_disk_and_power_off kept."""
        raise NotImplementedError

    def finish_revert_migration(self, instance: dict, network_info: list,
                                power_on: bool) -> None:
        """On the source: bring the kept guest back."""
        raise NotImplementedError

    def get_power_state(self, instance_uuid: str) -> int | None:
        """None when the guest does not exist on this host."""
        raise NotImplementedError

    def list_instance_uuids(self) -> list[str]:
        raise NotImplementedError

    def get_console_output(self, instance_uuid: str) -> str:
        raise NotImplementedError
