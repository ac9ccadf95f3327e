"""Instance disks in Ceph RBD (``[libvirt] images_type = rbd``) and RBD disks in libvirt
(the behaviour of nova's imagebackend.Rbd and storage/rbd_utils, our own code).

A server's root disk is ``<uuid>_disk`` in ``[ceph] compute_pool`` (``_disk.eph0`` its
ephemeral disk), opened by QEMU itself as ``[ceph] compute_user``: a copy-on-write clone
of the image's protected snapshot when the image service keeps the image, raw, in this
cluster (``rbd://<fsid>/<pool>/<image>/snap``), else the cached image imported (``qemu-img
convert`` writes straight into RBD, so a qcow2 image becomes a raw RBD image in one pass).
QEMU authenticates with a libvirt secret of usage type ceph holding the user's key,
defined on the host the first time a guest needs it (what devstack/nova's host setup do).
"""
from __future__ import annotations

import base64
import logging
import time
import urllib.parse
import uuid as uuidlib

from pocketstack.common import ceph, config, exceptions
from pocketstack.compute.virt.libvirt import imagecache
from pocketstack.compute.virt.libvirt.config import Disk, NetworkSource

LOG = logging.getLogger(__name__)
SNAP = "snap"                 # glance's snapshot name, which clones start from
RESIZE_SNAP = "nova-resize"   # kept while a resize can still be reverted (as nova)


def parse_url(url: str) -> tuple[str, str, str, str] | None:
    """(fsid, pool, image, snapshot) of ``rbd://fsid/pool/image/snap``, else None."""
    if not url or not url.startswith("rbd://"):
        return None
    parts = [urllib.parse.unquote(p) for p in url[len("rbd://"):].split("/")]
    if len(parts) != 4 or not all(parts):
        return None
    return parts[0], parts[1], parts[2], parts[3]


def image_urls(meta: dict) -> list[str]:
    """The image's rbd locations: ``locations`` (glance's show_multiple_locations), else
    ``direct_url`` (show_image_direct_url)."""
    urls = [loc.get("url") for loc in meta.get("locations") or [] if isinstance(loc, dict)]
    if meta.get("direct_url"):
        urls.append(meta["direct_url"])
    return [u for u in urls if u and u.startswith("rbd://")]


def secret_uuid_for(user: str) -> str:
    """The libvirt secret of ``user``: the volume user's (cinder's rbd_secret_uuid,
    common/ceph.py), a uuid derived from it for a compute user of its own."""
    volume_secret = ceph.secret_uuid()
    if user == config.CONF.ceph.volume_user:
        return volume_secret
    return str(uuidlib.uuid5(uuidlib.UUID(volume_secret), f"client.{user}"))


class Secrets:
    """The host's libvirt secrets of the cephx users its guests use (one per user)."""

    def __init__(self, host):
        self.host = host
        self.defined: set[tuple[str, str]] = set()

    def ensure(self, secret_uuid: str, user: str) -> None:
        if (secret_uuid, user) in self.defined:
            return
        lv, conn = self.host.libvirt, self.host.conn()
        value = base64.b64decode(ceph.key_of(user))
        try:
            secret = conn.secretLookupByUUIDString(secret_uuid)
        except lv.libvirtError:
            secret = None
        if secret is None:
            secret = self._define(conn, lv, secret_uuid, f"client.{user} secret")
        try:
            if secret.value() == value:
                self.defined.add((secret_uuid, user))
                return
        except lv.libvirtError:
            pass  # no value yet
        secret.setValue(value)
        self.defined.add((secret_uuid, user))

    def undefine_all(self) -> None:
        """Remove the secrets this host defined (tests and benchmarks clean up)."""
        lv, conn = self.host.libvirt, self.host.conn()
        for secret_uuid, _ in self.defined:
            try:
                conn.secretLookupByUUIDString(secret_uuid).undefine()
            except lv.libvirtError:
                pass
        self.defined.clear()

    @staticmethod
    def _define(conn, lv, secret_uuid: str, usage: str):
        def xml(name):
            return (f"<secret ephemeral='no' private='no'><uuid>{secret_uuid}</uuid>"
                    f"<usage type='ceph'><name>{name}</name></usage></secret>")
        try:
            return conn.secretDefineXML(xml(usage))
        except lv.libvirtError:
            # Another cloud on this libvirtd holds that usage name under its own uuid.
            return conn.secretDefineXML(xml(f"{usage} {secret_uuid}"))


def volume_disk(connection_info: dict, target: str, chap_secret: str | None = None) -> Disk:
    """The disk of an ``rbd`` (cinder's RBD driver) or ``iscsi`` connection_info;
    ``chap_secret``: uuid of the libvirt secret holding an iscsi target's CHAP password."""
    kind = connection_info.get("driver_volume_type")
    data = connection_info.get("data") or {}
    if kind == "rbd":
        if not data.get("name"):
            raise exceptions.BadRequest("rbd connection_info without a name.")
        hosts = list(zip(data.get("hosts") or [], data.get("ports") or []))
        auth = data.get("auth_enabled") and data.get("auth_username")
        net = NetworkSource("rbd", data["name"], hosts,
                            auth_username=data["auth_username"] if auth else None,
                            secret_type=data.get("secret_type") or "ceph",
                            secret_uuid=data.get("secret_uuid"))
        return Disk(target, data["name"], source_type="network", driver_type="raw",
                    network=net, serial=data.get("volume_id"), cache="writeback",
                    discard="unmap" if data.get("discard", True) else None,
                    readonly=data.get("access_mode") == "ro")
    # iscsi: QEMU's own initiator (libiscsi); portal "host:port", one LUN
    portal = data.get("target_portal") or ""
    host, _, port = portal.rpartition(":")
    if not (data.get("target_iqn") and host):
        raise exceptions.BadRequest("iscsi connection_info without target_iqn/portal.")
    chap = data.get("auth_method") == "CHAP"
    if chap and not (data.get("auth_username") and (chap_secret or data.get("secret_uuid"))):
        raise exceptions.BadRequest("iscsi connection_info with auth_method CHAP needs "
                                    "auth_username and auth_password.")
    net = NetworkSource("iscsi", f"{data['target_iqn']}/{int(data.get('target_lun') or 0)}",
                        [(host.strip("[]"), port or "3260")],
                        auth_username=data["auth_username"] if chap else None,
                        secret_type="iscsi", secret_uuid=chap_secret or data.get("secret_uuid"))
    return Disk(target, net.name, source_type="network", driver_type="raw", network=net,
                serial=data.get("volume_id"), readonly=data.get("access_mode") == "ro")


class RbdDisks:
    """The instance disks of [ceph] compute_pool, as [ceph] compute_user."""

    def __init__(self):
        conf = config.CONF.ceph
        self.pool, self.user = conf.compute_pool, conf.compute_user
        self.rbd = ceph.bindings()[1]

    def ioctx(self, pool: str | None = None):
        return ceph.ioctx(self.user, pool or self.pool)

    def fsid(self) -> str:
        return ceph.cluster(self.user).get_fsid()

    @staticmethod
    def name(uuid: str, suffix: str = "disk") -> str:
        return f"{uuid}_{suffix}"

    def exists(self, name: str) -> bool:
        try:
            with self.rbd.Image(self.ioctx(), name, read_only=True):
                return True
        except self.rbd.ImageNotFound:
            return False

    def size(self, name: str) -> int:
        with self.rbd.Image(self.ioctx(), name, read_only=True) as image:
            return image.size()

    def grow(self, name: str, size: int) -> int:
        """Grow the image to ``size`` bytes (never shrink); returns its size before."""
        with self.rbd.Image(self.ioctx(), name) as image:  # one open: ~20 ms each
            before = image.size()
            if before < size:
                image.resize(size)
            return before

    def disk(self, target: str, name: str) -> Disk:
        """The libvirt disk of one of our images."""
        hosts, ports = ceph.monitors()
        net = NetworkSource("rbd", f"{self.pool}/{name}", list(zip(hosts, ports)),
                            auth_username=self.user, secret_uuid=secret_uuid_for(self.user))
        return Disk(target, net.name, source_type="network", driver_type="raw", network=net,
                    cache="writeback", discard="unmap")

    # --- creating disks ------------------------------------------------------------------

    def clone_source(self, meta: dict) -> str | None:
        """The image's rbd location a root disk can be cloned from, else None (nova's
        is_cloneable: this cluster, raw, and the snapshot readable by our user)."""
        if meta.get("disk_format") != "raw":
            return None
        fsid = None
        for url in image_urls(meta):
            parts = parse_url(url)
            if parts is None:
                continue
            fsid = fsid or self.fsid()
            if parts[0] != fsid:
                continue
            try:
                with self.rbd.Image(self.ioctx(parts[1]), parts[2], snapshot=parts[3],
                                    read_only=True):
                    return url
            except (self.rbd.Error, ceph.CephUnavailable) as error:
                LOG.info("Image %s not cloneable from %s: %s", meta.get("id"), url, error)
        return None

    def clone(self, url: str, name: str) -> None:
        _, pool, image, snap = parse_url(url)
        self.rbd.RBD().clone(self.ioctx(pool), image, snap, self.ioctx(), name)

    def import_file(self, base: str, name: str) -> None:
        """The cached image as a raw RBD image (qcow2 converted on the way)."""
        info = imagecache.image_info(base)
        fmt = info.get("format")
        if fmt not in ("qcow2", "raw") or info.get("backing-filename"):
            raise imagecache.ImageError(f"Image format {fmt!r} cannot back a guest (qcow2 "
                                        "or raw, without a backing file).")
        try:
            imagecache.qemu_img("convert", "-f", fmt, "-O", "raw", base, self.qemu_uri(name))
        except Exception:
            self.remove(name)  # a half-written import is no disk
            raise

    def create_blank(self, name: str, size: int) -> None:
        self.rbd.RBD().create(self.ioctx(), name, size)

    def qemu_uri(self, name: str) -> str:
        """QEMU's rbd: filename (qemu-img), with our user and the cluster's conf."""
        def esc(value):
            return value.replace("\\", "\\\\").replace(":", "\\:")
        uri = f"rbd:{esc(self.pool)}/{esc(name)}:id={esc(self.user)}:conf={esc(ceph.conf_file())}"
        if config.CONF.ceph.keyring:
            uri += f":keyring={esc(config.CONF.ceph.keyring)}"
        return uri

    # --- removing them -------------------------------------------------------------------

    def list_disks(self) -> list[str]:
        return [n for n in self.rbd.RBD().list(self.ioctx()) if "_disk" in n]

    def remove_disks(self, uuid: str) -> None:
        for name in self.list_disks():
            if name.startswith(f"{uuid}_disk"):
                self.remove(name)

    def remove(self, name: str, pool: str | None = None) -> None:
        """Remove an image and its snapshots; a QEMU that just exited may still hold its
        watch for a moment (nova retries the same way)."""
        ioctx = self.ioctx(pool)
        for attempt in range(10):
            try:
                with self.rbd.Image(ioctx, name) as image:
                    for snap in list(image.list_snaps()):
                        if image.is_protected_snap(snap["name"]):
                            image.unprotect_snap(snap["name"])
                        image.remove_snap(snap["name"])
                self.rbd.RBD().remove(ioctx, name)
                return
            except self.rbd.ImageNotFound:
                return
            except (self.rbd.ImageBusy, self.rbd.ImageHasSnapshots):
                if attempt == 9:
                    raise
                time.sleep(0.5)

    # --- snapshots -----------------------------------------------------------------------

    def direct_snapshot(self, name: str, image_id: str, image_pool: str) -> str:
        """nova's direct_snapshot: snapshot the disk, clone it into the image pool as the
        new image, flatten it (no tie to the instance), snap+protect it; returns its
        rbd:// URL. Raises rbd.PermissionError when our user cannot write there."""
        temp = f"{uuidlib.uuid4().hex}"
        with self.rbd.Image(self.ioctx(), name) as disk:
            disk.create_snap(temp)
            disk.protect_snap(temp)
        dest = self.ioctx(image_pool)
        try:
            self.rbd.RBD().clone(self.ioctx(), name, temp, dest, image_id)
            try:
                with self.rbd.Image(dest, image_id) as image:
                    image.flatten()
                    image.create_snap(SNAP)
                    image.protect_snap(SNAP)
            except BaseException:
                self.remove(image_id, pool=image_pool)
                raise
        finally:
            with self.rbd.Image(self.ioctx(), name) as disk:
                disk.unprotect_snap(temp)
                disk.remove_snap(temp)
        q = urllib.parse.quote
        return f"rbd://{q(self.fsid())}/{q(image_pool)}/{q(image_id)}/{SNAP}"

    def cluster_gb(self) -> int:
        """The cluster's size, as the compute node's local_gb (nova reports it so)."""
        stats = ceph.cluster(self.user).get_cluster_stats()
        return max(1, int(stats["kb"]) >> 20)
