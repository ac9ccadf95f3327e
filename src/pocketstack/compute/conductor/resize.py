"""The conductor's half of a resize (nova's MigrationTask): the source's claim moves to
the migration, the scheduler picks and claims a destination for the new flavor, and the
destination is told to prepare. NoValidHost rolls back and explains itself."""
from __future__ import annotations

import logging

from pocketstack.common import config, exceptions
from pocketstack.compute import instances, resize, states
from pocketstack.compute.scheduler import claims
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


class ResizeTaskMixin:
    def resize_instance(self, ctx, instance_uuid: str, migration_uuid: str | None = None,
                        **_ignored):
        m = resize.get_migration(migration_uuid) if migration_uuid else None
        inst = instances.load(instance_uuid)
        if m is None or m.status != "pre-migrating":
            return
        step = Step(ctx, instance_uuid, "conductor_migrate_server", "conductor",
                    config.CONF.host)
        if inst is None or inst.deleted or inst.task_state != states.RESIZE_PREP:
            resize.set_status(m.uuid, "error", expect="pre-migrating")
            return
        # The source keeps what it holds, under the migration's name (placement's
        # "migration allocation"); the instance's name is free for the destination.
        claims.move_to_migration(instance_uuid, m.uuid)
        spec = resize.same_hypervisor(dict(inst.request_spec or {}), inst)
        # A cold migration (same flavor) must land elsewhere, on the host named if any;
        # a resize lands on the host the API named (a real guest's own), else anywhere.
        moving = m.migration_type == "migration"
        spec.update(flavor=m.new_flavor, tried_hosts=[m.source_compute] if moving else [],
                    force_host=m.dest_compute, force_node=None,
                    num_instances=1)
        sched = Step(ctx, instance_uuid, "scheduler_select_destinations", "scheduler",
                     config.CONF.host, f"flavor {m.new_flavor['name']}")
        try:
            selection = self.scheduler.select_destinations(ctx, spec, [instance_uuid])[0]
        except exceptions.PocketstackError as error:
            message = getattr(error, "message", None) or str(error)
            sched.fail(message)
            step.fail(message)
            resize.rollback(ctx, instance_uuid, m, sched, f"Resize failed: {message}",
                            expect_task=states.RESIZE_PREP)
            return
        sched.done(detail=f"{selection['host']} for {m.new_flavor['name']}")
        ok = resize.set_status(m.uuid, "pre-migrating", expect="pre-migrating",
                               dest_compute=selection["host"], dest_node=selection["node"])
        if not ok or not instances.update(instance_uuid, {}, expect_task=states.RESIZE_PREP,
                                          events=[sched, step.done(
                                              detail=f"prep_resize → compute."
                                                     f"{selection['host']}")]):
            # Deleted meanwhile: nothing may stay claimed.
            claims.release(instance_uuid)
            claims.release(m.uuid)
            resize.set_status(m.uuid, "error")
            return
        resize.compute_cast(ctx, selection["host"], "prep_resize",
                            instance_uuid=instance_uuid, migration_uuid=m.uuid)
