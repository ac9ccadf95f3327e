"""Live migration and evacuation on the hosts (API half and flow: compute/migrate.py).

Live migration: the destination starts the guest and binds the ports
(pre_live_migration), then the source drops its guest and the claim it kept under the
migration (live_migration) — the server runs throughout. Evacuation: the destination
rebuilds the server from its image with the same ports (evacuate_instance); the source
is down, its claim is given back.
"""
from __future__ import annotations

import logging

from pocketstack.common import db
from pocketstack.compute import instances, migrate, resize, states, trace
from pocketstack.clients.network import NetworkClient
from pocketstack.compute.manager.build import _as_dict
from pocketstack.compute.scheduler import claims
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
    def pre_live_migration(self, ctx, instance_uuid: str, migration_uuid: str):
        m = resize.get_migration(migration_uuid)
        inst = instances.load(instance_uuid)
        if m is None or inst is None or inst.deleted or inst.task_state != states.MIGRATING:
            if m is not None:
                with db.transaction() as s:
                    resize.release_for_delete(s, instance_uuid)
                    claims.release(instance_uuid, session=s)
            return
        resize.set_status(migration_uuid, "running")
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
            migrate.fail(ctx, instance_uuid, migration_uuid, step.fail(error),
                         f"Live migration to {self.host} failed: {error}")
            return
        instances.update(instance_uuid, {}, events=[step.done(
            detail=f"guest running on {self.host}, ports bound here")])
        resize.compute_cast(ctx, m.source_compute, "live_migration",
                            instance_uuid=instance_uuid, migration_uuid=migration_uuid)

    def live_migration(self, ctx, instance_uuid: str, migration_uuid: str):
        m = resize.get_migration(migration_uuid)
        inst = instances.load(instance_uuid)
        if m is None or inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_live_migration", "compute", self.host)
        self.driver.hold_transition()  # MIGRATING
        try:
            self.driver.destroy({"uuid": instance_uuid})
        except Exception as error:  # noqa: BLE001 - the guest runs elsewhere anyway
            LOG.warning("Removing %s from %s after its live migration failed: %s",
                        instance_uuid, self.host, error)
        with db.transaction() as s:
            ok = instances.update(instance_uuid, {
                "task_state": None, "host": m.dest_compute, "node": m.dest_node},
                expect_task=states.MIGRATING, events=[step.done(
                    detail=f"{self.host} → {m.dest_compute}")], session=s)
            claims.release(migration_uuid, session=s)
            resize.set_status(migration_uuid, "completed" if ok else "error", session=s)
            if ok:
                trace.finish_action(s, ctx.request_id, instance_uuid)
            else:  # deleted meanwhile
                claims.release(instance_uuid, session=s)

    def evacuate_instance(self, ctx, instance_uuid: str, migration_uuid: str,
                          target_state: str | None = None):
        m = resize.get_migration(migration_uuid)
        inst = instances.load(instance_uuid)
        if m is None or inst is None or inst.deleted or inst.task_state != states.REBUILDING:
            if m is not None:
                with db.transaction() as s:
                    resize.release_for_delete(s, instance_uuid)
                    claims.release(instance_uuid, session=s)
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
            self.driver.spawn(dict(_as_dict(inst), evacuated_from=m.source_compute),
                              image_meta, inst.network_info or [], None)
            if stopped:
                self.driver.power_off(_guest(inst))
        except Exception as error:  # noqa: BLE001 - the server stays on the dead host
            LOG.info("Evacuating %s to %s failed: %s", instance_uuid, self.host, error)
            try:
                self.driver.destroy({"uuid": instance_uuid})
            except Exception:  # noqa: BLE001
                pass
            migrate.fail(ctx, instance_uuid, migration_uuid, step.fail(error),
                         f"Evacuation to {self.host} failed: {error}", vm_state=states.ERROR)
            return
        with db.transaction() as s:
            ok = instances.update(instance_uuid, {
                "vm_state": states.STOPPED if stopped else states.ACTIVE, "task_state": None,
                "power_state": states.SHUTDOWN if stopped else states.RUNNING,
                "host": self.host, "node": m.dest_node},
                expect_task=states.REBUILDING, events=[step.done()], session=s)
            claims.release(migration_uuid, session=s)  # the dead source's
            resize.set_status(migration_uuid, "done" if ok else "error", session=s)
            if ok:
                trace.finish_action(s, ctx.request_id, instance_uuid)
            else:
                claims.release(instance_uuid, session=s)
        if not ok:
            self.driver.destroy({"uuid": instance_uuid})
