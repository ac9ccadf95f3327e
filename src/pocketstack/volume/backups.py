"""Volume backups: full sparse copies of a volume's (or a snapshot's) data in
``[volume] backup_dir`` — or, for volumes of the rbd backend, RBD images in ``[ceph]
backup_pool``, incremental on request (backup_store.py) — restored into a new or an
existing volume. The copying is the manager's; quotas ``backups`` and
``backup_gigabytes`` apply."""
from __future__ import annotations

import os
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import api, encryption_keys, quotas, validation, visible
from pocketstack.volume.models import Backup, Snapshot

SORT_KEYS = ("id", "name", "status", "size", "created_at", "updated_at")





def directory() -> str:
    path = config.CONF.volume.backup_dir or os.path.join(config.data_dir(), "volume-backups")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def path(backup_id: str) -> str:
    return os.path.join(directory(), f"backup-{backup_id}")


def target(b: Backup) -> dict:
    return {"project_id": b.project_id, "user_id": b.user_id}


def create_backup(ctx, body) -> Backup:
    data = validation.obj(body, "backup")
    validation.only(data, ("volume_id", "container", "description", "incremental", "force",
                           "name", "snapshot_id", "metadata", "availability_zone"), "backup")
    volume_id = validation.uuid_like(data.get("volume_id"), "volume_id")
    # null or an id (cinder's optional_uuid): 0, an object or a 20-digit number is a 400
    snapshot_id = data.get("snapshot_id")
    if snapshot_id is not None:
        validation.uuid_like(snapshot_id, "snapshot_id")
    force = validation.boolean(data.get("force", False), "force")
    incremental = validation.boolean(data.get("incremental", False), "incremental")
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        quotas.lock(s, ctx.project_id)
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "backup:create", api.target(volume))
        if snapshot_id is not None:
            snap = s.get(Snapshot, snapshot_id)
            if snap is None or snap.volume_id != volume.id:
                raise exceptions.NotFound(f"Snapshot {snapshot_id} could not be found.")
            if snap.status != "available":
                raise validation.bad(f"Invalid snapshot: Snapshot to be backed up must be "
                                     f"available, but the current status is {snap.status}.")
        parent_id = _parent(s, volume, snap if snapshot_id else None) if incremental \
            else None
        allowed = ("available", "in-use") if force else ("available",)
        if volume.status not in allowed:
            raise api.InvalidVolume(f"Volume to be backed up must be {' or '.join(allowed)} "
                                    f"but the current status is \"{volume.status}\".")
        quotas.check_backup(s, volume.project_id, volume.size)
        backup = Backup(id=str(uuid.uuid4()), project_id=volume.project_id,
                        user_id=ctx.user_id, volume_id=volume.id, snapshot_id=snapshot_id,
                        name=validation.text(data.get("name"), "name"),
                        description=validation.text(data.get("description"), "description"),
                        container=validation.text(data.get("container"), "container"),
                        size=volume.size, status="creating",
                        availability_zone=volume.availability_zone,
                        meta=validation.metadata(data.get("metadata") or {}),
                        parent_id=parent_id, volume_type_id=volume.volume_type_id,
                        created_at=utcnow())
        s.add(backup)
        restore_status = volume.status
        volume.status, volume.updated_at = "backing-up", utcnow()
    api.manager().cast(ctx, "create_backup", backup_id=backup.id,
                       restore_status=restore_status)
    return get_backup(ctx, backup.id)


def _parent(s, volume, snapshot) -> str:
    """cinder's choice of an incremental backup's parent: the volume's available backup
    with the latest data (older than the snapshot, when backing one up)."""
    from pocketstack.volume import scheduler

    if scheduler.backend_of(volume.host) != "rbd" and \
            config.CONF.volume.backup_driver != "swift":
        raise validation.bad("Invalid backup: Incremental backups need a volume of the rbd "
                             "backend or [volume] backup_driver = swift: backups of other "
                             "volumes are full copies.")
    found = [b for b in s.scalars(sa.select(Backup).where(
        Backup.volume_id == volume.id, Backup.status == "available"))
        if snapshot is None or (b.data_timestamp or b.created_at) < snapshot.created_at]
    if not found:
        raise validation.bad("Invalid backup: No backups available to do an incremental "
                             "backup.")
    return max(found, key=lambda b: b.data_timestamp or b.created_at).id


def dependents(ids) -> set[str]:
    """Those of the backups ``ids`` that incremental backups build on."""
    ids = list(ids)
    if not ids:
        return set()
    with db.reader() as s:
        return set(s.scalars(sa.select(Backup.parent_id).where(Backup.parent_id.in_(ids))))


def get_backup(ctx, backup_id: str) -> Backup:
    with db.reader() as s:
        found = visible.backup(s, ctx, backup_id)
        policy.authorize(ctx, "backup:get", target(found))
        return found


def list_backups(ctx, query) -> list[Backup]:
    policy.authorize(ctx, "backup:get_all")
    keys = api.sort_params(query, SORT_KEYS)
    limit, marker, offset = api.limit_marker(query)
    stmt = sa.select(Backup)
    if not (ctx.is_admin and validation.boolean(query.get("all_tenants", "0") or "1",
                                                "all_tenants")):
        stmt = stmt.where(Backup.project_id == ctx.project_id)
    for key in ("name", "status", "volume_id"):
        if query.get(key):
            stmt = stmt.where(getattr(Backup, key) == query[key])
    with db.reader() as s:
        found = list(s.scalars(stmt))
    return api.paginate(found, keys, marker, limit, offset, getattr)


def update_backup(ctx, backup_id: str, body) -> Backup:
    data = validation.obj(body, "backup")
    validation.only(data, ("name", "description", "metadata"), "backup")
    with db.transaction() as s:
        found = visible.backup(s, ctx, backup_id, lock=True)
        policy.authorize(ctx, "backup:update", target(found))
        if "name" in data:
            found.name = validation.text(data["name"], "name")
        if "description" in data:
            found.description = validation.text(data["description"], "description")
        if "metadata" in data:
            found.meta = validation.metadata(data["metadata"])
        found.updated_at = utcnow()
    return get_backup(ctx, backup_id)


def delete_backup(ctx, backup_id: str, *, force: bool = False) -> None:
    with db.transaction() as s:
        found = visible.backup(s, ctx, backup_id, lock=True)
        policy.authorize(ctx, "backup:delete", target(found))
        if force:
            policy.authorize(ctx, "volume_extension:backup_admin_actions:force_delete",
                             target(found))
        elif found.status not in ("available", "error"):
            raise validation.bad(f"Invalid backup: Backup status must be available or "
                                 f"error, but is {found.status}.")
        if s.scalar(sa.select(Backup.id).where(Backup.parent_id == found.id).limit(1)):
            raise validation.bad("Invalid backup: Incremental backups exist for this "
                                 "backup.")
        found.status, found.updated_at = "deleting", utcnow()
    api.manager().cast(ctx, "delete_backup", backup_id=backup_id)


def restore_backup(ctx, backup_id: str, body) -> dict:
    data = body.get("restore") if isinstance(body, dict) else None
    if not isinstance(data, dict):
        raise validation.bad("Missing required element 'restore' in request body.")
    validation.only(data, ("volume_id", "name"), "restore")
    with db.reader() as s:
        found = visible.backup(s, ctx, backup_id)
        policy.authorize(ctx, "backup:restore", target(found))
        if found.status != "available":
            raise validation.bad(f"Invalid backup: Backup status must be available, but is "
                                 f"{found.status}.")
    volume_id = data.get("volume_id")
    if not volume_id:  # a new volume: its creation copies the backup in (manager.py)
        volume = api.create_volume(ctx, {"volume": {
            "size": found.size, "backup_id": backup_id,
            "name": validation.text(data.get("name"), "name") or
            f"restore_backup_{found.id}"}})
        return {"backup_id": backup_id, "volume_id": volume.id, "volume_name": volume.name}
    else:
        with db.transaction() as s:
            volume = api.load(s, ctx, validation.uuid_like(volume_id, "volume_id"), lock=True)
            if volume.status != "available":
                raise api.InvalidVolume(f"Volume to be restored to must be available, but "
                                        f"the current status is \"{volume.status}\".")
            if volume.size < found.size:
                raise api.InvalidVolume(f"volume size {volume.size} is smaller than backup "
                                        f"size {found.size}.")
            encryption_keys.check_restore(found, volume.encryption_key_id is not None)
            volume.status, volume.updated_at = "restoring-backup", utcnow()
    with db.transaction() as s:
        row = s.get(Backup, backup_id)
        row.status, row.updated_at = "restoring", utcnow()
    api.manager().cast(ctx, "restore_backup", backup_id=backup_id, volume_id=volume_id)
    return {"backup_id": backup_id, "volume_id": volume_id, "volume_name": volume.name}


def reset_status(ctx, backup_id: str, data) -> None:
    if not isinstance(data, dict) or data.get("status") not in ("available", "error"):
        raise validation.bad("Must specify a valid status: available or error.")
    with db.transaction() as s:
        found = visible.backup(s, ctx, backup_id, lock=True)
        policy.authorize(ctx, "volume_extension:backup_admin_actions:reset_status",
                         target(found))
        found.status, found.updated_at = data["status"], utcnow()
