"""Server actions on the host: stop/start/reboot/pause/suspend (and their reverses),
rebuild, resize, snapshot, console output. Each moves task_state back to None with the
new vm_state/power_state, or to ERROR with a fault when the hypervisor fails."""
from __future__ import annotations

import logging

from pocketstack.compute import hostdb, states
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)

# action -> (driver method, task_state while running, vm_state after, power_state after)
POWER_ACTIONS = {
    "stop": ("power_off", states.POWERING_OFF, states.STOPPED, states.SHUTDOWN),
    "start": ("power_on", states.POWERING_ON, states.ACTIVE, states.RUNNING),
    "reboot": ("reboot", None, states.ACTIVE, states.RUNNING),
    "pause": ("pause", states.PAUSING, states.PAUSED, states.PAUSED_POWER),
    "unpause": ("unpause", states.UNPAUSING, states.ACTIVE, states.RUNNING),
    "suspend": ("suspend", states.SUSPENDING, states.SUSPENDED, states.SUSPENDED_POWER),
    "resume": ("resume", states.RESUMING, states.ACTIVE, states.RUNNING),
}


class PowerMixin:
    def power_action(self, ctx, instance_uuid: str, action: str, reboot_type: str = "SOFT"):
        method, task, vm_after, power_after = POWER_ACTIONS[action]
        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted:
            return
        if action == "reboot":
            task = states.REBOOTING_HARD if reboot_type == "HARD" else states.REBOOTING
        step = Step(ctx, instance_uuid, f"compute_{method}_instance", "compute", self.host)
        try:
            driver_call = getattr(self.driver, method)
            if action == "reboot":
                self.driver.hold_transition()  # REBOOT / HARD_REBOOT
                driver_call(_d(inst), reboot_type)
            else:
                driver_call(_d(inst))
        except Exception as error:  # noqa: BLE001 - report on the server, not to a void
            self._action_failed(ctx, inst, task, step.fail(error), error)
            return
        self.db.call("finish_action", instance_uuid=instance_uuid, values={
            "vm_state": vm_after, "task_state": None, "power_state": power_after},
            expect_task=task, events=[hostdb.event(step.done())], request_id=ctx.request_id)

    def _action_failed(self, ctx, inst, task, step, error) -> None:
        self.db.call("finish_action", instance_uuid=inst.uuid, values={
            "vm_state": states.ERROR, "task_state": None}, expect_task=task,
            events=[hostdb.event(step)], request_id=ctx.request_id, result="Error",
            fault={"code": 500, "message": getattr(error, "message", str(error)),
                   "host": self.host})

    def rebuild_instance(self, ctx, instance_uuid: str, image_ref: str,
                         reimage_boot_volume: bool = False):
        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted:
            return
        step = Step(ctx, instance_uuid, "compute_rebuild_instance", "compute", self.host)
        try:
            self.driver.hold_transition()  # REBUILD
            self.driver.destroy(_d(inst))
            if reimage_boot_volume:
                inst = self._reimage_root_volume(ctx, inst, image_ref)
            image_meta = self._image(ctx, inst) if image_ref else {}
            self.db.call("update_instance", instance_uuid=instance_uuid,
                         values={"task_state": states.REBUILD_SPAWNING},
                         expect_task=states.REBUILDING)
            from pocketstack.compute.manager.volumes import block_device_info

            self.driver.spawn(_d(inst), image_meta, inst.network_info or [],
                              block_device_info(inst.uuid, self.db))
        except Exception as error:  # noqa: BLE001
            self._action_failed(ctx, inst, [states.REBUILDING, states.REBUILD_SPAWNING],
                                step.fail(error), error)
            return
        self.db.call("finish_action", instance_uuid=instance_uuid, values={
            "vm_state": states.ACTIVE, "task_state": None, "power_state": states.RUNNING},
            expect_task=states.REBUILD_SPAWNING, events=[hostdb.event(step.done())],
            request_id=ctx.request_id)

    def _reimage_root_volume(self, ctx, inst, image_ref: str):
        """2.93, as nova's _rebuild_volume_backed_instance: the guest is gone; the root
        volume's attachment is replaced by one that only reserves it for the server, the
        volume service writes the image over it (os-reimage) and says so with a
        volume-reimaged event, then the new attachment is connected to this host."""
        from pocketstack.clients.image import ImageClient
        from pocketstack.clients.volume import VolumeClient, connector
        from pocketstack.common import config, exceptions

        root = next((r for r in self.db.call("block_devices_of", instance_uuid=inst.uuid)
                     if r.volume_id and r.boot_index == 0), None)
        if root is None:
            raise exceptions.PocketstackError(f"Server {inst.uuid} has no root volume.")
        image = ImageClient(ctx).get(image_ref)
        if image is None:
            raise exceptions.PocketstackError(f"Image {image_ref} could not be found.")
        client = VolumeClient(ctx)
        waiter = self.events.prepare(inst.uuid)
        try:
            if root.attachment_id:
                client.attachment_delete(root.attachment_id)
            new = client.attachment_create(root.volume_id, inst.uuid)
            self.db.call("update_block_device", instance_uuid=inst.uuid, bdm_id=root.id,
                         values={"attachment_id": new["id"], "connection_info": None})
            client.reimage(root.volume_id, image_ref, reimage_reserved=True)
            size = max(int(root.volume_size or 1), 1)
            timeout = config.CONF.compute.reimage_timeout_per_gb * size
            not_done = waiter.wait({root.volume_id}, timeout)
            if not_done:
                raise exceptions.PocketstackError(
                    f"Reimaging volume {root.volume_id} failed or did not finish within "
                    f"{timeout:g}s.")
        finally:
            waiter.close()
        attachment = client.attachment_update(new["id"], connector(self.host,
                                                                   root.device_name))
        client.attachment_complete(new["id"])
        self.db.call("update_block_device", instance_uuid=inst.uuid, bdm_id=root.id,
                     values={"connection_info": attachment.get("connection_info")})
        spec = dict(inst.request_spec or {})
        spec["image"] = {k: image.get(k) for k in ("id", "name", "min_ram", "min_disk",
                                                   "size", "disk_format",
                                                   "container_format")}
        spec["image_properties"] = {k: v for k, v in image.items()
                                    if k.startswith(("hw_", "img_")) or k in (
                                        "architecture", "hypervisor_type", "vm_mode")}
        self.db.call("update_instance", instance_uuid=inst.uuid, values={"request_spec": spec})
        return self.db.call("load_instance", instance_uuid=inst.uuid)

    def snapshot_instance(self, ctx, instance_uuid: str, image_id: str):
        from pocketstack.clients.image import ImageClient

        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted:
            return
        step = Step(ctx, instance_uuid, "compute_snapshot_instance", "compute", self.host)
        try:
            # An rbd-backed disk goes into the image store inside the cluster, if it can.
            if not self.driver.direct_snapshot(ctx, _d(inst), image_id):
                data = self.driver.snapshot(_d(inst))
                self.db.call("update_instance", instance_uuid=instance_uuid,
                             values={"task_state": states.IMAGE_UPLOADING},
                             expect_task=states.IMAGE_SNAPSHOT)
                ImageClient(ctx).upload(image_id, data)
        except Exception as error:  # noqa: BLE001 - the server keeps running
            LOG.warning("Snapshot of %s failed: %s", instance_uuid, error)
            step.fail(error)
            # As nova's delete_image_on_error: no image left queued forever.
            try:
                ImageClient(ctx).delete(image_id)
            except Exception as undo:  # noqa: BLE001
                LOG.warning("Deleting image %s of the failed snapshot failed: %s",
                            image_id, undo)
        self.db.call("finish_action", instance_uuid=instance_uuid, values={"task_state": None},
                     expect_task=[states.IMAGE_SNAPSHOT, states.IMAGE_UPLOADING],
                     events=[hostdb.event(step)], request_id=ctx.request_id)

    def get_console_output(self, ctx, instance_uuid: str) -> str:
        return self.driver.get_console_output(instance_uuid)


def _d(inst) -> dict:
    from pocketstack.compute.manager.build import driver_view

    return driver_view(inst)
