"""The host half of rescue/unrescue, changePassword, trigger_crash_dump and the shelve
family (API half: compute/lifecycle.py). Each ends the task with the new states, or
records a fault and ERROR as the power actions do. Drivers without a rescue mode or a
guest agent (the simulated one) power-cycle the guest and note it in its console."""
from __future__ import annotations

import logging
import types

from pocketstack.compute import hostdb, states
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


def _guest(inst) -> dict:
    return {"uuid": inst.uuid, "hostname": inst.hostname, "flavor": inst.flavor,
            "power_state": inst.power_state, "image_ref": inst.image_ref,
            "display_name": inst.display_name}


class LifecycleMixin:
    def _driver_or_cycle(self, name: str, inst, *args) -> None:
        method = getattr(self.driver, name, None)
        if method is not None:
            method(_guest(inst), *args)
        else:
            self.driver.reboot(_guest(inst), "HARD")

    def _finish(self, ctx, inst, task, step, **values) -> bool:
        return self.db.call("finish_action", instance_uuid=inst.uuid,
                            values=dict(values, task_state=None), expect_task=task,
                            events=[hostdb.event(step)], request_id=ctx.request_id)

    def _run(self, ctx, instance_uuid: str, task, name: str, work, **after) -> None:
        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted:
            return
        step = Step(ctx, instance_uuid, f"compute_{name}", "compute", self.host)
        try:
            work(inst)
        except Exception as error:  # noqa: BLE001 - reported on the server
            self._action_failed(ctx, inst, task, step.fail(error), error)
            return
        self._finish(ctx, inst, task, step, **after)

    def rescue_instance(self, ctx, instance_uuid: str, image_ref: str | None = None):
        self._run(ctx, instance_uuid, states.RESCUING, "rescue_instance",
                  lambda inst: self._driver_or_cycle("rescue", inst, image_ref),
                  vm_state=states.RESCUED, power_state=states.RUNNING)

    def unrescue_instance(self, ctx, instance_uuid: str):
        self._run(ctx, instance_uuid, states.UNRESCUING, "unrescue_instance",
                  lambda inst: self._driver_or_cycle("unrescue", inst),
                  vm_state=states.ACTIVE, power_state=states.RUNNING)

    def set_admin_password(self, ctx, instance_uuid: str):
        def work(inst):
            method = getattr(self.driver, "set_admin_password", None)
            if method is not None:
                method(_guest(inst))
        self._run(ctx, instance_uuid, states.UPDATING_PASSWORD, "set_admin_password", work)

    def trigger_crash_dump(self, ctx, instance_uuid: str):
        def work(inst):
            method = getattr(self.driver, "trigger_crash_dump", None)
            if method is not None:
                method(_guest(inst))
        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted:
            return
        step = Step(ctx, instance_uuid, "compute_trigger_crash_dump", "compute", self.host)
        try:
            work(inst)
            step.done(detail="NMI sent to the guest")
        except Exception as error:  # noqa: BLE001
            step.fail(error)
        self.db.call("finish_action", instance_uuid=instance_uuid, values=None,
                     expect_task=None, events=[hostdb.event(step)], request_id=ctx.request_id,
                     result="Error" if step.result == "Error" else None)

    # --- shelve ---------------------------------------------------------------------------

    def shelve_instance(self, ctx, instance_uuid: str, image_id: str):
        from pocketstack.clients.image import ImageClient

        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted:
            return
        step = Step(ctx, instance_uuid, "compute_shelve_instance", "compute", self.host)
        try:
            if inst.power_state != states.SHUTDOWN:
                self.driver.power_off(_guest(inst))
            data = self.driver.snapshot(_guest(inst))
            self.db.call("update_instance", instance_uuid=instance_uuid,
                         values={"task_state": states.SHELVING_IMAGE_UPLOADING},
                         expect_task=states.SHELVING)
            ImageClient(ctx).upload(image_id, data)
        except Exception as error:  # noqa: BLE001
            self._action_failed(ctx, inst, [states.SHELVING, states.SHELVING_IMAGE_UPLOADING],
                                step.fail(error), error)
            return
        meta = dict(inst.system_metadata or {}, shelved_image_id=image_id,
                    shelved_host=self.host)
        ok = self.db.call("finish_action", instance_uuid=instance_uuid, values={
            "vm_state": states.SHELVED, "task_state": states.SHELVING_OFFLOADING,
            "power_state": states.SHUTDOWN, "system_metadata": meta},
            expect_task=states.SHELVING_IMAGE_UPLOADING,
            events=[hostdb.event(step.done(detail=f"image {image_id}"))], request_id=None)
        if ok:  # shelved_offload_time = 0, as nova's default: offload at once
            self.driver.hold_transition()  # SHELVED, before SHELVED_OFFLOADED
            self.shelve_offload_instance(ctx, instance_uuid)

    def shelve_offload_instance(self, ctx, instance_uuid: str):
        from pocketstack.clients.network import NetworkClient

        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted or inst.task_state != states.SHELVING_OFFLOADING:
            return
        step = Step(ctx, instance_uuid, "compute_shelve_offload_instance", "compute",
                    self.host)
        try:
            self.driver.destroy(_guest(inst))
            admin = NetworkClient(None)
            for vif in inst.network_info or []:
                admin.update_port(vif["port_id"], {"binding:host_id": ""})
        except Exception as error:  # noqa: BLE001
            self._action_failed(ctx, inst, states.SHELVING_OFFLOADING, step.fail(error), error)
            return
        self.db.call("finish_action", instance_uuid=instance_uuid, values={
            "vm_state": states.SHELVED_OFFLOADED, "task_state": None, "host": None,
            "node": None, "power_state": states.SHUTDOWN},
            expect_task=states.SHELVING_OFFLOADING,
            events=[hostdb.event(step.done(detail=f"guest removed from {self.host}"))],
            request_id=ctx.request_id, release_claim=True, only_if_updated=True)

    def unshelve_instance(self, ctx, instance_uuid: str):
        from pocketstack.clients.image import ImageClient
        from pocketstack.clients.network import NetworkClient

        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted or inst.task_state != states.UNSHELVING:
            return
        step = Step(ctx, instance_uuid, "compute_unshelve_instance", "compute", self.host)
        image_id = (inst.system_metadata or {}).get("shelved_image_id")
        try:
            if inst.vm_state == states.SHELVED:  # still here: just power it on
                self.driver.power_on(_guest(inst))
            else:
                admin = NetworkClient(None)
                for vif in inst.network_info or []:
                    admin.update_port(vif["port_id"], {"binding:host_id": self.host})
                shelved = types.SimpleNamespace(image_ref=image_id or inst.image_ref,
                                                request_spec={})
                meta = self._image(ctx, shelved) if shelved.image_ref else {}
                self.driver.spawn(_guest(inst), meta, inst.network_info or [], None)
        except Exception as error:  # noqa: BLE001 - back to offloaded, with a fault
            LOG.info("Unshelving %s failed on %s: %s", instance_uuid, self.host, error)
            self.db.call("finish_action", instance_uuid=instance_uuid, values={
                "task_state": None, "host": None, "node": None},
                expect_task=states.UNSHELVING, events=[hostdb.event(step.fail(error))],
                request_id=ctx.request_id, result="Error",
                fault={"code": 500, "message": f"Unshelve failed: {error}",
                       "host": self.host},
                release_claim=inst.vm_state == states.SHELVED_OFFLOADED)
            return
        if image_id:  # the guest runs again: its shelved image has served
            try:
                ImageClient(ctx).delete(image_id)
            except Exception as error:  # noqa: BLE001 - a leftover image, not a failure
                LOG.warning("Deleting shelved image %s failed: %s", image_id, error)
        meta = {k: v for k, v in (inst.system_metadata or {}).items()
                if k not in ("shelved_image_id", "shelved_host")}
        self._finish(ctx, inst, states.UNSHELVING, step, vm_state=states.ACTIVE,
                     power_state=states.RUNNING, system_metadata=meta, host=self.host)

    # --- deferred delete --------------------------------------------------------------------

    def soft_delete_instance(self, ctx, instance_uuid: str):
        self._run(ctx, instance_uuid, states.SOFT_DELETING, "soft_delete_instance",
                  lambda inst: self.driver.power_off(_guest(inst)),
                  vm_state=states.SOFT_DELETED, power_state=states.SHUTDOWN)

    def restore_instance(self, ctx, instance_uuid: str):
        self._run(ctx, instance_uuid, states.RESTORING, "restore_instance",
                  lambda inst: self.driver.power_on(_guest(inst)),
                  vm_state=states.ACTIVE, power_state=states.RUNNING)

    def reclaim_queued_deletes(self) -> None:
        from pocketstack.compute.manager.periodic import reclaim_queued_deletes

        reclaim_queued_deletes({self.host: self})
