"""Compute RPC client (topic ``compute``, server = host). Messages carry ids and small dicts;
the receiving host re-reads the instance from the database.

1.0 - build_and_run_instance, terminate_instance, power actions, rebuild, resize,
      snapshot, console output, external events, interface attach/detach
1.1 - attach_volume, detach_volume
1.2 - cache_images
1.3 - rebuild_instance(reimage_boot_volume)
"""
from pocketstack.common import rpc


class ComputeAPI:
    _client = None

    @property
    def client(self):
        self._client = rpc.current_client(self._client, "compute")
        return self._client

    def _host(self, host: str, timeout: float | None = None):
        return self.client.prepare(server=host, timeout=timeout)

    def build_and_run_instance(self, ctx, host: str, instance_uuid: str, attempt: int,
                               node: str | None = None) -> None:
        self._host(host).cast(ctx, "build_and_run_instance", instance_uuid=instance_uuid,
                              attempt=attempt, node=node)

    def terminate_instance(self, ctx, host: str, instance_uuid: str) -> None:
        self._host(host).cast(ctx, "terminate_instance", instance_uuid=instance_uuid)

    def power_action(self, ctx, host: str, instance_uuid: str, action: str, **kwargs) -> None:
        self._host(host).cast(ctx, "power_action", instance_uuid=instance_uuid, action=action,
                              **kwargs)

    def rebuild_instance(self, ctx, host: str, instance_uuid: str, image_ref: str,
                         reimage_boot_volume: bool = False) -> None:
        kwargs = {"reimage_boot_volume": True} if reimage_boot_volume else {}
        self._host(host).cast(ctx, "rebuild_instance", instance_uuid=instance_uuid,
                              image_ref=image_ref, **kwargs)

    def resize_instance(self, ctx, host: str, instance_uuid: str, migration: dict) -> None:
        self._host(host).cast(ctx, "resize_instance", instance_uuid=instance_uuid,
                              migration=migration)

    def finish_resize_decision(self, ctx, host: str, instance_uuid: str, confirm: bool) -> None:
        self._host(host).cast(ctx, "finish_resize_decision", instance_uuid=instance_uuid,
                              confirm=confirm)

    def snapshot_instance(self, ctx, host: str, instance_uuid: str, image_id: str) -> None:
        self._host(host).cast(ctx, "snapshot_instance", instance_uuid=instance_uuid,
                              image_id=image_id)

    def get_console_output(self, ctx, host: str, instance_uuid: str) -> str:
        return self._host(host, timeout=10).call(ctx, "get_console_output",
                                                 instance_uuid=instance_uuid)

    def cache_images(self, ctx, host: str, image_ids: list[str]) -> None:
        self._host(host).cast(ctx, "cache_images", image_ids=image_ids)

    def external_instance_event(self, ctx, host: str, events: list[dict]) -> None:
        self._host(host).cast(ctx, "external_instance_event", events=events)

    def attach_interface(self, ctx, host: str, instance_uuid: str, request: dict) -> dict:
        return self._host(host, timeout=60).call(ctx, "attach_interface",
                                                 instance_uuid=instance_uuid, request=request)

    def attach_volume(self, ctx, host: str, instance_uuid: str, bdm_uuid: str) -> None:
        self._host(host, timeout=120).call(ctx, "attach_volume", instance_uuid=instance_uuid,
                                           bdm_uuid=bdm_uuid)

    def detach_volume(self, ctx, host: str, instance_uuid: str, volume_id: str) -> None:
        self._host(host, timeout=120).call(ctx, "detach_volume", instance_uuid=instance_uuid,
                                           volume_id=volume_id)

    def detach_interface(self, ctx, host: str, instance_uuid: str, port_id: str) -> None:
        self._host(host, timeout=60).call(ctx, "detach_interface", instance_uuid=instance_uuid,
                                          port_id=port_id)
