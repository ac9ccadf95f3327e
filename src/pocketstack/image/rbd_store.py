"""The rbd image store, as glance_store's RBD driver: one RBD image per Glance image.

The RBD image is named by the image id, in ``[ceph] image_pool``, written as
``[ceph] image_user`` while the upload streams (``RbdWriter``: the file store's hashing
pipeline, with the bytes going to asynchronous RBD writes instead of a temp file). Once
complete it gets a snapshot ``snap``, protected so volumes and instance disks can clone
it, and the image's location is ``rbd://<fsid>/<pool>/<image id>/snap`` (glance_store's
format, which cinder's and nova's RBD drivers parse to clone).

With ``[image] rbd_thin_provisioning`` (glance_store's option; on by default here) the
blocks of an upload that are all zeros are not written (``data_extents``): the new RBD
image reads zeros there anyway, so a sparse raw image takes the space of its data.

Each RBD image carries ``pocketstack.writer`` = ``<host>-<pid>`` in its metadata, so the
start-up recovery can tell an upload that died with its process from one in progress.
Nothing is removed while it has watchers (an open writer) or clones.

Why not the ``glance_store`` library itself: its RBD driver opens a new cluster
connection per upload and download, writes synchronously one chunk at a time and hashes
in the writing thread, and brings its own oslo.config groups; here one connection per
cloud (common/ceph.py) is shared and hashing runs beside several writes in flight.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import threading

from pocketstack.common import ceph, config, exceptions
from pocketstack.common import image_formats as formats
from pocketstack.image import store

LOG = logging.getLogger(__name__)

SNAP = "snap"
WRITER_KEY = "pocketstack.writer"
GROW_MIN = 64 << 20  # first allocation of an upload of unknown size; then doubling
GROW_MAX = 8 << 30
IN_USE = ("The image cannot be deleted because it is in use through the backend store "
          "outside of Glance.")
HAS_SNAPSHOT = "The image cannot be deleted because it has snapshot(s)."
SPARSE_BLOCK = 64 << 10  # the granularity zeros are skipped at
_ZERO_BLOCK = bytes(SPARSE_BLOCK)


def pool() -> str:
    return config.CONF.ceph.image_pool


def _ioctx(pool_name: str | None = None):
    return ceph.ioctx(config.CONF.ceph.image_user, pool_name or pool())


def _rbd():
    return ceph.bindings()[1]


@contextlib.contextmanager
def ceph_errors(doing: str):
    """rados/rbd errors not handled where they happen → 503 saying what failed."""
    rados, rbd = ceph.bindings()
    try:
        yield
    except (rados.Error, rbd.Error) as error:
        raise ceph.CephUnavailable(f"Ceph failed while {doing}: {error}") from None


def fsid() -> str:
    with ceph_errors("reading the cluster id"):
        return ceph.cluster(config.CONF.ceph.image_user).get_fsid()


def location(image_id: str, pool_name: str | None = None) -> str:
    return f"rbd://{fsid()}/{pool_name or pool()}/{image_id}/{SNAP}"


def parse(url: str) -> tuple[str, str, str]:
    """(pool, image name, snapshot) of an ``rbd://fsid/pool/image/snap`` location."""
    parts = url.removeprefix("rbd://").split("/")
    if not url.startswith("rbd://") or len(parts) != 4 or not all(parts[1:]):
        raise exceptions.ServiceUnavailable(f"Not an rbd store location: {url!r}")
    return parts[1], parts[2], parts[3]


def _features() -> int:
    rbd = _rbd()
    value = ceph.cluster(config.CONF.ceph.image_user).conf_get("rbd_default_features")
    # As glance_store: the cluster's default features, at least layering (for clones).
    try:
        return int(value) | rbd.RBD_FEATURE_LAYERING
    except (TypeError, ValueError):
        return rbd.RBD_FEATURE_LAYERING


def _order() -> int:
    return (config.CONF.image.rbd_store_chunk_size << 20).bit_length() - 1


def _create(ioctx, name: str, size: int):
    """Create and open RBD image ``name``, tagged with this writer; a leftover of an
    earlier failed upload of the same image is removed first (unless in use)."""
    rbd = _rbd()
    for attempt in (1, 2):
        try:
            rbd.RBD().create(ioctx, name, size, order=_order(), old_format=False,
                             features=_features())
            break
        except rbd.ImageExists:
            if attempt == 2 or not remove(ioctx, name):
                raise exceptions.Conflict(f"Image data for {name} is being written "
                                          "elsewhere.") from None
    image = rbd.Image(ioctx, name)
    image.metadata_set(WRITER_KEY, store._owner())
    return image


def remove(ioctx, name: str) -> bool:
    """Remove RBD image ``name`` and its snapshot; False when it is in use (watchers,
    clones) and stays. Idempotent."""
    rbd = _rbd()
    try:
        with rbd.Image(ioctx, name) as image:
            if len(list(image.watchers_list())) > 1:  # besides ourselves
                return False
            for snap in list(image.list_snaps()):
                if image.is_protected_snap(snap["name"]):
                    image.unprotect_snap(snap["name"])  # ImageBusy: it has clones
                image.remove_snap(snap["name"])
        rbd.RBD().remove(ioctx, name)
    except rbd.ImageNotFound:
        pass
    except (rbd.ImageBusy, rbd.ImageHasSnapshots):
        return False
    return True


def data_extents(data: bytes, offset: int = 0,
                 block: int = SPARSE_BLOCK) -> list[tuple[int, int]]:
    """(start, end) in ``data`` of its runs that are not all zeros, in whole ``block``s
    of the image (``data`` starts at ``offset`` in it: a block of zeros beside data never
    touches an object of its own); what a thin-provisioned write sends, all of ``data``
    when thin provisioning is off."""
    if not config.CONF.image.rbd_thin_provisioning:
        return [(0, len(data))] if data else []
    zero = _ZERO_BLOCK if block == SPARSE_BLOCK else bytes(block)
    runs: list[tuple[int, int]] = []
    start = None
    at = 0
    while at < len(data):
        end = min(len(data), at + block - (offset + at) % block)
        if data[at:end] == zero[:end - at]:
            if start is not None:
                runs.append((start, at))
                start = None
        elif start is None:
            start = at
        at = end
    if start is not None:
        runs.append((start, len(data)))
    return runs


def _write_extents(image, data: bytes, offset: int, done: concurrent.futures.Future) -> None:
    """Write the data runs of ``data`` at ``offset`` (asynchronously); ``done`` completes
    when all have (at once when there are none: the image reads zeros there)."""
    runs = data_extents(data, offset)
    if not runs:
        done.set_result(None)
        return
    parts = _Parts(len(runs), done)
    for start, end in runs:
        piece = data if (start, end) == (0, len(data)) else data[start:end]
        # ``piece`` stays referenced by the callback until the write completes.
        image.aio_write(piece, offset + start, lambda c, p=piece: parts.completed(c, p))


class _Parts:
    """Counts the writes of one buffer down to its future."""

    def __init__(self, count: int, done: concurrent.futures.Future):
        self.count, self.done = count, done
        self.lock = threading.Lock()

    def completed(self, completion, _data: bytes) -> None:
        result = completion.get_return_value()
        with self.lock:
            if self.done.done():
                return
            if result < 0:
                self.done.set_exception(ceph.CephUnavailable(
                    f"Writing image data to Ceph failed: {os.strerror(-result)}"))
                return
            self.count -= 1
            if self.count == 0:
                self.done.set_result(None)


class RbdWriter(store.Writer):
    """``store.Writer`` into an RBD image: several writes in flight (as `rbd import`)."""

    DEPTH = 8
    store_name = "rbd"

    def _open(self, size_hint: int | None) -> None:
        self._pool = pool()
        self._allocated = min(size_hint or 0, self.cap)
        self._image = None
        with ceph_errors(f"creating the RBD image of image {self.image_id}"):
            self._ioctx = _ioctx(self._pool)
            self._image = _create(self._ioctx, self.image_id, self._allocated)

    def _start_write(self, data: bytes, offset: int) -> concurrent.futures.Future:
        done = concurrent.futures.Future()
        done.set_running_or_notify_cancel()

        def issue():  # on the write thread: only it grows the image, in order
            end = offset + len(data)
            if end > self._allocated:
                grown = max(end, GROW_MIN, min(2 * self._allocated, self._allocated + GROW_MAX))
                self._image.resize(grown)
                self._allocated = grown
            _write_extents(self._image, data, offset, done)

        started = self._streams[2].submit(issue)
        started.add_done_callback(lambda f: _not_issued(f, done))
        return done

    def _close_data(self) -> None:
        with ceph_errors(f"writing the RBD image of image {self.image_id}"):
            if self._allocated != self.size:
                self._image.resize(self.size)
                self._allocated = self.size
            self._image.flush()

    def commit(self, dest: str | None = None, inspect: bool = False) -> store.Written:
        written = self._finish()
        image = self._image
        if inspect and config.CONF.image.require_image_format_match:
            with ceph_errors(f"reading back image {self.image_id}"):
                refused = formats.problem_at(self.disk_format, self.size,
                                             lambda length, at: image.read(at, length))
            if refused:
                raise exceptions.BadRequest(refused)
        with ceph_errors(f"snapshotting the RBD image of image {self.image_id}"):
            image.create_snap(SNAP)
            image.protect_snap(SNAP)
            self._image = None
            image.close()
        self.location = location(self.image_id, self._pool)
        return written

    def undo_commit(self) -> None:
        with contextlib.suppress(Exception):
            remove(self._ioctx, self.image_id)

    def abort(self) -> None:
        try:
            self._stop_streams()
            for futures in self._inflight:  # writes already issued must finish first
                with contextlib.suppress(BaseException):
                    futures[2].result(timeout=60)
            self._inflight.clear()
            if self._image is not None:
                with contextlib.suppress(Exception):
                    self._image.close()
                self._image = None
        finally:
            try:
                if not remove(self._ioctx, self.image_id):
                    LOG.warning("Partial RBD image %s/%s is in use; not removed",
                                self._pool, self.image_id)
            except Exception as error:  # noqa: BLE001 - recovery or audit finds it
                LOG.warning("Could not remove partial RBD image %s/%s: %s", self._pool,
                            self.image_id, error)


def _not_issued(started: concurrent.futures.Future, done: concurrent.futures.Future) -> None:
    if started.cancelled():
        error = ceph.CephUnavailable("The upload was stopped before this write was issued.")
    else:
        error = started.exception()
        if error is None:
            return
        rados, rbd = ceph.bindings()
        if isinstance(error, (rados.Error, rbd.Error)):
            error = ceph.CephUnavailable(f"Writing image data to Ceph failed: {error}")
    if not done.done():
        done.set_exception(error)


def import_file(image_id: str, path: str, chunk: int = 4 << 20, depth: int = 8) -> str:
    """Copy a staged file into a new RBD image with its snapshot; its location."""
    size = os.path.getsize(path)
    with ceph_errors(f"importing image {image_id} into Ceph"):
        ioctx = _ioctx()
        image = _create(ioctx, image_id, size)
        try:
            inflight: list[concurrent.futures.Future] = []
            with open(path, "rb", buffering=0) as f:
                for offset in range(0, size, chunk):
                    done = concurrent.futures.Future()
                    _write_extents(image, f.read(chunk), offset, done)
                    inflight.append(done)
                    if len(inflight) >= depth:
                        inflight.pop(0).result()
            for done in inflight:
                done.result()
            image.flush()
            image.create_snap(SNAP)
            image.protect_snap(SNAP)
        except BaseException:
            image.close()
            remove(ioctx, image_id)
            raise
        image.close()
        return location(image_id)


class Reader:
    """Positional reads of an image's snapshot (what a download streams)."""

    def __init__(self, url: str):
        pool_name, name, snap = parse(url)
        rbd = _rbd()
        with ceph_errors(f"opening image data {pool_name}/{name}"):
            try:
                self._image = rbd.Image(_ioctx(pool_name), name, snapshot=snap,
                                        read_only=True)
            except rbd.ImageNotFound:
                self._image = None

    def read_at(self, length: int, offset: int) -> bytes:
        with ceph_errors("reading image data"):
            return self._image.read(offset, length)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._image.close()


def open_reader(url: str) -> Reader | None:
    """A reader of the data at ``url``; None if the RBD image is gone."""
    reader = Reader(url)
    return reader if reader._image is not None else None


def delete(image_id: str, url: str) -> None:
    """Remove an image's RBD image; 409 (glance's InUseByStore) while clones of its
    snapshot exist, and then nothing changes."""
    pool_name, name, _ = parse(url)
    with ceph_errors(f"deleting the data of image {image_id}"):
        if not remove(_ioctx(pool_name), name):
            raise exceptions.Conflict(f"Image {image_id} could not be deleted because it is "
                                      f"in use: {IN_USE}")


def _writer_dead(tag: str | None) -> bool:
    """Whether ``host-pid`` names a process of this host that is gone."""
    if not tag:
        return False
    host, _, pid = tag.rpartition("-")
    return host == config.CONF.host and pid.isdigit() and int(pid) != os.getpid() \
        and not store._alive(int(pid))


def unowned(owned: set[str], busy: set[str]) -> dict[str, bool]:
    """RBD images of the image pool not in ``owned`` (ids whose image holds them), each
    with whether it may be removed: not an upload in progress (ids in ``busy``) unless
    its writer died with its process on this host."""
    rbd = _rbd()
    found = {}
    with ceph_errors("listing the image pool"):
        ioctx = _ioctx()
        for name in rbd.RBD().list(ioctx):
            if name in owned:
                continue
            tag = None
            with contextlib.suppress(rbd.ImageNotFound, KeyError):
                with rbd.Image(ioctx, name, read_only=True) as image:
                    tag = image.metadata_get(WRITER_KEY)
            found[name] = name not in busy or _writer_dead(tag)
    return found
