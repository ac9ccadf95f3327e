"""/os-simple-tenant-usage (+/{tenant_id}): hours, vCPU-, RAM- and disk-hours per project
over a period, from the instance rows (deleted ones included), as nova's simple usage
(`openstack usage list/show`)."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.compute.models import Instance
from pocketstack.compute.rest.common import at_least, authorize, limit_marker, respond, to_bool

_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%d %H:%M:%S.%f")


def _when(text: str | None) -> dt.datetime:
    if not text:
        return utcnow().replace(tzinfo=None)
    for fmt in _FORMATS:
        try:
            return dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise exceptions.BadRequest(f"Invalid input for query parameters. Value: {text}. "
                                "The time must be like 2012-10-08T21:10:44.587336.")


def _period(req) -> tuple[dt.datetime, dt.datetime]:
    start, stop = _when(req.query.get("start")), _when(req.query.get("end"))
    if not start < stop:
        raise exceptions.BadRequest("Invalid start time. The start time cannot occur after "
                                    "the end time.")
    return start, stop


def _naive(value: dt.datetime | None) -> dt.datetime | None:
    if value is not None and value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else _naive(value).isoformat(timespec="microseconds")


def _server_usage(inst, start, stop, now) -> dict | None:
    launched, ended = _naive(inst.launched_at), _naive(inst.terminated_at)
    if launched is None or launched >= stop or (ended is not None and ended <= start):
        return None
    hours = (min(ended or stop, stop) - max(launched, start)).total_seconds() / 3600.0
    flavor = inst.flavor or {}
    return {"instance_id": inst.uuid, "name": inst.display_name, "hours": hours,
            "memory_mb": flavor.get("memory_mb", inst.memory_mb),
            "local_gb": flavor.get("root_gb", 0) + flavor.get("ephemeral_gb", 0),
            "vcpus": flavor.get("vcpus", inst.vcpus), "tenant_id": inst.project_id,
            "flavor": flavor.get("name", ""), "started_at": _iso(launched),
            "ended_at": _iso(ended),
            "state": "terminated" if ended is not None else inst.vm_state,
            "uptime": int(((ended or now) - launched).total_seconds())}


def _usages(req, project_id: str | None, detailed: bool) -> list[dict]:
    start, stop = _period(req)
    now = utcnow().replace(tzinfo=None)
    stmt = sa.select(Instance).where(Instance.launched_at.is_not(None),
                                     Instance.launched_at < stop,
                                     sa.or_(Instance.terminated_at.is_(None),
                                            Instance.terminated_at > start))
    if project_id is not None:
        stmt = stmt.where(Instance.project_id == project_id)
    with db.reader() as s:
        rows = s.scalars(stmt.order_by(Instance.project_id, Instance.created_at,
                                       Instance.uuid)).all()
    limit, marker = limit_marker(req) if at_least(req, "2.40") else (None, None)
    if marker:
        ids = [r.uuid for r in rows]
        if marker not in ids:
            raise exceptions.BadRequest(f"marker [{marker}] not found")
        rows = rows[ids.index(marker) + 1:]
    if limit is not None:
        rows = rows[:limit]
    by_project: dict[str, dict] = {}
    for inst in rows:
        usage = _server_usage(inst, start, stop, now)
        if usage is None:
            continue
        total = by_project.setdefault(inst.project_id, {
            "tenant_id": inst.project_id, "start": _iso(start), "stop": _iso(stop),
            "total_hours": 0.0, "total_local_gb_usage": 0.0, "total_memory_mb_usage": 0.0,
            "total_vcpus_usage": 0.0, "server_usages": []})
        total["total_hours"] += usage["hours"]
        total["total_local_gb_usage"] += usage["local_gb"] * usage["hours"]
        total["total_memory_mb_usage"] += usage["memory_mb"] * usage["hours"]
        total["total_vcpus_usage"] += usage["vcpus"] * usage["hours"]
        total["server_usages"].append(usage)
    out = list(by_project.values())
    if not detailed:
        for total in out:
            del total["server_usages"]
    return out


def list_usage(req):
    authorize(req, "os_compute_api:os-simple-tenant-usage:list")
    detailed = to_bool(req.query.get("detailed", "0"))
    return respond(req, {"tenant_usages": _usages(req, None, detailed)})


def show_usage(req):
    project_id = req.params["tenant_id"]
    authorize(req, "os_compute_api:os-simple-tenant-usage:show", {"project_id": project_id})
    usages = _usages(req, project_id, True)
    return respond(req, {"tenant_usage": usages[0] if usages else {}})
