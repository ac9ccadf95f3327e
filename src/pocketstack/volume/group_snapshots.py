"""Group snapshots (cinder 3.14): a snapshot of every volume of a group, made together.
The member snapshots are ordinary snapshots carrying ``group_snapshot_id`` (made by the
volume manager as any other); the group snapshot is ``creating`` until all of them are
available (``error`` if one fails). Members cannot be deleted on their own."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.volume import api, groups, quotas, validation, visible
from pocketstack.volume.models import GroupSnapshot, Snapshot, Volume

STATUSES = ("available", "creating", "deleting", "error", "error_deleting")
SORT_KEYS = ("id", "name", "status", "created_at", "updated_at")


def target(gs: GroupSnapshot) -> dict:
    return {"project_id": gs.project_id, "user_id": gs.user_id}


def summary_view(gs: GroupSnapshot) -> dict:
    return {"id": gs.id, "name": gs.name, "group_type_id": gs.group_type_id}


def view(gs: GroupSnapshot, ctx, version: tuple[int, int]) -> dict:
    out = {"id": gs.id, "group_id": gs.group_id, "group_type_id": gs.group_type_id,
           "status": gs.status, "created_at": isotime_naive(gs.created_at),
           "name": gs.name, "description": gs.description}
    if version >= (3, 58) and policy.check(ctx, "group:group_snapshot_project_attribute"):
        out["project_id"] = gs.project_id
    return out


def _settled(ctx, ident: str) -> GroupSnapshot:
    """The group snapshot with its status brought up to date from its members."""
    with db.transaction() as s:
        gs = visible.group_snapshot(s, ctx, ident)
        status = visible.group_snapshot_status(s, gs)
        if status != gs.status:
            gs.status, gs.updated_at = status, utcnow()
        s.flush()
        s.expunge(gs)
    return gs


def create(ctx, body) -> GroupSnapshot:
    data = validation.obj(body, "group_snapshot")
    validation.only(data, ("group_id", "name", "description"), "group_snapshot")
    if "group_id" not in data:
        raise validation.bad("Invalid input for field/attribute group_snapshot. 'group_id' "
                             "is a required property")
    group_id = validation.uuid_like(data["group_id"], "group_id")
    name = validation.text(data.get("name"), "name")
    description = validation.text(data.get("description"), "description")
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        quotas.lock(s, ctx.project_id)
        group = visible.group(s, ctx, group_id, lock=True)
        policy.authorize(ctx, "group:create_group_snapshot", groups.target(group))
        if group.status != "available":
            raise exceptions.BadRequest(f"Invalid Group: Group {group.id} status must be "
                                        f"available, but current status is: "
                                        f"{group.status}.")
        volumes = list(s.scalars(sa.select(Volume).where(Volume.group_id == group.id)))
        for volume in volumes:
            if volume.status not in ("available", "in-use"):
                raise api.InvalidVolume(f"Volume {volume.id} status must be available or "
                                        f"in-use, but current status is: {volume.status}.")
        quotas.check(s, group.project_id, "", snapshots=len(volumes),
                     gigabytes=sum(v.size for v in volumes))
        gs = GroupSnapshot(id=str(uuid.uuid4()), project_id=group.project_id,
                           user_id=ctx.user_id, group_id=group.id,
                           group_type_id=group.group_type_id, name=name,
                           description=description, status="creating", created_at=utcnow())
        s.add(gs)
        s.flush()
        members = []
        for volume in volumes:
            snap = Snapshot(id=str(uuid.uuid4()), volume_id=volume.id,
                            project_id=volume.project_id, user_id=ctx.user_id,
                            name=f"snapshot-{gs.id}", description=None, size=volume.size,
                            status="creating", progress="0%", meta={},
                            group_snapshot_id=gs.id, created_at=utcnow())
            s.add(snap)
            members.append(snap.id)
        s.expunge(gs)
    for snapshot_id in members:
        api.manager().cast(ctx, "create_snapshot", snapshot_id=snapshot_id)
    return gs


def get(ctx, ident: str) -> GroupSnapshot:
    gs = _settled(ctx, ident)
    policy.authorize(ctx, "group:get_group_snapshot", target(gs))
    return gs


def list_group_snapshots(ctx, query) -> list[GroupSnapshot]:
    policy.authorize(ctx, "group:get_all_group_snapshots")
    keys = api.sort_params(query, SORT_KEYS)
    limit, marker, offset = api.limit_marker(query)
    stmt = sa.select(GroupSnapshot.id)
    if not (ctx.is_admin and validation.boolean(query.get("all_tenants", "0") or "1",
                                                "all_tenants")):
        stmt = stmt.where(GroupSnapshot.project_id == ctx.project_id)
    for key in ("name", "group_id"):
        if query.get(key):
            stmt = stmt.where(getattr(GroupSnapshot, key) == query[key])
    with db.reader() as s:
        ids = list(s.scalars(stmt))
    found = [_settled(ctx, i) for i in ids]
    if query.get("status"):
        found = [gs for gs in found if gs.status == query["status"]]
    return api.paginate(found, keys, marker, limit, offset, getattr,
                        missing=visible.GroupSnapshotNotFound)


def delete(ctx, ident: str) -> None:
    _settled(ctx, ident)
    with db.transaction() as s:
        gs = visible.group_snapshot(s, ctx, ident, lock=True)
        policy.authorize(ctx, "group:delete_group_snapshot", target(gs))
        if gs.status not in ("available", "error"):
            raise exceptions.BadRequest(f"Invalid GroupSnapshot: Group snapshot status must "
                                        f"be available or error, but current status is: "
                                        f"{gs.status}.")
        members = list(s.scalars(sa.select(Snapshot)
                                 .where(Snapshot.group_snapshot_id == gs.id)))
        if s.scalar(sa.select(sa.func.count()).select_from(Volume).where(
                Volume.snapshot_id.in_([m.id for m in members]),
                Volume.status.in_(("creating", "downloading")))):
            raise exceptions.BadRequest("Invalid GroupSnapshot: a volume is being created "
                                        "from one of its snapshots.")
        # It stays, deleting, until the last member snapshot is gone (the volume manager
        # removes it then), as cinder's: a group is not deletable before that.
        for snap in members:
            snap.status, snap.updated_at = "deleting", utcnow()
        if members:
            gs.status, gs.updated_at = "deleting", utcnow()
        else:
            s.delete(gs)
        ids = [m.id for m in members]
    for snapshot_id in ids:
        api.manager().cast(ctx, "delete_snapshot", snapshot_id=snapshot_id)


def reset_status(ctx, ident: str, data) -> None:
    if not isinstance(data, dict) or data.get("status") not in STATUSES or set(data) != {
            "status"}:
        raise validation.bad(f"Invalid input for field/attribute reset_status: 'status' "
                             f"must be one of {', '.join(STATUSES)}.")
    with db.transaction() as s:
        gs = visible.group_snapshot(s, ctx, ident, lock=True)
        policy.authorize(ctx, "group:reset_group_snapshot_status", target(gs))
        gs.status, gs.updated_at = data["status"], utcnow()


def refuse_member_delete(s, snap: Snapshot) -> None:
    """A member snapshot goes with its group snapshot only (as cinder)."""
    if snap.group_snapshot_id and s.get(GroupSnapshot, snap.group_snapshot_id) is not None:
        raise exceptions.BadRequest(f"Invalid snapshot: Snapshot {snap.id} is part of group "
                                    f"snapshot {snap.group_snapshot_id}: delete the group "
                                    "snapshot instead.")

