"""/os-services: list, enable/disable, forced_down, delete (2.53: by uuid with PUT)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, numbers
from pocketstack.common.timeutils import isotime_naive
from pocketstack.compute.models import Aggregate, ComputeNode, Instance, Service
from pocketstack.placement import report as placement_report
from pocketstack.compute.rest.common import at_least, authorize, body, respond
from pocketstack.compute.scheduler.host_state import service_is_up


def _zone(svc, zone_of) -> str:
    if svc.binary != "nova-compute":
        return "internal"
    return zone_of.get(svc.host, config.CONF.compute.default_availability_zone)


def _zone_map(s):
    out = {}
    for agg in s.scalars(sa.select(Aggregate)).all():
        if (agg.metadata_ or {}).get("availability_zone"):
            for h in agg.hosts or []:
                out[h] = agg.metadata_["availability_zone"]
    return out


def _view(req, svc, zone_of) -> dict:
    out = {"id": svc.uuid if at_least(req, "2.53") else svc.id, "binary": svc.binary,
           "host": svc.host, "zone": _zone(svc, zone_of),
           "status": "disabled" if svc.disabled else "enabled",
           "state": "up" if service_is_up(svc.last_seen_up, svc.forced_down) else "down",
           "updated_at": isotime_naive(svc.last_seen_up),
           "disabled_reason": svc.disabled_reason}
    if at_least(req, "2.11"):
        out["forced_down"] = svc.forced_down
    return out


def list_services(req):
    authorize(req, "os_compute_api:os-services:list")
    stmt = sa.select(Service).order_by(Service.id)
    if req.query.get("host"):
        stmt = stmt.where(Service.host == req.query["host"])
    if req.query.get("binary"):
        stmt = stmt.where(Service.binary == req.query["binary"])
    with db.reader() as s:
        rows = s.scalars(stmt).all()
        zone_of = _zone_map(s)
    return respond(req, {"services": [_view(req, r, zone_of) for r in rows]})


def update_service(req):
    """2.53+: PUT /os-services/{uuid} with status/disabled_reason/forced_down."""
    authorize(req, "os_compute_api:os-services:update")
    if not at_least(req, "2.53"):
        return _legacy_update(req)
    data = body(req, {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["enabled", "disabled"]},
        "disabled_reason": {"type": "string", "minLength": 1, "maxLength": 255},
        "forced_down": {"type": "boolean"}}, "additionalProperties": False,
        "minProperties": 1})
    if "disabled_reason" in data and data.get("status") != "disabled":
        raise exceptions.BadRequest("Specifying 'disabled_reason' with status 'enabled' "
                                    "is invalid.")
    with db.transaction() as s:
        svc = s.scalar(sa.select(Service).where(Service.uuid == req.params["service_id"]))
        if svc is None:
            raise exceptions.NotFound(f"Service {req.params['service_id']} could not be found.")
        if svc.binary != "nova-compute":
            raise exceptions.BadRequest(f"Updating a {svc.binary} service is not supported. "
                                        "Only nova-compute services can be updated.")
        if "status" in data:
            svc.disabled = data["status"] == "disabled"
            svc.disabled_reason = data.get("disabled_reason") if svc.disabled else None
        if "forced_down" in data:
            svc.forced_down = data["forced_down"]
        zone_of = _zone_map(s)
        view = _view(req, svc, zone_of)
    return respond(req, {"service": view})


def _legacy_update(req):
    action = req.params["service_id"]
    if action not in ("enable", "disable", "disable-log-reason", "force-down"):
        raise exceptions.NotFound(f"Unknown action {action}")
    data = body(req)
    host, binary = data.get("host"), data.get("binary")
    if not host or not binary:
        raise exceptions.BadRequest("host and binary are required")
    with db.transaction() as s:
        svc = s.scalar(sa.select(Service).where(Service.host == host, Service.binary == binary))
        if svc is None:
            raise exceptions.NotFound(f"Service {binary} on host {host} could not be found.")
        out = {"host": host, "binary": binary}
        if action == "force-down":
            svc.forced_down = bool(data.get("forced_down"))
            out["forced_down"] = svc.forced_down
        else:
            svc.disabled = action != "enable"
            svc.disabled_reason = data.get("disabled_reason") if svc.disabled else None
            out["status"] = "disabled" if svc.disabled else "enabled"
            if action == "disable-log-reason":
                out["disabled_reason"] = svc.disabled_reason
    return respond(req, {"service": out})


def delete_service(req):
    authorize(req, "os_compute_api:os-services:delete")
    ident = req.params["service_id"]
    with db.transaction() as s:
        col = Service.uuid if at_least(req, "2.53") else Service.id
        if col is Service.id and not numbers.is_int_text(ident):
            raise exceptions.BadRequest(f"Invalid uuid {ident}")
        svc = s.scalar(sa.select(Service).where(col == (ident if col is Service.uuid
                                                         else int(ident))))
        if svc is None:
            raise exceptions.NotFound(f"Service {ident} could not be found.")
        if svc.binary == "nova-compute":
            if s.scalar(sa.select(sa.func.count()).select_from(Instance).where(
                    Instance.host == svc.host, Instance.deleted.is_(False))):
                raise exceptions.Conflict("Unable to delete compute service that is hosting "
                                          "instances. Migrate or delete the instances first.")
            # Its resource provider goes too (nova's delete of the service does), unless
            # something is still allocated there.
            for node_uuid in s.scalars(sa.select(ComputeNode.uuid)
                                       .where(ComputeNode.host == svc.host)).all():
                placement_report.forget_host(node_uuid, s)
            s.execute(sa.delete(ComputeNode).where(ComputeNode.host == svc.host))
        s.delete(svc)
    return respond(req, None, 204)
