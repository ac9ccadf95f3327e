"""Volumes on the host (seed steps 25-27): the build's block devices (create the volumes a
mapping asks for and wait until they are available, then attach each through the volume
service's attachments API and collect the connection_info for driver.spawn), volume
attach and detach on a running server, and the cleanups — of a failed build, of a
deleted server.

Everything is done with the attachments API nova uses since Queens:
attachment_create (reserve) → attachment_update with this host's connector (the volume
service answers with the connection_info) → attachment_complete (in-use);
attachment_delete to detach. The connection_info is
``{"driver_volume_type": "local"|"file", "data": {"device_path", "volume_id",
"access_mode"}}``; the driver turns it into a disk of the guest.

A build keeps what it made in ``held`` (volume ids it created, attachment ids) as well as in
the mapping rows, so a cleanup can undo exactly its own work even when a delete or a
newer attempt has changed the rows meanwhile.
"""
from __future__ import annotations

import logging
import threading
import time

from pocketstack.common import config, exceptions
from pocketstack.compute import block_devices, hostdb
from pocketstack.clients.volume import VolumeClient, connector
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


# Metadata of the volumes a build makes: the server they were made for, so a cleanup
# finds one whose id the build never got back (killed in between: _lost_volumes).
CREATED_FOR = "created_for_server"


class VolumeNotCreated(exceptions.PocketstackError):
    code = 500


class VolumeAttachFailed(exceptions.PocketstackError):
    code = 500


def _describe(error) -> str:
    return getattr(error, "message", None) or str(error) or type(error).__name__


def _client(ctx, use_service_token: bool = False) -> VolumeClient:
    return VolumeClient(ctx, as_service=use_service_token)


def _owner_client(ctx, inst, creates: bool) -> VolumeClient:
    """The user's token; a build rescheduled in the background (no user token in its
    context) uses the token the user created the server with, which the volume service
    accepts beside nova's service token even once expired, so the volumes it creates
    are the owner's. A build that only connects volumes the user gave it (``creates``
    False) keeps no token: nova's own then reserves and connects them again after a
    failed attempt gave them back."""
    if getattr(ctx, "auth_token", None):
        return VolumeClient(ctx)
    token = getattr(inst, "build_token", None)  # the row the build loaded
    if token is not None:
        return VolumeClient(ctx, user_token=token)
    if not creates:
        return VolumeClient(ctx, as_service=True)
    raise VolumeAttachFailed(f"The build of {inst.uuid} has no user token to create "
                             "its volumes with any more: create the server again.")


def wait_available(client: VolumeClient, volume_id: str, timeout: float) -> dict:
    """Poll until the new volume is available (nova's _await_block_device_map_created)."""
    deadline = time.monotonic() + timeout
    delay = 0.005  # a small volume is ready in milliseconds; a big image takes seconds
    while True:
        volume = client.get(volume_id)
        status = (volume or {}).get("status")
        if status == "available":
            return volume
        if volume is None or status in ("error", "error_restoring", "error_extending"):
            raise VolumeNotCreated(f"Volume {volume_id} did not finish being created: its "
                                   f"status is {status or 'deleted'}.")
        if time.monotonic() >= deadline:
            raise VolumeNotCreated(f"Volume {volume_id} did not finish being created even "
                                   f"after we waited {timeout:g} seconds. And its status is "
                                   f"{status}.")
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def wait_snapshot_made(client: VolumeClient, snapshot_id: str, timeout: float) -> None:
    """A snapshot still being made (the image of a volume-backed server, booted at once)
    is waited for: the volume service makes volumes only from available snapshots."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while ((client.get_snapshot(snapshot_id) or {}).get("status") == "creating"
           and time.monotonic() < deadline):
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def mapping_entry(row, conn: dict | None) -> dict:
    """One entry of block_device_info["block_device_mapping"] (nova's driver BDM)."""
    return {"connection_info": conn, "mount_device": row.device_name,
            "boot_index": row.boot_index, "delete_on_termination": row.delete_on_termination,
            "device_type": row.device_type or "disk", "disk_bus": row.disk_bus,
            "volume_id": row.volume_id}


def block_device_info(instance_uuid: str, hdb=None) -> dict | None:
    """The driver's view of an existing server's volumes (rebuild, resize, restart)."""
    rows = [r for r in (hdb or hostdb.Direct()).call("block_devices_of",
                                                      instance_uuid=instance_uuid)
            if r.connection_info]
    if not rows:
        return None
    return {"root_device_name": block_devices.ROOT_DEVICE,
            "block_device_mapping": [mapping_entry(r, r.connection_info) for r in rows]}


# --- cleanups --------------------------------------------------------------------------

def release(ctx, instance_uuid: str, held: list[dict] | None = None, *, own_only: bool = False,
            use_service_token: bool = False, hdb=None) -> list[str]:
    """Undo a build's volumes: delete its attachments (the volumes become available) and
    the volumes it created. ``held`` is what this attempt made; without ``own_only`` the
    attachments and created volumes recorded in the rows go too (a failed build, an
    expired one). Rows are cleared only where they still name what was undone."""
    client = _client(ctx, use_service_token)
    done: list[str] = []
    attachments = {h["attachment_id"] for h in held or [] if h.get("attachment_id")}
    created = {h["volume_id"] for h in held or [] if h.get("created")}
    hdb = hdb or hostdb.Direct()
    rows = hdb.call("block_devices_of", instance_uuid=instance_uuid)
    if not own_only:
        attachments |= {r.attachment_id for r in rows if r.attachment_id}
        created |= {r.volume_id for r in rows if r.volume_id and r.source_type != "volume"}
        if rows:
            attachments |= _unrecorded_attachments(ctx, instance_uuid, rows)
        if any(r.source_type != "volume" for r in rows):
            created |= _lost_volumes(ctx, instance_uuid, rows, hdb)
    for attachment_id in attachments:
        try:
            if client.attachment_delete(attachment_id):
                done.append(f"deleted attachment {attachment_id}")
        except exceptions.PocketstackError as error:
            LOG.warning("Deleting attachment %s failed: %s", attachment_id, error)
    for volume_id in created:
        if _delete_volume(ctx, client, volume_id):
            done.append(f"deleted volume {volume_id}")
    for r in rows:
        if r.attachment_id in attachments:
            hdb.call("update_block_device", instance_uuid=instance_uuid, bdm_id=r.id,
                     values={"attachment_id": None, "connection_info": None},
                     expect={"attachment_id": r.attachment_id})
        if r.volume_id in created:
            hdb.call("update_block_device", instance_uuid=instance_uuid, bdm_id=r.id,
                     values={"volume_id": None}, expect={"volume_id": r.volume_id})
    return done


def _lost_volumes(ctx, instance_uuid: str, rows, hdb) -> set[str]:
    """Volumes made for the server (CREATED_FOR) that no mapping names: a process killed
    after the volume service made one and before the build recorded its id."""
    inst = hdb.call("load_instance", instance_uuid=instance_uuid)
    if inst is None:
        return set()
    named = {r.volume_id for r in rows}
    try:
        found = _client(ctx, use_service_token=True).list(
            all_tenants=1, project_id=inst.project_id,
            metadata=repr({CREATED_FOR: instance_uuid}))
    except exceptions.PocketstackError as error:
        LOG.warning("Listing the volumes made for %s failed: %s", instance_uuid, error)
        return set()
    # Attached or not: their attachments are the server's, deleted before them.
    return {v["id"] for v in found if v["id"] not in named}


def _unrecorded_attachments(ctx, instance_uuid: str, rows) -> set[str]:
    """The server's attachments in the volume service that no mapping names: a process
    killed after attachment_create answered and before the build recorded its id. Left
    alone, its volume stayed attaching for the server's whole life."""
    named = {r.attachment_id for r in rows}
    try:
        found = _client(ctx, use_service_token=True).attachment_list(
            instance_id=instance_uuid, all_tenants=1)
    except exceptions.PocketstackError as error:
        LOG.warning("Listing the attachments of %s failed: %s", instance_uuid, error)
        return set()
    return {a["id"] for a in found if a["id"] not in named}


def _delete_volume(ctx, client: VolumeClient, volume_id: str) -> bool:
    """Delete a volume a build made. One still being created (its image copy running,
    or cut off by a crash the volume service has not recovered from yet) refuses a plain
    delete: nova's own token force-deletes it, which cancels the copy, instead of
    leaving it behind."""
    try:
        return client.delete(volume_id)
    except exceptions.PocketstackError as error:
        failure = error
    try:
        service = _client(ctx, use_service_token=True)
        if (service.get(volume_id) or {}).get("status") in ("creating", "downloading"):
            service.force_delete(volume_id)
            return True
    except exceptions.PocketstackError as error:
        failure = error
    LOG.warning("Deleting volume %s failed: %s", volume_id, failure)
    return False


def release_for_delete(ctx, instance_uuid: str, use_service_token: bool = False,
                       hdb=None) -> list[str]:
    """A deleted server's volumes: every attachment goes, the volumes marked
    delete_on_termination too, then the mappings (nova's _cleanup_volumes)."""
    hdb = hdb or hostdb.Direct()
    rows = hdb.call("block_devices_of", instance_uuid=instance_uuid)
    if not rows:
        return []
    client = _client(ctx, use_service_token)
    done = []
    if any(r.connection_info is None for r in rows):
        # A build or attach cut short: what it made and never recorded goes too (no row
        # of a server that finished building lacks its connection_info).
        for attachment_id in _unrecorded_attachments(ctx, instance_uuid, rows):
            try:
                if client.attachment_delete(attachment_id):
                    done.append(f"deleted attachment {attachment_id}")
            except exceptions.PocketstackError as error:
                LOG.warning("Deleting attachment %s failed: %s", attachment_id, error)
        lost = _lost_volumes(ctx, instance_uuid, rows, hdb) \
            if any(r.source_type != "volume" for r in rows) else set()
        for volume_id in lost:
            if _delete_volume(ctx, client, volume_id):
                done.append(f"deleted volume {volume_id}")
    for r in rows:
        if r.attachment_id:
            try:
                client.attachment_delete(r.attachment_id)
                done.append(f"detached volume {r.volume_id}")
            except exceptions.PocketstackError as error:
                LOG.warning("Deleting attachment %s failed: %s", r.attachment_id, error)
        if r.volume_id and r.delete_on_termination \
                and _delete_volume(ctx, client, r.volume_id):
            done.append(f"deleted volume {r.volume_id}")
    hdb.call("forget_block_devices", instance_uuid=instance_uuid)
    return done


def reconcile(ctx, instance_uuids: list[str], started_at, hdb=None, host=None) -> list[str]:
    """Start-up, for this host's servers that are not building: an attach cut short by a
    crash (the volume reserved, never connected) gives its reservation back, so the volume
    is available again and the server does not list it. Every mapping without its
    connection written before this host started (``started_at``) is one: the attach
    call that was to complete it went to the process that is gone (``host``: the
    host whose servers they are)."""
    if not instance_uuids:
        return []
    hdb = hdb or hostdb.Direct()
    rows = hdb.call("unconnected_block_devices", hosts=[host], instance_uuids=instance_uuids,
                    before=started_at)
    done = []
    for row in rows:
        _delete_attachment(ctx, row, use_service_token=True)
        hdb.call("forget_block_device", instance_uuid=row.instance_uuid, bdm_id=row.id)
        done.append(f"gave back the reservation of volume {row.volume_id} for "
                    f"{row.instance_uuid}")
    return done


class VolumeMixin:
    _vol_locks: dict | None = None
    _vol_guard = threading.Lock()

    def _vol_lock(self, uuid: str) -> threading.Lock:
        """One volume attach/detach at a time per server (nova's instance lock)."""
        with self._vol_guard:
            if self._vol_locks is None:
                self._vol_locks = {}
            return self._vol_locks.setdefault(uuid, threading.Lock())

    # --- the build's block devices (seed 25-27) ---------------------------------------

    def _prep_block_devices(self, ctx, inst, held: list[dict], steps: list) -> dict | None:
        """Create, wait for and attach every volume of the server; returns the driver's
        block_device_info (None without volumes). Each step's trace goes into ``steps``."""
        rows = self.db.call("block_devices_of", instance_uuid=inst.uuid)
        if not rows:
            return None
        client = _owner_client(ctx, inst, any(r.volume_id is None for r in rows))
        mapping = []
        for row in rows:
            if row.volume_id is None:
                steps.append(Step(ctx, inst.uuid, "compute_create_volume", "compute",
                                  self.host))
                self._create_volume(client, inst, row, held, steps[-1])
            step = Step(ctx, inst.uuid, "compute_attach_volume", "compute", self.host)
            steps.append(step)
            host_connector = connector(self.host, row.device_name)
            if row.attachment_id is None:
                # A volume this build made (or one freed by a failed attempt): reserve
                # and connect in one call.
                attachment = client.attachment_create(row.volume_id, inst.uuid,
                                                      host_connector)
                row.attachment_id = attachment["id"]
                held.append({"attachment_id": row.attachment_id})
                self._bdm(inst.uuid, row, attachment_id=row.attachment_id)
            else:  # reserved by the API
                attachment = client.attachment_update(row.attachment_id, host_connector)
            conn = attachment.get("connection_info")
            if not conn:
                raise VolumeAttachFailed(f"The volume service gave no connection_info for "
                                         f"volume {row.volume_id}.")
            client.attachment_complete(row.attachment_id)
            self._bdm(inst.uuid, row, connection_info=conn)
            mapping.append(mapping_entry(row, conn))
            step.done(detail=f"{row.volume_id} as {row.device_name} "
                             f"({conn.get('driver_volume_type')})")
        return {"root_device_name": block_devices.ROOT_DEVICE,
                "block_device_mapping": mapping}

    def _create_volume(self, client, inst, row, held, step) -> None:
        source = {"image": f"image {row.image_id}", "snapshot": f"snapshot {row.snapshot_id}",
                  "blank": "blank"}.get(row.source_type, row.source_type)
        if row.source_type == "snapshot":
            wait_snapshot_made(client, row.snapshot_id,
                               config.CONF.compute.block_device_allocate_timeout)
        volume = client.create(row.volume_size,
                               name=f"{inst.uuid}-blank-vol" if row.source_type == "blank"
                               else "", image_id=row.image_id, snapshot_id=row.snapshot_id,
                               volume_type=row.volume_type,
                               metadata={CREATED_FOR: inst.uuid})
        row.volume_id = volume["id"]
        held.append({"volume_id": row.volume_id, "created": True})
        self._bdm(inst.uuid, row, volume_id=row.volume_id)
        step.detail = f"{row.volume_id}: {row.volume_size} GB from {source}"
        wait_available(client, row.volume_id,
                       config.CONF.compute.block_device_allocate_timeout)
        step.done()

    def _bdm(self, instance_uuid: str, row, **values) -> None:
        self.db.call("update_block_device", instance_uuid=instance_uuid, bdm_id=row.id,
                     values=values)

    # --- attach and detach on a running server ------------------------------------------

    def attach_volume(self, ctx, instance_uuid: str, bdm_uuid: str) -> None:
        """Connect the reserved volume of mapping ``bdm_uuid`` and hot-plug it; on failure
        the reservation and the mapping go and the caller gets the error."""
        with self._vol_lock(instance_uuid):
            row = next((r for r in self.db.call("block_devices_of",
                                                instance_uuid=instance_uuid)
                        if r.uuid == bdm_uuid), None)
            if row is None:
                raise exceptions.NotFound(f"No volume Block Device Mapping {bdm_uuid}.")
            step = Step(ctx, instance_uuid, "compute_attach_volume", "compute", self.host)
            client = VolumeClient(ctx)
            try:
                conn = client.attachment_update(row.attachment_id,
                                                connector(self.host, row.device_name)
                                                ).get("connection_info")
                if not conn:
                    raise VolumeAttachFailed(f"The volume service gave no connection_info "
                                             f"for volume {row.volume_id}.")
                self.driver.attach_volume({"uuid": instance_uuid}, conn, row.device_name)
                try:
                    client.attachment_complete(row.attachment_id)
                except Exception:
                    self.driver.detach_volume({"uuid": instance_uuid}, conn, row.device_name)
                    raise
                step.done(detail=f"{row.volume_id} as {row.device_name}")
                self.db.call("finish_volume_step", instance_uuid=instance_uuid,
                             bdm_id=row.id, connection_info=conn,
                             events=[hostdb.event(step)], request_id=ctx.request_id)
            except Exception as error:  # noqa: BLE001 - undo, then tell the caller
                LOG.info("Attaching volume %s to %s failed: %s", row.volume_id,
                         instance_uuid, error)
                undo = _delete_attachment(ctx, row)
                step.fail(f"{_describe(error)}; undone: {undo}")
                self.db.call("finish_volume_step", instance_uuid=instance_uuid,
                             bdm_id=row.id, events=[hostdb.event(step)],
                             request_id=ctx.request_id, result="Error")
                if isinstance(error, exceptions.PocketstackError) and error.code < 500:
                    raise
                raise VolumeAttachFailed(f"Failed to attach volume {row.volume_id} to "
                                         f"{instance_uuid}: {_describe(error)}") from None

    def detach_volume(self, ctx, instance_uuid: str, volume_id: str) -> None:
        """Unplug the volume, delete its attachment and the mapping. A driver failure
        leaves it attached (the volume goes back to in-use)."""
        with self._vol_lock(instance_uuid):
            row = next((r for r in self.db.call("block_devices_of",
                                                instance_uuid=instance_uuid)
                        if r.volume_id == volume_id), None)
            step = Step(ctx, instance_uuid, "compute_detach_volume", "compute", self.host)
            if row is None:
                self._record(instance_uuid, step.done(
                    detail=f"{volume_id} was already detached"))
                return
            client = VolumeClient(ctx)
            try:
                if row.connection_info:
                    self.driver.detach_volume({"uuid": instance_uuid}, row.connection_info,
                                              row.device_name)
            except Exception as error:  # noqa: BLE001 - the volume stays attached
                try:
                    client.roll_detaching(volume_id)
                except exceptions.PocketstackError:
                    pass
                self.db.call("finish_action", instance_uuid=instance_uuid, values=None,
                             expect_task=None, events=[hostdb.event(step.fail(error))],
                             request_id=ctx.request_id, result="Error")
                raise VolumeAttachFailed(f"Failed to detach volume {volume_id} from "
                                         f"{instance_uuid}: {_describe(error)}") from None
            undo = _delete_attachment(ctx, row)
            self.db.call("finish_volume_step", instance_uuid=instance_uuid, bdm_id=row.id,
                         events=[hostdb.event(step.done(
                             detail=f"{volume_id} from {row.device_name}; {undo}"))],
                         request_id=ctx.request_id)


    def extend_attached_volume(self, ctx, instance_uuid: str, volume_id: str) -> None:
        """The volume service grew a volume this guest has attached (volume-extended,
        cinder's in-use extend): the guest's disk follows (nova's _extend_volume)."""
        with self._vol_lock(instance_uuid):
            row = next((r for r in self.db.call("block_devices_of",
                                                instance_uuid=instance_uuid)
                        if r.volume_id == volume_id and r.connection_info), None)
            if row is None:
                return
            step = Step(ctx, instance_uuid, "compute_extend_volume", "compute", self.host)
            try:
                volume = _client(ctx, use_service_token=True).get(volume_id) or {}
                size = int(volume.get("size") or 0)
                if not size:
                    raise VolumeAttachFailed(f"Volume {volume_id} is gone.")
                self.driver.extend_volume({"uuid": instance_uuid}, row.connection_info,
                                          row.device_name, size << 30)
            except Exception as error:  # noqa: BLE001 - recorded on the server's trace
                LOG.warning("Growing volume %s of %s failed: %s", volume_id, instance_uuid,
                            error)
                self._record(instance_uuid, step.fail(f"{volume_id}: {_describe(error)}"))
                return
            self._record(instance_uuid, step.done(
                detail=f"{volume_id} at {row.device_name}: {size} GiB"))


def _delete_attachment(ctx, row, use_service_token: bool = False) -> str:
    done = "nothing"
    if row.attachment_id:
        try:
            _client(ctx, use_service_token).attachment_delete(row.attachment_id)
            done = f"deleted attachment {row.attachment_id}"
        except exceptions.PocketstackError as error:
            done = f"deleting attachment {row.attachment_id} failed: {_describe(error)}"
    return done
