"""The volume manager: the RPC endpoint of topic ``volume`` (server = host), as
cinder-volume. It does what takes time or touches a backend — create (blank, from image,
snapshot or another volume), delete, extend, snapshots, upload to image — and records the
outcome: the target status, or ``error`` with a reason people can read (user messages).

Messages carry ids only; the manager re-reads the rows. Every failure undoes what it made
on the backend, so no file or LV outlives its row.
"""
from __future__ import annotations

import logging
import os
import subprocess
import tempfile

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import backends, encryption_keys, luks, scheduler
from pocketstack.volume.backends import BackendError
from pocketstack.volume.models import GroupSnapshot, Snapshot, Volume, VolumeAttachment

LOG = logging.getLogger(__name__)
CHUNK = 1 << 20
GiB = 1 << 30
CANCEL_CHECK = 16 << 20  # bytes copied between two looks at whether the volume is deleted


def _backend(volume: Volume) -> backends.Backend:
    return backends.get(scheduler.backend_of(volume.host))


def _update(model, row_id: str | None, **values) -> None:
    """Set ``values`` (and updated_at) on a row, if there is one and it still exists."""
    if row_id is None:
        return
    with db.transaction() as s:
        row = s.get(model, row_id)
        if row is not None:
            for key, value in values.items():
                setattr(row, key, value)
            row.updated_at = utcnow()


def _set(volume_id: str, **values) -> None:
    _update(Volume, volume_id, **values)


CREATING = ("creating", "downloading")


def _set_while_creating(volume_id: str, **values) -> bool:
    """Record a step of a create, unless the volume is no longer being created (a build's
    cleanup force-deleted it meanwhile: its delete is under way). False then."""
    with db.transaction() as s:
        volume = s.get(Volume, volume_id)
        if volume is None or volume.status not in CREATING:
            return False
        for key, value in values.items():
            setattr(volume, key, value)
        volume.updated_at = utcnow()
    return True


def _status(volume_id: str) -> str | None:
    with db.reader() as s:
        return s.scalar(sa.select(Volume.status).where(Volume.id == volume_id))


class Cancelled(BackendError):
    """The volume was deleted while its data was being written."""


def _cancellable(chunks, volume_id: str):
    """``chunks`` as they come, until the volume is no longer being created (asked every
    CANCEL_CHECK bytes): then Cancelled, so a deleted volume's copy stops early."""
    seen = 0
    for chunk in chunks:
        if seen // CANCEL_CHECK != (seen + len(chunk)) // CANCEL_CHECK \
                and _status(volume_id) not in CREATING:
            raise Cancelled("The volume was deleted while its image was copied.")
        seen += len(chunk)
        yield chunk


class VolumeManager:
    # --- create / delete ------------------------------------------------------------

    def create_volume(self, ctx, volume_id: str, image: dict | None = None,
                      backup_id: str | None = None) -> None:
        with db.reader() as s:
            volume = s.get(Volume, volume_id)
            if volume is None or volume.status != "creating":
                return
            source = s.get(Volume, volume.source_volid) if volume.source_volid else None
            snapshot = s.get(Snapshot, volume.snapshot_id) if volume.snapshot_id else None
            # a clone's, snapshot's, backup's or encrypted upload's bytes are LUKS
            # already, under a copy of its key
            encrypted = snapshot is None and source is None and backup_id is None \
                and encryption_keys.IMAGE_KEY not in (image or {}).get("properties", {}) \
                and encryption_keys.is_luks(s, volume)
        backend = _backend(volume)
        try:
            passphrase = (encryption_keys.passphrase(ctx, volume.encryption_key_id)
                          if encrypted else None)
            if snapshot is not None:
                backend.create_from_snapshot(volume.id, snapshot.id, snapshot.volume_id,
                                             volume.size)
            elif source is not None:
                backend.create_from_volume(volume.id, source.id, volume.size)
            elif image is not None and not encrypted \
                    and backend.clone_image(volume.id, image, volume.size):
                pass  # a copy-on-write clone of the image: no bytes to copy
            else:
                backend.create(volume.id, volume.size)
                if passphrase is not None:
                    luks.format_volume(backend, volume.id, volume.size, passphrase)
                if image is not None:
                    if not _set_while_creating(volume.id, status="downloading"):
                        raise Cancelled("The volume was deleted before its data was "
                                        "written.")
                    self._copy_image(ctx, image, backend, volume.size, volume.id,
                                     passphrase)
                elif backup_id is not None:
                    from pocketstack.volume import backup_store

                    backup_store.restore(backup_id, backend, volume.id, ctx)
        except Exception as error:  # noqa: BLE001 - any failure: error status, no leftovers
            LOG.warning("Creating volume %s failed: %s", volume.id, error)
            try:
                backend.discard_half_made(volume.id, volume.source_volid)
            except Exception:  # noqa: BLE001
                LOG.exception("Removing the half-made volume %s failed", volume.id)
            _set_while_creating(volume.id, status="error", error_reason=_reason(error))
            return
        finally:
            if backup_id is not None:
                self._backup_set(backup_id, status="available")
        values = {"status": "available", "launched_at": utcnow()}
        if image is not None:
            values.update(bootable=True, image_metadata=_image_metadata(image))
        if source is not None:
            values.update(bootable=source.bootable, image_metadata=source.image_metadata)
        if snapshot is not None:
            with db.reader() as s:
                origin = s.get(Volume, snapshot.volume_id)
                if origin is not None:
                    values.update(bootable=origin.bootable,
                                  image_metadata=origin.image_metadata)
        if not _set_while_creating(volume.id, **values) \
                and _status(volume.id) in (None, "deleting"):
            backend.delete(volume.id)  # deleted meanwhile: its delete may have run first

    def _copy_image(self, ctx, image: dict, backend: backends.Backend, size_gb: int,
                    volume_id: str, passphrase: str | None = None) -> None:
        """The image's bytes into the volume; with ``passphrase`` into the payload of the
        LUKS volume (through qemu-img, which encrypts)."""
        from pocketstack.clients.image import ImageClient

        chunks = _cancellable(ImageClient(ctx, caller="volume").chunks(image["id"]),
                              volume_id)
        raw = image.get("disk_format") in (None, "raw", "iso", "ami", "aki", "ari")
        if raw and passphrase is None:
            backend.write_stream(volume_id, chunks, size_gb * GiB)
            return
        if passphrase is not None:
            self._copy_image_encrypted(chunks, "raw" if raw else image["disk_format"],
                                       backend, size_gb, volume_id, passphrase)
            return
        path = backend.path(volume_id)
        network = path.startswith("rbd:")  # qemu-img writes into the RBD image itself
        # qcow2 & co.: download to a temp file, let qemu-img write raw into the volume.
        with tempfile.TemporaryDirectory(prefix="pocketstack-image-") as tmp:
            src = os.path.join(tmp, "image")
            with open(src, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
            info = _qemu_img("info", "--output=json", "-f", image["disk_format"], src)
            import json

            virtual = json.loads(info).get("virtual-size", 0)
            if virtual > size_gb * GiB:
                raise BackendError(f"Image virtual size {virtual} bytes does not fit into "
                                   f"the volume ({size_gb} GiB).")
            args = ["convert", "-f", image["disk_format"], "-O", "raw"]
            if network or backends.is_block(path):
                args.append("-n")  # the target exists: write into it
            _qemu_img(*args, src, path, timeout=3600)
            if not network and not backends.is_block(path):
                os.truncate(path, size_gb * GiB)  # qemu-img wrote the virtual size

    @staticmethod
    def _copy_image_encrypted(chunks, disk_format: str, backend: backends.Backend,
                              size_gb: int, volume_id: str, passphrase: str) -> None:
        import json

        with tempfile.TemporaryDirectory(prefix="pocketstack-image-") as tmp:
            src = os.path.join(tmp, "image")
            with open(src, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
            virtual = json.loads(_qemu_img("info", "--output=json", "-f", disk_format,
                                           src)).get("virtual-size", 0)
            room = luks.payload_size(backend, volume_id, passphrase)
            if virtual > room:
                raise BackendError(f"Image virtual size {virtual} bytes does not fit into "
                                   f"the encrypted volume ({room} bytes after its LUKS "
                                   "header).")
            luks.write_image(backend, volume_id, src, disk_format, passphrase)

    def delete_volume(self, ctx, volume_id: str) -> None:
        with db.reader() as s:
            volume = s.get(Volume, volume_id)
            if volume is None or volume.status != "deleting":
                return
            snaps = [sn.id for sn in s.query(Snapshot).filter_by(volume_id=volume_id)]
        backend = _backend(volume)
        try:
            backend.unexport(volume.id)
            for snapshot_id in snaps:
                backend.delete_snapshot(snapshot_id, volume.id)
            backend.delete(volume.id)
        except Exception as error:  # noqa: BLE001
            LOG.warning("Deleting volume %s failed: %s", volume.id, error)
            _set(volume.id, status="error_deleting", error_reason=_reason(error))
            return
        from pocketstack.volume import api

        api.finish_delete(volume.id)

    # --- manage / unmanage (manage.py) -------------------------------------------------

    def list_manageable(self, ctx, backend: str) -> list:
        return [list(item) for item in backends.get(backend).manageable()]

    def manage_volume(self, ctx, volume_id: str, source_name: str) -> None:
        from pocketstack.volume import manage

        manage.finish_manage(volume_id, source_name)

    def unmanage_volume(self, ctx, volume_id: str) -> None:
        from pocketstack.volume import manage

        manage.finish_unmanage(volume_id)

    def list_manageable_snapshots(self, ctx, backend: str) -> list:
        return [list(item) for item in backends.get(backend).manageable_snapshots()]

    def manage_snapshot(self, ctx, snapshot_id: str, source_name: str) -> None:
        from pocketstack.volume import snapshot_manage

        snapshot_manage.finish_manage(snapshot_id, source_name)

    def unmanage_snapshot(self, ctx, snapshot_id: str) -> None:
        from pocketstack.volume import snapshot_manage

        snapshot_manage.finish_unmanage(snapshot_id)

    # --- extend ----------------------------------------------------------------------

    def extend_volume(self, ctx, volume_id: str, new_size: int) -> None:
        with db.reader() as s:
            volume = s.get(Volume, volume_id)
            if volume is None or volume.status != "extending":
                return
            servers = [a.instance_uuid for a in volume.attachments
                       if a.instance_uuid and a.attach_status == "attached"]
            attached = volume.attach_status == "attached"
        try:
            backend = _backend(volume)
            backend.extend(volume.id, new_size)
            backend.refresh_export(volume.id)
        except Exception as error:  # noqa: BLE001
            _set(volume.id, status="error_extending", error_reason=_reason(error))
            return
        _set(volume.id, status="in-use" if attached else "available", size=new_size)
        if servers:  # cinder's in-use extend: nova resizes the guest's disk
            from pocketstack.clients.compute import ComputeClient

            events = [{"server_uuid": uuid, "name": "volume-extended", "tag": volume_id}
                      for uuid in servers]
            try:
                ComputeClient(caller="volume").external_events(events, microversion="2.51")
            except Exception as error:  # noqa: BLE001 - the volume is extended either way
                LOG.warning("Telling compute volume %s was extended failed: %s",
                            volume_id, error)

    def reimage_volume(self, ctx, volume_id: str, image: dict, previous_status: str) -> None:
        """Write the image over the volume, then tell nova (volume-reimaged, tagged with the
        volume id) for each server the volume is attached or reserved to."""
        with db.reader() as s:
            volume = s.get(Volume, volume_id)
            if volume is None or volume.status != "downloading":
                return
            servers = [a.instance_uuid for a in s.scalars(sa.select(VolumeAttachment).where(
                VolumeAttachment.volume_id == volume_id)).all() if a.instance_uuid]
            encrypted = encryption_keys.is_luks(s, volume)
        status = "completed"
        try:
            passphrase = (encryption_keys.passphrase(ctx, volume.encryption_key_id)
                          if encrypted else None)
            self._copy_image(ctx, image, _backend(volume), volume.size, volume.id,
                             passphrase)
        except Exception as error:  # noqa: BLE001
            LOG.warning("Reimaging volume %s failed: %s", volume_id, error)
            _set(volume_id, status="error", error_reason=_reason(error))
            status = "failed"
        else:
            _set(volume_id, status=previous_status, bootable=True,
                 image_metadata=_image_metadata(image))
        if servers:
            from pocketstack.clients.compute import ComputeClient

            events = [{"server_uuid": uuid, "name": "volume-reimaged", "tag": volume_id,
                       "status": status} for uuid in servers]
            try:
                ComputeClient(caller="volume").external_events(events, microversion="2.93")
            except Exception as error:  # noqa: BLE001 - nova times out waiting then
                LOG.warning("Telling compute volume %s was reimaged failed: %s",
                            volume_id, error)

    # --- snapshots ---------------------------------------------------------------------

    def create_snapshot(self, ctx, snapshot_id: str) -> None:
        with db.reader() as s:
            snap = s.get(Snapshot, snapshot_id)
            if snap is None or snap.status != "creating":
                return
            volume = s.get(Volume, snap.volume_id)
        backend = _backend(volume)
        try:
            backend.create_snapshot(snap.id, volume.id)
        except Exception as error:  # noqa: BLE001
            try:
                backend.delete_snapshot(snap.id, volume.id)
            except Exception:  # noqa: BLE001
                LOG.exception("Removing the half-made snapshot %s failed", snap.id)
            self._snapshot_set(snap.id, status="error", error_reason=_reason(error))
            return
        self._snapshot_set(snap.id, status="available", progress="100%")

    def delete_snapshot(self, ctx, snapshot_id: str) -> None:
        with db.reader() as s:
            snap = s.get(Snapshot, snapshot_id)
            if snap is None or snap.status != "deleting":
                return
            volume = s.get(Volume, snap.volume_id)
        try:
            _backend(volume).delete_snapshot(snap.id, volume.id)
        except Exception as error:  # noqa: BLE001
            self._snapshot_set(snap.id, status="error_deleting", error_reason=_reason(error))
            _update(GroupSnapshot, snap.group_snapshot_id, status="error_deleting")
            return
        with db.transaction() as s:
            row = s.get(Snapshot, snapshot_id)
            if row is not None:
                s.delete(row)
                s.flush()
                _forget_deleted_group_snapshot(s, row.group_snapshot_id)

    @staticmethod
    def _snapshot_set(snapshot_id: str, **values) -> None:
        _update(Snapshot, snapshot_id, **values)

    # --- backups -------------------------------------------------------------------------

    def create_backup(self, ctx, backup_id: str, restore_status: str) -> None:
        from pocketstack.volume import backup_store
        from pocketstack.volume.models import Backup

        with db.reader() as s:
            backup = s.get(Backup, backup_id)
            volume = s.get(Volume, backup.volume_id) if backup else None
        if backup is None or backup.status != "creating" or volume is None:
            return
        key_id = None
        try:
            if volume.encryption_key_id is not None:
                # The backup's own copy of the key (cinder's): it outlives the volume.
                key_id = encryption_keys.for_new_volume(ctx, None, volume.encryption_key_id,
                                                        f"backup-{backup_id}")
                self._backup_set(backup_id, encryption_key_id=key_id)
            stored = backup_store.create(backup, volume, _backend(volume), ctx)
        except Exception as error:  # noqa: BLE001
            LOG.warning("Backup %s of volume %s failed: %s", backup_id, volume.id, error)
            _remove(backups_path(backup_id))
            encryption_keys.delete(key_id)
            self._backup_set(backup_id, status="error", fail_reason=_reason(error),
                             encryption_key_id=None)
        else:
            self._backup_set(backup_id, status="available", data_timestamp=utcnow(),
                             **stored)
        finally:
            _set(volume.id, status=restore_status)

    def delete_backup(self, ctx, backup_id: str) -> None:
        from pocketstack.volume import backup_store
        from pocketstack.volume.models import Backup

        with db.reader() as s:
            backup = s.get(Backup, backup_id)
        if backup is None:
            return
        try:
            backup_store.delete(backup, ctx)
        except Exception as error:  # noqa: BLE001
            LOG.warning("Deleting backup %s failed: %s", backup_id, error)
            self._backup_set(backup_id, status="error_deleting", fail_reason=_reason(error))
            return
        encryption_keys.delete(backup.encryption_key_id)  # before the row: it names the key
        with db.transaction() as s:
            row = s.get(Backup, backup_id)
            if row is not None and row.status == "deleting":
                s.delete(row)

    def restore_backup(self, ctx, backup_id: str, volume_id: str) -> None:
        """Copy a backup into an existing volume (the API set it restoring-backup)."""
        from pocketstack.volume import backup_store

        from pocketstack.volume.models import Backup

        with db.reader() as s:
            volume = s.get(Volume, volume_id)
            backup = s.get(Backup, backup_id)
        try:
            if volume is None or volume.status != "restoring-backup" or backup is None:
                return
            backup_store.restore(backup_id, _backend(volume), volume_id, ctx)
            if backup.encryption_key_id is not None:
                # The bytes are now the backup's LUKS: the volume opens with a copy of the
                # backup's key, and its own key goes.
                key_id = encryption_keys.for_new_volume(ctx, None, backup.encryption_key_id,
                                                        volume.name)
                _set(volume_id, encryption_key_id=key_id)
                encryption_keys.delete(volume.encryption_key_id)
        except Exception as error:  # noqa: BLE001
            _set(volume_id, status="error_restoring", error_reason=_reason(error))
        else:
            _set(volume_id, status="available")
        finally:
            self._backup_set(backup_id, status="available")

    @staticmethod
    def _backup_set(backup_id: str, **values) -> None:
        from pocketstack.volume.models import Backup

        _update(Backup, backup_id, **values)

    # --- upload to image -----------------------------------------------------------------

    def upload_to_image(self, ctx, volume_id: str, image_id: str, disk_format: str,
                        restore_status: str) -> None:
        from pocketstack.clients.image import ImageClient

        with db.reader() as s:
            volume = s.get(Volume, volume_id)
        client = ImageClient(ctx, caller="volume")
        backend = _backend(volume)
        try:
            if disk_format == "raw":
                client.upload(image_id, backend.read_stream(volume.id))
            else:
                with tempfile.TemporaryDirectory(prefix="pocketstack-upload-") as tmp:
                    out = os.path.join(tmp, "image")
                    _qemu_img("convert", "-f", "raw", "-O", disk_format,
                              backend.path(volume.id), out, timeout=3600)
                    client.upload(image_id, _file_chunks(out))
        except Exception as error:  # noqa: BLE001
            LOG.warning("Uploading volume %s to image %s failed: %s", volume_id, image_id,
                        error)
            client.delete(image_id)
        finally:
            _set(volume_id, status=restore_status)


def _forget_deleted_group_snapshot(s, group_snapshot_id: str | None) -> None:
    """A deleting group snapshot goes with its last member snapshot."""
    if group_snapshot_id is None:
        return
    gs = s.get(GroupSnapshot, group_snapshot_id)
    if gs is not None and gs.status == "deleting" and not s.scalar(
            sa.select(sa.func.count()).select_from(Snapshot)
            .where(Snapshot.group_snapshot_id == group_snapshot_id)):
        s.delete(gs)


def _file_chunks(path: str, size: int = 4 << 20):
    """A file in big chunks (requests sends a file object 8 KiB at a time)."""
    with open(path, "rb") as f:
        while chunk := f.read(size):
            yield chunk


def backups_path(backup_id: str) -> str:
    from pocketstack.volume import backups

    return backups.path(backup_id)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _qemu_img(*args: str, timeout: float = 300) -> str:
    try:
        proc = subprocess.run(("qemu-img", *args), capture_output=True, text=True,
                              timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BackendError(f"qemu-img failed: {error}") from None
    if proc.returncode != 0:
        raise BackendError(f"qemu-img {args[0]} failed: {proc.stderr.strip()[:300]}")
    return proc.stdout


def _reason(error: Exception) -> str:
    if isinstance(error, exceptions.PocketstackError):
        return error.message
    return f"{type(error).__name__}: {error}"


def _image_metadata(image: dict) -> dict:
    meta = {k: str(v) for k, v in (image.get("properties") or {}).items()}
    for key in ("checksum", "container_format", "disk_format", "min_disk", "min_ram",
                "size"):
        if image.get(key) is not None:
            meta[key] = str(image[key])
    meta["image_id"] = image["id"]
    meta["image_name"] = image.get("name") or ""
    return meta
