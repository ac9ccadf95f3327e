"""Which L3 agent hosts a router, as stored: no row is the network service's own L3 agent
(every router is scheduled there when made), a row names another agent, or none (an
unhosted router). The API over it is l3_scheduling.py; the network node plumbs what its
agent hosts (host_plans.routers_for).
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config
from pocketstack.network import agents
from pocketstack.network.models import NetworkAgent, RouterL3AgentBinding


def own_agent_id() -> str:
    """The network service's own L3 agent (agents.network_node_states reports it)."""
    return agents.agent_id(config.CONF.host, agents.KINDS[agents.L3_AGENT][0])


def hosting_agent_id(s, router_id: str) -> str | None:
    row = s.get(RouterL3AgentBinding, router_id)
    return own_agent_id() if row is None else row.l3_agent_id


def not_hosted_here(s) -> set[str]:
    """Routers the network service's own L3 agent does not host (moved or unhosted)."""
    own = own_agent_id()
    return set(s.scalars(sa.select(RouterL3AgentBinding.router_id).where(sa.or_(
        RouterL3AgentBinding.l3_agent_id.is_(None),
        RouterL3AgentBinding.l3_agent_id != own))))


def bind(s, router_id: str, agent_id: str | None) -> None:
    row = s.get(RouterL3AgentBinding, router_id)
    if row is None:
        s.add(RouterL3AgentBinding(router_id=router_id, l3_agent_id=agent_id))
    else:
        row.l3_agent_id = agent_id


def schedule_if_unhosted(s, router_id: str) -> None:
    """neutron schedules routers on every change it notifies (schedule_routers): an
    unhosted router goes to an enabled, live L3 agent, the service's own first, else the
    one hosting fewest; with none it stays unhosted."""
    row = s.get(RouterL3AgentBinding, router_id)
    if row is None or row.l3_agent_id is not None:
        return
    candidates = [a for a in s.scalars(sa.select(NetworkAgent).where(
        NetworkAgent.agent_type == agents.L3_AGENT, NetworkAgent.admin_state_up.is_(True)))
        if agents.is_alive(a)]
    if not candidates:
        return
    own = own_agent_id()
    load = dict(s.execute(sa.select(RouterL3AgentBinding.l3_agent_id, sa.func.count())
                          .group_by(RouterL3AgentBinding.l3_agent_id)).all())
    best = min(candidates, key=lambda a: (a.id != own, load.get(a.id, 0), a.id))
    row.l3_agent_id = best.id
