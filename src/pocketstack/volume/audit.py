"""What `pocketstack audit` checks for the volume service beyond cli/audit.py's checks:
RBD images and snapshots in the rbd backend's pools that no volume, snapshot or backup
owns (what a crash or a bug left behind in Ceph)."""
from __future__ import annotations

import json
import re

import sqlalchemy as sa

from pocketstack.common import ceph, config

BACKUP_SNAP = re.compile(r"^backup\.([0-9a-f-]+)\.snap\.")


def problems(s) -> list[str]:
    from pocketstack.volume import backends

    if "rbd" not in backends.enabled():
        return []
    try:
        return _rbd(s, backends.get("rbd"))
    except Exception as error:  # noqa: BLE001 - an unreachable cluster is itself a finding
        return [f"the rbd backend's pool {config.CONF.ceph.volume_pool} cannot be read: "
                f"{error}"]


def _rbd(s, backend) -> list[str]:
    from pocketstack.volume.models import Backup, Snapshot, Volume

    rbd_host = "%@rbd#%"
    volumes = set(s.scalars(sa.select(Volume.id).where(Volume.host.like(rbd_host))))
    snaps = set(s.scalars(sa.select(Snapshot.id)))
    backup_rows = s.execute(sa.select(Backup.id, Backup.service_metadata)).all()
    backup_ids = {b.id for b in backup_rows}
    bases = {json.loads(b.service_metadata).get("base") for b in backup_rows
             if b.service_metadata}
    _, rbd = ceph.bindings()
    pool = backend.pool
    found = []
    for name in backend._names():
        try:
            with backend.open_image(name, read_only=True) as image:
                snap_names = [x["name"] for x in image.list_snaps()]
        except rbd.ImageNotFound:
            continue  # deleted meanwhile
        base = name[:-len(".deleted")] if name.endswith(".deleted") else name
        volume_id = base[len("volume-"):] if base.startswith("volume-") else None
        if volume_id is None or (volume_id not in volumes and not name.endswith(".deleted")):
            found.append(f"RBD image {pool}/{name} belongs to no volume")
        elif name.endswith(".deleted") and not any(n.endswith(".clone_snap")
                                                   for n in snap_names):
            found.append(f"RBD image {pool}/{name} (a deleted volume) has no clones left "
                         "but was not removed")
        for snap in snap_names:
            owner = _snap_owner(snap, volumes, snaps, backup_ids)
            if owner:
                found.append(f"RBD snapshot {pool}/{name}@{snap} {owner}")
    found += _backups(backend, bases, backup_ids)
    return found


def _snap_owner(snap: str, volumes, snaps, backup_ids) -> str | None:
    """Why the snapshot is an orphan, or None when something owns it."""
    if snap.startswith("snapshot-"):
        return None if snap[9:] in snaps else "belongs to no snapshot"
    if snap.endswith(".clone_snap"):
        clone = snap[len("volume-"):-len(".clone_snap")]
        return None if clone in volumes else "was cloned for a volume that does not exist"
    match = BACKUP_SNAP.match(snap)
    if match:
        return None if match.group(1) in backup_ids else "belongs to no backup"
    return None  # not ours to judge


def _backups(backend, bases: set, backup_ids: set) -> list[str]:
    _, rbd = ceph.bindings()
    pool = config.CONF.ceph.backup_pool
    try:
        ioctx = ceph.ioctx(config.CONF.ceph.backup_user, pool)
        names = rbd.RBD().list(ioctx)
    except Exception as error:  # noqa: BLE001
        return [f"the backup pool {pool} cannot be read: {error}"]
    found = []
    for name in names:
        if name not in bases:
            found.append(f"RBD image {pool}/{name} belongs to no backup")
    return found
