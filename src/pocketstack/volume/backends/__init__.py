"""Volume backends: where a volume's bytes live and the path a hypervisor opens.

Each backend is named (``[volume] enabled_backends``) and answers for volumes and snapshots
by id. ``connection_info`` follows os-brick's ``local`` connector for file and lvm: the
hypervisor opens ``device_path`` directly (a file, a block device), or with ``[volume]
target_helper = tgtadm`` an iSCSI export of it (iscsi_target.py); rbd (rbd.py) answers
cinder's ``rbd`` connection_info. The create_from_* / clone_image / *_stream methods have
defaults built on ``path`` (file, lvm); rbd clones and reads/writes through librbd instead.
"""
from __future__ import annotations

import os
import stat
import subprocess
import threading

from pocketstack.common import config, exceptions, runtime


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
    def delete_snapshot(self, snapshot_id: str, volume_id: str | None = None) -> None: ...
    def snapshot_path(self, snapshot_id: str) -> str: ...
    def snapshot_ids(self) -> set[str]: ...

    def copy_into(self, source_path: str, volume_id: str) -> None:
        """Copy a snapshot's or another volume's bytes into this (new, larger or equal)
        volume. Block devices get every byte: a reused extent may hold old data."""
        run("dd", f"if={source_path}", f"of={self.path(volume_id)}", "bs=1M",
            "conv=notrunc,fsync", timeout=3600)

    def create_from_snapshot(self, volume_id: str, snapshot_id: str, source_id: str,
                             size_gb: int) -> None:
        self.create(volume_id, size_gb)
        self.copy_into(self.snapshot_path(snapshot_id), volume_id)

    def create_from_volume(self, volume_id: str, source_id: str, size_gb: int) -> None:
        self.create(volume_id, size_gb)
        self.copy_into(self.path(source_id), volume_id)

    def discard_half_made(self, volume_id: str, source_id: str | None = None) -> None:
        """Remove what a failed or interrupted create left (``source_id``: the volume it
        was being made from)."""
        self.delete(volume_id)

    # Manage / unmanage (cinder's manage_existing): which backends can adopt storage that
    # no volume row owns, and give a volume's storage up without deleting it.
    can_manage = False

    def manageable(self) -> list[tuple[str, int]]:
        """(reference name, size in bytes) of what this backend holds besides its own
        volume-*/snapshot-* names."""
        raise BackendError(f"The {self.name} backend cannot manage existing volumes.")

    def manageable_size(self, name: str) -> int:
        raise BackendError(f"The {self.name} backend cannot manage existing volumes.")

    def manage_existing(self, volume_id: str, name: str, size_gb: int) -> None:
        raise BackendError(f"The {self.name} backend cannot manage existing volumes.")

    def unmanage(self, volume_id: str) -> str:
        raise BackendError(f"The {self.name} backend cannot unmanage volumes.")

    def manageable_snapshots(self) -> list[tuple[str, int]]:
        raise BackendError(f"The {self.name} backend cannot manage existing snapshots.")

    def manage_existing_snapshot(self, snapshot_id: str, name: str) -> None:
        raise BackendError(f"The {self.name} backend cannot manage existing snapshots.")

    def unmanage_snapshot(self, snapshot_id: str) -> str:
        raise BackendError(f"The {self.name} backend cannot unmanage snapshots.")

    def clone_image(self, volume_id: str, image: dict, size_gb: int) -> bool:
        """Make the volume from the image without copying bytes, if this backend can
        (it then exists); False: the caller creates it and copies the image in."""
        return False

    def write_stream(self, volume_id: str, chunks, limit: int) -> int:
        return write_into(self.path(volume_id), chunks, limit)

    def read_stream(self, volume_id: str, snapshot_id: str | None = None):
        path = self.snapshot_path(snapshot_id) if snapshot_id else self.path(volume_id)
        with open(path, "rb") as f:
            while chunk := f.read(4 << 20):
                yield chunk

    def capacity(self) -> tuple[int, int | None]:
        """(total GiB, free GiB as the backend sees it, or None: count allocations)."""
        raise NotImplementedError

    def exports_iscsi(self) -> bool:
        """Whether hosts open this backend's volumes through its iSCSI export."""
        from pocketstack.volume import iscsi_target

        return iscsi_target.enabled()

    def connection_info(self, volume_id: str, *, mode: str = "rw",
                        chap: tuple[str, str] | None = None) -> dict:
        """``chap``: the (user, password) its iSCSI export requires."""
        from pocketstack.volume import iscsi_target

        if self.exports_iscsi():
            return iscsi_target.connection_info(volume_id, self.path(volume_id), mode, chap)
        return {"driver_volume_type": "local",
                "data": {"device_path": self.path(volume_id), "volume_id": volume_id,
                         "access_mode": mode, "encrypted": False,
                         "disk_type": self.volume_type}}

    def refresh_export(self, volume_id: str) -> None:
        """After an extend: an exported LUN reports the new size (cinder's extend_target),
        so an attached server's block_resize sees it."""
        from pocketstack.volume import iscsi_target

        if self.exports_iscsi():
            iscsi_target.refresh_size(volume_id, self.path(volume_id))

    def unexport(self, volume_id: str) -> None:
        """The volume has no attachment left: stop exporting it (its iSCSI target)."""
        from pocketstack.volume import iscsi_target

        if iscsi_target.enabled():
            iscsi_target.unexport(volume_id)


# --- bytes into volumes (file and lvm backends, backups, the manager) -------------------

def is_block(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


_ZEROS = bytes(4 << 20)


def all_zero(chunk: bytes) -> bool:
    """memcmp against zeros: a cheap test even for a data chunk (its first byte decides)."""
    if len(chunk) > len(_ZEROS):
        return chunk.count(0) == len(chunk)
    return chunk == _ZEROS[:len(chunk)] if not chunk[:1].strip(b"\0") else False


def write_into(path: str, chunks, limit: int) -> int:
    """Write a stream of bytes at the start of ``path`` (a volume file or device), keeping
    files sparse (all-zero chunks become holes); returns how many bytes were written."""
    sparse = not is_block(path)
    written = 0
    fd = os.open(path, os.O_WRONLY)
    try:
        for chunk in chunks:
            if written + len(chunk) > limit:
                raise BackendError(f"The data ({written + len(chunk)}+ bytes) does not fit "
                                   f"into the volume ({limit} bytes).")
            if sparse and all_zero(chunk):
                os.lseek(fd, len(chunk), os.SEEK_CUR)
            else:
                os.write(fd, chunk)
            written += len(chunk)
        os.fsync(fd)
    finally:
        os.close(fd)
    return written


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


class _Backends:
    def __init__(self):
        self.by_name: dict[str, Backend] = {}
        self.lock = threading.Lock()


def _state() -> _Backends:
    """The current cloud's backends (common/runtime.py)."""
    return runtime.current().slot(__name__, _Backends)


def get(name: str) -> Backend:
    state = _state()
    with state.lock:
        if name not in state.by_name:
            if name == "file":
                from pocketstack.volume.backends.file import FileBackend
                state.by_name[name] = FileBackend()
            elif name == "lvm":
                from pocketstack.volume.backends.lvm import LVMBackend
                state.by_name[name] = LVMBackend()
            elif name == "rbd":
                from pocketstack.volume.backends.rbd import RBDBackend
                state.by_name[name] = RBDBackend()
            else:
                raise BackendError(f"Unknown volume backend {name!r}: the backends are "
                                   "'file', 'lvm' and 'rbd'.")
        return state.by_name[name]


def enabled() -> list[str]:
    return [n.strip() for n in config.CONF.volume.enabled_backends if n.strip()]


def reset() -> None:
    """Forget configured backends (tests that change the options)."""
    state = _state()
    with state.lock:
        state.by_name.clear()
