"""Live migration and evacuation on the hosts (API half and flow: compute/migrate.py).

Live migration: the destination starts the guest and binds the ports
(pre_live_migration), then the source drops its guest and the claim it kept under the
migration (live_migration) — the server runs throughout. Evacuation: the destination
rebuilds the server from its image with the same ports (evacuate_instance); the source
is down, its claim is given back.
"""
from __future__ import annotations

import logging

from pocketstack.compute import hostdb, resize, states
from pocketstack.clients.network import NetworkClient
from pocketstack.compute.manager.build import driver_view
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


def _guest(inst) -> dict:
    return {"uuid": inst.uuid, "hostname": inst.hostname, "flavor": inst.flavor,
            "power_state": inst.power_state, "image_ref": inst.image_ref,
            "display_name": inst.display_name}


def _bind(inst, host: str) -> None:
    admin = NetworkClient(None)
    for vif in inst.network_info or []:
        admin.update_port(vif["port_id"], {"binding:host_id": host})


class MigrateMixin:
    def _move(self, instance_uuid: str, migration_uuid: str):
        return (self.db.call("get_migration", instance_uuid=instance_uuid,
                             migration_uuid=migration_uuid),
                self.db.call("load_instance", instance_uuid=instance_uuid))

    def _fail_move(self, ctx, instance_uuid, migration_uuid, step, reason, vm_state=None):
        self.db.call("fail_move", instance_uuid=instance_uuid, migration_uuid=migration_uuid,
                     event=hostdb.event(step), reason=reason, request_id=ctx.request_id,
                     vm_state=vm_state)

    def pre_live_migration(self, ctx, instance_uuid: str, migration_uuid: str):
        m, inst = self._move(instance_uuid, migration_uuid)
        if m is None or inst is None or inst.deleted or inst.task_state != states.MIGRATING:
            if m is not None:
                self.db.call("release_for_delete", instance_uuid=instance_uuid,
                             release_claim=True)
            return
        self.db.call("set_migration_status", instance_uuid=instance_uuid,
                     migration_uuid=migration_uuid, status="running")
        step = Step(ctx, instance_uuid, "compute_pre_live_migration", "compute", self.host)
        try:
            self.driver.finish_migration(_guest(inst), inst.network_info or [],
                                         inst.power_state != states.SHUTDOWN)
            _bind(inst, self.host)
        except Exception as error:  # noqa: BLE001 - the server stays on the source
            LOG.info("Live migration of %s to %s failed: %s", instance_uuid, self.host, error)
            try:
                self.driver.destroy({"uuid": instance_uuid})
            except Exception:  # noqa: BLE001
                pass
            self._fail_move(ctx, instance_uuid, migration_uuid, step.fail(error),
                            f"Live migration to {self.host} failed: {error}")
            return
        self.db.call("finish_action", instance_uuid=instance_uuid, values=None,
                     expect_task=None, request_id=None, events=[hostdb.event(step.done(
                         detail=f"guest running on {self.host}, ports bound here"))])
        resize.compute_cast(ctx, m.source_compute, "live_migration",
                            instance_uuid=instance_uuid, migration_uuid=migration_uuid)

    def live_migration(self, ctx, instance_uuid: str, migration_uuid: str):
        m, inst = self._move(instance_uuid, migration_uuid)
        if m is None or inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_live_migration", "compute", self.host)
        self.driver.hold_transition()  # MIGRATING
        try:
            self.driver.destroy({"uuid": instance_uuid})
        except Exception as error:  # noqa: BLE001 - the guest runs elsewhere anyway
            LOG.warning("Removing %s from %s after its live migration failed: %s",
                        instance_uuid, self.host, error)
        # (deleted meanwhile: the migration in error, the server's claim given back)
        self.db.call("finish_move", instance_uuid=instance_uuid,
                     migration_uuid=migration_uuid,
                     values={"task_state": None, "host": m.dest_compute,
                             "node": m.dest_node},
                     expect_task=states.MIGRATING, events=[hostdb.event(step.done(
                         detail=f"{self.host} → {m.dest_compute}"))],
                     request_id=ctx.request_id, status="completed")

    def evacuate_instance(self, ctx, instance_uuid: str, migration_uuid: str,
                          target_state: str | None = None):
        m, inst = self._move(instance_uuid, migration_uuid)
        if m is None or inst is None or inst.deleted or inst.task_state != states.REBUILDING:
            if m is not None:
                self.db.call("release_for_delete", instance_uuid=instance_uuid,
                             release_claim=True)
            return
        step = Step(ctx, instance_uuid, "compute_rebuild_instance", "compute", self.host,
                    f"evacuated from {m.source_compute}")
        # 2.95 asks for a stopped server (target_state); one in ERROR comes back active,
        # as nova's _do_rebuild_instance keeps the original state of an errored server
        stopped = m.old_vm_state == states.STOPPED or (
            target_state == states.STOPPED and m.old_vm_state != states.ERROR)
        try:
            self.driver.hold_transition()  # REBUILD (evacuation)
            _bind(inst, self.host)
            image_meta = self._image(ctx, inst) if inst.image_ref else {}
            # all a boot gives the driver (a rebuilt guest's config drive, its metadata);
            # evacuated_from: a driver whose hosts share instance storage keeps the disks
            self.driver.spawn(dict(driver_view(inst), evacuated_from=m.source_compute),
                              image_meta, inst.network_info or [], None)
            if stopped:
                self.driver.power_off(_guest(inst))
        except Exception as error:  # noqa: BLE001 - the server stays on the dead host
            LOG.info("Evacuating %s to %s failed: %s", instance_uuid, self.host, error)
            try:
                self.driver.destroy({"uuid": instance_uuid})
            except Exception:  # noqa: BLE001
                pass
            self._fail_move(ctx, instance_uuid, migration_uuid, step.fail(error),
                            f"Evacuation to {self.host} failed: {error}",
                            vm_state=states.ERROR)
            return
        # The dead source's claim (under the migration) given back with the move.
        ok = self.db.call("finish_move", instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid, values={
                              "vm_state": states.STOPPED if stopped else states.ACTIVE,
                              "task_state": None,
                              "power_state": states.SHUTDOWN if stopped else states.RUNNING,
                              "host": self.host, "node": m.dest_node},
                          expect_task=states.REBUILDING, events=[hostdb.event(step.done())],
                          request_id=ctx.request_id, status="done")
        if not ok:
            self.driver.destroy({"uuid": instance_uuid})
