"""Server actions and delete (nova's compute/api.py action half): state checks as nova's
check_instance_state, then a task_state compare-and-swap and a cast to the host."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.compute import instances, states, trace
from pocketstack.compute.models import Service
from pocketstack.compute.rpcapi import ComputeAPI
from pocketstack.compute.scheduler.host_state import service_is_up
from pocketstack.compute.trace import Step

compute_rpc = ComputeAPI()

# action -> (allowed vm_states, task_state set while it runs)
POWER = {
    "stop": ((states.ACTIVE, states.RESCUED, states.ERROR), states.POWERING_OFF),
    "start": ((states.STOPPED,), states.POWERING_ON),
    "pause": ((states.ACTIVE, states.RESCUED), states.PAUSING),
    "unpause": ((states.PAUSED,), states.UNPAUSING),
    "suspend": ((states.ACTIVE,), states.SUSPENDING),
    "resume": ((states.SUSPENDED,), states.RESUMING),
}


def invalid_state(inst, action: str, attr: str = "vm_state") -> exceptions.Conflict:
    value = inst.vm_state if attr == "vm_state" else inst.task_state
    return exceptions.Conflict(f"Cannot '{action}' instance {inst.uuid} while it is in "
                               f"{attr} {value}")


def check_locked(ctx, inst) -> None:
    """A locked server refuses actions from anyone but an admin (nova's check_instance_lock)."""
    if inst.locked_by and not ctx.is_admin:
        raise exceptions.Conflict(f"Instance {inst.uuid} is locked")


def _begin(ctx, inst, action: str, vm_ok, task: str | None, name: str) -> None:
    check_locked(ctx, inst)
    if inst.vm_state not in vm_ok:
        raise invalid_state(inst, name)
    if inst.task_state is not None:
        raise invalid_state(inst, name, "task_state")
    if not inst.host:
        raise exceptions.Conflict(f"Cannot '{name}' instance {inst.uuid}: it has no host.")
    with db.transaction() as s:
        if task is not None and not instances.update(inst.uuid, {"task_state": task},
                                                     expect_task=None, session=s):
            raise invalid_state(instances.load(inst.uuid), name, "task_state")
        trace.start_action(s, ctx, inst.uuid, action)
        trace.store(s, [Step(ctx, inst.uuid, f"api_{action}", "api", None).done()])


def power(ctx, inst, action: str, reboot_type: str = "SOFT") -> None:
    if action == "reboot":
        ok = (states.ACTIVE, states.PAUSED, states.STOPPED, states.SUSPENDED, states.ERROR) \
            if reboot_type == "HARD" else (states.ACTIVE, states.STOPPED, states.ERROR)
        task = states.REBOOTING_HARD if reboot_type == "HARD" else states.REBOOTING
        _begin(ctx, inst, "reboot", ok, task, "reboot")
        compute_rpc.power_action(ctx, inst.host, inst.uuid, "reboot", reboot_type=reboot_type)
        return
    vm_ok, task = POWER[action]
    _begin(ctx, inst, action, vm_ok, task, action)
    compute_rpc.power_action(ctx, inst.host, inst.uuid, action)


def rebuild(ctx, inst, image_ref: str, values: dict) -> None:
    _begin(ctx, inst, "rebuild", (states.ACTIVE, states.STOPPED, states.ERROR),
           states.REBUILDING, "rebuild")
    instances.update(inst.uuid, dict(values, image_ref=image_ref))
    compute_rpc.rebuild_instance(ctx, inst.host, inst.uuid, image_ref)


def snapshot(ctx, inst, image_id: str) -> None:
    _begin(ctx, inst, "createImage", (states.ACTIVE, states.STOPPED, states.PAUSED,
                                      states.SUSPENDED), states.IMAGE_SNAPSHOT, "createImage")
    compute_rpc.snapshot_instance(ctx, inst.host, inst.uuid, image_id)


def host_up(host: str | None) -> bool:
    if not host:
        return False
    with db.reader() as s:
        row = s.connection().execute(_HOST_SERVICE, {"host": host}).first()
    return row is not None and service_is_up(row[0], row[1])


# Built once: every delete (and most actions) asks.
_HOST_SERVICE = sa.select(Service.__table__.c.last_seen_up, Service.__table__.c.forced_down) \
    .where(Service.__table__.c.host == sa.bindparam("host"),
           Service.__table__.c.binary == "nova-compute")


def delete(ctx, inst, soft: bool = True) -> None:
    """Delete in any state (kept SOFT_DELETED first when [compute]
    reclaim_instance_interval is set, unless ``soft`` is False: forceDelete). A server still building, or whose host is down, is cleaned up
    here and now (ports, claim, row); the build, if still running somewhere, notices at its
    next step and undoes its own work. Otherwise the host tears the guest down."""
    from pocketstack.compute.manager.delete import finish_delete

    check_locked(ctx, inst)
    if inst.vm_state in (states.SHELVED, states.SHELVED_OFFLOADED):
        _delete_shelved_image(ctx, inst)
    if soft and config.CONF.compute.reclaim_instance_interval > 0 and \
            inst.task_state is None and host_up(inst.host) and \
            inst.vm_state not in (states.BUILDING, states.SOFT_DELETED):
        from pocketstack.compute import lifecycle

        lifecycle.soft_delete(ctx, inst)
        return
    if inst.vm_state == states.BUILDING or not host_up(inst.host):
        with db.transaction() as s:
            trace.start_action(s, ctx, inst.uuid, "delete")
        step = Step(ctx, inst.uuid, "api_delete", "api", None,
                    "local delete: " + ("still building" if inst.vm_state == states.BUILDING
                                        else f"host {inst.host or '-'} is not up")).done()
        finish_delete(ctx, inst, None, steps=[step])
        if inst.host and host_up(inst.host):
            compute_rpc.terminate_instance(ctx, inst.host, inst.uuid)
        return
    with db.transaction() as s:  # the action and the state change in one commit
        trace.start_action(s, ctx, inst.uuid, "delete")
        deleting = instances.update(
            inst.uuid, {"task_state": states.DELETING},
            events=[Step(ctx, inst.uuid, "api_delete", "api", None).done()], session=s)
    if not deleting:
        raise instances.not_found(inst.uuid)
    compute_rpc.terminate_instance(ctx, inst.host, inst.uuid)


def _delete_shelved_image(ctx, inst) -> None:
    """The image a shelved server was kept in goes with the server, as in nova."""
    image_id = (inst.system_metadata or {}).get("shelved_image_id")
    if not image_id:
        return
    from pocketstack.clients.image import ImageClient

    try:
        ImageClient(ctx).delete(image_id)
    except exceptions.PocketstackError as error:
        import logging

        logging.getLogger(__name__).warning("Deleting shelved image %s failed: %s",
                                            image_id, error)


def reset_state(ctx, inst, state: str) -> None:
    vm = states.ACTIVE if state == "active" else states.ERROR
    with db.transaction() as s:
        instances.update(inst.uuid, {"vm_state": vm, "task_state": None}, session=s)
        trace.start_action(s, ctx, inst.uuid, "resetState")


def lock(ctx, inst, reason: str | None) -> None:
    with db.transaction() as s:
        instances.update(inst.uuid, {"locked_by": "admin" if ctx.is_admin and
                                     ctx.project_id != inst.project_id else "owner",
                                     "locked_reason": reason}, session=s)
        trace.start_action(s, ctx, inst.uuid, "lock")


def unlock(ctx, inst) -> None:
    if inst.locked_by == "admin" and not ctx.is_admin:
        raise exceptions.Forbidden("Policy doesn't allow os_compute_api:os-lock-server:"
                                   "unlock:unlock_override to be performed.")
    with db.transaction() as s:
        instances.update(inst.uuid, {"locked_by": None, "locked_reason": None}, session=s)
        trace.start_action(s, ctx, inst.uuid, "unlock")
