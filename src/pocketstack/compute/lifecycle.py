"""Server actions beyond power (nova's compute/api.py): rescue/unrescue, changePassword,
trigger_crash_dump, shelve/shelveOffload/unshelve. The API half: nova's state checks, a
task_state compare-and-swap, a cast to the host (compute/manager/lifecycle.py).

Shelving, as nova with its default shelved_offload_time = 0: the host powers the guest off,
snapshots it to an image "<name>-shelved" (SHELVED), and offloads it at once — guest
destroyed, ports unbound, claim released, no host (SHELVED_OFFLOADED). Unshelving an
offloaded server schedules it again and the chosen host spawns it from that image.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute import instances, states, trace
from pocketstack.compute.guards import begin, check_locked, host_up, invalid_state
from pocketstack.compute.trace import Step


def _cast(ctx, host: str, method: str, **kwargs) -> None:
    from pocketstack.compute.resize import compute_cast

    compute_cast(ctx, host, method, **kwargs)


def _host_must_be_up(inst, action: str) -> None:
    if not host_up(inst.host):
        raise exceptions.Conflict(f"Cannot '{action}' instance {inst.uuid}: its compute host "
                                  f"{inst.host or '-'} is not up.")


def _check_rescuable(ctx, inst, image_ref: str | None, allow_bfv: bool) -> None:
    """nova's compute API rescue checks: a named rescue image must exist and not be a
    volume snapshot; a volume-backed server is rescuable only from 2.87 (``allow_bfv``)
    and with a rescue image (or its own image) that says where to attach the rescue
    disk (hw_rescue_bus and hw_rescue_device). Every host here can rescue a volume-backed
    server (nova's COMPUTE_RESCUE_BFV trait): rescue is a guest cycle on all drivers."""
    if image_ref:
        from pocketstack.clients.image import ImageClient

        props = ImageClient(ctx).get(image_ref)
        if props is None or props.get("img_block_device_mapping"):
            raise exceptions.BadRequest(
                f"Requested rescue image '{image_ref}' is not supported")
    else:
        props = (inst.request_spec or {}).get("image_properties") or {}
    if not (inst.request_spec or {}).get("is_bfv"):
        return
    if not (allow_bfv and "hw_rescue_bus" in props and "hw_rescue_device" in props):
        raise exceptions.BadRequest(f"Instance {inst.uuid} cannot be rescued: Cannot rescue "
                                    "a volume-backed instance")


def rescue(ctx, inst, admin_pass: str, image_ref: str | None, allow_bfv: bool = False) -> None:
    _host_must_be_up(inst, "rescue")
    _check_rescuable(ctx, inst, image_ref, allow_bfv)
    begin(ctx, inst, "rescue", (states.ACTIVE, states.STOPPED, states.ERROR),
          states.RESCUING, "rescue")
    _cast(ctx, inst.host, "rescue_instance", instance_uuid=inst.uuid, image_ref=image_ref)


def unrescue(ctx, inst) -> None:
    _host_must_be_up(inst, "unrescue")
    begin(ctx, inst, "unrescue", (states.RESCUED,), states.UNRESCUING, "unrescue")
    _cast(ctx, inst.host, "unrescue_instance", instance_uuid=inst.uuid)


def change_password(ctx, inst) -> None:
    _host_must_be_up(inst, "changePassword")
    begin(ctx, inst, "changePassword", (states.ACTIVE,), states.UPDATING_PASSWORD,
          "changePassword")
    _cast(ctx, inst.host, "set_admin_password", instance_uuid=inst.uuid)


def trigger_crash_dump(ctx, inst) -> None:
    _host_must_be_up(inst, "trigger_crash_dump")
    if inst.power_state != states.RUNNING:
        raise exceptions.Conflict(f"Instance {inst.uuid} is not running.")
    begin(ctx, inst, "trigger_crash_dump", (states.ACTIVE, states.ERROR), None,
          "trigger_crash_dump")
    _cast(ctx, inst.host, "trigger_crash_dump", instance_uuid=inst.uuid)


def shelve(ctx, inst) -> str:
    """Returns the id of the image the shelved server is kept in."""
    from pocketstack.clients.image import ImageClient

    _host_must_be_up(inst, "shelve")
    check_locked(ctx, inst)
    ok = (states.ACTIVE, states.STOPPED, states.PAUSED, states.SUSPENDED)
    if inst.vm_state not in ok:
        raise invalid_state(inst, "shelve")
    if inst.task_state is not None:
        raise invalid_state(inst, "shelve", "task_state")
    image = ImageClient(ctx).create(name=f"{inst.display_name}-shelved", disk_format="qcow2",
                                    container_format="bare", instance_uuid=inst.uuid,
                                    image_type="snapshot")
    begin(ctx, inst, "shelve", ok, states.SHELVING, "shelve")
    _cast(ctx, inst.host, "shelve_instance", instance_uuid=inst.uuid, image_id=image["id"])
    return image["id"]


def shelve_offload(ctx, inst) -> None:
    _host_must_be_up(inst, "shelveOffload")
    begin(ctx, inst, "shelveOffload", (states.SHELVED,), states.SHELVING_OFFLOADING,
          "shelveOffload")
    _cast(ctx, inst.host, "shelve_offload_instance", instance_uuid=inst.uuid)


_UNSET = object()  # unshelve's zone when the request names none (None unpins, 2.91)


def _host_zone(host: str) -> str:
    from pocketstack.common import config
    from pocketstack.compute.aggregates import _zone_of_host

    with db.reader() as s:
        return _zone_of_host(s, host) or config.CONF.compute.default_availability_zone


def unshelve(ctx, inst, zone=_UNSET, host: str | None = None) -> None:
    """nova's compute API unshelve: ``zone`` (2.77) re-pins the server to another zone,
    None (2.91) unpins it, and ``host`` (2.91, admin) picks the host - which must then be
    in the zone the server is pinned to after this request (409)."""
    check_locked(ctx, inst)
    if inst.vm_state not in (states.SHELVED, states.SHELVED_OFFLOADED):
        raise invalid_state(inst, "unshelve")
    if inst.task_state is not None:
        raise invalid_state(inst, "unshelve", "task_state")
    az_passed = zone is not _UNSET
    if (az_passed or host) and inst.vm_state != states.SHELVED_OFFLOADED:
        raise exceptions.Conflict(f"The unshelve action of instance {inst.uuid} with an "
                                  "availability zone or host is only allowed when it is "
                                  "shelved offloaded.")
    if az_passed and zone:
        from pocketstack.compute.api import availability_zones

        if zone not in availability_zones():
            raise exceptions.BadRequest("The requested availability zone is not available")
    spec = dict(inst.request_spec or {})
    pinned = zone if az_passed else spec.get("availability_zone")
    if host:
        from pocketstack.common import policy
        from pocketstack.compute.models import ComputeNode

        policy.authorize(ctx, "os_compute_api:os-shelve:unshelve_to_host",
                         {"user_id": inst.user_id, "project_id": inst.project_id})
        with db.reader() as s:
            known = s.scalar(sa.select(ComputeNode.id).where(ComputeNode.host == host)
                             .limit(1))
        if known is None:
            raise exceptions.BadRequest(f"Compute host {host} could not be found.")
        if pinned is not None and _host_zone(host) != pinned:
            raise exceptions.Conflict(f'Host "{host}" is not in the availability zone '
                                      f'"{pinned}".')
    with db.transaction() as s:
        if not instances.update(inst.uuid, {"task_state": states.UNSHELVING,
                                            "request_spec": dict(spec,
                                                                 availability_zone=pinned)},
                                expect_task=None, session=s):
            raise invalid_state(instances.load(inst.uuid), "unshelve", "task_state")
        trace.start_action(s, ctx, inst.uuid, "unshelve")
        trace.store(s, [Step(ctx, inst.uuid, "api_unshelve", "api", None).done()])
    if inst.vm_state == states.SHELVED:
        _cast(ctx, inst.host, "unshelve_instance", instance_uuid=inst.uuid)
        return
    target = _schedule(ctx, inst, pinned, host, "unshelve", pinned_zone=pinned)
    if target is None:
        return
    # as nova's conductor: the server is now in its new host's zone
    instances.update(inst.uuid, {"host": target["host"], "node": target["node"],
                                 "availability_zone": _host_zone(target["host"])},
                     expect_task=states.UNSHELVING)
    _cast(ctx, target["host"], "unshelve_instance", instance_uuid=inst.uuid)


def _schedule(ctx, inst, zone, host, action: str, exclude=(),
              pinned_zone=_UNSET) -> dict | None:
    """Pick and claim a host (the scheduler claims it under the server's id); on failure
    the server goes back to its state with a fault and None is returned."""
    from pocketstack.compute.scheduler.rpcapi import SchedulerAPI

    spec = dict(inst.request_spec or {})
    spec.update(flavor=inst.flavor, tried_hosts=list(exclude), force_host=host,
                force_node=None, num_instances=1)
    if zone:
        spec["availability_zone"] = zone
    if pinned_zone is not _UNSET:  # unshelve: the zone it asked for, or none (unpinned)
        spec["availability_zone"] = pinned_zone
    step = Step(ctx, inst.uuid, "scheduler_select_destinations", "scheduler", None)
    try:
        return SchedulerAPI().select_destinations(ctx, spec, [inst.uuid])[0]
    except exceptions.PocketstackError as error:
        message = getattr(error, "message", None) or str(error)
        with db.transaction() as s:
            instances.update(inst.uuid, {"task_state": None}, events=[step.fail(message)],
                             session=s)
            instances.add_fault(s, inst.uuid, 500, f"{action} failed: {message}")
            trace.finish_action(s, ctx.request_id, inst.uuid, "Error")
        return None


# --- deferred delete ([compute] reclaim_instance_interval) ----------------------------------

def soft_delete(ctx, inst) -> None:
    """DELETE with a reclaim interval: the host powers the guest off and the server waits
    SOFT_DELETED (resources held) until `restore`, `forceDelete` or the interval ends."""
    from pocketstack.common.timeutils import utcnow

    check_locked(ctx, inst)
    with db.transaction() as s:
        if not instances.update(inst.uuid, {"task_state": states.SOFT_DELETING,
                                            "deleted_at": utcnow()},
                                expect_task=None, session=s):
            raise invalid_state(instances.load(inst.uuid), "delete", "task_state")
        trace.start_action(s, ctx, inst.uuid, "delete")
        trace.store(s, [Step(ctx, inst.uuid, "api_soft_delete", "api", None).done()])
    _cast(ctx, inst.host, "soft_delete_instance", instance_uuid=inst.uuid)


def restore(ctx, inst) -> None:
    _host_must_be_up(inst, "restore")
    check_locked(ctx, inst)
    if inst.vm_state != states.SOFT_DELETED:
        raise invalid_state(inst, "restore")
    with db.transaction() as s:
        if not instances.update(inst.uuid, {"task_state": states.RESTORING, "deleted_at": None},
                                expect_task=None, expect_vm=states.SOFT_DELETED, session=s):
            raise invalid_state(instances.load(inst.uuid), "restore", "task_state")
        trace.start_action(s, ctx, inst.uuid, "restore")
        trace.store(s, [Step(ctx, inst.uuid, "api_restore", "api", None).done()])
    _cast(ctx, inst.host, "restore_instance", instance_uuid=inst.uuid)
