"""Moving a server between hosts, the API half (nova's compute/api.py migrate, live_migrate,
evacuate). Host half: compute/manager/migrate.py.

* migrate (cold): a resize to the same flavor on another host — the resize flow of
  compute/resize.py with a migration of type "migration", confirmed or reverted as one.
* os-migrateLive: the source's claim moves to the migration, the scheduler claims the
  destination (any host but the source, or the one named); the destination starts the
  guest and binds the ports, then the source drops its guest and its claim. The server
  stays ACTIVE (task "migrating", status MIGRATING) throughout.
* evacuate: from a host that is down; the server is rebuilt from its image on another
  host (task "rebuilding"), keeping its ports.
"""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute import instances, states, trace
from pocketstack.compute.guards import check_locked, host_up, invalid_state
from pocketstack.compute.models import Migration, Service
from pocketstack.compute.scheduler import claims
from pocketstack.compute.trace import Step


def _check_target(inst, host: str | None) -> None:
    if host is None:
        return
    if host == inst.host:
        raise exceptions.BadRequest(f"Cannot migrate instance {inst.uuid} to the host it is "
                                    "already on.")
    with db.reader() as s:
        known = s.scalar(sa.select(Service.id).where(Service.host == host,
                                                     Service.binary == "nova-compute"))
    if known is None:
        raise exceptions.BadRequest(f"Compute host {host} could not be found.")


def _migration(inst, kind: str, status: str, dest: str | None = None) -> Migration:
    return Migration(uuid=str(uuidlib.uuid4()), instance_uuid=inst.uuid, migration_type=kind,
                     status=status, source_compute=inst.host, source_node=inst.node,
                     dest_compute=dest, old_flavor=inst.flavor, new_flavor=inst.flavor,
                     old_vm_state=inst.vm_state, project_id=inst.project_id,
                     user_id=inst.user_id)


def _start(ctx, inst, m: Migration, task: str, action: str, vm_ok) -> None:
    check_locked(ctx, inst)
    if inst.vm_state not in vm_ok:
        raise invalid_state(inst, action)
    if inst.task_state is not None:
        raise invalid_state(inst, action, "task_state")
    with db.transaction() as s:
        if not instances.update(inst.uuid, {"task_state": task}, expect_task=None,
                                expect_vm=vm_ok, session=s):
            raise invalid_state(instances.load(inst.uuid), action, "task_state")
        s.add(m)
        trace.start_action(s, ctx, inst.uuid, action)
        trace.store(s, [Step(ctx, inst.uuid, f"api_{action}", "api", None,
                             f"from {inst.host}" + (f" to {m.dest_compute}"
                                                    if m.dest_compute else "")).done()])


def migrate(ctx, inst, host: str | None = None) -> None:
    if not host_up(inst.host):
        raise exceptions.Conflict(f"Cannot 'migrate' instance {inst.uuid}: its compute host "
                                  f"{inst.host or '-'} is not up.")
    _check_target(inst, host)
    m = _migration(inst, "migration", "pre-migrating", host)
    _start(ctx, inst, m, states.RESIZE_PREP, "migrate", (states.ACTIVE, states.STOPPED))
    from pocketstack.compute.api import conductor

    conductor().client.cast(ctx, "resize_instance", instance_uuid=inst.uuid,
                            migration_uuid=m.uuid)


def _schedule_elsewhere(ctx, inst, m: Migration, host: str | None):
    """The source's claim moves to the migration; the scheduler claims the destination
    under the server's id. On failure everything is put back and None returned."""
    from pocketstack.compute.scheduler.rpcapi import SchedulerAPI

    claims.move_to_migration(inst.uuid, m.uuid)
    from pocketstack.compute.resize import same_hypervisor

    spec = same_hypervisor(dict(inst.request_spec or {}), inst)
    spec.update(flavor=inst.flavor, tried_hosts=[inst.host] if inst.host else [],
                force_host=host, force_node=None, num_instances=1)
    step = Step(ctx, inst.uuid, "scheduler_select_destinations", "scheduler", None)
    try:
        target = SchedulerAPI().select_destinations(ctx, spec, [inst.uuid])[0]
    except exceptions.PocketstackError as error:
        message = getattr(error, "message", None) or str(error)
        fail(ctx, inst.uuid, m.uuid, step.fail(message), f"No valid host: {message}")
        return None
    from pocketstack.compute.resize import set_status

    set_status(m.uuid, m.status, dest_compute=target["host"], dest_node=target["node"])
    instances.update(inst.uuid, {}, events=[step.done(detail=target["host"])])
    return target


def fail(ctx, instance_uuid: str, migration_uuid: str, step, reason: str,
         vm_state: str | None = None) -> None:
    """Undo a move that did not happen: the destination's claim (held under the server's
    id) is dropped and the source's comes back; the server stays where it was."""
    from pocketstack.compute.resize import set_status

    with db.transaction() as s:
        claims.release(instance_uuid, session=s)
        claims.move_back(migration_uuid, instance_uuid, session=s)  # the source's, back
        set_status(migration_uuid, "error", session=s)
        values = {"task_state": None}
        if vm_state:
            values["vm_state"] = vm_state
        if instances.update(instance_uuid, values, events=[step], session=s):
            instances.add_fault(s, instance_uuid, 500, reason, host=step.host)
        trace.finish_action(s, ctx.request_id, instance_uuid, "Error")


def live_migrate(ctx, inst, host: str | None = None) -> None:
    if not host_up(inst.host):
        raise exceptions.Conflict(f"Cannot 'os-migrateLive' instance {inst.uuid}: its "
                                  f"compute host {inst.host or '-'} is not up.")
    _check_target(inst, host)
    m = _migration(inst, "live-migration", "queued")
    _start(ctx, inst, m, states.MIGRATING, "live-migration", (states.ACTIVE, states.PAUSED))
    target = _schedule_elsewhere(ctx, inst, m, host)
    if target is None:
        return
    from pocketstack.compute.resize import compute_cast, set_status

    set_status(m.uuid, "preparing")
    compute_cast(ctx, target["host"], "pre_live_migration", instance_uuid=inst.uuid,
                 migration_uuid=m.uuid)


def evacuate(ctx, inst, host: str | None = None, target_state: str | None = None) -> None:
    """``target_state`` "stopped" (2.95): the server comes up stopped on its new host."""
    if inst.host and host_up(inst.host):
        raise exceptions.BadRequest(f"Compute service of {inst.host} is still in use.")
    _check_target(inst, host)
    m = _migration(inst, "evacuation", "accepted")
    _start(ctx, inst, m, states.REBUILDING, "evacuate",
           (states.ACTIVE, states.STOPPED, states.ERROR))
    target = _schedule_elsewhere(ctx, inst, m, host)
    if target is None:
        return
    from pocketstack.compute.resize import compute_cast, set_status

    set_status(m.uuid, "pre-migrating")
    extra = {"target_state": target_state} if target_state else {}
    compute_cast(ctx, target["host"], "evacuate_instance", instance_uuid=inst.uuid,
                 migration_uuid=m.uuid, **extra)
