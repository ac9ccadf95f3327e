"""Snapshot manage and unmanage, as cinder's (os-snapshot-manage, /manageable_snapshots
3.8+, a snapshot's os-unmanage action), on the file backend as manage.py does for
volumes: a file becomes a snapshot of a volume of that backend; an unmanaged snapshot's
file is kept as ``unmanaged-snapshot-<id>``, which is what the manageable list shows."""
from __future__ import annotations

import uuid

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import api, backends, manage, quotas, scheduler, snapshots, validation
from pocketstack.volume.backends import BackendError
from pocketstack.volume.models import Snapshot, Volume


def manage_snapshot(ctx, body) -> Snapshot:
    policy.authorize(ctx, "snapshot_extension:snapshot_manage")
    data = validation.obj(body, "snapshot")
    validation.only(data, ("volume_id", "ref", "name", "description", "metadata"),
                    "snapshot")
    if "volume_id" not in data:
        raise validation.bad("Invalid input for field/attribute snapshot. 'volume_id' is a "
                             "required property")
    volume_id = validation.uuid_like(data["volume_id"], "volume_id")
    name = manage.source_name(data.get("ref"), "snapshot")
    snap_name = validation.text(data.get("name"), "name")
    description = validation.text(data.get("description"), "description")
    meta = validation.metadata(data.get("metadata") or {})
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        quotas.lock(s, ctx.project_id)
        volume = api.load(s, ctx, volume_id)
        backend = scheduler.backend_of(volume.host)
        if backend is None or not backends.get(backend).can_manage:
            raise exceptions.BadRequest(f"Invalid input received: the {backend} backend "
                                        "cannot manage existing snapshots.")
        quotas.check(s, volume.project_id, volume.volume_type.name, snapshots=1,
                     gigabytes=volume.size)
        snap = Snapshot(id=str(uuid.uuid4()), volume_id=volume.id,
                        project_id=volume.project_id, user_id=ctx.user_id, name=snap_name,
                        description=description, size=volume.size, status="creating",
                        progress="0%", meta=meta, created_at=utcnow())
        s.add(snap)
    api.manager().cast(ctx, "manage_snapshot", snapshot_id=snap.id, source_name=name)
    return snapshots.get_snapshot(ctx, snap.id)


def _set(snapshot_id: str, expected: str, **values) -> None:
    with db.transaction() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is not None and snap.status == expected:
            for key, value in values.items():
                setattr(snap, key, value)
            snap.updated_at = utcnow()


def finish_manage(snapshot_id: str, source_name: str) -> None:
    with db.reader() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None or snap.status != "creating":
            return
        host = s.get(Volume, snap.volume_id).host
    try:
        backends.get(scheduler.backend_of(host)).manage_existing_snapshot(snapshot_id,
                                                                          source_name)
    except (BackendError, OSError) as error:
        _set(snapshot_id, "creating", status="error", error_reason=str(error)[:1000])
        return
    _set(snapshot_id, "creating", status="available", progress="100%")


def unmanage(ctx, snapshot_id: str, data) -> None:
    if data not in (None, {}):
        raise validation.bad("Invalid input for field/attribute os-unmanage: it takes no "
                             "arguments.")
    from pocketstack.volume import group_snapshots

    with db.transaction() as s:
        snap = snapshots.load(s, ctx, snapshot_id, lock=True)
        policy.authorize(ctx, "snapshot_extension:snapshot_unmanage", snapshots.target(snap))
        group_snapshots.refuse_member_delete(s, snap)
        if snap.status not in ("available", "error"):
            raise exceptions.BadRequest(f"Invalid snapshot: Volume Snapshot status must be "
                                        f"available or error, but is {snap.status}.")
        backend = scheduler.backend_of(s.get(Volume, snap.volume_id).host)
        if backend is None or not backends.get(backend).can_manage:
            raise exceptions.BadRequest(f"Invalid input received: the {backend} backend "
                                        "cannot unmanage snapshots.")
        snap.status, snap.updated_at = "unmanaging", utcnow()
    api.manager().cast(ctx, "unmanage_snapshot", snapshot_id=snapshot_id)


def finish_unmanage(snapshot_id: str) -> None:
    with db.reader() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None or snap.status != "unmanaging":
            return
        host = s.get(Volume, snap.volume_id).host
    try:
        backends.get(scheduler.backend_of(host)).unmanage_snapshot(snapshot_id)
    except (BackendError, OSError) as error:
        _set(snapshot_id, "unmanaging", status="error", error_reason=str(error)[:1000])
        return
    with db.transaction() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is not None:
            s.delete(snap)


def list_manageable(ctx, query, detailed: bool) -> list[dict]:
    policy.authorize(ctx, "snapshot_extension:list_manageable")
    if query.get("cluster") is not None:
        raise validation.bad("Invalid input received: clusters are not supported here.")
    backend = manage._backend_of_host(query.get("host"))
    keys = api.sort_params({"sort_key": "reference", **{k: v for k, v in query.items()
                                                         if k in ("sort", "sort_key",
                                                                  "sort_dir")}},
                           ("reference", "size"))
    limit, marker, offset = api.limit_marker(query)
    items = []
    for name, size_bytes in api.manager().call(ctx, "list_manageable_snapshots",
                                               backend=backend):
        item = {"reference": {"source-name": name}, "size": manage._size_gb(size_bytes),
                "safe_to_manage": True, "source_reference": None}
        if detailed:
            item.update(reason_not_safe=None, cinder_id=None, extra_info=None)
        items.append(item)
    items.sort(key=lambda i: tuple((i["reference"]["source-name"] if k == "reference"
                                    else i["size"]) for k, _ in keys),
               reverse=keys[0][1] == "desc")
    if marker:
        names = [i["reference"]["source-name"] for i in items]
        items = items[names.index(marker) + 1:] if marker in names else []
    return items[offset:offset + limit]
