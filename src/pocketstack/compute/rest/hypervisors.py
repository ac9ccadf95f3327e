"""/os-hypervisors (+detail, statistics, show, servers)."""
from __future__ import annotations

from types import SimpleNamespace

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, numbers
from pocketstack.common.timeutils import utcnow
from pocketstack.compute.models import ComputeNode, Instance, Service
from pocketstack.compute.rest.common import (at_least, authorize, limit_marker,
                                              next_link, respond)


_node, _svc = ComputeNode.__table__, Service.__table__
# Core rows, not ORM objects: listing 1,000 hosts is one light query.
_NODE_COLS = ("id", "uuid", "host", "hypervisor_hostname", "hypervisor_type",
              "hypervisor_version", "host_ip", "vcpus", "memory_mb", "local_gb",
              "vcpus_used", "memory_mb_used", "local_gb_used", "running_vms")
_SVC_COLS = ("id", "uuid", "host", "disabled", "disabled_reason", "forced_down",
             "last_seen_up", "created_at")
_SELECT = (sa.select(*(_node.c[c] for c in _NODE_COLS),
                     *(_svc.c[c].label(f"svc_{c}") for c in _SVC_COLS))
           .select_from(_node)
           .join(_svc, sa.and_(_svc.c.host == _node.c.host, _svc.c.binary == "nova-compute")))


def _load(s, where=None, after: int | None = None, limit: int | None = None):
    stmt = _SELECT
    if where is not None:
        stmt = stmt.where(where)
    if after is not None:
        stmt = stmt.where(_node.c.id > after)
    stmt = stmt.order_by(_node.c.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    split = len(_NODE_COLS)
    return [(SimpleNamespace(**dict(zip(_NODE_COLS, row[:split]))),
             SimpleNamespace(**dict(zip(_SVC_COLS, row[split:]))))
            for row in s.connection().execute(stmt)]


class _Views:
    """The list and detail views of one request: its microversion and the clock are read
    once, not per host (1,000 hosts per page)."""

    def __init__(self, req):
        self.v228, self.v253, self.v288 = (at_least(req, v) for v in ("2.28", "2.53", "2.88"))
        self.now = utcnow()
        self.down_after = config.CONF.compute.service_down_time

    def basic(self, node, svc) -> dict:
        seen = svc.last_seen_up
        up = (not svc.forced_down and seen is not None
              and (self.now - seen).total_seconds() <= self.down_after)
        return {"id": node.uuid if self.v253 else node.id,
                "hypervisor_hostname": node.hypervisor_hostname,
                "state": "up" if up else "down",
                "status": "disabled" if svc.disabled else "enabled"}

    def detail(self, node, svc) -> dict:
        out = self.basic(node, svc)
        out.update({"host_ip": node.host_ip, "hypervisor_type": node.hypervisor_type,
                    "hypervisor_version": node.hypervisor_version,
                    "service": {"host": svc.host, "id": svc.uuid if self.v253 else svc.id,
                                "disabled_reason": svc.disabled_reason}})
        if not self.v288:
            free_disk = node.local_gb - node.local_gb_used
            out.update({"vcpus": node.vcpus, "memory_mb": node.memory_mb,
                        "local_gb": node.local_gb, "vcpus_used": node.vcpus_used,
                        "memory_mb_used": node.memory_mb_used,
                        "local_gb_used": node.local_gb_used,
                        "free_ram_mb": node.memory_mb - node.memory_mb_used,
                        "free_disk_gb": free_disk, "current_workload": 0,
                        "running_vms": node.running_vms, "disk_available_least": free_disk,
                        "cpu_info": {"arch": "x86_64", "model": "fake",
                                     "vendor": "pocketstack", "features": [],
                                     "topology": {"cores": 1, "threads": 1,
                                                  "sockets": node.vcpus}}
                        if self.v228 else "{}"})
        else:
            # 2.88 moved uptime here from /os-hypervisors/{id}/uptime; a host that is
            # down cannot say (nova answers null then)
            out["uptime"] = _uptime_line(svc.created_at) if out["state"] == "up" else None
        return out


# nova's query schema for with_servers: parameter_types.boolean (True/False stand for
# the JSON booleans a query cannot carry, and appear in its message as nova's do)
_BOOLEAN = [True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes",
            False, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no"]


def _with_servers(req) -> bool:
    """The with_servers query parameter, from 2.53 (ignored before, as nova)."""
    if not at_least(req, "2.53") or "with_servers" not in req.query:
        return False
    value = req.query["with_servers"]
    if value not in _BOOLEAN:
        raise exceptions.BadRequest(f"Invalid input for query parameters with_servers. "
                                    f"Value: {value}. {value!r} is not one of {_BOOLEAN!r}")
    return value.lower() in ("true", "1", "on", "yes")


def _servers_by_host(s, hosts) -> dict[str, list[dict]]:
    """Each host's servers, as nova's instance_get_all_by_host (not deleted), in one
    query for the page."""
    out: dict[str, list[dict]] = {h: [] for h in hosts}
    if hosts:
        for host, uuid, name in s.execute(
                sa.select(Instance.host, Instance.uuid, Instance.display_name)
                .where(Instance.host.in_(list(hosts)), Instance.deleted.is_(False))
                .order_by(Instance.created_at, Instance.uuid)):
            out[host].append({"name": name, "uuid": uuid})
    return out


def _add_servers(req, out: dict, servers: list[dict]) -> dict:
    """nova lists them when there are some, and from 2.75 an empty list too."""
    if servers or at_least(req, "2.75"):
        out["servers"] = servers
    return out


def _basic(req, node, svc) -> dict:
    return _Views(req).basic(node, svc)


def _detail(req, node, svc) -> dict:
    return _Views(req).detail(node, svc)


def list_hypervisors(req):
    authorize(req, "os_compute_api:os-hypervisors:list")
    return _list(req, detail=False)


def list_hypervisors_detail(req):
    authorize(req, "os_compute_api:os-hypervisors:list-detail")
    return _list(req, detail=True)


def _match(req):
    pattern = req.query.get("hypervisor_hostname_pattern")
    if pattern and at_least(req, "2.53"):
        return _node.c.hypervisor_hostname.like(f"%{pattern}%")
    return None


def _list(req, detail: bool):
    """Paged from 2.33 as nova: ``limit`` (at most 1000, the default too) and ``marker``
    (the last id seen: an integer, a uuid from 2.53), and a next link when a page is
    full."""
    where, after, limit = _match(req), None, None
    if at_least(req, "2.33"):
        if where is not None and ("limit" in req.query or "marker" in req.query):
            raise exceptions.BadRequest("Paging over hypervisors with the "
                                        "hypervisor_hostname_pattern query parameter is "
                                        "not supported.")
        limit, marker = limit_marker(req)
    with_servers = _with_servers(req)
    with db.reader() as s:
        if limit is not None and marker is not None:
            after = _marker_id(s, req, marker)
        rows = _load(s, where, after, limit)
        servers = _servers_by_host(s, {n.host for n, _ in rows}) if with_servers else None
    views = _Views(req)
    view = views.detail if detail else views.basic
    out = {"hypervisors": [
        _add_servers(req, view(n, sv), servers[n.host]) if with_servers else view(n, sv)
        for n, sv in rows]}
    if limit is not None:
        more = next_link(req, "os-hypervisors" + ("/detail" if detail else ""),
                         out["hypervisors"], limit)
        if more:
            out["hypervisors_links"] = more
    return respond(req, out)


def _marker_id(s, req, marker: str) -> int:
    by_uuid = at_least(req, "2.53")
    if by_uuid:
        cond = _node.c.uuid == marker
    elif numbers.is_int_text(marker):
        cond = _node.c.id == int(marker)
    else:
        cond = None
    found = s.connection().execute(sa.select(_node.c.id).where(cond)).scalar() \
        if cond is not None else None
    if found is None:
        raise exceptions.BadRequest(f"Marker {marker} could not be found.")
    return found


def show_hypervisor(req):
    authorize(req, "os_compute_api:os-hypervisors:show")
    ident = req.params["hypervisor_id"]
    with_servers = _with_servers(req)
    with db.reader() as s:
        cond = ComputeNode.uuid == ident if at_least(req, "2.53") else (
            ComputeNode.id == int(ident) if numbers.is_int_text(ident) else sa.false())
        rows = _load(s, cond)
        if not rows:
            raise exceptions.NotFound(f"Hypervisor with ID '{ident}' could not be found.")
        node, svc = rows[0]
        out = _detail(req, node, svc)
        if with_servers:
            _add_servers(req, out, _servers_by_host(s, {node.host})[node.host])
    return respond(req, {"hypervisor": out})


def statistics(req):
    """Totals over all hosts; gone from 2.88, as nova (placement has the numbers)."""
    if at_least(req, "2.88"):
        raise exceptions.NotFound("The resource could not be found.")
    authorize(req, "os_compute_api:os-hypervisors:statistics")
    with db.reader() as s:
        rows = _load(s)
    nodes = [n for n, _ in rows]
    stats = {"count": len(nodes), "vcpus": sum(n.vcpus for n in nodes),
             "memory_mb": sum(n.memory_mb for n in nodes),
             "local_gb": sum(n.local_gb for n in nodes),
             "vcpus_used": sum(n.vcpus_used for n in nodes),
             "memory_mb_used": sum(n.memory_mb_used for n in nodes),
             "local_gb_used": sum(n.local_gb_used for n in nodes),
             "free_ram_mb": sum(n.memory_mb - n.memory_mb_used for n in nodes),
             "free_disk_gb": sum(n.local_gb - n.local_gb_used for n in nodes),
             "current_workload": 0, "running_vms": sum(n.running_vms for n in nodes),
             "disk_available_least": sum(n.local_gb - n.local_gb_used for n in nodes)}
    return respond(req, {"hypervisor_statistics": stats})


def uptime(req):
    """`uptime`-style line of the host (the simulated hosts share this machine's load); gone
    from 2.88 as nova, where show carries it."""
    if at_least(req, "2.88"):
        raise exceptions.NotFound("The resource could not be found.")
    authorize(req, "os_compute_api:os-hypervisors:uptime")
    ident = req.params["hypervisor_id"]
    with db.reader() as s:
        cond = ComputeNode.uuid == ident if at_least(req, "2.53") else (
            ComputeNode.id == int(ident) if numbers.is_int_text(ident) else sa.false())
        rows = _load(s, cond)
    if not rows:
        raise exceptions.NotFound(f"Hypervisor with ID '{ident}' could not be found.")
    node, svc = rows[0]
    out = _basic(req, node, svc)
    out["uptime"] = _uptime_line(svc.created_at)
    return respond(req, {"hypervisor": out})


def _uptime_line(since) -> str:
    import os

    from pocketstack.common.timeutils import utcnow

    now = utcnow()
    seconds = int((now - since.replace(tzinfo=None)).total_seconds()) if since else 0
    days, rest = divmod(seconds, 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f" {now:%H:%M:%S} up {days} days, {hours:2d}:{minutes:02d},  0 users,  "
            f"load average: {load}")
