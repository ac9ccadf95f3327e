"""Resize on the hosts (nova's prep_resize / resize_instance / finish_resize /
confirm_resize / revert_resize / finish_revert_resize); the flow is described in
compute/resize.py. Each step is a compare-and-swap on task_state, so a server deleted
mid-resize makes the next step stop and give back what it holds."""
from __future__ import annotations

import logging

from pocketstack.clients.network import NetworkClient
from pocketstack.compute import hostdb, resize, states
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


def _guest(inst, flavor=None) -> dict:
    return {"uuid": inst.uuid, "hostname": inst.hostname, "flavor": flavor or inst.flavor,
            "power_state": inst.power_state, "image_ref": inst.image_ref,
            "display_name": inst.display_name}


def _bind_ports(inst, host: str) -> list[str]:
    """Move the server's ports to ``host`` (nova's migrate_instance_finish)."""
    admin = NetworkClient(None)
    done = []
    for vif in inst.network_info or []:
        admin.update_port(vif["port_id"], {"binding:host_id": host})
        done.append(vif["port_id"])
    return done


class ResizeMixin:
    def _record(self, instance_uuid: str, step) -> None:
        """A step's event, with no change of state."""
        self.db.call("finish_action", instance_uuid=instance_uuid, values=None,
                     expect_task=None, events=[hostdb.event(step)], request_id=None)

    def _resize_context(self, instance_uuid: str, migration_uuid: str, task):
        m = self.db.call("get_migration", instance_uuid=instance_uuid,
                         migration_uuid=migration_uuid)
        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if m is None or inst is None or inst.deleted or inst.task_state not in (
                task if isinstance(task, tuple) else (task,)):
            if m is not None and m.status in resize.IN_PROGRESS and (
                    inst is None or inst.deleted):
                self.db.call("release_for_delete", instance_uuid=instance_uuid,
                             release_claim=True)
            return None, None
        return inst, m

    def _fail_before_move(self, ctx, inst, m, step, error, task) -> None:
        LOG.info("Resize of %s failed on %s: %s", inst.uuid, self.host, error)
        step.fail(error)
        self.db.call("rollback_resize", instance_uuid=inst.uuid, migration_uuid=m.uuid,
                     event=hostdb.event(step), request_id=ctx.request_id,
                     reason=f"Resize failed on {self.host}: "
                            f"{getattr(error, 'message', None) or error}", expect_task=task)

    # --- destination ---------------------------------------------------------------------

    def prep_resize(self, ctx, instance_uuid: str, migration_uuid: str):
        inst, m = self._resize_context(instance_uuid, migration_uuid, states.RESIZE_PREP)
        if inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_prep_resize", "compute", self.host)
        try:
            self.driver.prep_resize(dict(_guest(inst, m.new_flavor),
                                         source_host=m.source_compute))
        except Exception as error:  # noqa: BLE001 - every failure rolls back
            self._fail_before_move(ctx, inst, m, step, error, states.RESIZE_PREP)
            return
        self._record(instance_uuid, step.done(
            detail=f"{m.new_flavor['name']} claimed on {self.host}"))
        resize.compute_cast(ctx, m.source_compute, "resize_instance",
                            instance_uuid=instance_uuid, migration_uuid=migration_uuid)

    def finish_resize(self, ctx, instance_uuid: str, migration_uuid: str):
        inst, m = self._resize_context(instance_uuid, migration_uuid, states.RESIZE_MIGRATED)
        if inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_finish_resize", "compute", self.host)
        if not self.db.call("update_instance", instance_uuid=instance_uuid,
                            values={"task_state": states.RESIZE_FINISH},
                            expect_task=states.RESIZE_MIGRATED):
            return
        power_on = m.old_vm_state != states.STOPPED
        try:
            _bind_ports(inst, self.host)
            self.driver.finish_migration(dict(_guest(inst, m.new_flavor),
                                              source_host=m.source_compute),
                                         inst.network_info or [], power_on)
        except Exception as error:  # noqa: BLE001 - the guest goes back to the source
            LOG.info("Finishing the resize of %s failed on %s: %s", instance_uuid, self.host,
                     error)
            step.fail(error)
            try:  # the source (maybe this host) still needs what it kept for the revert
                self.driver.destroy({"uuid": instance_uuid, "keep_resize_source": True})
            except Exception:  # noqa: BLE001 - nothing may have been created
                pass
            self._record(instance_uuid, step)
            resize.compute_cast(ctx, m.source_compute, "finish_revert_resize",
                                instance_uuid=instance_uuid, migration_uuid=migration_uuid,
                                error=f"Resize failed on {self.host}: "
                                      f"{getattr(error, 'message', None) or error}")
            return
        new = m.new_flavor
        ok = self.db.call("advance_resize", instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid, values={
                              "vm_state": states.RESIZED, "task_state": None,
                              "host": self.host, "node": m.dest_node, "flavor": new,
                              "progress": 100,
                              "power_state": states.RUNNING if power_on else states.SHUTDOWN},
                          expect_task=states.RESIZE_FINISH, status="finished",
                          events=[hostdb.event(step.done(
                              detail=f"{m.old_flavor['name']} → {new['name']} on "
                                     f"{self.host}"))], request_id=ctx.request_id)
        if not ok:
            self.driver.destroy({"uuid": instance_uuid})

    def revert_resize(self, ctx, instance_uuid: str, migration_uuid: str):
        inst, m = self._resize_context(instance_uuid, migration_uuid, states.RESIZE_REVERTING)
        if inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_revert_resize", "compute", self.host)
        try:  # the source (maybe this host) brings back what it kept
            self.driver.destroy(dict(_guest(inst), keep_resize_source=True))
        except Exception as error:  # noqa: BLE001 - the source takes over regardless
            step.fail(error)
        released = self.db.call("release_claim", instance_uuid=instance_uuid,
                                consumer=instance_uuid)
        self._record(instance_uuid, step.done(
            detail=f"guest removed{', claim released' if released else ''} on "
                   f"{self.host}") if step.finish is None else step)
        resize.compute_cast(ctx, m.source_compute, "finish_revert_resize",
                            instance_uuid=instance_uuid, migration_uuid=migration_uuid)

    # --- source ----------------------------------------------------------------------------

    def resize_instance(self, ctx, instance_uuid: str, migration_uuid: str | None = None,
                        **_ignored):
        if migration_uuid is None:
            return
        inst, m = self._resize_context(instance_uuid, migration_uuid, states.RESIZE_PREP)
        if inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_resize_instance", "compute", self.host)
        ok = self.db.call("advance_resize", instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid,
                          values={"task_state": states.RESIZE_MIGRATING},
                          expect_task=states.RESIZE_PREP, status="migrating",
                          expect_status="pre-migrating")
        if not ok:
            return
        try:
            self.driver.hold_transition()  # RESIZE (or MIGRATING for a cold migration)
            self.driver.migrate_disk_and_power_off(_guest(inst), m.new_flavor)
        except Exception as error:  # noqa: BLE001 - nothing moved yet: roll back
            self._fail_before_move(ctx, inst, m, step, error, states.RESIZE_MIGRATING)
            return
        ok = self.db.call("advance_resize", instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid,
                          values={"task_state": states.RESIZE_MIGRATED},
                          expect_task=states.RESIZE_MIGRATING, status="post-migrating",
                          events=[hostdb.event(step.done(
                              detail=f"powered off and disk sent to {m.dest_compute}"))])
        if not ok:
            self.driver.finish_revert_migration(_guest(inst), [], False)
            return
        resize.compute_cast(ctx, m.dest_compute, "finish_resize",
                            instance_uuid=instance_uuid, migration_uuid=migration_uuid)

    def confirm_resize(self, ctx, instance_uuid: str, migration_uuid: str):
        m = self.db.call("get_migration", instance_uuid=instance_uuid,
                         migration_uuid=migration_uuid)
        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if m is None or m.status != "confirming":
            return
        step = Step(ctx, instance_uuid, "compute_confirm_resize", "compute", self.host)
        try:
            self.driver.confirm_migration({"uuid": instance_uuid})
        except Exception as error:  # noqa: BLE001 - the old disk is the host's problem
            LOG.warning("Cleaning the source of %s's resize failed: %s", instance_uuid, error)
        vm = states.STOPPED if inst is not None and inst.power_state == states.SHUTDOWN \
            else states.ACTIVE
        self.db.call("confirm_resize", instance_uuid=instance_uuid,
                     migration_uuid=migration_uuid,
                     values=None if inst is None else {
                         "vm_state": vm, **resize.flavor_usage(m.new_flavor)},
                     event=hostdb.event(step.done(
                         detail=f"old guest removed from {self.host}")),
                     request_id=ctx.request_id)

    def finish_revert_resize(self, ctx, instance_uuid: str, migration_uuid: str,
                             error: str | None = None):
        m = self.db.call("get_migration", instance_uuid=instance_uuid,
                         migration_uuid=migration_uuid)
        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if m is None or m.status not in ("reverting", "post-migrating"):
            return
        task = states.RESIZE_FINISH if error else states.RESIZE_REVERTING
        if inst is None or inst.deleted or inst.task_state != task:
            self.db.call("release_for_delete", instance_uuid=instance_uuid,
                         release_claim=False)
            return
        step = Step(ctx, instance_uuid, "compute_finish_revert_resize", "compute", self.host)
        power_on = m.old_vm_state != states.STOPPED and not error
        try:
            if not error:
                self.driver.hold_transition()  # REVERT_RESIZE
            _bind_ports(inst, self.host)
            self.driver.finish_revert_migration(_guest(inst, m.old_flavor),
                                                inst.network_info or [], power_on)
        except Exception as failure:  # noqa: BLE001
            error = error or f"Reverting the resize failed on {self.host}: {failure}"
            step.fail(failure)
        if error:
            if step.finish is None:
                step.fail(error)
            self.db.call("rollback_resize", instance_uuid=instance_uuid,
                         migration_uuid=migration_uuid, event=hostdb.event(step),
                         reason=error, request_id=ctx.request_id, error_state=True,
                         expect_task=task)
            return
        old = m.old_flavor
        self.db.call("finish_revert", instance_uuid=instance_uuid,
                     migration_uuid=migration_uuid, values={
                         "vm_state": m.old_vm_state, "task_state": None, "host": self.host,
                         "node": m.source_node, "flavor": old, **resize.flavor_usage(old),
                         "power_state": states.RUNNING if power_on else states.SHUTDOWN},
                     events=[hostdb.event(step.done(
                         detail=f"back to {old['name']} on {self.host}"))],
                     request_id=ctx.request_id)
