"""Per-host image cache and instance disks (nova's _create_image, seed 001 steps 19-21
and 28): base images under ``<instances path>/_base`` downloaded once through the image
service and checked against ``os_hash_value``; the root disk a qcow2 overlay on the base
(or a raw copy with ``[libvirt] images_type = raw``) grown to the flavor's root disk;
ephemeral and swap disks per flavor.

Concurrent boots of one image download it once: the download holds an exclusive flock on
``<base>.lock`` (threads and processes alike), and whoever comes next finds the
verified file.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import subprocess
import uuid as uuidlib

from pocketstack.common import exceptions

LOG = logging.getLogger(__name__)
GiB = 1 << 30


class ImageError(exceptions.PocketstackError):
    """The image cannot back a guest (bad data, wrong hash, too big for the flavor)."""
    code = 400


def qemu_img(*args: str) -> str:
    proc = subprocess.run(["qemu-img", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise ImageError(f"qemu-img {args[0]} failed: "
                         f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
    return proc.stdout


def image_info(path: str) -> dict:
    """qemu-img's view of a file: {"format", "virtual-size", "backing-filename"?}."""
    return json.loads(qemu_img("info", "--output=json", path))


class ImageCache:
    def __init__(self, base_dir: str):
        self.base_dir = base_dir
        os.makedirs(base_dir, exist_ok=True)

    def path(self, image_id: str) -> str:
        if not image_id or "/" in image_id or image_id.startswith("."):
            raise ImageError(f"Invalid image id {image_id!r}.")
        return os.path.join(self.base_dir, image_id)

    def fetch(self, client, meta: dict) -> tuple[str, bool]:
        """The verified base file of image ``meta`` and whether it was cached already.
        ``client`` is a compute ImageClient (the caller's token)."""
        path = self.path(meta["id"])
        if os.path.exists(path):
            return path, True
        with open(path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if os.path.exists(path):
                    return path, True  # another boot fetched it while we waited
                part = f"{path}.part-{uuidlib.uuid4().hex[:8]}"
                try:
                    client.download(meta["id"], part)
                    verify(part, meta)
                    self._write_meta(meta)
                    os.replace(part, path)
                finally:
                    if os.path.exists(part):
                        os.unlink(part)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        LOG.info("Cached image %s (%s) in %s", meta["id"], meta.get("name"), path)
        return path, False


    # The image's metadata is kept next to its data: the next boot of a cached image
    # needs no call to the image service (the API checked the user may use it).
    def _write_meta(self, meta: dict) -> None:
        tmp = self.path(meta["id"]) + ".json.tmp"
        with open(tmp, "w") as f:
            json.dump(meta, f)
        os.replace(tmp, self.path(meta["id"]) + ".json")

    def cached_meta(self, image_id: str) -> dict | None:
        """The metadata of a cached image, None unless its data is cached too."""
        path = self.path(image_id)
        try:
            with open(path + ".json") as f:
                meta = json.load(f)
        except (FileNotFoundError, ValueError):
            return None
        return meta if os.path.exists(path) else None


def verify(path: str, meta: dict) -> None:
    """The downloaded bytes are the image the service describes (os_hash_value with its
    os_hash_algo, else the legacy md5 checksum)."""
    algo, expected = meta.get("os_hash_algo"), meta.get("os_hash_value")
    if not (algo and expected):
        algo, expected = "md5", meta.get("checksum")
    if not expected:
        return
    try:
        digest = hashlib.new(algo)
    except ValueError:
        raise ImageError(f"Image {meta['id']} uses unknown hash algorithm {algo}.") from None
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != expected:
        raise ImageError(f"Image {meta['id']} data does not match its {algo} "
                         f"({digest.hexdigest()[:16]}… != {expected[:16]}…).")


def create_root_disk(base: str, target: str, root_gb: int, images_type: str) -> str:
    """The instance's root disk from the cached base; returns its format."""
    info = image_info(base)
    fmt = info.get("format")
    if fmt not in ("qcow2", "raw"):
        raise ImageError(f"Image format {fmt!r} cannot back a guest (qcow2 or raw).")
    if info.get("backing-filename"):
        # An image pointing at a host file would read that file: refuse it, as nova does.
        raise ImageError("Image has a backing file; upload a flattened image.")
    virtual = int(info.get("virtual-size") or 0)
    size = root_gb * GiB
    if size and virtual > size:
        raise ImageError(f"Flavor's disk is too small for requested image: the image is "
                         f"{virtual} bytes, the flavor's root disk {root_gb} GB.")
    if images_type == "raw":
        qemu_img("convert", "-f", fmt, "-O", "raw", base, target)
        if size > virtual:
            qemu_img("resize", "-f", "raw", target, str(size))
        return "raw"
    args = ["create", "-q", "-f", "qcow2", "-F", fmt, "-b", base, target]
    if size > virtual:
        args.append(str(size))
    qemu_img(*args)
    return "qcow2"


def create_blank_disk(target: str, size_bytes: int, images_type: str) -> str:
    fmt = "raw" if images_type == "raw" else "qcow2"
    qemu_img("create", "-q", "-f", fmt, target, str(size_bytes))
    return fmt


def create_swap_disk(target: str, swap_mb: int) -> str:
    """A raw disk with a swap signature (mkswap when the host has it, as nova does)."""
    with open(target, "wb") as f:
        f.truncate(swap_mb << 20)
    try:
        subprocess.run(["mkswap", target], capture_output=True, check=False)
    except FileNotFoundError:
        pass
    return "raw"
