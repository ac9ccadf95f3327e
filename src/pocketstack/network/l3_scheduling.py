"""Which L3 agent hosts each router (neutron's l3_agent_scheduler extension):
GET /v2.0/agents/{id}/l3-routers, POST there with {"router_id": ...}, DELETE
/v2.0/agents/{id}/l3-routers/{router_id} and GET /v2.0/routers/{id}/l3-agents.

Every router is scheduled, when made, to the network service's own L3 agent (the one
network node plumbs routers: host_plans.routers_for). An admin may take a router off its
agent, leaving it unhosted (the network node tears its namespace down), and put it on an
L3 agent again, this one or another; the router's next change schedules an unhosted one
again, as neutron's (l3_hosting.schedule_if_unhosted). As neutron's legacy (non-HA)
routers: a router has at most one agent, adding it to the agent that hosts it is no
change, adding it to another while it is hosted is RouterHostedByL3Agent, and removing it
from an agent that does not host it is no error.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import agent as host_agent
from pocketstack.network import agents, base, routers
from pocketstack.network import exceptions as exc
from pocketstack.network.l3_hosting import (bind, hosting_agent_id, not_hosted_here,
                                            own_agent_id)
from pocketstack.network.models import RouterL3AgentBinding


def routers_on_agent(ctx, agent_id: str) -> list[dict]:
    agents.get_agent(ctx, agent_id)  # 404 for a missing agent, as neutron
    base.authorize(ctx, "get_l3-routers", {"project_id": ctx.project_id})
    with db.reader() as s:
        if agent_id == own_agent_id():  # every router but those moved or taken off
            elsewhere = not_hosted_here(s)
            return [r for r in routers.list_routers(ctx, {})[0] if r["id"] not in elsewhere]
        ids = sorted(s.scalars(sa.select(RouterL3AgentBinding.router_id).where(
            RouterL3AgentBinding.l3_agent_id == agent_id)))
    return routers.list_routers(ctx, {"id": ids})[0] if ids else []


def agents_hosting_router(ctx, router_id: str) -> list[dict]:
    routers.get_router(ctx, router_id)
    base.authorize(ctx, "get_l3-agents", {"project_id": ctx.project_id})
    with db.reader() as s:
        agent_id = hosting_agent_id(s, router_id)
    if agent_id is None:
        return []
    try:
        return [agents.get_agent(ctx, agent_id)]
    except exc.AgentNotFound:  # its agent has not reported yet, or was deleted
        return []


def add_router_to_agent(ctx, agent_id: str, body) -> None:
    agent = agents.get_agent(ctx, agent_id)
    base.authorize(ctx, "create_l3-router", {"project_id": ctx.project_id})
    router_id = body.get("router_id") if isinstance(body, dict) else None
    if not isinstance(router_id, str):
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'router_id' "
                                 "not specified")
    # neutron's validate_agent_router_combination: an L3 agent, and enabled
    if agent["agent_type"] != agents.L3_AGENT or not agent["admin_state_up"]:
        raise exc.InvalidL3Agent(agent_id)
    with db.transaction() as s:
        routers.get_row(s, ctx, router_id, lock=True)
        current = hosting_agent_id(s, router_id)
        if current == agent_id:
            return  # already there: nothing to schedule
        if current is not None:
            raise exc.RouterHostedByL3Agent(router_id, current)
        bind(s, router_id, agent_id)
    host_agent.changed()  # the network node plumbs it, if it is its agent


def remove_router_from_agent(ctx, agent_id: str, router_id: str) -> None:
    agents.get_agent(ctx, agent_id)
    base.authorize(ctx, "delete_l3-router", {"project_id": ctx.project_id})
    with db.transaction() as s:
        routers.get_row(s, ctx, router_id, lock=True)
        if hosting_agent_id(s, router_id) != agent_id:
            return  # neutron unbinds what is bound: nothing
        bind(s, router_id, None)
    host_agent.changed()  # the network node tears it down
