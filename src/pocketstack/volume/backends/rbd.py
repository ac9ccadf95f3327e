"""The rbd backend: one RBD image ``volume-<id>`` per volume in ``[ceph] volume_pool``, as
``[ceph] volume_user`` — cinder's RBD driver (cinder/volume/drivers/rbd.py).

Snapshots are RBD snapshots ``snapshot-<id>``, protected so volumes can be cloned from
them. A volume from a snapshot, from an image in the same cluster (``rbd://`` location)
or from another volume (via a snapshot ``volume-<new>.clone_snap`` on the source, as
cinder's create_cloned_volume) is a copy-on-write clone: no bytes are copied. A clone whose
chain of parents would pass ``[volume] rbd_max_clone_depth`` is flattened.

Deletes follow cinder: a volume other volumes were cloned from (it carries a
``.clone_snap``) is renamed ``volume-<id>.deleted`` and removed with its last clone; deleting
a snapshot flattens the volumes cloned from it first.
"""
from __future__ import annotations

import json
import logging
import threading
import time
import urllib.parse

from pocketstack.common import ceph, config
from pocketstack.volume.backends import Backend, BackendError, all_zero

LOG = logging.getLogger(__name__)
GiB = 1 << 30
CHUNK = 4 << 20
BACKUP_SNAP_PREFIX = "backup."  # cinder's backup driver's snapshots: backup.<id>.snap.<ts>
_ZEROS = bytes(CHUNK)
STATS_TTL = 10.0  # seconds a pool's stats are reused (cinder reports them periodically)


def parse_location(url: str) -> tuple[str, str, str, str] | None:
    """(fsid, pool, image, snapshot) of glance's ``rbd://fsid/pool/image/snap``, else None."""
    if not isinstance(url, str) or not url.startswith("rbd://"):
        return None
    pieces = [urllib.parse.unquote(p) for p in url[len("rbd://"):].split("/")]
    if len(pieces) != 4 or not all(pieces):
        return None
    return pieces[0], pieces[1], pieces[2], pieces[3]


class RBDBackend(Backend):
    name = "rbd"
    volume_type = "network"

    def __init__(self):
        self._stats: tuple[float, tuple[int, int]] | None = None
        self._stats_lock = threading.Lock()

    # --- plumbing ---------------------------------------------------------------------

    @property
    def pool(self) -> str:
        return config.CONF.ceph.volume_pool

    @property
    def user(self) -> str:
        return config.CONF.ceph.volume_user

    def ioctx(self, pool: str | None = None):
        return ceph.ioctx(self.user, pool or self.pool)

    @staticmethod
    def vol_name(volume_id: str) -> str:
        return f"volume-{volume_id}"

    @staticmethod
    def snap_name(snapshot_id: str) -> str:
        return f"snapshot-{snapshot_id}"

    def path(self, volume_id: str) -> str:
        """What qemu-img opens (rbd:pool/image:id=user:conf=...)."""
        return self.qemu_name(self.vol_name(volume_id))

    def qemu_name(self, image: str, snap: str | None = None) -> str:
        spec = f"{self.pool}/{image}" + (f"@{snap}" if snap else "")
        out = f"rbd:{spec}:id={self.user}:conf={ceph.conf_file()}"
        if config.CONF.ceph.keyring:
            out += f":keyring={config.CONF.ceph.keyring}"
        return out

    def snapshot_path(self, snapshot_id: str) -> str:
        raise BackendError("rbd snapshots have no path: clone them (create_from_snapshot).")

    def open_image(self, name: str, *, snapshot: str | None = None, read_only: bool = False,
               pool: str | None = None):
        _, rbd = ceph.bindings()
        return rbd.Image(self.ioctx(pool), name, snapshot=snapshot, read_only=read_only)

    def _names(self) -> list[str]:
        _, rbd = ceph.bindings()
        return rbd.RBD().list(self.ioctx())

    # --- volumes ------------------------------------------------------------------------

    def create(self, volume_id: str, size_gb: int) -> None:
        _, rbd = ceph.bindings()
        try:
            rbd.RBD().create(self.ioctx(), self.vol_name(volume_id), size_gb * GiB,
                             old_format=False)
        except rbd.Error as error:
            raise BackendError(f"Cannot create RBD image {self.pool}/"
                               f"{self.vol_name(volume_id)}: {error}") from None

    def exists(self, volume_id: str) -> bool:
        return self.vol_name(volume_id) in self._names()

    def volume_ids(self) -> set[str]:
        return {n[7:] for n in self._names()
                if n.startswith("volume-") and "." not in n}

    def extend(self, volume_id: str, size_gb: int) -> None:
        _, rbd = ceph.bindings()
        try:
            with self.open_image(self.vol_name(volume_id)) as image:
                image.resize(size_gb * GiB)
        except rbd.Error as error:
            raise BackendError(f"Cannot extend volume {volume_id}: {error}") from None

    def delete(self, volume_id: str) -> None:
        """cinder's _delete_volume, without its leak: a clone made by create_from_volume
        also drops its ``.clone_snap`` on the source (and a ``.deleted`` source with it)."""
        _, rbd = ceph.bindings()
        name = self.vol_name(volume_id)
        try:
            with self.open_image(name) as image:
                for snap in list(image.list_snaps()):
                    if snap["name"].startswith(BACKUP_SNAP_PREFIX):
                        image.remove_snap(snap["name"])
                has_clone_snap = any(s["name"].endswith(".clone_snap")
                                     for s in image.list_snaps())
                parent = self._clone_parent(image, name)
        except rbd.ImageNotFound:
            # Never made, or cut short: a clone killed mid-way can be listed yet not open
            # (no header yet).
            self._remove(name)
            return
        except rbd.Error as error:
            raise BackendError(f"Cannot open volume {volume_id}: {error}") from None
        if has_clone_snap:  # volumes were cloned from it: keep it until the last is gone
            rbd.RBD().rename(self.ioctx(), name, f"{name}.deleted")
            return
        self._remove(name)
        if parent is not None:
            self._drop_clone_parent_refs(*parent)

    def _remove(self, name: str) -> None:
        _, rbd = ceph.bindings()
        for attempt in range(3):
            try:
                rbd.RBD().remove(self.ioctx(), name)
                return
            except rbd.ImageNotFound:
                return
            except (rbd.ImageHasSnapshots, rbd.ImageBusy) as error:
                if attempt == 0:
                    self._flatten_children_and_drop_snaps(name)
                    continue
                if attempt == 2:
                    raise BackendError(f"Cannot remove RBD image {name}: {error}") from None
                time.sleep(1)  # a watcher (a closing client) holds it: try again
            except rbd.Error as error:
                raise BackendError(f"Cannot remove RBD image {name}: {error}") from None

    def _flatten_children_and_drop_snaps(self, name: str) -> None:
        with self.open_image(name) as image:
            snaps = [s["name"] for s in image.list_snaps()]
        for snap in snaps:
            self._unprotect(name, snap)
            with self.open_image(name) as image:
                image.remove_snap(snap)

    def _clone_parent(self, image, name: str) -> tuple[str, str] | None:
        """(parent image, snap) when this volume is a clone made by create_from_volume."""
        _, rbd = ceph.bindings()
        try:
            pool, parent, snap = image.parent_info()
        except rbd.ImageNotFound:
            return None
        base = name[:-len(".deleted")] if name.endswith(".deleted") else name
        if pool == self.pool and snap == f"{base}.clone_snap":
            return parent, snap
        return None

    def _drop_clone_parent_refs(self, parent: str, snap: str) -> None:
        """Drop ``snap`` from ``parent``; a ``.deleted`` parent left without snapshots is
        removed, and so on up the chain (cinder's _delete_clone_parent_refs)."""
        _, rbd = ceph.bindings()
        try:
            with self.open_image(parent) as image:
                grand = self._clone_parent(image, parent)
                if image.is_protected_snap(snap):
                    image.unprotect_snap(snap)
                image.remove_snap(snap)
                left = bool(list(image.list_snaps()))
        except rbd.ImageNotFound:
            return
        if not left and parent.endswith(".deleted"):
            self._remove(parent)
            if grand is not None:
                self._drop_clone_parent_refs(*grand)

    def discard_half_made(self, volume_id: str, source_id: str | None = None) -> None:
        """A create that failed or was cut short (kill -9): the volume goes, and so does
        the snapshot a clone from ``source_id`` took of it — a clone killed before it was
        attached to its parent does not lead back to that snapshot."""
        self.delete(volume_id)
        if source_id is not None:
            self._drop_stale_clone_snap(self.vol_name(volume_id), source_id)

    def _drop_stale_clone_snap(self, name: str, source_id: str | None = None) -> None:
        """Remove ``<name>.clone_snap`` (without clones) from the source, or from whichever
        image carries it."""
        _, rbd = ceph.bindings()
        wanted = f"{name}.clone_snap"
        candidates = [self.vol_name(source_id), self.vol_name(source_id) + ".deleted"] \
            if source_id else self._names()
        for other in candidates:
            try:
                with self.open_image(other) as image:
                    if not any(s["name"] == wanted for s in image.list_snaps()):
                        continue
                    image.set_snap(wanted)
                    children = list(image.list_children())
                    image.set_snap(None)
                    if any(self._exists(child, pool) for pool, child in children):
                        return  # a clone lives on it: its delete drops the snapshot
                    if image.is_protected_snap(wanted):
                        image.unprotect_snap(wanted)
                    image.remove_snap(wanted)
                    LOG.info("Removed the stale snapshot %s@%s", other, wanted)
                    return
            except rbd.ImageNotFound:
                continue
            except rbd.Error as error:  # e.g. a link to a clone that never finished
                LOG.warning("Cannot remove the stale snapshot %s@%s: %s", other, wanted,
                            error)
                return

    def _exists(self, name: str, pool: str | None = None) -> bool:
        _, rbd = ceph.bindings()
        try:
            with self.open_image(name, pool=pool, read_only=True):
                return True
        except rbd.ImageNotFound:
            return False

    # --- snapshots ----------------------------------------------------------------------

    def create_snapshot(self, snapshot_id: str, volume_id: str) -> None:
        _, rbd = ceph.bindings()
        snap = self.snap_name(snapshot_id)
        try:
            with self.open_image(self.vol_name(volume_id)) as image:
                image.create_snap(snap)
                image.protect_snap(snap)
        except rbd.Error as error:
            raise BackendError(f"Cannot snapshot volume {volume_id}: {error}") from None

    def delete_snapshot(self, snapshot_id: str, volume_id: str | None = None) -> None:
        _, rbd = ceph.bindings()
        snap = self.snap_name(snapshot_id)
        if volume_id is None:
            found = self._snapshots().get(snapshot_id)
            if found is None:
                return
            image_name = found
        else:
            image_name = self.vol_name(volume_id)
            if image_name not in self._names() and f"{image_name}.deleted" in self._names():
                image_name += ".deleted"
        try:
            self._unprotect(image_name, snap)
            with self.open_image(image_name) as image:
                image.remove_snap(snap)
        except rbd.ImageNotFound:
            return
        except rbd.Error as error:
            raise BackendError(f"Cannot delete snapshot {snapshot_id}: {error}") from None

    def _unprotect(self, image_name: str, snap: str) -> None:
        """Unprotect, flattening the clones that depend on the snapshot (cinder's
        delete_snapshot retries after _flatten_children)."""
        _, rbd = ceph.bindings()
        with self.open_image(image_name) as image:
            if not any(s["name"] == snap for s in image.list_snaps()):
                raise rbd.ImageNotFound(f"no snapshot {snap}")
            if not image.is_protected_snap(snap):
                return
            image.set_snap(snap)
            children = list(image.list_children())
            image.set_snap(None)
        for pool, child in children:
            LOG.info("Flattening %s/%s: it depends on %s@%s", pool, child, image_name, snap)
            try:
                with self.open_image(child, pool=pool) as clone:
                    clone.flatten()
            except rbd.ImageNotFound:
                pass
        with self.open_image(image_name) as image:
            image.unprotect_snap(snap)

    def _snapshots(self) -> dict[str, str]:
        """snapshot id -> the RBD image that holds it."""
        _, rbd = ceph.bindings()
        found = {}
        for name in self._names():
            try:
                with self.open_image(name, read_only=True) as image:
                    for snap in image.list_snaps():
                        if snap["name"].startswith("snapshot-"):
                            found[snap["name"][9:]] = name
            except rbd.ImageNotFound:
                continue
        return found

    def snapshot_ids(self) -> set[str]:
        return set(self._snapshots())

    # --- clones ---------------------------------------------------------------------------

    def _clone(self, src_pool: str, src_image: str, src_snap: str, volume_id: str,
               size_gb: int) -> None:
        """Clone ``src_pool/src_image@src_snap`` into volume ``volume_id``, grow it to the
        volume's size and flatten it when its chain of parents gets too long."""
        _, rbd = ceph.bindings()
        name = self.vol_name(volume_id)
        # The clone has the snapshot's size and one parent more than it: one read-only open
        # of the snapshot (no watch, no lock) tells both, where opening the clone would open
        # it and its parents again (cinder's _clone also measures the source's depth first).
        with self.open_image(src_image, pool=src_pool, snapshot=src_snap,
                             read_only=True) as source:
            grow = source.size() < size_gb * GiB
            depth = 1 + self._depth(source)
        flatten = depth > max(config.CONF.volume.rbd_max_clone_depth, 0)
        rbd.RBD().clone(self.ioctx(src_pool), src_image, src_snap, self.ioctx(), name)
        if grow or flatten:
            with self.open_image(name) as image:
                if grow:
                    image.resize(size_gb * GiB)
                if flatten:
                    LOG.info("Flattening %s: its clone chain passes rbd_max_clone_depth",
                             name)
                    image.flatten()

    def _depth(self, image) -> int:
        """How many parents ``image`` has, up the chain."""
        _, rbd = ceph.bindings()
        opened = []
        try:
            while len(opened) < 64:
                try:
                    pool, parent, snap = image.parent_info()
                except rbd.ImageNotFound:
                    break
                image = self.open_image(parent, pool=pool, snapshot=snap, read_only=True)
                opened.append(image)
            return len(opened)
        finally:
            for each in opened:
                each.close()

    def create_from_snapshot(self, volume_id: str, snapshot_id: str, source_id: str,
                             size_gb: int) -> None:
        try:
            self._clone(self.pool, self.vol_name(source_id), self.snap_name(snapshot_id),
                        volume_id, size_gb)
            if config.CONF.volume.rbd_flatten_volume_from_snapshot:
                with self.open_image(self.vol_name(volume_id)) as image:
                    image.flatten()
        except ceph.bindings()[1].Error as error:
            raise BackendError(f"Cannot clone snapshot {snapshot_id}: {error}") from None

    def create_from_volume(self, volume_id: str, source_id: str, size_gb: int) -> None:
        """cinder's create_cloned_volume: snapshot the source, clone the snapshot."""
        _, rbd = ceph.bindings()
        source = self.vol_name(source_id)
        snap = f"{self.vol_name(volume_id)}.clone_snap"
        try:
            with self.open_image(source) as image:
                image.create_snap(snap)
                image.protect_snap(snap)
        except rbd.Error as error:
            raise BackendError(f"Cannot snapshot volume {source_id}: {error}") from None
        try:
            self._clone(self.pool, source, snap, volume_id, size_gb)
        except rbd.Error as error:
            self._remove(self.vol_name(volume_id))
            self._drop_stale_clone_snap(self.vol_name(volume_id), source_id)
            raise BackendError(f"Cannot clone volume {source_id}: {error}") from None
        with self.open_image(self.vol_name(volume_id)) as image:
            flattened = not self._has_parent(image)
        if flattened:  # no clone depends on the snapshot any more
            self._drop_clone_parent_refs(source, snap)

    @staticmethod
    def _has_parent(image) -> bool:
        _, rbd = ceph.bindings()
        try:
            image.parent_info()
        except rbd.ImageNotFound:
            return False
        return True

    def clone_image(self, volume_id: str, image: dict, size_gb: int) -> bool:
        """cinder's clone_image: a raw image whose direct_url or a location is an RBD
        snapshot in this cluster becomes a copy-on-write clone. False: copy the bytes."""
        if (image.get("disk_format") or "raw") != "raw":
            return False
        urls = [loc.get("url") for loc in image.get("locations") or []
                if isinstance(loc, dict)] or [image.get("direct_url")]
        _, rbd = ceph.bindings()
        for url in urls:
            where = parse_location(url)
            if where is None or where[0] != self.fsid():
                continue
            _, pool, name, snap = where
            try:
                self._clone(pool, name, snap, volume_id, size_gb)
            except (rbd.ImageNotFound, rbd.PermissionError) as error:
                LOG.info("Image location %s cannot be cloned: %s", url, error)
                self._remove(self.vol_name(volume_id))
                continue
            except rbd.Error as error:
                raise BackendError(f"Cannot clone image {image.get('id')}: "
                                   f"{error}") from None
            return True
        return False

    def fsid(self) -> str:
        return ceph.cluster(self.user).get_fsid()

    # --- bytes in and out -----------------------------------------------------------------

    def write_stream(self, volume_id: str, chunks, limit: int) -> int:
        """Write a stream at the start of the volume; all-zero chunks are skipped (a new
        image reads as zeros)."""

        _, rbd = ceph.bindings()
        written = 0
        try:
            with self.open_image(self.vol_name(volume_id)) as image:
                for chunk in chunks:
                    if written + len(chunk) > limit:
                        raise BackendError(f"The data ({written + len(chunk)}+ bytes) does "
                                           f"not fit into the volume ({limit} bytes).")
                    if not all_zero(chunk):
                        image.write(chunk, written)
                    written += len(chunk)
                image.flush()
        except rbd.Error as error:
            raise BackendError(f"Cannot write volume {volume_id}: {error}") from None
        return written

    def read_stream(self, volume_id: str, snapshot_id: str | None = None):
        """The volume's bytes in order; chunks with no allocated extent are not read
        (a shared zero buffer stands for them)."""
        snap = self.snap_name(snapshot_id) if snapshot_id else None
        with self.open_image(self.vol_name(volume_id), read_only=True, snapshot=snap) as im:
            size = im.size()
            used = set()
            im.diff_iterate(0, size, None, lambda off, length, exists: used.update(
                range(off // CHUNK, (off + length - 1) // CHUNK + 1)) if exists else None)
            for offset in range(0, size, CHUNK):
                length = min(CHUNK, size - offset)
                if offset // CHUNK in used:
                    yield im.read(offset, length)
                else:
                    yield _ZEROS if length == CHUNK else bytes(length)

    def copy_into(self, source_path: str, volume_id: str) -> None:
        """A file's bytes (a file backup) over the whole volume: zero chunks are
        discarded, so the volume reads as the file does."""

        _, rbd = ceph.bindings()
        with open(source_path, "rb") as f, self.open_image(self.vol_name(volume_id)) as image:
            size, offset = image.size(), 0
            while offset < size and (chunk := f.read(CHUNK)):
                chunk = chunk[:size - offset]
                if all_zero(chunk):
                    image.discard(offset, len(chunk))
                else:
                    image.write(chunk, offset)
                offset += len(chunk)
            if offset < size:
                image.discard(offset, size - offset)
            image.flush()

    # --- reports --------------------------------------------------------------------------

    def capacity(self) -> tuple[int, int | None]:
        """(total, free) GiB as cinder's _get_pool_stats: the pool's quota if it has one,
        else the cluster's size and the pool's max_avail; cached for STATS_TTL."""
        with self._stats_lock:
            if self._stats and time.monotonic() - self._stats[0] < STATS_TTL:
                return self._stats[1]
        rados, _ = ceph.bindings()
        try:
            stats = self.pool_stats()
        except rados.Error as error:
            raise BackendError(f"Cannot read the stats of Ceph pool {self.pool}: "
                               f"{error}") from None
        value = (int(stats["total_capacity_gb"]), int(stats["free_capacity_gb"]))
        with self._stats_lock:
            self._stats = (time.monotonic(), value)
        return value

    def pool_stats(self) -> dict:
        conn = ceph.cluster(self.user)
        ret, out, err = conn.mon_command(json.dumps({"prefix": "df", "format": "json"}), b"")
        if ret:
            raise BackendError(f"Ceph df failed: {err}")
        ret, quota, err = conn.mon_command(json.dumps(
            {"prefix": "osd pool get-quota", "pool": self.pool, "format": "json"}), b"")
        if ret:
            raise BackendError(f"Ceph pool quota of {self.pool} failed: {err}")
        df = json.loads(out)
        pools = [p["stats"] for p in df["pools"] if p["name"] == self.pool]
        if not pools:
            raise BackendError(f"Ceph pool {self.pool} does not exist.")
        used = pools[0].get("stored", pools[0].get("bytes_used", 0))
        limit = json.loads(quota).get("quota_max_bytes") or 0
        if limit:
            total, free = limit, max(min(limit - used, pools[0]["max_avail"]), 0)
        else:
            total, free = df["stats"]["total_bytes"], pools[0]["max_avail"]
        return {"pool_name": self.pool, "total_capacity_gb": round(total / GiB, 2),
                "free_capacity_gb": round(free / GiB, 2),
                "allocated_bytes": used, "storage_protocol": "ceph",
                "location_info": f"ceph:{ceph.conf_file()}:{self.fsid()}:{self.user}:"
                                 f"{self.pool}"}

    def unexport(self, volume_id: str) -> None:
        """Nothing to stop: clients open RBD images themselves."""

    def exports_iscsi(self) -> bool:
        return False  # clients open RBD images themselves

    def connection_info(self, volume_id: str, *, mode: str = "rw",
                        chap: tuple[str, str] | None = None) -> dict:
        """cinder's initialize_connection, with what its manager adds (qos_specs,
        access_mode, encrypted, cacheable)."""
        hosts, ports = ceph.monitors()
        return {"driver_volume_type": "rbd", "data": {
            "name": f"{self.pool}/{self.vol_name(volume_id)}", "hosts": hosts,
            "ports": ports, "cluster_name": "ceph", "auth_enabled": True,
            "auth_username": self.user, "secret_type": "ceph",
            "secret_uuid": ceph.secret_uuid(), "volume_id": volume_id,
            "discard": True, "qos_specs": None, "access_mode": mode, "encrypted": False,
            "cacheable": False}}
