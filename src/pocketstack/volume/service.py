"""Start-up of the volume service inside the cloud process: the default volume type, the
manager's RPC server on ``volume.<host>``, the heartbeat of cinder-scheduler and of one
cinder-volume per backend (``host@backend``), and reconciliation of what a crash left:
volumes stuck mid-create go to ``error`` (their half-written data removed), deletes and
snapshot deletes are finished, uploads give the volume back, and backend files or LVs
whose volume no longer exists are removed. Every heartbeat also deletes attachments whose
server does not exist (reconcile_attachments).
"""
from __future__ import annotations

import datetime as dt
import logging
import threading
import time

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, rpc, runtime
from pocketstack.common.context import RequestContext
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import backends, scheduler, types
from pocketstack.volume.manager import VolumeManager
from pocketstack.volume.models import (Backup, Snapshot, Volume, VolumeAttachment,
                                       VolumeService)

LOG = logging.getLogger(__name__)


def service_rows() -> list[tuple[str, str]]:
    host = config.CONF.host
    return [("cinder-scheduler", host)] + [("cinder-volume", f"{host}@{b}")
                                           for b in backends.enabled()]


def heartbeat() -> None:
    now = utcnow()
    zone = config.CONF.volume.storage_availability_zone
    with db.transaction() as s:
        for binary, host in service_rows():
            row = s.scalar(sa.select(VolumeService).where(VolumeService.host == host,
                                                          VolumeService.binary == binary))
            if row is None:
                s.add(VolumeService(host=host, binary=binary, availability_zone=zone,
                                    last_seen_up=now))
            else:
                row.last_seen_up, row.updated_at = now, now


def reconcile_attachments(checked: set[str], started_at: dt.datetime | None = None) -> int:
    """Delete attachments whose server does not exist, so their volumes are available
    again: a boot's API request reserves the volumes it was given before it writes the
    server, and a process killed in between left an attachment naming a server that
    never existed. Only attachments older than ``[volume] orphaned_attachment_age`` (a
    younger one may be such a request still running) or made before ``started_at``, the
    start of this volume service: no request of the process that ran before it can
    still be running (a restarted cloud waits for the old processes to be gone), so
    what a kill left is reaped at once, not minutes after the restart. Compute is asked
    about each server through its API. ``checked`` keeps the attachments found to have
    a server, so each is asked about once (a server's delete then deletes them).
    Returns how many were deleted."""
    from pocketstack.clients.compute import ComputeClient
    from pocketstack.volume import attach

    cutoff = utcnow() - dt.timedelta(seconds=config.CONF.volume.orphaned_attachment_age)
    if started_at is not None:
        cutoff = max(cutoff, started_at)
    with db.reader() as s:
        rows = s.execute(sa.select(VolumeAttachment.id, VolumeAttachment.volume_id,
                                   VolumeAttachment.instance_uuid)
                         .where(VolumeAttachment.instance_uuid.is_not(None),
                                VolumeAttachment.created_at < cutoff)).all()
    checked.intersection_update(r.id for r in rows)  # forget the ones gone since
    rows = [r for r in rows if r.id not in checked]
    if not rows:
        return 0
    client = ComputeClient(caller="volume")
    exists = {uuid: client.server_exists(uuid) for uuid in {r.instance_uuid for r in rows}}
    ctx = RequestContext.admin()
    deleted = 0
    for r in rows:
        if exists[r.instance_uuid]:
            checked.add(r.id)
            continue
        try:
            attach.delete_attachment(ctx, r.id)
        except exceptions.NotFound:
            continue  # deleted meanwhile
        deleted += 1
        LOG.warning("Deleted attachment %s of volume %s: its server %s does not exist",
                    r.id, r.volume_id, r.instance_uuid)
    return deleted


class _Heartbeat:
    # Seconds between the start-up checks of attachments while compute does not answer.
    FIRST_CHECK_RETRY = 0.5

    def __init__(self):
        self.stopping = threading.Event()
        self.checked: set[str] = set()  # reconcile_attachments's
        self.started_at = utcnow()
        self.thread = threading.Thread(target=runtime.bind(self._run), name="volume-heartbeat",
                                       daemon=True)
        self.thread.start()

    def _run(self):
        self._first_check()
        while not self.stopping.wait(config.CONF.volume.report_interval):
            try:
                heartbeat()
            except Exception:  # noqa: BLE001 - a missed beat is retried
                LOG.exception("Volume service heartbeat failed")
            self._check()

    def _check(self, quiet: bool = False) -> bool:
        try:
            reconcile_attachments(self.checked, self.started_at)
            return True
        except Exception:  # noqa: BLE001 - compute not answering yet: next time
            (LOG.debug if quiet else LOG.warning)(
                "Checking attachments against their servers failed", exc_info=True)
            return False

    def _first_check(self) -> None:
        """What a kill left is reaped as soon as compute answers, not one report
        interval after the start."""
        deadline = time.monotonic() + config.CONF.volume.report_interval
        while not self.stopping.is_set() and time.monotonic() < deadline:
            if self._check(quiet=True):
                return
            self.stopping.wait(self.FIRST_CHECK_RETRY)

    def stop(self):
        self.stopping.set()


class _Server:
    def __init__(self, server):
        self.server = server

    def stop(self):
        self.server.stop()
        self.server.wait()


def start(cloud) -> list:
    if getattr(cloud, "api_worker", False):  # the main process runs the manager (workers.py)
        return []
    types.ensure_default()
    if "lvm" in backends.enabled():
        try:
            backends.get("lvm").ensure_volume_group()
        except Exception:  # noqa: BLE001 - the file backend still works; the log says why
            LOG.exception("The LVM volume group cannot be set up")
    heartbeat()
    half_made: list[tuple] = []
    try:  # before the manager takes work, so nothing it starts is mistaken for a leftover
        half_made = recover()
    except Exception:  # noqa: BLE001 - a failed clean-up must not keep the cloud down
        LOG.exception("Volume recovery failed")
    try:
        reexport()
    except Exception:  # noqa: BLE001 - attached guests lose their disk; the log says why
        LOG.exception("Exporting the attached volumes over iSCSI failed")
    server = rpc.get_server("volume", [VolumeManager()], server=config.CONF.host)
    server.start()
    # Deletes asked for by other processes (`up --workers`) between recover() and now
    # found no manager listening: the volumes wait in 'deleting'.
    _finish_deletes()
    stoppables = [_Server(server), _Heartbeat()]
    if half_made:
        stoppables.append(_DiscardLater(half_made))
    return stoppables


def reexport() -> None:
    """With iSCSI exports on: tgtd forgets its targets when it stops, so export again the
    attached file and lvm volumes, and drop targets of volumes that are not attached."""
    from pocketstack.volume import iscsi_target

    if not iscsi_target.enabled():
        return
    attached = {}
    with db.reader() as s:
        rows = s.execute(sa.select(Volume.id, Volume.host, Volume.provider_auth,
                                   VolumeAttachment.connection_info)
                         .join(VolumeAttachment)).all()
    for volume_id, host, auth, connection in rows:
        if not connection:
            continue
        name = scheduler.backend_of(host)
        if name in ("file", "lvm") and name in backends.enabled():
            # CHAP as before (an export made before CHAP existed stays open as it was)
            attached[volume_id] = (backends.get(name).path(volume_id),
                                   iscsi_target.parse_provider_auth(auth))
    iscsi_target.reconcile(attached)


def _finish_deletes() -> None:
    with db.reader() as s:
        deleting = list(s.scalars(sa.select(Volume.id).where(Volume.status == "deleting")))
    manager, ctx = VolumeManager(), RequestContext.admin()
    for volume_id in deleting:
        manager.delete_volume(ctx, volume_id)


class _DiscardLater:
    """Retry what recovery could not remove: an RBD image that the killed process was
    making stays busy until Ceph drops that client's watch (osd_client_watch_timeout,
    30 s by default). Stopped with the cloud, before its Ceph connections close: librados
    crashes the process when a closed connection is used."""

    def __init__(self, half_made: list[tuple], timeout: float = 120.0):
        self.half_made = half_made
        self.deadline = time.monotonic() + timeout
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=runtime.bind(self._run),
                                       name="volume-discard-half-made", daemon=True)
        self.thread.start()

    def _run(self):
        half_made = self.half_made
        while half_made and not self.stopping.wait(2) and time.monotonic() < self.deadline:
            for item in list(half_made):
                backend, volume_id, source_id = item
                try:
                    backend.discard_half_made(volume_id, source_id)
                except Exception:  # noqa: BLE001 - still watched: next round
                    continue
                half_made.remove(item)
                LOG.info("Removed the half-made volume %s", volume_id)
        for _, volume_id, _ in half_made:
            LOG.warning("The half-made volume %s could not be removed; `pocketstack audit` "
                        "lists it", volume_id)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=60)


def recover() -> list[tuple]:
    """Finish or undo what a stopped process left half-done. Returns the half-made RBD
    images that are still busy: (backend, volume id, source volume id)."""
    ctx = RequestContext.admin()
    manager = VolumeManager()
    mine = {b: backends.get(b) for b in backends.enabled()}
    half_made: list[tuple] = []
    with db.transaction() as s:
        volumes = s.scalars(sa.select(Volume)).all()
        for volume in volumes:
            if volume.status in ("creating", "downloading"):
                volume.status = "error"
                volume.error_reason = ("The volume service stopped while the volume was "
                                       "being created.")
                backend = mine.get(scheduler.backend_of(volume.host))
                if backend is not None:
                    try:
                        backend.discard_half_made(volume.id, volume.source_volid)
                    except Exception:  # noqa: BLE001 - retried below, else the audit says
                        LOG.info("Removing the half-made volume %s failed; retrying in the "
                                 "background", volume.id, exc_info=True)
                        half_made.append((backend, volume.id, volume.source_volid))
            elif volume.status == "managing":  # the file keeps its name or the volume's
                volume.status = "error_managing"
                volume.error_reason = ("The volume service stopped while the volume was "
                                       "being managed.")
            elif volume.status == "uploading":
                volume.status = "in-use" if volume.attachments else "available"
            elif volume.status == "extending":
                volume.status = "error_extending"
            elif volume.status == "backing-up":
                volume.status = "in-use" if volume.attachments else "available"
            elif volume.status == "restoring-backup":
                volume.status = "error_restoring"
        backends_of = {v.id: scheduler.backend_of(v.host) for v in volumes}
        failed_backups = []
        for backup in s.scalars(sa.select(Backup).where(Backup.status.in_(
                ("creating", "restoring")))):
            if backup.status == "creating":
                if backends_of.get(backup.volume_id) == "rbd" and "rbd" in mine:
                    failed_backups.append((backup.id, backup.volume_id))
                backup.status = "error"
                backup.fail_reason = "The volume service stopped during the backup."
            else:
                backup.status = "available"
        for snap in s.scalars(sa.select(Snapshot).where(Snapshot.status == "creating")):
            snap.status = "error"
            snap.error_reason = "The volume service stopped while the snapshot was made."
        known_volumes = {v.id for v in volumes}
        known_snaps = set(s.scalars(sa.select(Snapshot.id)))
        deleting = [v.id for v in volumes if v.status == "deleting"]
        unmanaging = [v.id for v in volumes if v.status == "unmanaging"]
        snaps_deleting = list(s.scalars(sa.select(Snapshot.id)
                                        .where(Snapshot.status == "deleting")))
        snaps_unmanaging = list(s.scalars(sa.select(Snapshot.id)
                                          .where(Snapshot.status == "unmanaging")))
        backups_deleting = list(s.scalars(sa.select(Backup.id)
                                          .where(Backup.status == "deleting")))
    for volume_id in deleting:
        manager.delete_volume(ctx, volume_id)
    for volume_id in unmanaging:
        manager.unmanage_volume(ctx, volume_id)  # finish it: rename, then drop the row
    for snapshot_id in snaps_deleting:
        manager.delete_snapshot(ctx, snapshot_id)
    for snapshot_id in snaps_unmanaging:
        manager.unmanage_snapshot(ctx, snapshot_id)
    for backup_id in backups_deleting:
        manager.delete_backup(ctx, backup_id)
    for backup_id, volume_id in failed_backups:  # what a backup cut short left in Ceph
        from pocketstack.volume import backup_store

        try:
            backup_store.cleanup_failed(backup_id, volume_id)
        except Exception:  # noqa: BLE001 - reported by the audit
            LOG.warning("Cleaning up the failed backup %s failed", backup_id, exc_info=True)
    for name, backend in mine.items():
        try:
            orphans = backend.volume_ids() - known_volumes
            snap_orphans = backend.snapshot_ids() - known_snaps
        except Exception:  # noqa: BLE001 - an unreachable backend is reported, not fatal
            LOG.warning("Volume backend %s cannot be listed for recovery", name)
            continue
        for volume_id in orphans:
            backend.delete(volume_id)
        for snapshot_id in snap_orphans:
            backend.delete_snapshot(snapshot_id)
        if orphans or snap_orphans:
            LOG.info("Volume backend %s: removed %d orphaned volumes and %d snapshots", name,
                     len(orphans), len(snap_orphans))
    return half_made
