"""Resize, confirmResize, revertResize: the API half (nova's compute/api.py resize,
confirm_resize, revert_resize) and the pieces the conductor and the hosts share.

The flow, as nova's (migration status in brackets):

  API      checks state, flavor, quota delta; migration row [pre-migrating];
           task_state resize_prep; cast conductor.resize_instance
  conductor  re-keys the instance's claim to the migration (the source keeps it),
           schedules with the new flavor (same host allowed, as devstack's
           allow_resize_to_same_host=True; a real guest only to hosts sharing its
           instance storage) — the scheduler claims the destination for the
           instance; cast prep_resize to the destination
  dest     prep_resize → cast resize_instance to the source
  source   resize_migrating [migrating]: power off, disk away → resize_migrated
           [post-migrating]; cast finish_resize to the destination
  dest     resize_finish: ports bound here, flavor swapped, guest started →
           vm_state resized (VERIFY_RESIZE) [finished]
  confirm  [confirming] → source drops the old guest and the migration's claim →
           ACTIVE (or SHUTOFF) [confirmed]
  revert   resize_reverting (REVERT_RESIZE) [reverting] → destination drops its guest and
           the instance's claim → source takes the claim back, old flavor, ports bound
           back, guest restarted → ACTIVE/SHUTOFF [reverted]

A failure before the guest left the source rolls everything back (claims, flavor, quota
usage) and leaves the server as it was with an instance fault; a failure after it puts
the server in ERROR on the source with the old flavor — in both cases no claim is left
behind. Compute RPC methods (topic compute, server = host), version 1.0 of this API:
prep_resize, resize_instance, finish_resize, confirm_resize, revert_resize,
finish_revert_resize — each takes instance_uuid and migration_uuid.
"""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import instances, quotas, states, trace
from pocketstack.compute.guards import check_locked, host_up, invalid_state
from pocketstack.compute.models import ComputeNode, Migration
from pocketstack.compute.scheduler import claims
from pocketstack.compute.trace import Step

# statuses of a migration still holding resources
IN_PROGRESS = ("pre-migrating", "migrating", "post-migrating", "finished", "confirming",
               "reverting")


def compute_cast(ctx, host: str, method: str, **kwargs) -> None:
    from pocketstack.compute.rpcapi import ComputeAPI

    ComputeAPI()._host(host).cast(ctx, method, **kwargs)


def get_migration(uuid: str) -> Migration | None:
    with db.reader() as s:
        return s.scalar(sa.select(Migration).where(Migration.uuid == uuid))


def set_status(uuid: str, status: str, expect: str | tuple | None = None, session=None,
               **values) -> bool:
    cond = [Migration.uuid == uuid]
    if expect is not None:
        cond.append(Migration.status.in_([expect] if isinstance(expect, str) else expect))
    stmt = (sa.update(Migration).where(*cond)
            .values(status=status, updated_at=utcnow(), **values)
            .execution_options(synchronize_session=False))
    if session is not None:
        return session.execute(stmt).rowcount == 1
    with db.transaction() as s:
        return s.execute(stmt).rowcount == 1


def active_migration(instance_uuid: str, statuses=IN_PROGRESS) -> Migration | None:
    with db.reader() as s:
        return s.scalar(sa.select(Migration)
                        .where(Migration.instance_uuid == instance_uuid,
                               Migration.status.in_(statuses))
                        .order_by(Migration.id.desc()))


# Built once: every delete asks (and almost always finds nothing).
_IN_PROGRESS_OF = sa.select(Migration).where(Migration.instance_uuid == sa.bindparam("uuid"),
                                             Migration.status.in_(IN_PROGRESS))


def release_for_delete(session, instance_uuid: str) -> list[str]:
    """A server deleted mid-resize: give back the source's claim too."""
    done = []
    rows = session.scalars(_IN_PROGRESS_OF, {"uuid": instance_uuid}).all()
    for m in rows:
        if claims.release(m.uuid, session=session):
            done.append(f"released the resize's claim on {m.source_compute}")
        m.status, m.updated_at = "error", utcnow()
    return done


def flavor_usage(flavor: dict) -> dict:
    return {"vcpus": flavor["vcpus"], "memory_mb": flavor["memory_mb"]}


def _check_quota_delta(ctx, inst, old: dict, new: dict) -> None:
    """Upsizes must fit the project's cores and ram quota (nova's _check_quota_for_upsize)."""
    d_cores = new["vcpus"] - old["vcpus"]
    d_ram = new["memory_mb"] - old["memory_mb"]
    if d_cores <= 0 and d_ram <= 0:
        return
    lim = quotas.limits(inst.project_id)
    used = quotas.usage(inst.project_id)
    for resource, delta in (("cores", d_cores), ("ram", d_ram)):
        if delta > 0 and 0 <= lim[resource] < used[resource] + delta:
            raise quotas.QuotaExceeded(
                f"Quota exceeded for {resource}: Requested {delta}, but already used "
                f"{used[resource]} of {lim[resource]} {resource}")


def _check_host_up(inst, action: str) -> None:
    if not host_up(inst.host):
        raise exceptions.Conflict(f"Cannot '{action}' instance {inst.uuid}: its compute host "
                                  f"{inst.host or '-'} is not up.")


def _node(host: str | None) -> tuple[str | None, str | None]:
    """(hypervisor type, shared storage) of a host's compute node."""
    with db.reader() as s:
        row = s.execute(sa.select(ComputeNode.hypervisor_type, ComputeNode.shared_storage)
                        .where(ComputeNode.host == host)).first()
    return (row[0], row[1]) if row else (None, None)


def keeps_disks_local(inst) -> bool:
    """A real guest (libvirt) whose host reports no shared instance storage: a resize
    happens on that host, where its disks are. With shared storage it may go to any host
    sharing it (nova's resize with a shared instances_path), the host itself included."""
    kind, storage = _node(inst.host)
    return kind not in (None, "fake") and not storage


def same_hypervisor(spec: dict, inst) -> dict:
    """The request spec of a move: a real guest goes only to a host of its hypervisor
    type (a simulated host cannot take its disks), as the image property img_hv_type
    would ask of the ImagePropertiesFilter, and only to a host that shares its host's
    instance storage (the SharedStorageFilter; its own host alone if it shares none)."""
    kind, storage = _node(inst.host)
    if kind not in (None, "fake"):
        spec["image_properties"] = dict(spec.get("image_properties") or {}, img_hv_type=kind)
        hosts = [inst.host]
        if storage:
            with db.reader() as s:
                hosts = list(s.scalars(sa.select(ComputeNode.host)
                                       .where(ComputeNode.shared_storage == storage)))
        spec["storage_hosts"] = hosts
    return spec


def _new_flavor(ctx, inst, flavor_ref: str) -> dict:
    from pocketstack.compute.rest.flavors import get_flavor

    try:
        new = get_flavor(ctx, flavor_ref)
    except exceptions.NotFound:
        raise exceptions.BadRequest(f"Flavor {flavor_ref} could not be found.") from None
    old = inst.flavor
    if new["flavorid"] == old["flavorid"]:
        raise exceptions.BadRequest("When resizing, instances must change flavor!")
    if new.get("disabled"):
        raise exceptions.BadRequest(f"Flavor {flavor_ref} could not be found.")
    # A server booted from a volume keeps its root disk there: the flavor's disk is moot.
    bfv = bool((inst.request_spec or {}).get("is_bfv"))
    if new["root_gb"] == 0 and old["root_gb"] != 0 and not bfv:
        raise exceptions.BadRequest("Server disk was unable to be resized because: Resize "
                                    "to zero disk flavor is not allowed.")
    image = (inst.request_spec or {}).get("image") or {}
    if (image.get("min_ram") or 0) > new["memory_mb"]:
        raise exceptions.BadRequest("Flavor's memory is too small for requested image.")
    if new["root_gb"] and not bfv and ((image.get("min_disk") or 0) > new["root_gb"]
                           or (image.get("size") or 0) > new["root_gb"] * 1024 ** 3):
        raise exceptions.BadRequest("Flavor's disk is too small for requested image.")
    return new


def resize(ctx, inst, flavor_ref: str, auto_disk_config: bool | None = None) -> Migration:
    check_locked(ctx, inst)
    if inst.vm_state not in (states.ACTIVE, states.STOPPED):
        raise invalid_state(inst, "resize")
    if inst.task_state is not None:
        raise invalid_state(inst, "resize", "task_state")
    _check_host_up(inst, "resize")
    new = _new_flavor(ctx, inst, flavor_ref)
    old = inst.flavor
    _check_quota_delta(ctx, inst, old, new)
    migration = Migration(uuid=str(uuidlib.uuid4()), instance_uuid=inst.uuid,
                          status="pre-migrating", source_compute=inst.host,
                          source_node=inst.node, old_flavor=old, new_flavor=new,
                          old_vm_state=inst.vm_state, project_id=inst.project_id,
                          user_id=inst.user_id,
                          # a real guest without shared storage is resized where
                          # its disks are
                          dest_compute=inst.host if keeps_disks_local(inst) else None)
    values = {"task_state": states.RESIZE_PREP, "progress": 0,
              # counted quota holds the larger of the two flavors until the resize ends
              "vcpus": max(old["vcpus"], new["vcpus"]),
              "memory_mb": max(old["memory_mb"], new["memory_mb"])}
    if auto_disk_config is not None:
        values["auto_disk_config"] = auto_disk_config
    with db.transaction() as s:
        if not instances.update(inst.uuid, values, expect_task=None,
                                expect_vm=(states.ACTIVE, states.STOPPED), session=s):
            raise invalid_state(instances.get(ctx, inst.uuid), "resize", "task_state")
        s.add(migration)
        trace.start_action(s, ctx, inst.uuid, "resize")
        trace.store(s, [Step(ctx, inst.uuid, "api_resize", "api", None,
                             f"{old['name']} → {new['name']}").done()])
    from pocketstack.compute.api import conductor

    conductor().client.cast(ctx, "resize_instance", instance_uuid=inst.uuid,
                            migration_uuid=migration.uuid)
    return migration


def _finished_migration(inst, action: str) -> Migration:
    if inst.vm_state != states.RESIZED:
        raise invalid_state(inst, action)
    if inst.task_state is not None:
        raise invalid_state(inst, action, "task_state")
    m = active_migration(inst.uuid, ("finished",))
    if m is None:
        raise exceptions.BadRequest("Instance has not been resized.")
    return m


def confirm(ctx, inst) -> None:
    check_locked(ctx, inst)
    m = _finished_migration(inst, "confirmResize")
    if not host_up(m.source_compute):
        raise exceptions.Conflict(f"Cannot 'confirmResize' instance {inst.uuid}: the source "
                                  f"compute host {m.source_compute} is not up.")
    with db.transaction() as s:
        if not set_status(m.uuid, "confirming", expect="finished", session=s):
            raise exceptions.BadRequest("Instance has not been resized.")
        trace.start_action(s, ctx, inst.uuid, "confirmResize")
        trace.store(s, [Step(ctx, inst.uuid, "api_confirm_resize", "api", None).done()])
    compute_cast(ctx, m.source_compute, "confirm_resize", instance_uuid=inst.uuid,
                 migration_uuid=m.uuid)


def revert(ctx, inst) -> None:
    check_locked(ctx, inst)
    m = _finished_migration(inst, "revertResize")
    _check_host_up(inst, "revertResize")
    if not host_up(m.source_compute):
        raise exceptions.Conflict(f"Cannot 'revertResize' instance {inst.uuid}: the source "
                                  f"compute host {m.source_compute} is not up.")
    with db.transaction() as s:
        if not set_status(m.uuid, "reverting", expect="finished", session=s):
            raise exceptions.BadRequest("Instance has not been resized.")
        if not instances.update(inst.uuid, {"task_state": states.RESIZE_REVERTING},
                                expect_task=None, expect_vm=states.RESIZED, session=s):
            raise invalid_state(instances.get(ctx, inst.uuid), "revertResize", "task_state")
        trace.start_action(s, ctx, inst.uuid, "revertResize")
        trace.store(s, [Step(ctx, inst.uuid, "api_revert_resize", "api", None).done()])
    compute_cast(ctx, inst.host, "revert_resize", instance_uuid=inst.uuid,
                 migration_uuid=m.uuid)


def rollback(ctx, instance_uuid: str, m: Migration, step: Step, reason: str, *,
             error_state: bool = False, expect_task=None) -> None:
    """Undo a resize that failed: the destination's claim is dropped, the source's claim
    goes back to the instance, the old flavor and host are restored. ``error_state``
    (the guest already left the source) puts the server in ERROR; otherwise it returns to
    the state it had. Always records a fault and finishes the action as Error."""
    old = m.old_flavor
    values = {"task_state": None, "host": m.source_compute, "node": m.source_node,
              "flavor": old, **flavor_usage(old),
              "vm_state": states.ERROR if error_state else m.old_vm_state}
    if error_state:
        values["power_state"] = states.SHUTDOWN
    with db.transaction() as s:
        claims.release(instance_uuid, session=s)  # the destination's (none if unscheduled)
        claims.move_back(m.uuid, instance_uuid, session=s)  # the source's, back to the server
        set_status(m.uuid, "error", session=s)
        kwargs = {} if expect_task is None else {"expect_task": expect_task}
        if instances.update(instance_uuid, values, events=[step], session=s, **kwargs):
            instances.add_fault(s, instance_uuid, 500, reason, host=step.host)
        else:  # deleted meanwhile: nothing to hand the claim back to
            claims.release(instance_uuid, session=s)
        trace.finish_action(s, ctx.request_id, instance_uuid, "Error")
