"""Volume backends: where a volume's bytes live and the path a hypervisor opens.

Each backend is named (``[volume] enabled_backends``) and answers for volumes and snapshots
by id. ``connection_info`` follows os-brick's ``local`` connector: the hypervisor opens
``device_path`` directly (a file for the file backend, a block device for LVM).
"""
from __future__ import annotations

import subprocess
import threading

from pocketstack.common import config, exceptions


class BackendError(exceptions.PocketstackError):
    """A backend operation failed; the message says what the backend answered."""


class Backend:
    name = ""
    volume_type = ""  # the libvirt disk type the device path needs: file or block

    def create(self, volume_id: str, size_gb: int) -> None: ...
    def delete(self, volume_id: str) -> None: ...
    def extend(self, volume_id: str, size_gb: int) -> None: ...
    def path(self, volume_id: str) -> str: ...
    def exists(self, volume_id: str) -> bool: ...
    def volume_ids(self) -> set[str]: ...
    def create_snapshot(self, snapshot_id: str, volume_id: str) -> None: ...
    def delete_snapshot(self, snapshot_id: str) -> None: ...
    def snapshot_path(self, snapshot_id: str) -> str: ...
    def snapshot_ids(self) -> set[str]: ...

    def copy_into(self, source_path: str, volume_id: str) -> None:
        """Copy a snapshot's or another volume's bytes into this (new, larger or equal)
        volume. Block devices get every byte: a reused extent may hold old data."""
        run("dd", f"if={source_path}", f"of={self.path(volume_id)}", "bs=1M",
            "conv=notrunc,fsync", timeout=3600)

    def capacity(self) -> tuple[int, int | None]:
        """(total GiB, free GiB as the backend sees it, or None: count allocations)."""
        raise NotImplementedError

    def connection_info(self, volume_id: str, *, mode: str = "rw") -> dict:
        return {"driver_volume_type": "local",
                "data": {"device_path": self.path(volume_id), "volume_id": volume_id,
                         "access_mode": mode, "encrypted": False,
                         "disk_type": self.volume_type}}


def run(*args: str, timeout: float = 120) -> str:
    """Run a storage tool; BackendError with its stderr when it fails."""
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BackendError(f"{args[0]} failed: {error}") from None
    if proc.returncode != 0:
        raise BackendError(f"{' '.join(args[:3])} failed: "
                           f"{(proc.stderr or proc.stdout).strip()[:500]}")
    return proc.stdout


_backends: dict[str, Backend] = {}
_lock = threading.Lock()


def get(name: str) -> Backend:
    with _lock:
        if name not in _backends:
            if name == "file":
                from pocketstack.volume.backends.file import FileBackend
                _backends[name] = FileBackend()
            elif name == "lvm":
                from pocketstack.volume.backends.lvm import LVMBackend
                _backends[name] = LVMBackend()
            else:
                raise BackendError(f"Unknown volume backend {name!r}: the backends are "
                                   "'file' and 'lvm'.")
        return _backends[name]


def enabled() -> list[str]:
    return [n.strip() for n in config.CONF.volume.enabled_backends if n.strip()]


def reset() -> None:
    """Forget configured backends (tests that change the options)."""
    with _lock:
        _backends.clear()
