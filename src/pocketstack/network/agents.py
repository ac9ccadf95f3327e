"""Neutron's agents API (GET/PUT/DELETE /v2.0/agents…) from heartbeats.

Every agent reports its state over RPC (agent_rpc.py: ``report_state``) every
``[network] report_interval`` seconds; the report is one row per (host, binary) in
network_agents, whose id is derived from both, so an agent that restarts keeps its id and
what an admin set on it. ``alive`` is the last heartbeat against ``[network]
agent_down_time``, as neutron. The kinds reported: the network service's DHCP and L3
roles (on the host the network service runs on), and per host agent a Linux bridge agent
and, where it proxies metadata, a Metadata agent.
"""
from __future__ import annotations

import datetime as dt
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.common.timeutils import utcnow
from pocketstack.network import agent as host_agent
from pocketstack.network import agent_hosts
from pocketstack.network import base
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.inventory import AVAILABILITY_ZONE, matches
from pocketstack.network.agent_hosts import LINUXBRIDGE_AGENT
from pocketstack.network.models import (FloatingIP, NetworkAgent, Port, Router,
                                        RouterL3AgentBinding, Subnet)

DHCP_AGENT, L3_AGENT = "DHCP agent", "L3 agent"
METADATA_AGENT = "Metadata agent"
# agent_type: (binary, topic, in an availability zone) as neutron's agents report them
KINDS = {
    DHCP_AGENT: ("neutron-dhcp-agent", "dhcp_agent", True),
    L3_AGENT: ("neutron-l3-agent", "l3_agent", True),
    LINUXBRIDGE_AGENT: ("neutron-linuxbridge-agent", "N/A", False),
    METADATA_AGENT: ("neutron-metadata-agent", "N/A", False),
}


def agent_id(host: str, binary: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pocketstack:{host}:{binary}"))


def _neutron_time(value: dt.datetime | None) -> str | None:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else None  # no T, no zone


def is_alive(row: NetworkAgent, now: dt.datetime | None = None) -> bool:
    if row.heartbeat_timestamp is None:
        return False
    age = ((now or utcnow()) - row.heartbeat_timestamp).total_seconds()
    return age <= config.CONF.network.agent_down_time


# --- heartbeats ------------------------------------------------------------------------

def report_state(state: dict) -> dict:
    """Record one heartbeat: ``state`` has agent_type, host, configurations, and
    start_flag on an agent's first report after it started. Returns the agent's id,
    admin_state_up and status (new, alive or revived, as neutron's)."""
    if not isinstance(state, dict) or state.get("agent_type") not in KINDS:
        raise exc.BadRequest("agent", f"unknown agent_type {state.get('agent_type')!r}"
                             if isinstance(state, dict) else "state must be an object")
    host = state.get("host")
    if not isinstance(host, str) or not host or len(host) > 255:
        raise exc.BadRequest("agent", "host must be a non-empty string")
    configurations = state.get("configurations")
    if configurations is None:
        configurations = {}
    if not isinstance(configurations, dict):
        raise exc.BadRequest("agent", "configurations must be an object")
    binary, topic, zoned = KINDS[state["agent_type"]]
    this_id = agent_id(host, binary)
    now = utcnow()
    with db.transaction() as s:
        row = s.get(NetworkAgent, this_id)
        if row is None:
            row = NetworkAgent(id=this_id, admin_state_up=True)
            s.add(row)
        status = ("new" if row.heartbeat_timestamp is None
                  else "alive" if is_alive(row, now) else "revived")
        vtep = agent_hosts.tunneling_ip(configurations)
        moved = vtep is not None and (status != "alive" or vtep != agent_hosts.tunneling_ip(
            row.configurations))
        row.agent_type, row.binary, row.topic, row.host = state["agent_type"], binary, topic, host
        row.availability_zone = AVAILABILITY_ZONE if zoned else None
        row.configurations = configurations
        row.resources_synced = state.get("resources_synced")
        if row.created_at is None:
            row.created_at = now
        if state.get("start_flag") or row.started_at is None:
            row.started_at = now
        row.heartbeat_timestamp = now
        answer = {"id": this_id, "admin_state_up": row.admin_state_up, "status": status}
    if status != "alive":
        agent_hosts.forget()
    if moved:
        # a VTEP came (or came back, or moved): every agent's overlay entries follow,
        # the reporting agent's own included (it planned before the service knew it)
        host_agent.changed(also=(host,))
    return answer


def network_node_states(host: str) -> list[dict]:
    """The heartbeats of the network service's own roles on ``host``: the DHCP agent (it
    writes every network's dnsmasq files, dhcp.py) and the L3 agent (every router)."""
    with db.reader() as s:
        def count(query) -> int:
            return s.scalar(sa.select(sa.func.count()).select_from(query.subquery()))

        networks = len(_dhcp_network_ids(s))
        subnets = count(sa.select(Subnet.id).where(Subnet.enable_dhcp.is_(True)))
        ports = count(sa.select(Port.id))
        routers = count(sa.select(Router.id).where(~sa.exists().where(  # its own
            RouterL3AgentBinding.router_id == Router.id,
            sa.or_(RouterL3AgentBinding.l3_agent_id.is_(None),
                   RouterL3AgentBinding.l3_agent_id != agent_id(host, KINDS[L3_AGENT][0])))))
        gateways = count(sa.select(Router.id).where(Router.gw_port_id.is_not(None)))
        interfaces = count(sa.select(Port.id).where(
            Port.device_owner == "network:router_interface"))
        floating_ips = count(sa.select(FloatingIP.id).where(FloatingIP.fixed_port_id.is_not(None)))
    return [
        {"agent_type": DHCP_AGENT, "host": host, "configurations": {
            "dhcp_driver": "neutron.agent.linux.dhcp.Dnsmasq", "dhcp_lease_duration": 86400,
            "log_agent_heartbeats": False, "networks": networks, "subnets": subnets,
            "ports": ports}},
        {"agent_type": L3_AGENT, "host": host, "configurations": {
            "agent_mode": "legacy", "gateway_external_network_id": "",
            "handle_internal_only_routers": True, "log_agent_heartbeats": False,
            "routers": routers, "ex_gw_ports": gateways, "interfaces": interfaces,
            "floating_ips": floating_ips}},
    ]


# --- the API ---------------------------------------------------------------------------

def _view(row: NetworkAgent, now: dt.datetime) -> dict:
    return {
        "id": row.id, "agent_type": row.agent_type, "binary": row.binary,
        "topic": row.topic, "host": row.host, "availability_zone": row.availability_zone,
        "admin_state_up": row.admin_state_up, "alive": is_alive(row, now),
        "description": row.description, "resources_synced": row.resources_synced,
        "configurations": row.configurations or {},
        "created_at": _neutron_time(row.created_at),
        "started_at": _neutron_time(row.started_at),
        "heartbeat_timestamp": _neutron_time(row.heartbeat_timestamp), "ha_state": None,
    }


def _all(agent_type: str | None = None) -> list[dict]:
    now = utcnow()
    query = sa.select(NetworkAgent).where(NetworkAgent.binary.is_not(None)).order_by(
        NetworkAgent.host, NetworkAgent.agent_type)
    if agent_type is not None:
        query = query.where(NetworkAgent.agent_type == agent_type)
    with db.reader() as s:
        return [_view(row, now) for row in s.scalars(query)]


# Agents are for admins (neutron's policy): others list none, as neutron filters out
# every row its policy hides, and a show is a 404.

def list_agents(ctx, params) -> list[dict]:
    if not base.sees_all(ctx):
        return []
    return [a for a in _all() if matches(a, params)]


def get_agent(ctx, agent_id_: str) -> dict:
    if base.sees_all(ctx):
        with db.reader() as s:
            row = s.get(NetworkAgent, agent_id_)
            if row is not None and row.binary is not None:
                return _view(row, utcnow())
    raise exc.AgentNotFound(agent_id_)


AGENT_ATTRS = {"admin_state_up": v.Attr(v.boolean),
               "description": v.Attr(v.string(nullable=True))}


def update_agent(ctx, agent_id_: str, body) -> dict:
    """PUT /v2.0/agents/{id}: admin_state_up and description."""
    values = v.parse(v.resource_body(body, "agent"), AGENT_ATTRS, update=True)
    get_agent(ctx, agent_id_)  # 404 for whoever may not see it, as neutron
    base.authorize(ctx, "update_agent", {"project_id": ctx.project_id})
    with db.transaction() as s:
        row = s.get(NetworkAgent, agent_id_)
        if row is None:
            raise exc.AgentNotFound(agent_id_)
        for key, value in values.items():
            setattr(row, key, value)
    return get_agent(ctx, agent_id_)


def delete_agent(ctx, agent_id_: str) -> None:
    """DELETE /v2.0/agents/{id}: only an agent that stopped reporting (neutron's API
    says agents are removed when dead for good; a live one would come straight back)."""
    agent = get_agent(ctx, agent_id_)
    base.authorize(ctx, "delete_agent", {"project_id": ctx.project_id})
    if agent["alive"]:
        raise exc.AgentAlive(agent_id_)
    with db.transaction() as s:
        s.execute(sa.delete(NetworkAgent).where(NetworkAgent.id == agent_id_))
        # its routers are hosted nowhere now (neutron's bindings go with the agent)
        s.execute(sa.update(RouterL3AgentBinding).where(
            RouterL3AgentBinding.l3_agent_id == agent_id_).values(l3_agent_id=None))


# --- which agent hosts what: every DHCP agent serves every network with a DHCP port
# (one network node); which L3 agent hosts a router is l3_scheduling.py.

def _dhcp_network_ids(s) -> set[str]:
    return set(s.scalars(sa.select(Port.network_id).where(
        Port.device_owner == "network:dhcp").distinct()))


def networks_on_dhcp_agent(ctx, agent_id_: str) -> list[dict]:
    from pocketstack.network import networks  # noqa: PLC0415 (networks imports much)

    agent = get_agent(ctx, agent_id_)
    base.authorize(ctx, "get_dhcp-networks", {"project_id": ctx.project_id})
    if agent["agent_type"] != DHCP_AGENT:
        return []  # as neutron: no network is bound to it
    with db.reader() as s:
        ids = _dhcp_network_ids(s)
    return [n for n in networks.list_networks(ctx, {})[0] if n["id"] in ids]


def dhcp_agents_hosting_network(ctx, network_id: str) -> list[dict]:
    from pocketstack.network import networks  # noqa: PLC0415

    networks.get_network(ctx, network_id)
    base.authorize(ctx, "get_dhcp-agents", {"project_id": ctx.project_id})
    with db.reader() as s:
        hosted = network_id in _dhcp_network_ids(s)
    return _all(DHCP_AGENT) if hosted else []
