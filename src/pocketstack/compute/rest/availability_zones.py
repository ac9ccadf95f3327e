"""/os-availability-zone (+/detail): the default zone plus aggregates' zones."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.compute.models import Aggregate, Service
from pocketstack.compute.rest.common import authorize, respond
from pocketstack.compute.scheduler.host_state import service_is_up


def _zones():
    default = config.CONF.compute.default_availability_zone
    with db.reader() as s:
        services = s.scalars(sa.select(Service)).all()
        aggs = s.scalars(sa.select(Aggregate)).all()
    zone_of = {}
    for agg in aggs:
        if (agg.metadata_ or {}).get("availability_zone"):
            for h in agg.hosts or []:
                zone_of[h] = agg.metadata_["availability_zone"]
    zones: dict[str, dict] = {}
    for svc in services:
        zone = zone_of.get(svc.host, default) if svc.binary == "nova-compute" else "internal"
        up = service_is_up(svc.last_seen_up, svc.forced_down)
        zones.setdefault(zone, {})
        zones[zone].setdefault(svc.host, {})[svc.binary] = {
            "available": up and not svc.disabled, "active": not svc.disabled,
            "updated_at": svc.last_seen_up.isoformat() if svc.last_seen_up else None}
    return zones


def list_zones(req):
    authorize(req, "os_compute_api:os-availability-zone:list")
    out = []
    for name, hosts in sorted(_zones().items()):
        if name == "internal":
            continue
        available = any(b["available"] for h in hosts.values() for b in h.values())
        out.append({"zoneName": name, "zoneState": {"available": available}, "hosts": None})
    return respond(req, {"availabilityZoneInfo": out})


def detail_zones(req):
    authorize(req, "os_compute_api:os-availability-zone:detail")
    out = []
    for name, hosts in sorted(_zones().items()):
        available = any(b["available"] for h in hosts.values() for b in h.values())
        out.append({"zoneName": name, "zoneState": {"available": available}, "hosts": hosts})
    return respond(req, {"availabilityZoneInfo": out})
