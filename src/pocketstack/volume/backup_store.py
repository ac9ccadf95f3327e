"""Where a backup's bytes go (the manager's side of backups.py).

With ``[volume] backup_driver = swift``, the object store for volumes of every backend
(swift_backup.py). Otherwise volumes of the file and lvm backends: a full sparse copy in
``[volume] backup_dir``, as before; volumes of the rbd backend: cinder's ceph backup
driver (cinder/backup/drivers/ceph.py) — an RBD image in ``[ceph] backup_pool`` written
as ``[ceph] backup_user``:

* a full backup snapshots the volume (``backup.<id>.snap.<time>``) and copies the extents
  that exist into a new base image ``volume-<volume>.backup.<id>``, then snapshots the base
  with the same name: that snapshot is the backup's restore point;
* an incremental backup copies only the extents that changed between the parent's
  snapshot of the volume and a new one (librbd's diff, what ``rbd export-diff |
  import-diff`` moves) onto the parent's base, and snapshots the base again;
* a restore reads the base at the backup's snapshot; a delete drops that snapshot (and
  the base with its last one) and the volume's snapshot of the backup.

The data moves in-process through librbd (two users, two pools) rather than through two
``rbd`` processes piped together: same extents, no fork, no key on a command line.
``service_metadata`` ({"base": name}) marks a backup stored in Ceph, as in cinder.
"""
from __future__ import annotations

import json
import logging
import os
import time

from pocketstack.common import ceph, config, db
from pocketstack.volume import backends, backups, swift_backup
from pocketstack.volume.backends import BackendError
from pocketstack.volume.models import Backup

LOG = logging.getLogger(__name__)
GiB = 1 << 30
CHUNK = 4 << 20


def _backup_ioctx():
    return ceph.ioctx(config.CONF.ceph.backup_user, config.CONF.ceph.backup_pool)


def base_of(backup: Backup) -> str | None:
    if not backup.service_metadata:
        return None
    return json.loads(backup.service_metadata).get("base")


def _snap_of(image, backup_id: str) -> str | None:
    """The snapshot ``backup.<backup_id>.snap.<time>`` of an RBD image, if there is one."""
    prefix = f"backup.{backup_id}.snap."
    for snap in image.list_snaps():
        if snap["name"].startswith(prefix):
            return snap["name"]
    return None


def _zero(chunk: bytes) -> bool:

    return backends.all_zero(chunk)


# librbd's write_zeroes fails on 2 GiB or more at once ("error zeroing region 0~2147483648":
# the length goes through a 32-bit int), so a volume of 2 GiB or more is zeroed in pieces.
ZERO_PIECE = 1 << 30


def zero_in_pieces(zero, offset: int, length: int) -> None:
    for pos in range(offset, offset + length, ZERO_PIECE):
        zero(pos, min(ZERO_PIECE, offset + length - pos))


def copy_extents(src, write, zero, from_snap: str | None = None,
                 length: int | None = None) -> int:
    """Copy what ``src`` (an open rbd.Image) holds — or, with ``from_snap``, what changed
    since that snapshot — through ``write(data, offset)``; ranges that read as zeros (or
    no longer exist) go through ``zero(offset, length)``. Returns the bytes written."""
    length = src.size() if length is None else min(length, src.size())
    extents = []
    src.diff_iterate(0, length, from_snap,
                     lambda offset, size, exists: extents.append((offset, size, exists)))
    written, covered = 0, 0
    for offset, size, exists in sorted(extents):
        if from_snap is None and offset > covered:
            zero_in_pieces(zero, covered, offset - covered)  # a full copy: the gaps read as zeros
        covered = max(covered, offset + size)
        if not exists:
            zero_in_pieces(zero, offset, size)
            continue
        for pos in range(offset, offset + size, CHUNK):
            data = src.read(pos, min(CHUNK, offset + size - pos))
            if _zero(data):
                zero(pos, len(data))
            else:
                write(data, pos)
                written += len(data)
    if from_snap is None and covered < length:
        zero_in_pieces(zero, covered, length - covered)
    return written


# --- create -----------------------------------------------------------------------------

def create(backup: Backup, volume, backend: backends.Backend, ctx=None) -> dict:
    """Store the backup; returns the columns to record on the backup row."""
    if swift_backup.enabled():
        return swift_backup.create(ctx, backup, volume, backend)
    if backend.name != "rbd":
        source = backend.snapshot_path(backup.snapshot_id) if backup.snapshot_id else \
            backend.path(volume.id)
        backends.run("cp", "--sparse=always", source, backups.path(backup.id), timeout=3600)
        return {"parent_id": None}
    return _create_in_ceph(backup, volume, backend)


def _create_in_ceph(backup: Backup, volume, backend) -> dict:
    _, rbd = ceph.bindings()
    size = volume.size * GiB
    source = backend.vol_name(volume.id)
    dest = _backup_ioctx()
    base, from_snap, parent_id = f"volume-{volume.id}.backup.{backup.id}", None, None
    parent = _row(backup.parent_id) if backup.parent_id else None
    if parent is not None and base_of(parent) and not backup.snapshot_id:
        with backend.open_image(source, read_only=True) as image:
            from_snap = _snap_of(image, parent.id)
        if from_snap is not None:  # else a full one, as cinder when the parent's is gone
            base, parent_id = base_of(parent), parent.id
    new_snap = f"backup.{backup.id}.snap.{time.time()}"
    read_at = backend.snap_name(backup.snapshot_id) if backup.snapshot_id else new_snap
    made_base = made_snap = False
    try:
        if not backup.snapshot_id:
            with backend.open_image(source) as image:
                image.create_snap(new_snap)
            made_snap = True
        if from_snap is None:
            rbd.RBD().create(dest, base, size, old_format=False)
            made_base = True
        with backend.open_image(source, snapshot=read_at, read_only=True) as src, \
                rbd.Image(dest, base) as dst:
            if from_snap is not None:
                last = _snap_of(dst, parent_id)
                if last is None:
                    raise BackendError(f"The base {base} has no snapshot of backup "
                                       f"{parent_id}.")
                dst.rollback_to_snap(last)  # undo what an interrupted backup wrote
            if dst.size() < size:
                dst.resize(size)
            copy_extents(src, dst.write, dst.write_zeroes, from_snap, size)
            dst.flush()
            dst.create_snap(new_snap)
    except Exception:
        _undo(dest, base if made_base else None, backend, source,
              new_snap if made_snap else None)
        raise
    return {"service_metadata": json.dumps({"base": base}), "parent_id": parent_id,
            "container": config.CONF.ceph.backup_pool}


def _undo(dest, base: str | None, backend, source: str, snap: str | None) -> None:
    _, rbd = ceph.bindings()
    try:
        if base:
            rbd.RBD().remove(dest, base)
        if snap:
            with backend.open_image(source) as image:
                image.remove_snap(snap)
    except rbd.Error:
        LOG.exception("Removing what a failed backup made failed")


def cleanup_failed(backup_id: str, volume_id: str) -> None:
    """After a crash mid-backup (recovery): the backup's own base image, if it has no
    restore point, and its snapshot of the volume go."""
    backend = backends.get("rbd")
    _, rbd = ceph.bindings()
    base = f"volume-{volume_id}.backup.{backup_id}"
    try:
        with rbd.Image(_backup_ioctx(), base) as image:
            keep = bool(list(image.list_snaps()))
        if not keep:
            rbd.RBD().remove(_backup_ioctx(), base)
    except rbd.ImageNotFound:
        pass
    _drop_volume_snap(backend, volume_id, backup_id)


def _drop_volume_snap(backend, volume_id: str, backup_id: str) -> None:
    _, rbd = ceph.bindings()
    for name in (backend.vol_name(volume_id), backend.vol_name(volume_id) + ".deleted"):
        try:
            with backend.open_image(name) as image:
                snap = _snap_of(image, backup_id)
                if snap:
                    image.remove_snap(snap)
            return
        except rbd.ImageNotFound:
            continue


# --- restore ------------------------------------------------------------------------------

def restore(backup_id: str, backend: backends.Backend, volume_id: str, ctx=None) -> None:
    """Write the backup over the whole volume (beyond the backup's size: zeros)."""
    backup = _row(backup_id)
    if backup is not None and swift_backup.prefix_of(backup):
        swift_backup.restore(ctx, backup, backend, volume_id)
        return
    base = base_of(backup) if backup is not None else None
    if base is None:
        backend.copy_into(backups.path(backup_id), volume_id)
        return
    _, rbd = ceph.bindings()
    with rbd.Image(_backup_ioctx(), base, read_only=True) as probe:
        snap = _snap_of(probe, backup_id)
    if snap is None:
        raise BackendError(f"Backup {backup_id} has no restore point in {base}.")
    with rbd.Image(_backup_ioctx(), base, snapshot=snap, read_only=True) as src:
        if backend.name == "rbd":
            with backend.open_image(backend.vol_name(volume_id)) as dst:
                copy_extents(src, dst.write, dst.write_zeroes, None, dst.size())
                if dst.size() > src.size():
                    zero_in_pieces(dst.write_zeroes, src.size(), dst.size() - src.size())
                dst.flush()
            return
        _restore_to_path(src, backend.path(volume_id))


def _restore_to_path(src, path: str) -> None:

    block = backends.is_block(path)
    fd = os.open(path, os.O_WRONLY)
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        if not block:  # a fresh hole of the same size, then the data
            os.ftruncate(fd, 0)
            os.ftruncate(fd, size)

        def zero(offset: int, length: int) -> None:
            if block:
                for pos in range(offset, offset + length, CHUNK):
                    os.pwrite(fd, bytes(min(CHUNK, offset + length - pos)), pos)

        copy_extents(src, lambda data, offset: os.pwrite(fd, data, offset), zero, None,
                     size)
        if block and size > src.size():
            zero(src.size(), size - src.size())
        os.fsync(fd)
    finally:
        os.close(fd)


# --- delete ---------------------------------------------------------------------------------

def delete(backup: Backup, ctx=None) -> None:
    if swift_backup.prefix_of(backup):
        swift_backup.delete(ctx, backup)
        return
    base = base_of(backup)
    if base is None:
        try:
            os.unlink(backups.path(backup.id))
        except FileNotFoundError:
            pass
        return
    _, rbd = ceph.bindings()
    ioctx = _backup_ioctx()
    try:
        with rbd.Image(ioctx, base) as image:
            snap = _snap_of(image, backup.id)
            if snap:
                image.remove_snap(snap)
            left = [s for s in image.list_snaps() if s["name"].startswith("backup.")]
        if not left:
            rbd.RBD().remove(ioctx, base)
    except rbd.ImageNotFound:
        pass
    try:
        _drop_volume_snap(backends.get("rbd"), backup.volume_id, backup.id)
    except (rbd.Error, ceph.CephUnavailable, BackendError):
        LOG.warning("Cannot drop the snapshot of backup %s from volume %s", backup.id,
                    backup.volume_id)


def _row(backup_id: str) -> Backup | None:
    with db.reader() as s:
        return s.get(Backup, backup_id)
