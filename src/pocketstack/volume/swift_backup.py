"""Volume backups in the object store (``[volume] backup_driver = swift``): cinder's swift
backup driver on its chunked driver (cinder/backup/chunkeddriver.py), through the
object-store API (clients/object_store.py) in the account of the user who asks
(cinder's ``backup_swift_auth = per_user``: the user's token, cinder's beside it).

A backup is objects under ``volume_<volume id>/<time>/az_<zone>_backup_<backup id>`` in
its container (the one the user named, else ``backup_swift_container``):

* ``<prefix>-00001``, ... — the data, ``backup_swift_object_size`` bytes each at most;
  a full backup stores every object but the all-zero ones; an incremental one only the
  ranges whose ``backup_swift_block_size`` blocks' sha256 differ from its parent's;
* ``<prefix>_sha256file`` — the sha256 of every block (what the next incremental compares);
* ``<prefix>_metadata`` — the objects with their offset, length and md5 (cinder's
  ``objects`` list; cinder's volume metadata is not kept).

A restore writes the chain from the full backup up (each increment over the one before);
a delete removes the backup's objects. ``service_metadata`` ({"swift_prefix": ...}) marks a
backup stored this way.

Volumes of every backend back up this way, as cinder's swift driver does: file and lvm
volumes are read and written as files or block devices, rbd volumes through librbd —
read at a snapshot of the volume taken for the backup (named as the ceph driver's,
``backup.<id>.snap.<time>``, so the recovery after a crash drops one left behind) and
removed after it, or at the backup's own snapshot.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import os
import time

from pocketstack.clients.object_store import ObjectStoreClient
from pocketstack.common import config, db, exceptions
from pocketstack.volume import backends
from pocketstack.volume.backends import BackendError
from pocketstack.volume.models import Backup

GiB = 1 << 30
VERSION = "1.0.0"


def enabled() -> bool:
    return config.CONF.volume.backup_driver == "swift"


def prefix_of(backup: Backup) -> str | None:
    if not backup.service_metadata:
        return None
    return json.loads(backup.service_metadata).get("swift_prefix")


def _client(ctx, backup: Backup) -> ObjectStoreClient:
    if ctx is None or not getattr(ctx, "auth_token", None):
        raise BackendError("A backup in the object store needs the user's token "
                           "(backup_swift_auth = per_user).")
    # The account of the backup's project, whoever (an admin too) acts on it.
    return ObjectStoreClient(ctx, caller="volume", project_id=backup.project_id)


@contextlib.contextmanager
def _source(backup: Backup, volume, backend):
    """``read(offset, length)`` of the bytes the backup stores (short at a file's end)."""
    if backend.name != "rbd":
        path = backend.snapshot_path(backup.snapshot_id) if backup.snapshot_id else \
            backend.path(volume.id)
        with open(path, "rb") as f:
            yield lambda offset, length: os.pread(f.fileno(), length, offset)
        return
    name = backend.vol_name(volume.id)
    if backup.snapshot_id:
        with backend.open_image(name, snapshot=backend.snap_name(backup.snapshot_id),
                                read_only=True) as image:
            yield _sparse_reader(image)
        return
    snap = f"backup.{backup.id}.snap.{time.time()}"  # a point in time of an in-use volume
    with backend.open_image(name) as image:
        image.create_snap(snap)
    try:
        with backend.open_image(name, snapshot=snap, read_only=True) as image:
            yield _sparse_reader(image)
    finally:
        with backend.open_image(name) as image:
            image.remove_snap(snap)


EXTENT = 4 << 20  # granularity of the allocation map below


def _sparse_reader(image):
    """``image.read``, but a range without an allocated extent (most of a fresh volume)
    reads as zeros without a round trip to the cluster."""
    used: set[int] = set()

    def note(offset, length, exists):
        if exists:
            used.update(range(offset // EXTENT, (offset + length - 1) // EXTENT + 1))

    image.diff_iterate(0, image.size(), None, note)

    def read(offset: int, length: int) -> bytes:
        if any(i in used for i in range(offset // EXTENT, (offset + length - 1) // EXTENT + 1)):
            return image.read(offset, length)
        return bytes(length)
    return read


@functools.lru_cache(maxsize=4)
def _zeros_sha256(length: int) -> str:
    return hashlib.sha256(bytes(length)).hexdigest()


def _block_sha256s(data: bytes, block: int) -> list[str]:
    """The sha256 of each block (the one of a zero block computed once)."""
    if backends.all_zero(data):
        return [_zeros_sha256(min(block, len(data) - i)) for i in range(0, len(data), block)]
    return [hashlib.sha256(data[i:i + block]).hexdigest() for i in range(0, len(data), block)]


# librbd zeroes less than 2 GiB per call (its length goes through a 32-bit int).
ZERO_PIECE = 1 << 30


@contextlib.contextmanager
def _target(backend, volume_id: str):
    """``write(data, offset)`` into the volume to restore, every byte of it zero first."""
    if backend.name == "rbd":
        with backend.open_image(backend.vol_name(volume_id)) as image:
            size = image.size()
            for pos in range(0, size, ZERO_PIECE):
                image.write_zeroes(pos, min(ZERO_PIECE, size - pos))
            yield lambda data, offset: image.write(data, offset)
            image.flush()
        return
    path = backend.path(volume_id)
    fd = os.open(path, os.O_WRONLY)
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        if backends.is_block(path):
            for pos in range(0, size, 4 << 20):
                os.pwrite(fd, bytes(min(4 << 20, size - pos)), pos)
        else:  # a fresh hole of the same size, then the data
            os.ftruncate(fd, 0)
            os.ftruncate(fd, size)
        yield lambda data, offset: os.pwrite(fd, data, offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def _row(backup_id: str | None) -> Backup | None:
    if backup_id is None:
        return None
    with db.reader() as s:
        return s.get(Backup, backup_id)


def create(ctx, backup: Backup, volume, backend) -> dict:
    conf = config.CONF.volume
    client = _client(ctx, backup)
    container = backup.container or conf.backup_swift_container
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d%H%M%S")
    prefix = (f"volume_{volume.id}/{stamp}/az_{volume.availability_zone}_backup_"
              f"{backup.id}")
    object_size, block = conf.backup_swift_object_size, conf.backup_swift_block_size
    parent = _row(backup.parent_id)
    parent_shas = _parent_shas(client, parent) if parent is not None else None
    size = volume.size * GiB
    client.ensure_container(container)
    objects, shas, index = [], [], 0
    try:
        with _source(backup, volume, backend) as read:
            for offset in range(0, size, object_size):
                data = read(offset, min(object_size, size - offset))
                data += bytes(min(object_size, size - offset) - len(data))
                first = len(shas)
                shas += _block_sha256s(data, block)
                for start, end in _changed(shas, first, parent_shas, data, block):
                    index += 1
                    name = f"{prefix}-{index:05d}"
                    piece = data[start:end]
                    client.put(container, name, piece)
                    objects.append({name: {"compression": "none", "offset": offset + start,
                                           "length": len(piece),
                                           "md5": hashlib.md5(piece).hexdigest()}})
        common = {"backup_id": backup.id, "volume_id": volume.id,
                  "backup_name": backup.name, "backup_description": backup.description,
                  "created_at": str(backup.created_at), "version": VERSION}
        client.put(container, f"{prefix}_sha256file", json.dumps(
            {**common, "chunk_size": block, "sha256s": shas}).encode())
        client.put(container, f"{prefix}_metadata", json.dumps(
            {**common, "objects": objects, "parent_id": backup.parent_id,
             "volume_meta": None}).encode())
    except BaseException:
        _remove(client, container, prefix)
        raise
    return {"service_metadata": json.dumps({"swift_prefix": prefix}),
            "container": container, "parent_id": backup.parent_id}


def _parent_shas(client, parent: Backup) -> list[str]:
    prefix = prefix_of(parent)
    if prefix is None:
        raise BackendError(f"The parent backup {parent.id} is not in the object store.")
    body = client.get(parent.container, f"{prefix}_sha256file")
    return json.loads(body)["sha256s"]


def _changed(shas, first, parent_shas, data: bytes, block: int):
    """(start, end) ranges of ``data`` to store: for a full backup the object unless all
    zeros; for an incremental one the runs of blocks whose sha256 differs."""
    if parent_shas is None:
        if not backends.all_zero(data):
            yield 0, len(data)
        return
    run = None
    for i in range(len(shas) - first):
        differs = first + i >= len(parent_shas) or shas[first + i] != parent_shas[first + i]
        if differs and run is None:
            run = i
        elif not differs and run is not None:
            yield run * block, i * block
            run = None
    if run is not None:
        yield run * block, len(data)


def _chain(backup: Backup) -> list[Backup]:
    """The backup and its parents, the full one first."""
    chain = [backup]
    while chain[-1].parent_id:
        parent = _row(chain[-1].parent_id)
        if parent is None:
            raise BackendError(f"The parent backup {chain[-1].parent_id} is gone.")
        chain.append(parent)
    return chain[::-1]


def restore(ctx, backup: Backup, backend, volume_id: str) -> None:
    client = _client(ctx, backup)
    chain = _chain(backup)
    with _target(backend, volume_id) as write:
        for link in chain:
            prefix = prefix_of(link)
            meta = json.loads(client.get(link.container, f"{prefix}_metadata"))
            for entry in meta["objects"]:
                (name, info), = entry.items()
                data = client.get(link.container, name)
                if hashlib.md5(data).hexdigest() != info["md5"]:
                    raise BackendError(f"Object {name} of backup {link.id} does not match "
                                       "its md5.")
                write(data, info["offset"])


def _remove(client, container: str, prefix: str) -> None:
    for name in client.list(container, prefix=prefix):
        client.delete(container, name)


def delete(ctx, backup: Backup) -> None:
    try:
        _remove(_client(ctx, backup), backup.container, prefix_of(backup))
    except exceptions.NotFound:
        pass
