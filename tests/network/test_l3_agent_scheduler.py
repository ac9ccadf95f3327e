"""Which L3 agent hosts a router (l3_agent_scheduler, network/l3_scheduling.py): an admin
takes a router off its agent and puts it on another one, through openstacksdk and the
`openstack network agent add/remove router` commands."""
from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from network_helpers import unique

from pocketstack.common import config, db
from pocketstack.common.timeutils import utcnow
from pocketstack.network import agent_rpc
from pocketstack.network.models import NetworkAgent


def _own_l3(conn):
    return next(a for a in conn.network.agents(host=config.CONF.host)
                if a.agent_type == "L3 agent")


def _delete_agent(conn, agent_id: str) -> None:
    """As an admin does with an agent that stopped reporting for good."""
    with db.transaction() as s:
        s.execute(sa.update(NetworkAgent).where(NetworkAgent.id == agent_id).values(
            heartbeat_timestamp=utcnow() - dt.timedelta(hours=1)))
    conn.network.delete_agent(agent_id, ignore_missing=True)


@pytest.fixture
def other_l3(admin_conn):
    """A second L3 agent, from its heartbeat; gone (dead, then deleted) afterwards."""
    answer = agent_rpc.NetworkServiceClient().report_state(
        {"agent_type": "L3 agent", "host": unique("net"), "configurations": {}})
    yield admin_conn.network.get_agent(answer["id"])
    _delete_agent(admin_conn, answer["id"])


def _hosting(conn, router) -> list[str]:
    return [a.id for a in conn.network.routers_hosting_l3_agents(router)]


def _hosted(conn, agent) -> set[str]:
    return {r.id for r in conn.network.agent_hosted_routers(agent)}


def test_move_a_router_between_l3_agents(admin_conn, member_conn, other_l3, raw):
    net = admin_conn.network
    router = member_conn.network.create_router(name=unique("r"))
    own = _own_l3(admin_conn)
    assert _hosting(admin_conn, router) == [own.id]
    # adding it where it is is no change
    net.add_router_to_agent(own, router)
    assert _hosting(admin_conn, router) == [own.id]
    # a router is on one agent at a time
    status, fault = raw.error("POST", f"/agents/{other_l3.id}/l3-routers",
                              {"router_id": router.id})
    assert (status, fault["type"]) == (409, "RouterHostedByL3Agent")
    assert own.id in fault["message"]
    # off its agent: hosted nowhere
    net.remove_router_from_agent(own, router)
    assert _hosting(admin_conn, router) == []
    assert router.id not in _hosted(admin_conn, own)
    # onto the other agent
    net.add_router_to_agent(other_l3, router)
    assert _hosting(admin_conn, router) == [other_l3.id]
    assert _hosted(admin_conn, other_l3) == {router.id}
    assert router.id not in _hosted(admin_conn, own)
    # removing it from an agent that does not host it changes nothing, as neutron
    assert raw("DELETE", f"/agents/{own.id}/l3-routers/{router.id}").status_code == 204
    assert _hosting(admin_conn, router) == [other_l3.id]
    # and back
    net.remove_router_from_agent(other_l3, router)
    net.add_router_to_agent(own, router)
    assert _hosting(admin_conn, router) == [own.id]
    member_conn.network.delete_router(router)


def test_an_unhosted_router_is_scheduled_at_its_next_change(admin_conn, member_conn,
                                                           other_l3):
    """As neutron's schedule_routers on a router's notification: to a live, enabled L3
    agent; a router hosted somewhere stays where it is."""
    router = member_conn.network.create_router(name=unique("r"))
    own = _own_l3(admin_conn)
    admin_conn.network.remove_router_from_agent(own, router)
    assert _hosting(admin_conn, router) == []
    member_conn.network.update_router(router, name=unique("r"))
    assert _hosting(admin_conn, router) == [own.id]
    # on the other agent it stays through changes; taken off while the service's own
    # agent is disabled, its next change puts it on the other one
    admin_conn.network.remove_router_from_agent(own, router)
    admin_conn.network.update_agent(own, is_admin_state_up=False)
    try:
        member_conn.network.update_router(router, description="moved")
        assert _hosting(admin_conn, router) == [other_l3.id]
    finally:
        admin_conn.network.update_agent(own, is_admin_state_up=True)
    member_conn.network.update_router(router, description="stays")
    assert _hosting(admin_conn, router) == [other_l3.id]
    member_conn.network.delete_router(router)


def test_routers_of_a_deleted_agent_are_hosted_nowhere(admin_conn, other_l3):
    net = admin_conn.network
    router = net.create_router(name=unique("r"))
    own = _own_l3(admin_conn)
    net.remove_router_from_agent(own, router)
    net.add_router_to_agent(other_l3, router)
    _delete_agent(admin_conn, other_l3.id)
    assert _hosting(admin_conn, router) == []
    net.add_router_to_agent(own, router)
    assert _hosting(admin_conn, router) == [own.id]
    net.delete_router(router)


def test_scheduling_errors(admin_conn, member_conn, raw, member_raw):
    router = member_conn.network.create_router(name=unique("r"))
    own = _own_l3(admin_conn)
    dhcp = next(a for a in admin_conn.network.agents(host=config.CONF.host)
                if a.agent_type == "DHCP agent")
    path = f"/agents/{own.id}/l3-routers"
    cases = [
        (f"/agents/{dhcp.id}/l3-routers", {"router_id": router.id}, 404, "InvalidL3Agent"),
        (path, {"router_id": "no-such-router"}, 404, "RouterNotFound"),
        ("/agents/no-such-agent/l3-routers", {"router_id": router.id}, 404, "AgentNotFound"),
    ]
    for url, body, status, kind in cases:
        assert raw.error("POST", url, body)[:1] == (status,), url
        assert raw.error("POST", url, body)[1]["type"] == kind, url
    for body in ({}, {"router_id": 5}, [], None):
        assert raw("POST", path, body).status_code == 400, body
    assert raw.error("DELETE", f"{path}/no-such-router")[1]["type"] == "RouterNotFound"
    assert raw("GET", f"/agents/{dhcp.id}/l3-routers").json()["routers"] == []
    # a disabled agent gets no router
    admin_conn.network.remove_router_from_agent(own, router)
    admin_conn.network.update_agent(own, is_admin_state_up=False)
    try:
        status, fault = raw.error("POST", path, {"router_id": router.id})
        assert (status, fault["type"]) == (404, "InvalidL3Agent")
    finally:
        admin_conn.network.update_agent(own, is_admin_state_up=True)
    admin_conn.network.add_router_to_agent(own, router)
    # admin only, as neutron's policy
    assert member_raw("POST", path, {"router_id": router.id}).status_code == 404
    assert member_raw("DELETE", f"{path}/{router.id}").status_code == 404
    assert member_raw("GET", f"/routers/{router.id}/l3-agents").status_code == 403
    assert _hosting(admin_conn, router) == [own.id]
    member_conn.network.delete_router(router)


@pytest.mark.cli
def test_openstack_network_agent_add_remove_router(cloud, admin_conn):
    router = admin_conn.network.create_router(name=unique("r"))
    own = _own_l3(admin_conn)

    def listed() -> list[str]:
        return [a["ID"] for a in cloud.cli("network", "agent", "list", "--router",
                                           router.id, "-f", "json")]

    assert listed() == [own.id]
    cloud.cli("network", "agent", "remove", "router", "--l3", own.id, router.id)
    assert listed() == []
    cloud.cli("network", "agent", "add", "router", "--l3", own.id, router.id)
    assert listed() == [own.id]
    cloud.cli("network", "agent", "add", "router", "--l3", own.id, router.id)
    assert listed() == [own.id]
    admin_conn.network.delete_router(router)
