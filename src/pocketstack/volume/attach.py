"""Attaching volumes: the attachments API nova uses since Queens (3.27+) and the older
volume actions (os-reserve … os-detach), over one table of attachments.

New flow:  POST /attachments (volume available -> reserved; with a connector straight
to attaching) -> PUT /attachments/{id} with the connector (-> attaching, returns
connection_info) -> os-complete (attachment attached, volume in-use) -> DELETE (volume
available again, or still in-use while other attachments remain).

Every state change is a check-and-set on the locked volume row, so two servers racing
for one volume get exactly one attachment (the other a 400 and no change).
"""
from __future__ import annotations

import functools
import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import api, backends, scheduler, validation
from pocketstack.volume.models import Volume, VolumeAttachment


class AttachmentNotFound(exceptions.NotFound):
    def __init__(self, attachment_id: str):
        super().__init__(f"VolumeAttachment {attachment_id} could not be found.")


def connection_info(volume: Volume, mode: str | None) -> dict:
    backend = scheduler.backend_of(volume.host)
    if backend is None:
        raise api.InvalidVolume(f"Volume {volume.id} has no backend (status {volume.status}).")
    driver = backends.get(backend)
    chap = None
    if driver.exports_iscsi():  # cinder's create_export: CHAP made once, kept with the volume
        from pocketstack.volume import iscsi_target

        chap = iscsi_target.parse_provider_auth(volume.provider_auth)
        if chap is None:
            volume.provider_auth = iscsi_target.new_provider_auth()
            chap = iscsi_target.parse_provider_auth(volume.provider_auth)
    info = driver.connection_info(volume.id, mode="ro" if volume.readonly or mode == "ro"
                                  else "rw", chap=chap)
    # cinder's: the host then reads the volume's encryption metadata and key (nova's
    # encryptors; QEMU's native LUKS for a luks provider)
    info.setdefault("data", {})["encrypted"] = volume.encryption_key_id is not None
    return info


def _load(s, ctx, attachment_id: str, *, lock: bool = True) -> tuple[VolumeAttachment, Volume]:
    attachment = s.get(VolumeAttachment, attachment_id)
    if attachment is None:
        raise AttachmentNotFound(attachment_id)
    try:
        volume = api.load(s, ctx, attachment.volume_id, lock=lock)
    except exceptions.NotFound:
        raise AttachmentNotFound(attachment_id) from None
    return attachment, volume


def _reserve(s, volume: Volume, instance_uuid: str | None) -> VolumeAttachment:
    """cinder's _attachment_reserve: available (or in-use when multiattach) -> reserved."""
    allowed = ("available", "in-use", "downloading") if volume.multiattach else (
        "available", "downloading")
    if volume.status not in allowed:
        same = instance_uuid and volume.status in ("in-use", "reserved") and any(
            a.instance_uuid == instance_uuid for a in volume.attachments)
        if not same:
            raise api.InvalidVolume(f"Volume {volume.id} status must be "
                                    f"{' or '.join(allowed)} to reserve, but the current "
                                    f"status is {volume.status}.")
    if volume.status in ("available", "downloading"):
        volume.status = "reserved"
    attachment = VolumeAttachment(id=str(uuid.uuid4()), volume_id=volume.id,
                                  instance_uuid=instance_uuid, attach_status="reserved",
                                  created_at=utcnow())
    volume.attachments.append(attachment)
    volume.updated_at = utcnow()
    return attachment


def _connect(volume: Volume, attachment: VolumeAttachment, connector: dict) -> None:
    if not isinstance(connector, dict):
        raise validation.bad("Invalid input: connector must be an object.")
    for key in ("host", "mountpoint", "mode"):
        validation.text(connector.get(key), f"connector/{key}")
    attachment.connector = connector
    attachment.attached_host = connector.get("host")
    attachment.mountpoint = connector.get("mountpoint")
    attachment.attach_mode = connector.get("mode") or attachment.attach_mode or "rw"
    if attachment.attach_mode == "null":
        attachment.attach_mode = "rw"
    attachment.connection_info = connection_info(volume, attachment.attach_mode)
    attachment.attach_status = "attaching"
    attachment.updated_at = utcnow()
    if volume.status in ("reserved", "available"):
        volume.status = "attaching"


def create_attachment(ctx, body) -> VolumeAttachment:
    data = validation.obj(body, "attachment")
    validation.only(data, ("volume_uuid", "instance_uuid", "connector", "mode"), "attachment")
    volume_id = validation.uuid_like(data.get("volume_uuid"), "volume_uuid")
    validation.text(data.get("instance_uuid"), "instance_uuid", max_length=36)
    connector = data.get("connector")
    if connector is not None and not isinstance(connector, dict):  # cinder: object or null
        raise validation.bad("Invalid input: connector must be an object.")
    mode = data.get("mode")
    if mode not in (None, "null", "rw", "ro"):
        raise validation.bad(f"Invalid input for field/attribute mode. Value: {mode!r}. "
                             "Must be rw or ro.")
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:attachment_create", api.target(volume))
        if "error" in volume.status:
            raise api.InvalidVolume(f"Volume attachments can not be created if the volume "
                                    f"is in an error state. The Volume {volume.id} currently "
                                    f"has a status of: {volume.status} ")
        attachment = _reserve(s, volume, data.get("instance_uuid"))
        attachment.attach_mode = "ro" if volume.readonly else (
            mode if mode in ("rw", "ro") else "null")
        if connector:
            _connect(volume, attachment, connector)
        s.flush()
        return attachment


def update_attachment(ctx, attachment_id: str, body) -> VolumeAttachment:
    data = validation.obj(body, "attachment")
    if "connector" not in data:
        raise validation.bad("Invalid input for field/attribute attachment. 'connector' is "
                             "a required property")
    with db.transaction() as s:
        attachment, volume = _load(s, ctx, attachment_id)
        policy.authorize(ctx, "volume:attachment_update", api.target(volume))
        if "error" in volume.status:
            raise exceptions.Conflict(f"Volume attachments can not be updated if the volume "
                                      f"is in an error state. The Volume {volume.id} "
                                      f"currently has a status of: {volume.status} ")
        others = [a for a in volume.attachments if a.id != attachment.id and a.connection_info]
        if others and not volume.multiattach:
            raise exceptions.Conflict(f"duplicate connectors detected on volume {volume.id}")
        _connect(volume, attachment, data["connector"])
        return attachment


def complete_attachment(ctx, attachment_id: str) -> None:
    with db.transaction() as s:
        attachment, volume = _load(s, ctx, attachment_id)
        policy.authorize(ctx, "volume:attachment_complete", api.target(volume))
        attachment.attach_status = "attached"
        attachment.attach_time = attachment.attach_time or utcnow()
        volume.status, volume.attach_status = "in-use", "attached"
        volume.updated_at = utcnow()


def _finish_detach(volume: Volume, attachment: VolumeAttachment):
    """Drop ``attachment`` from ``volume``; returns the iSCSI unexport to run once that is
    committed (None if another connection still uses the export): tgtadm is not run
    while the database's write lock is held, and a detach that fails to commit keeps
    its export."""
    volume.attachments.remove(attachment)
    attached = [a for a in volume.attachments if a.attach_status == "attached"]
    if attached:
        volume.status, volume.attach_status = "in-use", "attached"
    elif volume.attachments:
        volume.status, volume.attach_status = "reserved", "detached"
    else:
        volume.status, volume.attach_status = "available", "detached"
    volume.updated_at = utcnow()
    if not any(a.connection_info for a in volume.attachments):
        backend = scheduler.backend_of(volume.host)
        if backend is not None:
            return functools.partial(backends.get(backend).unexport, volume.id)
    return None


def delete_attachment(ctx, attachment_id: str) -> list[VolumeAttachment]:
    with db.transaction() as s:
        attachment, volume = _load(s, ctx, attachment_id)
        policy.authorize(ctx, "volume:attachment_delete", api.target(volume))
        unexport = _finish_detach(volume, attachment)
        s.flush()
        left = list(volume.attachments)
    if unexport is not None:
        unexport()
    return left


def get_attachment(ctx, attachment_id: str) -> VolumeAttachment:
    with db.reader() as s:
        attachment, _ = _load(s, ctx, attachment_id, lock=False)
        return attachment


def list_attachments(ctx, query) -> list[VolumeAttachment]:
    stmt = sa.select(VolumeAttachment).join(Volume).order_by(VolumeAttachment.created_at.desc())
    all_projects = ctx.is_admin and query.get("all_tenants") is not None
    if not all_projects:
        stmt = stmt.where(Volume.project_id == ctx.project_id)
    if query.get("volume_id"):
        stmt = stmt.where(VolumeAttachment.volume_id == query["volume_id"])
    if query.get("instance_id"):
        stmt = stmt.where(VolumeAttachment.instance_uuid == query["instance_id"])
    status = query.get("status") or query.get("attach_status")
    if status:
        stmt = stmt.where(VolumeAttachment.attach_status == status)
    limit, marker, offset = api.limit_marker(query)
    with db.reader() as s:
        found = list(s.scalars(stmt))
    if marker:
        ids = [a.id for a in found]
        if marker not in ids:
            raise validation.bad(f"Invalid input received: marker [{marker}] not found")
        found = found[ids.index(marker) + 1:]
    return found[offset:offset + limit]


# --- the legacy volume actions ------------------------------------------------------------


def _change(ctx, volume_id: str, action: str, change) -> object:
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, f"volume_extension:volume_actions:{action}", api.target(volume))
        result = change(s, volume)
        volume.updated_at = utcnow()
        return result


def reserve(ctx, volume_id: str) -> None:
    def change(s, volume):
        allowed = ("available", "in-use") if volume.multiattach else ("available",)
        if volume.status not in allowed:
            raise api.InvalidVolume(f"Volume status must be {' or '.join(allowed)} to "
                                    f"reserve, but the status is {volume.status}.")
        volume.status = "attaching"
    _change(ctx, volume_id, "reserve", change)


def unreserve(ctx, volume_id: str) -> None:
    def change(s, volume):
        if volume.status == "attaching":
            attached = any(a.attach_status == "attached" for a in volume.attachments)
            volume.status = "in-use" if attached else "available"
    _change(ctx, volume_id, "unreserve", change)


def begin_detaching(ctx, volume_id: str) -> None:
    def change(s, volume):
        if volume.status != "in-use" or volume.attach_status != "attached":
            raise api.InvalidVolume("Unable to detach volume. Volume status must be 'in-use' "
                                    "and attach_status must be 'attached' to detach.")
        volume.status = "detaching"
    _change(ctx, volume_id, "begin_detaching", change)


def roll_detaching(ctx, volume_id: str) -> None:
    def change(s, volume):
        if volume.status == "detaching":
            volume.status = "in-use"
    _change(ctx, volume_id, "roll_detaching", change)


def initialize_connection(ctx, volume_id: str, connector) -> dict:
    if not isinstance(connector, dict):
        raise validation.bad("Must specify 'connector'.")

    def change(s, volume):
        if volume.status == "maintenance" or volume.host is None:
            raise api.InvalidVolume(f"The volume connection cannot be initialized in "
                                    f"status {volume.status}.")
        return connection_info(volume, connector.get("mode"))
    return _change(ctx, volume_id, "initialize", change)


def terminate_connection(ctx, volume_id: str, connector) -> None:
    if not isinstance(connector, dict):
        raise validation.bad("Must specify 'connector'.")
    _change(ctx, volume_id, "terminate", lambda s, volume: None)


def attach(ctx, volume_id: str, data) -> None:
    if not isinstance(data, dict):
        raise validation.bad("Invalid request body for os-attach.")
    instance_uuid = validation.text(data.get("instance_uuid"), "instance_uuid", max_length=36)
    host_name = validation.text(data.get("host_name"), "host_name")
    validation.text(data.get("mountpoint"), "mountpoint")
    if not instance_uuid and not host_name:
        raise validation.bad("Invalid request to attach volume to an invalid target")
    mountpoint = data.get("mountpoint")
    if not mountpoint:
        raise validation.bad("Must specify 'mountpoint'.")
    mode = data.get("mode", "rw")
    if mode not in ("rw", "ro"):
        raise validation.bad("Invalid request to attach volume with an invalid mode. "
                             "Attaching mode should be 'rw' or 'ro'")

    def change(s, volume):
        if volume.readonly and mode != "ro":
            raise validation.bad(f"Invalid attaching mode '{mode}' for volume {volume.id}.")
        pending = [a for a in volume.attachments if a.instance_uuid == instance_uuid
                   and a.attach_status in ("reserved", "attaching")]
        if pending:
            attachment = pending[0]
        else:
            if volume.status not in ("attaching", "available") and not volume.multiattach:
                raise api.InvalidVolume(f"Volume status must be attaching or available to "
                                        f"attach, but the status is {volume.status}.")
            attachment = VolumeAttachment(id=str(uuid.uuid4()), volume_id=volume.id,
                                          instance_uuid=instance_uuid, created_at=utcnow(),
                                          attach_status="attaching")
            volume.attachments.append(attachment)
        attachment.attached_host, attachment.mountpoint = host_name, mountpoint
        attachment.attach_mode, attachment.attach_status = mode, "attached"
        attachment.attach_time = utcnow()
        attachment.connection_info = connection_info(volume, mode)
        volume.status, volume.attach_status = "in-use", "attached"
    _change(ctx, volume_id, "attach", change)


def detach(ctx, volume_id: str, data) -> None:
    attachment_id = data.get("attachment_id") if isinstance(data, dict) else None

    def change(s, volume):
        if attachment_id:
            matches = [a for a in volume.attachments if a.id == attachment_id]
            if not matches:
                raise AttachmentNotFound(attachment_id)
        else:
            matches = volume.attachments[:1]
            if len(volume.attachments) > 1:
                raise api.InvalidVolume("Detach volume failed: more than one attachment; "
                                        "give attachment_id.")
        if not matches:
            raise api.InvalidVolume("Volume is not attached.")
        return _finish_detach(volume, matches[0])
    unexport = _change(ctx, volume_id, "detach", change)
    if unexport is not None:
        unexport()


def force_detach(ctx, volume_id: str, data) -> None:
    policy.authorize(ctx, "volume_extension:volume_admin_actions:force_detach")
    detach(ctx, volume_id, data)
