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

        from pocketstack.clients.image import ImageClient

        path = os.path.join(cache_dir, image_meta["id"])
        if os.path.exists(path):
            return True
        ImageClient(ctx).download(image_meta["id"], path)
        return False

    def hold_transition(self) -> None:
        """Called while a server shows a transitional status a client may poll for
        (REBOOT, REBUILD, RESIZE, MIGRATING, ...). A real hypervisor's work takes its own
        time; the simulated host waits [fake] transition_delay here."""

    def resources(self) -> dict:
        """{"vcpus", "memory_mb", "local_gb", "hypervisor_type", "hypervisor_version"}"""
        raise NotImplementedError

    def spawn(self, instance: dict, image_meta: dict, network_info: list,
              block_device_info: dict | None) -> None:
        """Create and start the guest. ``block_device_info`` is None without volumes, else
        (nova's driver format; every volume is connected before the domain is defined)::

            {"root_device_name": "/dev/vda",
             "block_device_mapping": [{"connection_info": {...}, "mount_device": "/dev/vdb",
                                       "boot_index": 0 | -1 | None,
                                       "delete_on_termination": bool,
                                       "device_type": "disk", "disk_bus": None,
                                       "volume_id": "..."}]}

        A mapping with boot_index 0 is the root disk (the server boots from a volume and
        ``image_meta`` is only the boot volume's image metadata: nothing to download).
        ``connection_info`` is ``{"driver_volume_type": "local" | "file", "data":
        {"device_path": ..., "volume_id": ..., "access_mode": "rw" | "ro"}}``: a block
        device or a raw file on this host; or ``"rbd"`` (cinder's RBD driver: ``data``
        has ``name`` pool/volume-<id>, ``hosts``, ``ports``, ``auth_username``,
        ``secret_uuid``) or ``"iscsi"`` (``target_portal``, ``target_iqn``,
        ``target_lun``), which QEMU opens itself."""
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

    def direct_snapshot(self, ctx, instance: dict, image_id: str) -> bool:
        """Give the root disk to image ``image_id`` (queued) without copying it through
        compute (an RBD clone into the image store); False: use snapshot() and upload."""
        return False

    def attach_volume(self, instance: dict, connection_info: dict, mountpoint: str) -> None:
        """Hot-plug a volume into a running (or stopped) guest at ``mountpoint``
        (/dev/vdb ...); ``connection_info`` as in spawn. Raise to fail the attach: the
        compute manager then deletes the volume's attachment."""
        raise NotImplementedError

    def detach_volume(self, instance: dict, connection_info: dict, mountpoint: str) -> None:
        """Unplug the volume at ``mountpoint``; raise to keep it attached."""
        raise NotImplementedError

    def extend_volume(self, instance: dict, connection_info: dict, mountpoint: str,
                      new_size: int) -> None:
        """The attached volume at ``mountpoint`` grew to ``new_size`` bytes: let the guest
        see it (nova's extend_volume, on the volume-extended event)."""
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
