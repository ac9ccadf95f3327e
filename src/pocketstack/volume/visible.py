"""What a caller sees of backups, groups and group snapshots by id: a missing one, or
another project's (admins see all), is cinder's 404; a group snapshot's status follows
its member snapshots. The volume API (a volume from a backup or in a group) and the
backup, group and group snapshot APIs all look them up here."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import exceptions
from pocketstack.volume.models import Backup, GroupSnapshot, Snapshot, VolumeGroup


class BackupNotFound(exceptions.NotFound):
    def __init__(self, backup_id: str):
        super().__init__(f"Backup {backup_id} could not be found.")


class GroupNotFound(exceptions.NotFound):
    def __init__(self, group_id):
        super().__init__(f"Group {group_id} could not be found.")


class GroupSnapshotNotFound(exceptions.NotFound):
    def __init__(self, ident):
        super().__init__(f"GroupSnapshot {ident} could not be found.")


def backup(s, ctx, backup_id: str, *, lock: bool = False) -> Backup:
    stmt = sa.select(Backup).where(Backup.id == backup_id)
    if lock:
        stmt = stmt.with_for_update()
    found = s.scalar(stmt)
    if found is None or (found.project_id != ctx.project_id and not ctx.is_admin):
        raise BackupNotFound(backup_id)
    return found


def group(s, ctx, group_id, *, lock: bool = False) -> VolumeGroup:
    if not isinstance(group_id, str):
        raise GroupNotFound(group_id)
    stmt = sa.select(VolumeGroup).where(VolumeGroup.id == group_id)
    group = s.scalar(stmt.with_for_update() if lock else stmt)
    if group is None or (group.project_id != ctx.project_id and not ctx.is_admin):
        raise GroupNotFound(group_id)
    return group


def group_snapshot(s, ctx, ident, *, lock: bool = False) -> GroupSnapshot:
    if not isinstance(ident, str):
        raise GroupSnapshotNotFound(ident)
    stmt = sa.select(GroupSnapshot).where(GroupSnapshot.id == ident)
    gs = s.scalar(stmt.with_for_update() if lock else stmt)
    if gs is None or (gs.project_id != ctx.project_id and not ctx.is_admin):
        raise GroupSnapshotNotFound(ident)
    return gs


def group_snapshot_status(s, gs: GroupSnapshot) -> str:
    """``creating`` until every member snapshot is available (then available), error as
    soon as one failed; other statuses are as recorded."""
    if gs.status != "creating":
        return gs.status
    statuses = set(s.scalars(sa.select(Snapshot.status)
                             .where(Snapshot.group_snapshot_id == gs.id)))
    if "error" in statuses:
        return "error"
    if statuses <= {"available"}:
        return "available"
    return "creating"
