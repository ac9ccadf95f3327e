"""Views of what serves the network API, as neutron reports it: availability zones,
service providers and IP availability per network (the agents are agents.py, from their
heartbeats; segments segments.py).
"""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import base
from pocketstack.network import exceptions as exc
from pocketstack.network.models import IPAllocation, Network, Subnet

AVAILABILITY_ZONE = "nova"
SERVICE_PROVIDERS = [{"service_type": "L3_ROUTER_NAT", "name": "pocketstack", "default": True}]


def matches(item: dict, params: dict[str, list[str]]) -> bool:
    """Neutron's equality filters over an in-memory view (``fields``, paging ignored)."""
    for key, wanted in params.items():
        if key not in item or isinstance(item[key], (dict, list)):
            continue
        value = item[key]
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        if shown not in [w.lower() if isinstance(value, bool) else w for w in wanted]:
            return False
    return True


def list_availability_zones(ctx, params) -> list[dict]:
    zones = [{"name": AVAILABILITY_ZONE, "resource": resource, "state": "available"}
             for resource in ("network", "router")]
    return [z for z in zones if matches(z, params)]


def list_service_providers(ctx, params) -> list[dict]:
    return [p for p in SERVICE_PROVIDERS if matches(p, params)]


# --- IP availability ---------------------------------------------------------------

def _pool_size(subnet: Subnet) -> int:
    return sum(int(ipaddress.ip_address(p["end"])) - int(ipaddress.ip_address(p["start"])) + 1
               for p in subnet.allocation_pools or [])


def _availability(network: Network, used_by_subnet: dict[str, int]) -> dict:
    subnets = [{"subnet_id": s.id, "subnet_name": s.name, "cidr": s.cidr,
                "ip_version": s.ip_version, "total_ips": _pool_size(s),
                "used_ips": used_by_subnet.get(s.id, 0)} for s in network.subnets]
    return {"network_id": network.id, "network_name": network.name,
            **base.project_view(network.project_id), "subnet_ip_availability": subnets,
            "total_ips": sum(s["total_ips"] for s in subnets),
            "used_ips": sum(s["used_ips"] for s in subnets)}


def _used(s, network_ids: list[str]) -> dict[str, int]:
    rows = s.execute(sa.select(IPAllocation.subnet_id, sa.func.count())
                     .where(IPAllocation.network_id.in_(network_ids))
                     .group_by(IPAllocation.subnet_id))
    return dict(rows.all())


def list_ip_availabilities(ctx, params) -> list[dict]:
    if not base.sees_all(ctx):
        return []
    query = sa.select(Network).order_by(Network.created_at)
    for key, column in (("network_id", Network.id), ("network_name", Network.name),
                        ("project_id", Network.project_id), ("tenant_id", Network.project_id)):
        if params.get(key):
            query = query.where(column.in_(params[key]))
    with db.reader() as s:
        networks = list(s.scalars(query))
        used = _used(s, [n.id for n in networks])
        out = [_availability(n, used) for n in networks]
    if params.get("ip_version"):
        versions = set(params["ip_version"])
        out = [a for a in out
               if any(str(s["ip_version"]) in versions for s in a["subnet_ip_availability"])]
    return out


def get_ip_availability(ctx, network_id: str) -> dict:
    with db.reader() as s:
        network = s.get(Network, network_id)
        if network is None or not base.sees_all(ctx):
            raise exc.NetworkNotFound(network_id)
        return _availability(network, _used(s, [network_id]))
