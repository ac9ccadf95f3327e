"""/extensions, /limits, /os-availability-zone, /os-services and /messages."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.volume import quotas
from pocketstack.volume.rest import microversion
from pocketstack.volume.models import Snapshot, Volume, VolumeService
from pocketstack.volume.rest.common import at_least, body, check_project, respond

UPDATED = "2013-04-18T00:00:00+00:00"
# (alias, name, description) of the cinder extensions whose behaviour exists here.
EXTENSIONS = (
    ("os-admin-actions", "AdminActions", "Enable admin actions."),
    ("os-availability-zone", "AvailabilityZones", "Describe Availability Zones."),
    ("capabilities", "Capabilities", "Capabilities support."),
    ("backups", "Backups", "Backups support."),
    ("os-backup-project-attr", "BackupProjectAttribute",
     "Expose project_id as an attribute of a backup."),
    ("os-extended-services", "ExtendedServices", "Extended services support."),
    ("os-extended-snapshot-attributes", "ExtendedSnapshotAttributes",
     "Extended SnapshotAttributes support."),
    ("os-quota-sets", "Quotas", "Quota management support."),
    ("os-quota-class-sets", "QuotaClasses", "Quota classes management support."),
    ("os-services", "Services", "Services support."),
    ("os-snapshot-actions", "SnapshotActions", "Enable snapshot manager actions."),
    ("os-types-extra-specs", "TypesExtraSpecs", "Type extra specs support."),
    ("os-types-manage", "TypesManage", "Types manage support."),
    ("os-vol-host-attr", "VolumeHostAttribute", "Expose host as an attribute of a volume."),
    ("os-vol-image-meta", "VolumeImageMetadata",
     "Show image metadata associated with the volume."),
    ("os-vol-mig-status-attr", "VolumeMigStatusAttribute",
     "Expose migration_status as an attribute of a volume."),
    ("os-vol-tenant-attr", "VolumeTenantAttribute",
     "Expose the internal project_id as an attribute of a volume."),
    ("os-volume-actions", "VolumeActions", "Enable volume actions."),
    ("os-volume-type-access", "VolumeTypeAccess", "Volume type access support."),
    ("os-volume-transfer", "VolumeTransfer", "Volume transfer management support."),
    ("consistencygroups", "Consistencygroups", "consistency groups support."),
    ("cgsnapshots", "Cgsnapshots", "cgsnapshots support."),
    ("os-volume-manage", "VolumeManage", "Allows existing backend storage to be 'managed' "
     "by Cinder."),
    ("os-volume-unmanage", "VolumeUnmanage", "Enable volume unmanage operation."),
    ("os-snapshot-manage", "SnapshotManage", "Allows existing backend storage to be "
     "'managed' by Cinder."),
    ("os-snapshot-unmanage", "SnapshotUnmanage", "Enable volume unmanage operation."),
)


def extensions(req):
    check_project(req)
    return respond(req, {"extensions": [
        {"alias": alias, "name": name, "description": description, "updated": UPDATED,
         "namespace": "", "links": []} for alias, name, description in EXTENSIONS]})


def limits(req):
    check_project(req)
    project_id = req.context.project_id
    if req.query.get("project_id") and req.context.is_admin:
        project_id = req.query["project_id"]
    limit, used = quotas.limits(project_id), quotas.usage(project_id)
    return respond(req, {"limits": {"rate": [], "absolute": {
        "maxTotalVolumes": limit["volumes"], "maxTotalSnapshots": limit["snapshots"],
        "maxTotalVolumeGigabytes": limit["gigabytes"], "maxTotalBackups": limit["backups"],
        "maxTotalBackupGigabytes": limit["backup_gigabytes"],
        "totalVolumesUsed": used["volumes"], "totalSnapshotsUsed": used["snapshots"],
        "totalGigabytesUsed": used["gigabytes"], "totalBackupsUsed": used["backups"],
        "totalBackupGigabytesUsed": used["backup_gigabytes"]}}})


def availability_zones(req):
    check_project(req)
    zone = config.CONF.volume.storage_availability_zone
    return respond(req, {"availabilityZoneInfo": [
        {"zoneName": zone, "zoneState": {"available": _any_up()}}]})


def _is_up(row: VolumeService) -> bool:
    if row.last_seen_up is None:
        return False
    age = (utcnow() - row.last_seen_up).total_seconds()
    return age <= config.CONF.volume.service_down_time


def _any_up() -> bool:
    with db.reader() as s:
        rows = s.scalars(sa.select(VolumeService)
                         .where(VolumeService.binary == "cinder-volume")).all()
    return any(_is_up(r) and not r.disabled for r in rows)


def _service(row: VolumeService, req) -> dict:
    out = {"binary": row.binary, "host": row.host, "zone": row.availability_zone,
           "status": "disabled" if row.disabled else "enabled",
           "state": "up" if _is_up(row) else "down",
           "updated_at": isotime_naive(row.updated_at or row.last_seen_up),
           "disabled_reason": row.disabled_reason}
    if row.binary == "cinder-volume":
        out["replication_status"] = "disabled"
        out["active_backend_id"] = None
        out["frozen"] = False
    if at_least(req, "3.7"):
        out["cluster"] = None
    if row.binary == "cinder-volume" and at_least(req, "3.49"):
        out["backend_state"] = "up" if _is_up(row) else "down"
    return out


def services(req):
    check_project(req)
    policy.authorize(req.context, "volume_extension:services:index")
    stmt = sa.select(VolumeService).order_by(VolumeService.id)
    if req.query.get("host"):
        stmt = stmt.where(VolumeService.host == req.query["host"])
    if req.query.get("binary"):
        stmt = stmt.where(VolumeService.binary == req.query["binary"])
    with db.reader() as s:
        rows = s.scalars(stmt).all()
    return respond(req, {"services": [_service(r, req) for r in rows]})


def update_service(req):
    """PUT /os-services/enable|disable|disable-log-reason {host, binary[, disabled_reason]}."""
    policy.authorize(req.context, "volume_extension:services:update")
    action = req.params["action"]
    if action not in ("enable", "disable", "disable-log-reason"):
        raise exceptions.NotFound(f"Unknown action {action}")
    data = body(req)
    if not isinstance(data, dict) or not data.get("host"):
        raise exceptions.BadRequest("Missing required element 'host' in request body.")
    binary = data.get("binary", "cinder-volume")
    with db.transaction() as s:
        row = s.scalar(sa.select(VolumeService).where(VolumeService.host == data["host"],
                                                      VolumeService.binary == binary))
        if row is None:
            raise exceptions.NotFound(f"Service {binary} on host {data['host']} could not "
                                      "be found.")
        row.disabled = action != "enable"
        row.disabled_reason = data.get("disabled_reason") if row.disabled else None
        out = {"host": row.host, "binary": row.binary,
               "status": "disabled" if row.disabled else "enabled",
               "disabled": row.disabled, "disabled_reason": row.disabled_reason}
    return respond(req, out)


def pool_capabilities(backend: str) -> dict:
    """A backend's pool as cinder-volume reports it to the scheduler (get_pools)."""
    from pocketstack.volume import backends, scheduler

    driver = backends.get(backend)
    caps = {"pool_name": backend, "volume_backend_name": backend,
            "vendor_name": "Open Source", "driver_version": "1.0.0",
            "storage_protocol": {"rbd": "ceph", "lvm": "iSCSI"}.get(backend, "local"),
            "reserved_percentage": 0, "multiattach": True, "QoS_support": False,
            "thin_provisioning_support": backend != "lvm" or config.CONF.volume.lvm_thin,
            "thick_provisioning_support": backend == "lvm" and not
            config.CONF.volume.lvm_thin, "max_over_subscription_ratio": "1.0",
            "timestamp": isotime_naive(utcnow()), "backend_state": "up"}
    try:
        extra = driver.pool_stats() if hasattr(driver, "pool_stats") else {}
        with db.reader() as s:
            total, free = scheduler.free_space(s, backend)
            allocated = scheduler.allocated(s, backend)
    except Exception as error:  # noqa: BLE001 - unreachable: shown, not a 500
        return caps | {"total_capacity_gb": "unknown", "free_capacity_gb": "unknown",
                       "backend_state": "down", "backend_state_reason": str(error)[:200]}
    caps.update({k: v for k, v in extra.items() if k != "allocated_bytes"})
    caps.setdefault("total_capacity_gb", total)
    caps.setdefault("free_capacity_gb", free)
    caps["allocated_capacity_gb"] = caps["provisioned_capacity_gb"] = allocated
    return caps


def get_pools(req):
    """GET /scheduler-stats/get_pools[?detail=true] (admin): each backend's pool."""
    from pocketstack.volume import backends, scheduler

    check_project(req)
    policy.authorize(req.context, "scheduler_extension:scheduler_stats:get_pools")
    detail = str(req.query.get("detail", "false")).lower() in ("true", "1", "yes", "on")
    pools = []
    for name in backends.enabled():
        if req.query.get("name") and req.query["name"] != scheduler.host_of(name):
            continue
        pool = {"name": scheduler.host_of(name)}
        if detail:
            pool["capabilities"] = pool_capabilities(name)
        pools.append(pool)
    return respond(req, {"pools": pools})


# --- user messages (3.3): why a volume or snapshot went to error ---------------------------

_NAMESPACE = uuid.UUID("6f1c9a0e-5b0e-4e43-9c55-0c3b3f3e2a11")


def _messages(ctx) -> list[dict]:
    with db.reader() as s:
        vols = s.scalars(sa.select(Volume).where(Volume.error_reason.is_not(None),
                                                 Volume.project_id == ctx.project_id)).all()
        snaps = s.scalars(sa.select(Snapshot).where(Snapshot.error_reason.is_not(None),
                                                    Snapshot.project_id == ctx.project_id)
                          ).all()
    out = []
    for kind, event, rows in (("VOLUME", "VOLUME_VOLUME_001_002", vols),
                              ("VOLUME_SNAPSHOT", "VOLUME_SNAPSHOT_001_002", snaps)):
        for row in rows:
            stamp = isotime_naive(row.updated_at or row.created_at)
            out.append({"id": str(uuid.uuid5(_NAMESPACE, row.id + row.error_reason)),
                        "message_level": "ERROR", "event_id": event,
                        "user_message": row.error_reason, "resource_type": kind,
                        "resource_uuid": row.id, "request_id": None,
                        "created_at": stamp, "guaranteed_until": None, "links": []})
    return out


def list_messages(req):
    check_project(req)
    microversion.require(req, "3.3")
    found = _messages(req.context)
    if req.query.get("resource_uuid"):
        found = [m for m in found if m["resource_uuid"] == req.query["resource_uuid"]]
    return respond(req, {"messages": found})


def show_message(req):
    check_project(req)
    microversion.require(req, "3.3")
    for message in _messages(req.context):
        if message["id"] == req.params["message_id"]:
            return respond(req, {"message": message})
    raise exceptions.NotFound(f"Message {req.params['message_id']} could not be found.")

