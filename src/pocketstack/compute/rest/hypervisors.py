"""/os-hypervisors (+detail, statistics, show, servers)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute.models import ComputeNode, Instance, Service
from pocketstack.compute.rest.common import at_least, authorize, respond
from pocketstack.compute.scheduler.host_state import service_is_up


def _load(s, where=None):
    stmt = sa.select(ComputeNode, Service).join(
        Service, sa.and_(Service.host == ComputeNode.host, Service.binary == "nova-compute"))
    if where is not None:
        stmt = stmt.where(where)
    return s.execute(stmt.order_by(ComputeNode.id)).all()


def _basic(req, node, svc) -> dict:
    return {"id": node.uuid if at_least(req, "2.53") else node.id,
            "hypervisor_hostname": node.hypervisor_hostname,
            "state": "up" if service_is_up(svc.last_seen_up, svc.forced_down) else "down",
            "status": "disabled" if svc.disabled else "enabled"}


def _detail(req, node, svc) -> dict:
    out = _basic(req, node, svc)
    out.update({"host_ip": node.host_ip, "hypervisor_type": node.hypervisor_type,
                "hypervisor_version": node.hypervisor_version,
                "service": {"host": svc.host, "id": svc.uuid if at_least(req, "2.53") else svc.id,
                            "disabled_reason": svc.disabled_reason}})
    if not at_least(req, "2.88"):
        out.update({"vcpus": node.vcpus, "memory_mb": node.memory_mb, "local_gb": node.local_gb,
                    "vcpus_used": node.vcpus_used, "memory_mb_used": node.memory_mb_used,
                    "local_gb_used": node.local_gb_used,
                    "free_ram_mb": node.memory_mb - node.memory_mb_used,
                    "free_disk_gb": node.local_gb - node.local_gb_used,
                    "current_workload": 0, "running_vms": node.running_vms,
                    "disk_available_least": node.local_gb - node.local_gb_used,
                    "cpu_info": {"arch": "x86_64", "model": "fake", "vendor": "pocketstack",
                                 "features": [], "topology": {"cores": 1, "threads": 1,
                                                              "sockets": node.vcpus}}
                    if at_least(req, "2.28") else "{}"})
    return out


def list_hypervisors(req):
    authorize(req, "os_compute_api:os-hypervisors:list")
    with db.reader() as s:
        rows = _load(s, _match(req))
    return respond(req, {"hypervisors": [_basic(req, n, sv) for n, sv in rows]})


def _match(req):
    pattern = req.query.get("hypervisor_hostname_pattern")
    if pattern and at_least(req, "2.53"):
        return ComputeNode.hypervisor_hostname.like(f"%{pattern}%")
    return None


def list_hypervisors_detail(req):
    authorize(req, "os_compute_api:os-hypervisors:list-detail")
    with db.reader() as s:
        rows = _load(s, _match(req))
    return respond(req, {"hypervisors": [_detail(req, n, sv) for n, sv in rows]})


def show_hypervisor(req):
    authorize(req, "os_compute_api:os-hypervisors:show")
    ident = req.params["hypervisor_id"]
    with db.reader() as s:
        cond = ComputeNode.uuid == ident if at_least(req, "2.53") else (
            ComputeNode.id == int(ident) if ident.isdigit() else sa.false())
        rows = _load(s, cond)
        if not rows:
            raise exceptions.NotFound(f"Hypervisor with ID '{ident}' could not be found.")
        node, svc = rows[0]
        out = _detail(req, node, svc)
        if at_least(req, "2.53") and req.query.get("with_servers", "").lower() in ("true", "1"):
            out["servers"] = [{"uuid": u, "name": n} for u, n in s.execute(
                sa.select(Instance.uuid, Instance.display_name).where(
                    Instance.host == node.host, Instance.deleted.is_(False)))]
    return respond(req, {"hypervisor": out})


def statistics(req):
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
            ComputeNode.id == int(ident) if ident.isdigit() else sa.false())
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
