"""The file backend: one sparse raw file per volume under ``[volume] volumes_dir``.

A new volume is a hole of its size (instant, no disk used until written); snapshots and
clones are sparse copies (``cp --sparse=always``, which reflinks where the filesystem can).
"""
from __future__ import annotations

import os

from pocketstack.common import config
from pocketstack.volume.backends import Backend, BackendError, run

GiB = 1 << 30


class FileBackend(Backend):
    name = "file"
    volume_type = "file"

    @property
    def directory(self) -> str:
        path = config.CONF.volume.volumes_dir or os.path.join(config.data_dir(), "volumes")
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path

    def path(self, volume_id: str) -> str:
        return os.path.join(self.directory, f"volume-{volume_id}")

    def snapshot_path(self, snapshot_id: str) -> str:
        return os.path.join(self.directory, f"snapshot-{snapshot_id}")

    def create(self, volume_id: str, size_gb: int) -> None:
        path = self.path(volume_id)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.ftruncate(fd, size_gb * GiB)
            finally:
                os.close(fd)
        except OSError as error:
            raise BackendError(f"Cannot create {path}: {error.strerror}") from None

    def delete(self, volume_id: str) -> None:
        _remove(self.path(volume_id))

    def extend(self, volume_id: str, size_gb: int) -> None:
        try:
            os.truncate(self.path(volume_id), size_gb * GiB)
        except OSError as error:
            raise BackendError(f"Cannot extend volume {volume_id}: {error.strerror}") from None

    def exists(self, volume_id: str) -> bool:
        return os.path.exists(self.path(volume_id))

    def _ids(self, prefix: str) -> set[str]:
        return {n[len(prefix):] for n in os.listdir(self.directory) if n.startswith(prefix)}

    def volume_ids(self) -> set[str]:
        """The volumes' files: an unmanaged volume's file is no volume's any more."""
        return self._ids("volume-") - self._ids(self.UNMANAGED_MARKER)

    def snapshot_ids(self) -> set[str]:
        return self._ids("snapshot-")

    def create_snapshot(self, snapshot_id: str, volume_id: str) -> None:
        target = self.snapshot_path(snapshot_id)
        run("cp", "--sparse=always", "--reflink=auto", self.path(volume_id), target)

    def copy_into(self, source_path: str, volume_id: str) -> None:
        path = self.path(volume_id)
        size = os.path.getsize(path)
        run("cp", "--sparse=always", "--reflink=auto", source_path, path, timeout=3600)
        os.truncate(path, max(size, os.path.getsize(path)))

    def delete_snapshot(self, snapshot_id: str, volume_id: str | None = None) -> None:
        _remove(self.snapshot_path(snapshot_id))

    # --- manage / unmanage: plain files in the directory are what can be managed --------

    can_manage = True
    # An unmanaged volume's file keeps its name (as cinder's LVM driver leaves the LV
    # volume-<id>), so it can be managed again by that name; an empty marker file beside
    # it says no volume owns it, which keeps the next start from removing it as an orphan.
    UNMANAGED_MARKER = ".unmanaged-volume-"
    UNMANAGED_SNAPSHOT_PREFIX = "unmanaged-snapshot-"

    def _marker(self, volume_id: str) -> str:
        return os.path.join(self.directory, f"{self.UNMANAGED_MARKER}{volume_id}")

    def _is_unmanaged_volume_file(self, name: str) -> bool:
        return (name.startswith("volume-") and "/" not in name
                and os.path.exists(self._marker(name[len("volume-"):])))

    def manageable(self) -> list[tuple[str, int]]:
        out = []
        for entry in os.scandir(self.directory):
            if not entry.is_file(follow_symlinks=False) or entry.name.startswith(
                    ("snapshot-", ".", self.UNMANAGED_SNAPSHOT_PREFIX)) or (
                    entry.name.startswith("volume-")
                    and not self._is_unmanaged_volume_file(entry.name)):
                continue
            out.append((entry.name, entry.stat(follow_symlinks=False).st_size))
        return out

    def _unmanaged_path(self, name: str) -> str:
        if not name or "/" in name or name in (".", "..") or (
                name.startswith(("volume-", "snapshot-", "."))
                and not self._is_unmanaged_volume_file(name)):
            raise BackendError(f"Manage existing volume failed due to invalid backend "
                               f"reference {{'source-name': {name!r}}}: it is not a file "
                               "this backend can manage.")
        path = os.path.join(self.directory, name)
        if not os.path.isfile(path) or os.path.islink(path):
            raise BackendError(f"Manage existing volume failed due to invalid backend "
                               f"reference {{'source-name': {name!r}}}: no such file.")
        return path

    def manageable_size(self, name: str) -> int:
        return os.path.getsize(self._unmanaged_path(name))

    def manage_existing(self, volume_id: str, name: str, size_gb: int) -> None:
        """The file becomes the volume (renamed, grown to whole GiB, as cinder's LVM driver
        rounds an LV up)."""
        source = self._unmanaged_path(name)
        os.rename(source, self.path(volume_id))
        if name.startswith("volume-"):
            _remove(self._marker(name[len("volume-"):]))
        if os.path.getsize(self.path(volume_id)) < size_gb * GiB:
            os.truncate(self.path(volume_id), size_gb * GiB)

    def unmanage(self, volume_id: str) -> str:
        """Keep the data where it is, marked as no volume's; the name, to manage it
        again. Marking again (an unmanage the service did not finish recording) is
        harmless."""
        open(self._marker(volume_id), "ab").close()
        return f"volume-{volume_id}"

    def manageable_snapshots(self) -> list[tuple[str, int]]:
        """Unmanaged snapshots only: any other file is listed as a volume."""
        return [(entry.name, entry.stat(follow_symlinks=False).st_size)
                for entry in os.scandir(self.directory)
                if entry.name.startswith(self.UNMANAGED_SNAPSHOT_PREFIX)
                and entry.is_file(follow_symlinks=False)]

    def manage_existing_snapshot(self, snapshot_id: str, name: str) -> None:
        os.rename(self._unmanaged_path(name), self.snapshot_path(snapshot_id))

    def unmanage_snapshot(self, snapshot_id: str) -> str:
        name = f"{self.UNMANAGED_SNAPSHOT_PREFIX}{snapshot_id}"
        try:
            os.rename(self.snapshot_path(snapshot_id), os.path.join(self.directory, name))
        except FileNotFoundError:
            pass
        return name

    def capacity(self) -> tuple[int, int | None]:
        return config.CONF.volume.file_capacity_gb, None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
