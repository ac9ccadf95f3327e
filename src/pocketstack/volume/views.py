"""Cinder v3's response shapes (cinder/api/v3/views/*.py and the os-vol-* extensions)."""
from __future__ import annotations

from pocketstack.common.timeutils import isotime_naive
from pocketstack.volume.models import Backup, Snapshot, Volume, VolumeAttachment, VolumeType


def _links(base: str, project_id: str, collection: str, ident: str) -> list[dict]:
    return [{"href": f"{base}/v3/{project_id}/{collection}/{ident}", "rel": "self"},
            {"href": f"{base}/{project_id}/{collection}/{ident}", "rel": "bookmark"}]


def volume_attachments(volume: Volume, ctx) -> list[dict]:
    """The volume's ``attachments`` list: attached ones only, as cinder shows it."""
    out = []
    for a in volume.attachments:
        if a.attach_status != "attached":
            continue
        out.append({"id": volume.id, "attachment_id": a.id, "volume_id": volume.id,
                    "server_id": a.instance_uuid,
                    "host_name": a.attached_host if (ctx.is_admin or "service" in ctx.roles)
                    else None,
                    "device": a.mountpoint, "attached_at": isotime_naive(a.attach_time)})
    return out


def volume_summary(volume: Volume, base: str) -> dict:
    return {"id": volume.id, "name": volume.name,
            "links": _links(base, volume.project_id, "volumes", volume.id)}


def visible_metadata(volume: Volume) -> dict:
    """The volume's metadata with the admin metadata cinder shows in it (``readonly``,
    cinder's add_visible_admin_metadata)."""
    out = dict(volume.meta or {})
    admin = volume.admin_meta or {}
    if "readonly" in admin:
        out["readonly"] = admin["readonly"]
    return out


# cinder's view shows the manage statuses as the create's (bug 1504007)
SHOWN_STATUS = {"managing": "creating", "error_managing": "error",
                "error_managing_deleting": "deleting"}


def volume_detail(volume: Volume, ctx, base: str, version: tuple[int, int], *,
                  extensions: bool = True) -> dict:
    """The detail view; ``extensions``: with what cinder's os-vol-* and image-metadata
    extensions add, which they do to show and list only (not to an update's answer)."""
    out = {
        "id": volume.id, "status": SHOWN_STATUS.get(volume.status, volume.status),
        "size": volume.size,
        "availability_zone": volume.availability_zone,
        "created_at": isotime_naive(volume.created_at),
        "updated_at": isotime_naive(volume.updated_at),
        "name": volume.name, "description": volume.description,
        "volume_type": volume.volume_type.name if volume.volume_type else None,
        "snapshot_id": volume.snapshot_id, "source_volid": volume.source_volid,
        "metadata": visible_metadata(volume),
        "links": _links(base, volume.project_id, "volumes", volume.id),
        "user_id": volume.user_id, "bootable": str(bool(volume.bootable)).lower(),
        "encrypted": volume.encryption_key_id is not None, "replication_status": None,
        "consistencygroup_id": None,
        "multiattach": bool(volume.multiattach),
        "attachments": volume_attachments(volume, ctx),
    }
    if volume.image_metadata and extensions:
        out["volume_image_metadata"] = dict(volume.image_metadata)
    if ctx.is_admin:
        out["migration_status"] = volume.migration_status
    if ctx.is_admin and extensions:
        out["os-vol-host-attr:host"] = volume.host
        out["os-vol-mig-status-attr:migstat"] = volume.migration_status
        out["os-vol-mig-status-attr:name_id"] = None
        out["os-vol-tenant-attr:tenant_id"] = volume.project_id
    if version >= (3, 13):
        out["group_id"] = volume.group_id
    if ctx.is_admin and version >= (3, 21):
        out["provider_id"] = None
    if version >= (3, 48):
        # no backend here shares targets between volumes: false in both the old boolean
        # and 3.69's tristate (where null would mean "always lock")
        out["shared_targets"] = False
        out["service_uuid"] = None
    if ctx.is_admin and version >= (3, 61):
        out["cluster_name"] = None  # no active/active clusters
    if version >= (3, 63):
        out["volume_type_id"] = volume.volume_type_id
    if version >= (3, 64) and volume.encryption_key_id is not None:
        out["encryption_key_id"] = volume.encryption_key_id  # shown only when there is one
    if version >= (3, 65):
        out["consumes_quota"] = True  # only cinder's temporary volumes do not
    return out


def attachment_summary(a: VolumeAttachment) -> dict:
    return {"id": a.id, "status": a.attach_status, "instance": a.instance_uuid,
            "volume_id": a.volume_id}


def attachment_detail(a: VolumeAttachment) -> dict:
    out = attachment_summary(a)
    out.update(attached_at=isotime_naive(a.attach_time) or "",
               detached_at=isotime_naive(a.detach_time) or "",
               attach_mode=a.attach_mode, connection_info=a.connection_info or {})
    return out


def snapshot_summary(snap: Snapshot) -> dict:
    """cinder's summary view: the entries of GET /snapshots."""
    return {"id": snap.id, "created_at": isotime_naive(snap.created_at),
            "updated_at": isotime_naive(snap.updated_at), "name": snap.name,
            "description": snap.description, "volume_id": snap.volume_id,
            "status": snap.status, "size": snap.size, "metadata": dict(snap.meta or {})}


def snapshot(snap: Snapshot, ctx, version: tuple[int, int], *,
             extended: bool = False) -> dict:
    """cinder's detail view (create, update, manage); `extended` adds the
    os-extended-snapshot-attributes that cinder's extension puts on show and detail
    list only -- strict response schemas refuse them on create and update."""
    out = snapshot_summary(snap)
    if version >= (3, 14):
        out["group_snapshot_id"] = snap.group_snapshot_id
    if version >= (3, 41):
        out["user_id"] = snap.user_id
    if version >= (3, 65):
        out["consumes_quota"] = True
    if extended:
        # cinder's extended_snapshot_attributes policy is admin-or-owner, and its
        # response schema requires both on show and detail: members see them too.
        out["os-extended-snapshot-attributes:project_id"] = snap.project_id
        out["os-extended-snapshot-attributes:progress"] = snap.progress or "0%"
    return out


def volume_type(vt: VolumeType, ctx) -> dict:
    out = {"id": vt.id, "name": vt.name, "description": vt.description,
           "is_public": vt.is_public, "os-volume-type-access:is_public": vt.is_public,
           "qos_specs_id": vt.qos_specs_id}
    if ctx.is_admin:
        out["extra_specs"] = dict(vt.extra_specs or {})
    else:  # cinder shows users the specs that say what the type offers, not where it lives
        out["extra_specs"] = {k: v for k, v in (vt.extra_specs or {}).items()
                              if k in ("multiattach", "RESKEY:availability_zones")}
    return out


def backup(b: Backup, ctx, base: str, version: tuple[int, int],
           has_dependents: bool = False) -> dict:
    out = {"id": b.id, "name": b.name, "description": b.description,
           "volume_id": b.volume_id, "snapshot_id": b.snapshot_id, "status": b.status,
           "size": b.size, "object_count": 1 if b.status == "available" else 0,
           "availability_zone": b.availability_zone, "container": b.container,
           "created_at": isotime_naive(b.created_at), "updated_at": isotime_naive(b.updated_at),
           "data_timestamp": isotime_naive(b.data_timestamp or b.created_at),
           "fail_reason": b.fail_reason, "has_dependent_backups": has_dependents,
           "is_incremental": b.parent_id is not None,
           "links": _links(base, b.project_id, "backups", b.id)}
    if ctx.is_admin and version >= (3, 18):
        out["os-backup-project-attr:project_id"] = b.project_id
    if version >= (3, 43):
        out["metadata"] = dict(b.meta or {})
    if version >= (3, 56):
        out["user_id"] = b.user_id
    if version >= (3, 64) and b.encryption_key_id is not None:
        out["encryption_key_id"] = b.encryption_key_id
    return out
