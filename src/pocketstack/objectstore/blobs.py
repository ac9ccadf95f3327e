"""Small objects' bytes kept in the database (``objectstore_blobs``) instead of files.

A small PUT's body (read whole, ≤ MAX bytes) goes into the same transaction as its
object's row: no inode to allocate, no file and directory to fsync (two of a 4 KiB PUT's
costs), and the bytes are exactly as durable as the row, which group_commit makes durable
before the 201. A blob's id stands where a file id does (``ObjectInfo.file``): ``i`` and
32 hex digits, where a file's id is the 32 hex digits alone, so store.py tells them apart
and every reader opens either the same way (a blob as an in-memory file).
"""
from __future__ import annotations

import os
import time
import uuid

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.objectstore import sqlite_fast, versions
from pocketstack.objectstore.models import Blob

PREFIX = "i"
MAX = 65536  # bytes: a larger object is a file


def allowed(container) -> bool:
    """Whether a small object of ``container`` may keep its bytes in its row: where the
    row's COMMIT is on disk when it returns — on PostgreSQL and MariaDB (their defaults),
    and on SQLite through group_commit, not the ORM path that X-Versions-Enabled takes
    (its WAL commit is not fsynced)."""
    return not (versions.state(container.meta) and sqlite_fast.enabled())


def new_id() -> str:
    return PREFIX + uuid.uuid4().hex


def is_blob(file_id: str) -> bool:
    return file_id.startswith(PREFIX)


def read(blob_id: str) -> bytes:
    """The bytes; FileNotFoundError once the blob is gone (as a removed file)."""
    if sqlite_fast.enabled():
        data = sqlite_fast.blob(blob_id)
    else:
        with db.reader() as s:
            data = s.scalar(sa.select(Blob.data).where(Blob.id == blob_id))
    if data is None:
        raise FileNotFoundError(blob_id)
    return bytes(data)


def open_file(blob_id: str) -> "BlobFile":
    return BlobFile(read(blob_id))


class BlobFile:
    """A blob opened for reading, as readers use a file: ``read``, ``close``, and a
    descriptor from ``fileno`` (an in-memory file, made only for a reader that asks for
    one: ranges and segments pread it). ``data``: the bytes, for a reader that takes
    them whole (a small GET)."""

    def __init__(self, data: bytes):
        self.data = data
        self._at = 0
        self._file = None

    def read(self, size: int = -1) -> bytes:
        end = len(self.data) if size < 0 else min(len(self.data), self._at + size)
        chunk, self._at = self.data[self._at:end], end
        return chunk

    def fileno(self) -> int:
        if self._file is None:
            fd = os.memfd_create("object", os.MFD_CLOEXEC)
            self._file = open(fd, "rb", buffering=0)
            view = memoryview(self.data)
            while view:
                view = view[os.write(fd, view):]
        return self._file.fileno()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def copy(blob_id: str) -> str:
    """A new blob with the same bytes (what a hard link is to a file); its id."""
    new = new_id()
    data = read(blob_id)
    with db.transaction() as s:
        s.add(Blob(id=new, data=data, created=time.time()))
    return new


def delete(blob_id: str) -> None:
    with db.transaction() as s:
        s.execute(sa.delete(Blob).where(Blob.id == blob_id))


def delete_with_rows(s, files: list[str]) -> list[str | None]:
    """Delete the blobs among ``files`` in session ``s``'s transaction, which deletes their
    rows: the list with None for each blob, files left to remove once it commits."""
    held = [f for f in files if is_blob(f)]
    if held:
        s.execute(sa.delete(Blob).where(Blob.id.in_(held)))
    return [None if is_blob(f) else f for f in files]


def orphans(known, min_age: float) -> list[str]:
    """Ids of blobs no row names, made over ``min_age`` seconds ago (a copy's blob is
    made just before its row)."""
    with db.reader() as s:
        ids = list(s.scalars(sa.select(Blob.id).where(Blob.created <= time.time() - min_age)))
    names = known() if ids else set()
    return [blob_id for blob_id in ids if blob_id not in names]
