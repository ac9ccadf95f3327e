"""Object bytes as files: ``<root>/<id[:2]>/<id>``, one file per written object version
(a small object's bytes are a blob in the database instead: blobs.py; ``open_file``,
``link`` and ``remove`` take either id).

A write goes to ``<root>/tmp/`` and is renamed into place (after an fsync of the file and
then of its directory) only once it is complete, so a crash never leaves a partial object:
a temp file is swept at the next start, and a file no row names (a crash between the
rename and the database commit) is never read and is swept too.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import os
import time
import uuid

from pocketstack.common import config, processes
from pocketstack.objectstore import blobs

CHUNK = 1 << 20  # bytes hashed and written at a time
# A large object's bytes are sent to the disk as they arrive, every WRITEBACK bytes (as
# swift's object server does), so the fsync at its end waits for the last stretch only,
# not for the whole object: a 1 GiB PUT spent ~1 s in that fsync.
WRITEBACK = 16 << 20


def root() -> str:
    return config.CONF.objectstore.data_dir or os.path.join(config.data_dir(), "objects")


_made: set[str] = set()  # directories known to exist (created once, never removed)


def _ensure_dir(path: str) -> str:
    if path not in _made:
        os.makedirs(path, mode=0o700, exist_ok=True)
        _made.add(path)
    return path


def _tmp_dir() -> str:
    return _ensure_dir(os.path.join(root(), "tmp"))


def _retrying(call, path: str):
    """``call()``, once more after making ``path`` again if a directory believed made
    is gone (removed under a running cloud)."""
    try:
        return call()
    except FileNotFoundError:
        _made.discard(path)
        _ensure_dir(path)
        return call()


def path_of(file_id: str) -> str:
    return os.path.join(root(), file_id[:2], file_id)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Writer:
    """A new object's bytes: ``write`` chunks (hashed and written on two threads of their
    own, a few buffers deep, while the caller receives more), then ``commit`` (fsync,
    rename into place) or ``abort``."""

    DEPTH = 4  # buffers in flight

    def __init__(self):
        self.file_id = uuid.uuid4().hex
        # The writer's pid in the name: the sweep leaves live processes' uploads alone.
        tmp = _tmp_dir()
        self.tmp_path = os.path.join(tmp, f"{self.file_id}.{os.getpid()}")
        self._file = _retrying(lambda: open(self.tmp_path, "xb", buffering=0), tmp)
        self._md5 = hashlib.md5(usedforsecurity=False)
        self.size = 0
        self._written = self._synced = 0  # bytes written, and sent to the disk early
        self._threads: list[concurrent.futures.ThreadPoolExecutor] = []  # made when needed
        self._inflight: list[tuple[concurrent.futures.Future, ...]] = []

    def submit(self, data: bytes) -> list[concurrent.futures.Future]:
        """Queue ``data``; returns the futures to wait for before queueing more (the
        oldest buffer's, once DEPTH are in flight)."""
        self.size += len(data)
        if not self._threads:
            self._threads = [concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=n)
                             for n in ("object-md5", "object-write")]
        md5, write = self._threads
        self._inflight.append((md5.submit(self._md5.update, data),
                               write.submit(self._write_all, data)))
        if len(self._inflight) >= self.DEPTH:
            return list(self._inflight.pop(0))
        return []

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self._file.write(view):]
        self._written += len(data)
        if self._written - self._synced >= 2 * WRITEBACK:
            # Start writing back the stretch before the last one (DONTNEED starts the
            # writeback of dirty pages without waiting; the pages it finds clean, written
            # already, leave the page cache: a large upload does not crowd it).
            os.posix_fadvise(self._file.fileno(), self._synced, WRITEBACK,
                             os.POSIX_FADV_DONTNEED)
            self._synced += WRITEBACK

    def write(self, data: bytes) -> None:
        """Hash and write ``data`` in the calling thread (no buffers in flight)."""
        self.size += len(data)
        self._md5.update(data)
        self._write_all(data)

    def finish(self, last: bytes = b"") -> str:
        """Wait for every buffer, then hash and write ``last`` here; fsync and close the
        temp file; the MD5 hex digest."""
        for futures in self._inflight:
            for future in futures:
                future.result()
        self._inflight.clear()
        self._stop()
        if last:
            self.write(last)
        if config.CONF.objectstore.fsync:
            os.fsync(self._file.fileno())
        self._file.close()
        return self._md5.hexdigest()

    def commit(self) -> str:
        """Rename the finished file into place; its id."""
        final = path_of(self.file_id)
        directory = _ensure_dir(os.path.dirname(final))
        _retrying(lambda: os.replace(self.tmp_path, final), directory)
        if config.CONF.objectstore.fsync:
            _fsync_dir(directory)
        return self.file_id

    def _stop(self) -> None:
        for pool in self._threads:
            pool.shutdown(wait=True, cancel_futures=True)

    def abort(self) -> None:
        self._stop()
        self._file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp_path)


def write_bytes(data: bytes) -> str:
    """A new file of ``data`` (temp file, fsync, rename); its id."""
    writer = Writer()
    try:
        writer.finish(data)
        return writer.commit()
    except BaseException:
        writer.abort()
        raise


def link(file_id: str) -> str:
    """A new name for a stored file's bytes (files never change once written): a copy
    or an archived version without copying (a small object's blob is copied)."""
    if blobs.is_blob(file_id):
        return blobs.copy(file_id)
    new_id = uuid.uuid4().hex
    final = path_of(new_id)
    _ensure_dir(os.path.dirname(final))
    os.link(path_of(file_id), final)
    if config.CONF.objectstore.fsync:
        _fsync_dir(os.path.dirname(final))
    return new_id


def open_file(file_id: str):
    """The bytes of a file or a blob as an unbuffered file with a descriptor;
    FileNotFoundError once they are gone."""
    if blobs.is_blob(file_id):
        return blobs.open_file(file_id)
    return open(path_of(file_id), "rb", buffering=0)


def remove(file_id: str | None) -> None:
    """Remove a file or a blob (None: nothing, its bytes went with its row)."""
    if file_id is None:
        return
    if blobs.is_blob(file_id):
        return blobs.delete(file_id)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path_of(file_id))


ORPHAN_AGE = 600  # seconds: a renamed file's row is committed well within this


def _dead_upload(name: str) -> bool:
    pid = name.rpartition(".")[2]
    return not pid.isdigit() or not processes.running(int(pid))


def orphans(known, min_age: float = ORPHAN_AGE) -> list[str]:
    """Paths of files nothing holds: temp files of uploads whose process died (a crash cut
    them short), and files no row names (a crash between writing one and committing its
    row) last written over ``min_age`` seconds ago (a younger one may be a row's about to
    commit); and the ids of blobs no row names, as old. ``known()``: the file ids rows
    name, read after the listing."""
    return _file_orphans(known, min_age) + blobs.orphans(known, min_age)


def _file_orphans(known, min_age: float) -> list[str]:
    base = root()
    if not os.path.isdir(base):
        return []
    old = time.time() - min_age
    dead, unnamed = [], []  # temp files of dead uploads; files a row may name
    for entry in os.scandir(base):
        if not entry.is_dir():
            continue
        for item in os.scandir(entry.path):
            if entry.name == "tmp":
                if _dead_upload(item.name):
                    dead.append(item.path)
            elif item.stat().st_mtime <= old:
                unnamed.append(item.path)
    names = known() if unnamed else set()
    return dead + [path for path in unnamed if os.path.basename(path) not in names]


def sweep(known) -> int:
    """Remove the orphans (those of files no row names once ORPHAN_AGE old); how many
    went."""
    removed = 0
    for path in orphans(known):
        if blobs.is_blob(path):
            blobs.delete(path)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        removed += 1
    return removed
