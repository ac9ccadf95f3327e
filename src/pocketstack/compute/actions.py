"""Server actions and delete (nova's compute/api.py action half): state checks as nova's
check_instance_state (guards.py), then a task_state compare-and-swap and a cast to the
host."""
from __future__ import annotations

from pocketstack.common import config, db, exceptions
from pocketstack.compute import instances, states, trace
from pocketstack.compute.guards import begin, check, check_locked, host_up
from pocketstack.compute.rpcapi import ComputeAPI
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


def power(ctx, inst, action: str, reboot_type: str = "SOFT") -> None:
    if action == "reboot":
        ok = (states.ACTIVE, states.PAUSED, states.STOPPED, states.SUSPENDED, states.ERROR) \
            if reboot_type == "HARD" else (states.ACTIVE, states.STOPPED, states.ERROR)
        task = states.REBOOTING_HARD if reboot_type == "HARD" else states.REBOOTING
        begin(ctx, inst, "reboot", ok, task, "reboot")
        compute_rpc.power_action(ctx, inst.host, inst.uuid, "reboot", reboot_type=reboot_type)
        return
    vm_ok, task = POWER[action]
    begin(ctx, inst, action, vm_ok, task, action)
    compute_rpc.power_action(ctx, inst.host, inst.uuid, action)


def rebuild(ctx, inst, image_ref: str, values: dict, volume_backed: bool = False,
            reimage_boot_volume: bool = False) -> None:
    """A volume-backed server keeps its empty image_ref, as nova's (its image is the
    root volume's); from 2.93 its host writes the image over that volume."""
    begin(ctx, inst, "rebuild", (states.ACTIVE, states.STOPPED, states.ERROR),
          states.REBUILDING, "rebuild")
    instances.update(inst.uuid, values if volume_backed else dict(values, image_ref=image_ref))
    compute_rpc.rebuild_instance(ctx, inst.host, inst.uuid, image_ref,
                                 reimage_boot_volume=reimage_boot_volume)


SNAPSHOT_STATES = (states.ACTIVE, states.STOPPED, states.PAUSED, states.SUSPENDED)


def snapshot(ctx, inst, make_image, action: str = "createImage") -> dict:
    """createImage and createBackup: the server's state is checked before ``make_image()``
    makes the (queued) image, as nova's check_instance_state does, so a refused request
    leaves no image behind; an image whose server another action claimed meanwhile is
    deleted again. The host snapshots the disk into the image."""
    from pocketstack.clients.image import ImageClient

    check(ctx, inst, SNAPSHOT_STATES, action)
    image = make_image()
    try:
        begin(ctx, inst, action, SNAPSHOT_STATES, states.IMAGE_SNAPSHOT, action)
    except Exception:
        ImageClient(ctx).delete(image["id"])
        raise
    compute_rpc.snapshot_instance(ctx, inst.host, inst.uuid, image["id"])
    return image


def delete(ctx, inst, soft: bool = True) -> None:
    """Delete in any state (kept SOFT_DELETED first when [compute]
    reclaim_instance_interval is set, unless ``soft`` is False: forceDelete). A server still
    building, or whose host is down, is cleaned up
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
