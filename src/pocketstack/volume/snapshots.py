"""Snapshots: create (``force`` for an in-use volume), list, show, update, delete, metadata
and the admin reset-status / force-delete. The data work is the manager's (manager.py)."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import api, quotas, validation
from pocketstack.volume.models import Snapshot, Volume

SORT_KEYS = ("id", "name", "status", "size", "created_at", "updated_at")
STATUSES = ("creating", "available", "backing-up", "deleting", "error", "deleted",
            "unmanaging", "restoring", "error_deleting")


class SnapshotNotFound(exceptions.NotFound):
    def __init__(self, snapshot_id: str):
        super().__init__(f"Snapshot {snapshot_id} could not be found.")


def target(snap: Snapshot) -> dict:
    return {"project_id": snap.project_id, "user_id": snap.user_id}


def load(s, ctx, snapshot_id: str, *, lock: bool = False) -> Snapshot:
    stmt = sa.select(Snapshot).where(Snapshot.id == snapshot_id)
    if lock:
        stmt = stmt.with_for_update()
    snap = s.scalar(stmt)
    if snap is None or (snap.project_id != ctx.project_id and not ctx.is_admin):
        raise SnapshotNotFound(snapshot_id)
    return snap


IN_USE_FORCE_MESSAGE = (
    "Since microversion 3.66 the 'force' flag is invalid for this request.  For backward "
    "compatability, however, when the 'force' flag is passed with a value evaluating to "
    "True, it is silently ignored.")


def create_snapshot(ctx, body, version: tuple[int, int] = (3, 0)) -> Snapshot:
    """From 3.66 an in-use volume needs no ``force`` (and ``force: false`` is a 400)."""
    data = validation.obj(body, "snapshot")
    validation.only(data, ("volume_id", "force", "name", "description", "metadata",
                           "display_name", "display_description"), "snapshot")
    if "volume_id" in data and data["volume_id"] is None:  # cinder looks it up: 404
        raise api.VolumeNotFound(None)
    volume_id = validation.uuid_like(data.get("volume_id"), "volume_id")
    force = validation.boolean(data.get("force", False), "force")
    if version >= (3, 66):
        if "force" in data and data["force"] is not None and not force:
            raise exceptions.BadRequest(IN_USE_FORCE_MESSAGE)
        force = True
    meta = validation.metadata(data.get("metadata") or {})
    name = validation.text(data.get("name", data.get("display_name")), "name")
    description = validation.text(data.get("description",
                                           data.get("display_description")), "description")
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        quotas.lock(s, ctx.project_id)
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:create_snapshot", api.target(volume))
        allowed = ("available", "in-use") if force else ("available",)
        if volume.status not in allowed:
            raise api.InvalidVolume(f"Volume {volume.id} status must be "
                                    f"{' or '.join(allowed)}, but current status is: "
                                    f"{volume.status}.")
        quotas.check(s, volume.project_id, volume.volume_type.name, snapshots=1,
                     gigabytes=volume.size)
        snap = Snapshot(id=str(uuid.uuid4()), volume_id=volume.id,
                        project_id=volume.project_id, user_id=ctx.user_id, name=name,
                        description=description, size=volume.size, status="creating",
                        progress="0%", meta=meta, created_at=utcnow())
        s.add(snap)
    api.manager().cast(ctx, "create_snapshot", snapshot_id=snap.id)
    return get_snapshot(ctx, snap.id)


def get_snapshot(ctx, snapshot_id: str) -> Snapshot:
    with db.reader() as s:
        snap = load(s, ctx, snapshot_id)
        policy.authorize(ctx, "volume:get_snapshot", target(snap))
        return snap


def list_snapshots(ctx, query, version: tuple[int, int] = (3, 0)) -> list[Snapshot]:
    policy.authorize(ctx, "volume:get_all_snapshots")
    keys = api.sort_params(query, SORT_KEYS)
    limit, marker, offset = api.limit_marker(query)
    stmt = sa.select(Snapshot)
    all_projects = ctx.is_admin and validation.boolean(
        query.get("all_tenants", "0") or "1", "all_tenants")
    if not all_projects:
        stmt = stmt.where(Snapshot.project_id == ctx.project_id)
    if query.get("status"):
        if query["status"] not in STATUSES:
            raise exceptions.BadRequest(f"Invalid input received: Invalid status filter "
                                        f"{query['status']!r}.")
        stmt = stmt.where(Snapshot.status == query["status"])
    for key in ("name", "volume_id"):
        if query.get(key):
            stmt = stmt.where(getattr(Snapshot, key) == query[key])
    with db.reader() as s:
        found = list(s.scalars(stmt))
    if version >= (3, 65) and query.get("consumes_quota") is not None:
        if not validation.boolean(query["consumes_quota"], "consumes_quota"):
            found = []  # every snapshot here consumes quota
    return api.paginate(found, keys, marker, limit, offset, getattr,
                        missing=SnapshotNotFound)  # cinder's db looks the marker up: 404


def update_snapshot(ctx, snapshot_id: str, body) -> Snapshot:
    data = validation.obj(body, "snapshot")
    validation.only(data, ("name", "description", "display_name", "display_description"),
                    "snapshot")
    with db.transaction() as s:
        snap = load(s, ctx, snapshot_id, lock=True)
        policy.authorize(ctx, "volume:update_snapshot", target(snap))
        if "name" in data or "display_name" in data:
            snap.name = validation.text(data.get("name", data.get("display_name")), "name")
        if "description" in data or "display_description" in data:
            snap.description = validation.text(
                data.get("description", data.get("display_description")), "description")
        snap.updated_at = utcnow()
    return get_snapshot(ctx, snapshot_id)


def delete_snapshot(ctx, snapshot_id: str, *, force: bool = False) -> None:
    with db.transaction() as s:
        snap = load(s, ctx, snapshot_id, lock=True)
        policy.authorize(ctx, "volume:delete_snapshot", target(snap))
        if force:
            policy.authorize(ctx, "volume_extension:snapshot_admin_actions:force_delete",
                             target(snap))
        else:
            from pocketstack.volume import group_snapshots

            group_snapshots.refuse_member_delete(s, snap)
        if not force and snap.status not in ("available", "error"):
            raise exceptions.BadRequest(f"Invalid snapshot: Volume Snapshot status must be "
                                        f"available or error, but is {snap.status}.")
        in_use = s.scalar(sa.select(sa.func.count()).select_from(Volume)
                          .where(Volume.snapshot_id == snap.id,
                                 Volume.status.in_(("creating", "downloading"))))
        if in_use:
            raise exceptions.BadRequest("Invalid snapshot: a volume is being created from it.")
        snap.status, snap.updated_at = "deleting", utcnow()
    api.manager().cast(ctx, "delete_snapshot", snapshot_id=snapshot_id)


def set_metadata(ctx, snapshot_id: str, meta, *, replace: bool) -> dict:
    meta = validation.metadata(meta)
    with db.transaction() as s:
        snap = load(s, ctx, snapshot_id, lock=True)
        policy.authorize(ctx, "volume:update_snapshot_metadata", target(snap))
        snap.meta = meta if replace else dict(snap.meta or {}, **meta)
        snap.updated_at = utcnow()
        return dict(snap.meta)


def delete_metadata_key(ctx, snapshot_id: str, key: str) -> None:
    with db.transaction() as s:
        snap = load(s, ctx, snapshot_id, lock=True)
        policy.authorize(ctx, "volume:update_snapshot_metadata", target(snap))
        meta = dict(snap.meta or {})
        if key not in meta:
            raise exceptions.NotFound(f"Snapshot {snapshot_id} has no metadata with key "
                                      f"{key}.")
        del meta[key]
        snap.meta = meta


def reset_status(ctx, snapshot_id: str, data) -> None:
    if not isinstance(data, dict) or data.get("status") not in STATUSES:
        raise validation.bad("Must specify a valid status.")
    with db.transaction() as s:
        snap = load(s, ctx, snapshot_id, lock=True)
        policy.authorize(ctx, "volume_extension:snapshot_admin_actions:reset_status",
                         target(snap))
        snap.status, snap.updated_at = data["status"], utcnow()
