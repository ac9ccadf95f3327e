"""The filesystem image store: ``<datadir>/<image id>`` per image.

Data is written to ``<datadir>/tmp/`` while it arrives and renamed into place only when
complete, so a reader never sees a partial image and an abandoned upload leaves nothing
behind but a temp file that ``abort()`` (or the next start) removes. md5 (glance's
``checksum``) and the secure hash (``os_hash_value``; sha512 unless ``[image]
hashing_algorithm`` says otherwise) are computed on the fly, in parallel with the write
(see ``Writer``).
"""
from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import logging
import os
import struct
import uuid

from pocketstack.common import config, exceptions, processes
from pocketstack.common import image_formats as formats

LOG = logging.getLogger(__name__)

def configure(data_dir: str) -> str:
    """Default the store to ``<data_dir>/images`` (unless configured) and create it.

    """
    conf = config.CONF
    # A default: a path in the config file still wins.
    conf.set_default("filesystem_store_datadir", os.path.join(data_dir, "images"),
                     group="image")
    os.makedirs(conf.image.filesystem_store_datadir, mode=0o700, exist_ok=True)
    return conf.image.filesystem_store_datadir


def datadir() -> str:
    path = config.CONF.image.filesystem_store_datadir
    if not path:
        raise exceptions.ServiceUnavailable(
            "The image store is not configured: set [image] filesystem_store_datadir, or "
            "call pocketstack.image.store.configure(data_dir) before using the image API.")
    return path


def _subdir(name: str) -> str:
    path = os.path.join(datadir(), name)
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def data_path(image_id: str) -> str:
    return os.path.join(datadir(), image_id)


def staging_path(image_id: str) -> str:
    return os.path.join(_subdir("staging"), image_id)


def delete(image_id: str, *, data: bool = True, staged: bool = True) -> None:
    """Remove an image's data and/or staged data, if any (idempotent)."""
    paths = ([data_path(image_id)] if data else []) + \
        ([os.path.join(datadir(), "staging", image_id)] if staged else [])
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as error:  # the row is gone already; the next start retries
            LOG.warning("Could not delete image data %s: %s", path, error)


class FileReader:
    """Positional reads of an open data file (a delete unlinks the name, not this)."""

    def __init__(self, path: str):
        self._file = open(path, "rb")
        self._fd = self._file.fileno()

    def read_at(self, length: int, offset: int) -> bytes:
        return os.pread(self._fd, length, offset)

    def close(self) -> None:
        self._file.close()


def open_reader(image_id: str) -> FileReader | None:
    try:
        return FileReader(data_path(image_id))
    except FileNotFoundError:
        return None


def _virtual_size(disk_format: str | None, header: bytes, size: int) -> int | None:
    """What glance's format inspector reports for the formats we can read cheaply."""
    if disk_format in ("raw", "iso"):
        return size
    if disk_format == "qcow2" and len(header) >= 32 and header[:4] == b"QFI\xfb":
        version, = struct.unpack(">I", header[4:8])
        virtual, = struct.unpack(">Q", header[24:32])
        # Only a plausible header counts: the data is whatever the user sent.
        if version in (2, 3) and virtual < 1 << 63:
            return virtual
    return None


@dataclasses.dataclass
class Written:
    size: int
    checksum: str
    os_hash_value: str
    virtual_size: int | None
    os_hash_algo: str = "sha512"  # older staged uploads recorded no algorithm: glance's default


class SizeCapExceeded(exceptions.PayloadTooLarge):
    pass


class Writer:
    """Streams one upload into a temp file; ``commit`` renames it into place.

    Subclasses keep the hashing pipeline and replace where the bytes go (``_open``,
    ``_start_write``, ``_close_data``, ``commit``, ``undo_commit``, ``abort``): see
    rbd_store.RbdWriter.

    Each buffer handed to ``submit`` goes to three single-thread pipelines — md5, the
    secure hash, file write — that run in parallel and each in order; up to ``DEPTH`` buffers may be
    in
    flight, so one stalled stream (a descheduled thread, a slow disk) does not stop the
    others. hashlib and file writes release the GIL, so this uses every core there is.
    """

    DEPTH = 3
    store_name = "file"
    commit_in_transaction = True  # data.finish commits inside the image row's transaction

    def __init__(self, image_id: str, disk_format: str | None = None,
                 cap: int | None = None, size_hint: int | None = None):
        self.image_id = image_id
        self.disk_format = disk_format
        self.cap = cap if cap is not None else config.CONF.image.image_size_cap
        self.size = 0
        self.header = b""
        self._md5 = hashlib.md5(usedforsecurity=False)
        self.hash_algo = config.CONF.image.hashing_algorithm
        self._sha = hashlib.new(self.hash_algo)
        self._open(size_hint)
        self._streams = [concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=name)
                         for name in ("image-md5", "image-hash", "image-write")]
        self._inflight: collections.deque[tuple[concurrent.futures.Future, ...]] = \
            collections.deque()
        self.location: str | None = None  # set by commit where the store records one

    def _open(self, size_hint: int | None) -> None:
        self.tmp_path = os.path.join(_subdir("tmp"),
                                     f"{self.image_id}.{_owner()}.{uuid.uuid4().hex}")
        self._file = open(self.tmp_path, "xb", buffering=0)

    def _start_write(self, data: bytes, offset: int) -> concurrent.futures.Future:
        return self._streams[2].submit(self._write_all, data)

    def check_total(self, total: int) -> None:
        """413 once ``total`` bytes would pass the image size cap."""
        if total > self.cap:
            raise SizeCapExceeded(
                f"The incoming image is too large: the image size cap is {self.cap} bytes.")

    def submit(self, data: bytes) -> None:
        """Queue ``data`` for hashing and writing (does not block; see ``full``)."""
        self.check_total(self.size + len(data))
        offset = self.size
        self.size += len(data)
        if len(self.header) < 512:
            self.header += data[:512 - len(self.header)]
        md5, sha, _ = self._streams
        self._inflight.append((md5.submit(self._md5.update, data),
                               sha.submit(self._sha.update, data),
                               self._start_write(data, offset)))

    @property
    def full(self) -> bool:
        return len(self._inflight) >= self.DEPTH

    def oldest(self) -> tuple[concurrent.futures.Future, ...]:
        """The futures of the oldest buffer in flight, no longer tracked: wait for them."""
        return self._inflight.popleft()

    def write(self, data: bytes) -> None:
        """Blocking ``submit`` (for callers on a worker thread)."""
        while self.full:
            for future in self.oldest():
                future.result()
        self.submit(data)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self._file.write(view):]

    def _drain(self) -> None:
        while self._inflight:
            for future in self.oldest():
                future.result()

    def _stop_streams(self) -> None:
        for stream in self._streams:
            stream.shutdown(wait=True, cancel_futures=True)

    def _close_data(self) -> None:
        if config.CONF.image.filesystem_store_fsync:
            os.fsync(self._file.fileno())
        self._file.close()

    def _finish(self) -> Written:
        self._drain()
        self._stop_streams()
        self._close_data()
        return Written(size=self.size, checksum=self._md5.hexdigest(),
                       os_hash_value=self._sha.hexdigest(), os_hash_algo=self.hash_algo,
                       virtual_size=_virtual_size(self.disk_format, self.header, self.size))

    def commit(self, dest: str, inspect: bool = False) -> Written:
        """Close the temp file and rename it to ``dest`` atomically; with ``inspect``,
        first refuse data that is not in the declared disk format (400)."""
        written = self._finish()
        if inspect and config.CONF.image.require_image_format_match:
            refused = formats.problem(self.disk_format, self.tmp_path)
            if refused:
                raise exceptions.BadRequest(refused)
        os.replace(self.tmp_path, dest)
        self._dest = dest
        return written

    def undo_commit(self) -> None:
        """Remove committed data whose image row could not be activated."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._dest)

    def abort(self) -> None:
        try:
            self._stop_streams()  # drops queued buffers, waits for the running ones
            self._inflight.clear()
            self._file.close()
        finally:
            try:
                os.unlink(self.tmp_path)
            except FileNotFoundError:
                pass


def _owner() -> str:
    """Who writes a temp file: this host and process (several API processes may share a
    store; each cleans up only after its own dead predecessors)."""
    return f"{config.CONF.host}-{os.getpid()}"


def clean_temp_files() -> set[str]:
    """Remove the temp files of uploads that died with an earlier process on this host;
    return the ids of the images that still have an upload in progress (any process)."""
    in_progress = set()
    for name in os.listdir(_subdir("tmp")):
        image_id, _, rest = name.partition(".")
        host, _, pid = rest.rpartition(".")[0].rpartition("-")
        if host == config.CONF.host and pid.isdigit() and int(pid) != os.getpid() \
                and not processes.running(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(datadir(), "tmp", name))
        else:
            in_progress.add(image_id)
    return in_progress


def stored_ids() -> set[str]:
    """Ids that have data in the store (for removing orphans)."""
    return {name for name in os.listdir(datadir())
            if os.path.isfile(os.path.join(datadir(), name))}


def staged_ids() -> set[str]:
    return set(os.listdir(_subdir("staging")))
