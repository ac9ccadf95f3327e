"""Per-project quotas, as cinder's: volumes, snapshots and gigabytes (volumes plus
snapshots), in total and per volume type (``volumes_<type>`` ...), backups, groups and
``per_volume_gigabytes``. Usage is counted from the volume and snapshot rows inside the
transaction that adds the new row, under a per-project lock row, so concurrent creates
can never exceed a limit (on SQLite write transactions are serialized anyway).
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.volume.models import (Backup, Snapshot, Volume, VolumeGroup, VolumeQuota,
                                       VolumeQuotaClass, VolumeType)

BASE = ("volumes", "snapshots", "gigabytes", "backups", "backup_gigabytes", "groups",
        "per_volume_gigabytes")
PER_TYPE = ("volumes", "snapshots", "gigabytes")
_LOCK = "_lock"


class OverLimit(exceptions.OverQuota):
    code = 413


DEFAULT_CLASS = "default"


def defaults() -> dict[str, int]:
    """The limits of a project without its own: the configured ones, as the ``default``
    quota class overrides them."""
    return class_limits(DEFAULT_CLASS)


def class_limits(class_name: str) -> dict[str, int]:
    """A quota class's limits: its own values over the configured defaults."""
    conf = config.CONF.volume
    values = {"volumes": conf.quota_volumes, "snapshots": conf.quota_snapshots,
              "gigabytes": conf.quota_gigabytes, "backups": conf.quota_backups,
              "backup_gigabytes": conf.quota_backup_gigabytes, "groups": conf.quota_groups,
              "per_volume_gigabytes": conf.per_volume_size_limit}
    with db.reader() as s:
        for name in s.scalars(sa.select(VolumeType.name).order_by(VolumeType.name)):
            for resource in PER_TYPE:
                values[f"{resource}_{name}"] = -1
        for row in s.scalars(sa.select(VolumeQuotaClass)
                             .where(VolumeQuotaClass.class_name == class_name)):
            if row.resource in values:
                values[row.resource] = row.hard_limit
    return values


def update_class(class_name: str, values: dict[str, int]) -> None:
    with db.transaction() as s:
        for resource, value in values.items():
            row = s.get(VolumeQuotaClass, (class_name, resource))
            if row is None:
                s.add(VolumeQuotaClass(class_name=class_name, resource=resource,
                                       hard_limit=value))
            else:
                row.hard_limit = value


def known(resource: str) -> bool:
    return resource in defaults()


def limits(project_id: str) -> dict[str, int]:
    values = defaults()
    with db.reader() as s:
        for row in s.scalars(sa.select(VolumeQuota).where(VolumeQuota.project_id == project_id,
                                                          VolumeQuota.resource != _LOCK)):
            if row.resource in values:
                values[row.resource] = row.hard_limit
    return values


def usage(project_id: str) -> dict[str, int]:
    used = {r: 0 for r in defaults()}
    with db.reader() as s:
        rows = s.execute(sa.select(VolumeType.name, sa.func.count(Volume.id),
                                   sa.func.coalesce(sa.func.sum(Volume.size), 0))
                         .join(VolumeType, Volume.volume_type_id == VolumeType.id)
                         .where(Volume.project_id == project_id)
                         .group_by(VolumeType.name)).all()
        for type_name, count, size in rows:
            used["volumes"] += count
            used["gigabytes"] += int(size)
            used[f"volumes_{type_name}"] = count
            used[f"gigabytes_{type_name}"] = int(size)
        rows = s.execute(sa.select(VolumeType.name, sa.func.count(Snapshot.id),
                                   sa.func.coalesce(sa.func.sum(Snapshot.size), 0))
                         .join(Volume, Snapshot.volume_id == Volume.id)
                         .join(VolumeType, Volume.volume_type_id == VolumeType.id)
                         .where(Snapshot.project_id == project_id)
                         .group_by(VolumeType.name)).all()
        for type_name, count, size in rows:
            used["snapshots"] += count
            used["gigabytes"] += int(size)
            used[f"snapshots_{type_name}"] = count
            used[f"gigabytes_{type_name}"] = used.get(f"gigabytes_{type_name}", 0) + int(size)
        count, size = s.execute(sa.select(sa.func.count(Backup.id),
                                          sa.func.coalesce(sa.func.sum(Backup.size), 0))
                                .where(Backup.project_id == project_id)).one()
        used["backups"], used["backup_gigabytes"] = count, int(size)
        used["groups"] = s.scalar(sa.select(sa.func.count()).select_from(VolumeGroup)
                                  .where(VolumeGroup.project_id == project_id))
    return used


def lock(s, project_id: str) -> None:
    """Serialize quota checks of one project (a row lock on PostgreSQL/MariaDB). Call it
    first in the transaction: on MariaDB (repeatable read) a plain read before it would
    fix the snapshot the usage is counted from, and concurrent creates would overshoot."""
    stmt = sa.select(VolumeQuota).where(VolumeQuota.project_id == project_id,
                                        VolumeQuota.resource == _LOCK).with_for_update()
    if s.scalar(stmt) is None:
        try:
            with s.begin_nested():
                s.add(VolumeQuota(project_id=project_id, resource=_LOCK, hard_limit=0))
        except sa.exc.IntegrityError:
            pass
        s.scalar(stmt)


def prepare(project_id: str) -> None:
    """Make the project's lock row in a transaction of its own, before the one that checks
    quota: inserting it there, concurrently, deadlocks on MariaDB (gap locks)."""
    stmt = sa.select(VolumeQuota.project_id).where(VolumeQuota.project_id == project_id,
                                                   VolumeQuota.resource == _LOCK)
    with db.reader() as s:
        if s.scalar(stmt) is not None:
            return
    try:
        with db.transaction() as s:
            if s.scalar(stmt) is None:
                s.add(VolumeQuota(project_id=project_id, resource=_LOCK, hard_limit=0))
    except sa.exc.IntegrityError:
        pass  # made by a concurrent request


def check_backup(s, project_id: str, size: int) -> None:
    """Raise OverLimit unless the project may keep one more backup of ``size`` GiB."""
    lock(s, project_id)
    limit, used = limits(project_id), usage(project_id)
    if 0 <= limit["backups"] < used["backups"] + 1:
        raise OverLimit(f"BackupLimitExceeded: Maximum number of backups allowed "
                        f"({limit['backups']}) exceeded")
    if 0 <= limit["backup_gigabytes"] < used["backup_gigabytes"] + size:
        raise OverLimit(f"VolumeBackupSizeExceedsAvailableQuota: Requested backup exceeds "
                        f"allowed Backup gigabytes quota. Requested {size}G, quota is "
                        f"{limit['backup_gigabytes']}G and {used['backup_gigabytes']}G has "
                        "been consumed.")


def check(s, project_id: str, type_name: str, *, volumes: int = 0, snapshots: int = 0,
          gigabytes: int = 0) -> None:
    """Raise OverLimit (413) unless the project can add these; call inside the
    transaction that adds the rows."""
    lock(s, project_id)
    limit = limits(project_id)
    used = usage(project_id)
    per_volume = limit["per_volume_gigabytes"]
    if volumes and per_volume >= 0 and gigabytes > per_volume:
        raise OverLimit(f"VolumeSizeExceedsLimit: Requested volume size {gigabytes}G is "
                        f"larger than maximum allowed limit {per_volume}G.")
    for resource, delta in (("volumes", volumes), ("snapshots", snapshots),
                            ("gigabytes", gigabytes)):
        if not delta:
            continue
        for name in (resource, f"{resource}_{type_name}"):
            allowed = limit.get(name, -1)
            if allowed < 0 or used.get(name, 0) + delta <= allowed:
                continue
            if resource == "gigabytes":
                raise OverLimit(
                    f"VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds "
                    f"allowed {name} quota. Requested {delta}G, quota is {allowed}G and "
                    f"{used.get(name, 0)}G has been consumed.")
            what = "volumes" if resource == "volumes" else "snapshots"
            kind = "VolumeLimitExceeded" if what == "volumes" else "SnapshotLimitExceeded"
            raise OverLimit(f"{kind}: "
                            f"Maximum number of {what} allowed ({allowed}) exceeded for "
                            f"quota '{name}'.")


def update(project_id: str, values: dict[str, int]) -> None:
    with db.transaction() as s:
        for resource, value in values.items():
            row = s.get(VolumeQuota, (project_id, resource))
            if row is None:
                s.add(VolumeQuota(project_id=project_id, resource=resource, hard_limit=value))
            else:
                row.hard_limit = value


def delete(project_id: str) -> None:
    with db.transaction() as s:
        s.execute(sa.delete(VolumeQuota).where(VolumeQuota.project_id == project_id,
                                               VolumeQuota.resource != _LOCK))
