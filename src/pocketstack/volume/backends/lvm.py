"""The LVM backend: a logical volume per volume in ``[volume] lvm_volume_group`` (thick, or
thin in ``lvm_thin_pool``), as DevStack's default cinder backend. Needs root and lvm2.

Snapshots are LVM thin snapshots in a thin pool; with thick volumes they are full copies in
a new LV (an LVM thick snapshot would need its copy-on-write size guessed up front).
"""
from __future__ import annotations

import logging
import os

from pocketstack.common import config
from pocketstack.volume.backends import Backend, BackendError, run

LOG = logging.getLogger(__name__)


class LVMBackend(Backend):
    name = "lvm"
    volume_type = "block"

    @property
    def vg(self) -> str:
        return config.CONF.volume.lvm_volume_group

    @property
    def thin(self) -> bool:
        return config.CONF.volume.lvm_thin

    def _lv(self, name: str) -> str:
        return f"{self.vg}/{name}"

    def path(self, volume_id: str) -> str:
        return f"/dev/{self.vg}/volume-{volume_id}"

    def snapshot_path(self, snapshot_id: str) -> str:
        return f"/dev/{self.vg}/snapshot-{snapshot_id}"

    def loop_file(self) -> str:
        return os.path.join(config.data_dir(), "volume-lvm", f"{self.vg}.img")

    def vg_exists(self) -> bool:
        try:
            run("vgs", "--noheadings", "-o", "vg_name", self.vg)
        except BackendError:
            return False
        return True

    def ensure_volume_group(self) -> None:
        """Start-up: the volume group exists, or (with lvm_loop_file_gb) is made on a loop
        device over a sparse file in the data dir; after a reboot the file is attached
        again and LVM finds the group on it."""
        if self.vg_exists():
            return
        size = config.CONF.volume.lvm_loop_file_gb
        if not size:
            LOG.warning("LVM volume group %s does not exist: volumes of the lvm backend "
                        "will fail until it does (or set [volume] lvm_loop_file_gb)", self.vg)
            return
        path = self.loop_file()
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fresh = not os.path.exists(path)
        if fresh:
            run("truncate", "-s", f"{size}G", path)
        attached = run("losetup", "-j", path).strip()
        device = attached.split(":", 1)[0] if attached else \
            run("losetup", "-f", "--show", path).strip()
        if not fresh:
            run("pvscan", "--cache", device)
            if self.vg_exists():
                return
        run("pvcreate", "-q", "-y", device)
        run("vgcreate", "-q", self.vg, device)
        LOG.info("Created LVM volume group %s on %s (%s, %d GiB)", self.vg, device, path,
                 size)

    def _ensure_pool(self) -> None:
        pool = config.CONF.volume.lvm_thin_pool
        if pool in self._lv_names():
            return
        run("lvcreate", "-y", "-l", "95%FREE", "-T", self._lv(pool))

    def _lv_names(self) -> set[str]:
        out = run("lvs", "--noheadings", "-o", "lv_name", self.vg)
        return {line.strip() for line in out.splitlines() if line.strip()}

    def create(self, volume_id: str, size_gb: int) -> None:
        name = f"volume-{volume_id}"
        if self.thin:
            self._ensure_pool()
            run("lvcreate", "-y", "-V", f"{size_gb}g", "-T",
                self._lv(config.CONF.volume.lvm_thin_pool), "-n", name)
        else:
            run("lvcreate", "-y", "-W", "y", "-L", f"{size_gb}g", "-n", name, self.vg)
            # A thick LV reuses extents of deleted ones: never show old data.
            _zero_head(self.path(volume_id))

    def delete(self, volume_id: str) -> None:
        self._remove(f"volume-{volume_id}")

    def _remove(self, name: str) -> None:
        if name in self._lv_names():
            run("lvremove", "-f", "-y", self._lv(name))

    def extend(self, volume_id: str, size_gb: int) -> None:
        run("lvextend", "-L", f"{size_gb}g", self._lv(f"volume-{volume_id}"))

    def exists(self, volume_id: str) -> bool:
        return f"volume-{volume_id}" in self._lv_names()

    def volume_ids(self) -> set[str]:
        return {n[7:] for n in self._lv_names() if n.startswith("volume-")}

    def snapshot_ids(self) -> set[str]:
        return {n[9:] for n in self._lv_names() if n.startswith("snapshot-")}

    def create_snapshot(self, snapshot_id: str, volume_id: str) -> None:
        name = f"snapshot-{snapshot_id}"
        if self.thin:
            # -kn: thin snapshots are created with "skip activation"; we read from them.
            run("lvcreate", "-y", "-s", "-kn", "-n", name, self._lv(f"volume-{volume_id}"))
            return
        size = run("lvs", "--noheadings", "--units", "b", "--nosuffix", "-o", "lv_size",
                   self._lv(f"volume-{volume_id}")).strip()
        run("lvcreate", "-y", "-W", "y", "-L", f"{size}b", "-n", name, self.vg)
        run("dd", f"if={self.path(volume_id)}", f"of={self.snapshot_path(snapshot_id)}",
            "bs=1M", "conv=sparse,fsync", timeout=3600)

    def delete_snapshot(self, snapshot_id: str, volume_id: str | None = None) -> None:
        self._remove(f"snapshot-{snapshot_id}")

    def capacity(self) -> tuple[int, int | None]:
        try:
            out = run("vgs", "--noheadings", "--units", "g", "--nosuffix", "-o",
                      "vg_size,vg_free", self.vg)
        except BackendError:
            return 0, 0
        size, free = (float(x) for x in out.split())
        if self.thin:  # thin volumes over-commit; the pool's size is the limit we report
            return int(size), None
        return int(size), int(free)


def _zero_head(path: str, length: int = 1 << 20) -> None:
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as error:
        raise BackendError(f"Cannot open {path}: {error.strerror}") from None
    try:
        os.write(fd, b"\0" * length)
    finally:
        os.close(fd)
