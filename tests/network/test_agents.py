"""Neutron's agents API from heartbeats (network/agents.py, agent_rpc.py): the network
service's own DHCP and L3 agents report over RPC like any other agent; an agent that stops
reporting turns dead after [network] agent_down_time and only then can be deleted."""
from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from network_helpers import unique
from openstack import exceptions as sdk_exc

from pocketstack.common import config, db
from pocketstack.common.timeutils import utcnow
from pocketstack.network import agent_rpc, agents
from pocketstack.network.models import NetworkAgent


def _report(host: str, agent_type: str = "Linux bridge agent", **extra) -> dict:
    return agent_rpc.NetworkServiceClient().report_state(
        {"agent_type": agent_type, "host": host, "configurations": {"devices": 3}, **extra})


def _age(agent_id: str, seconds: float) -> None:
    """As if the agent's last heartbeat were ``seconds`` old."""
    with db.transaction() as s:
        s.execute(sa.update(NetworkAgent).where(NetworkAgent.id == agent_id).values(
            heartbeat_timestamp=utcnow() - dt.timedelta(seconds=seconds)))


def test_network_node_agents_as_neutron_shows_them(admin_conn, member_conn, raw):
    host = config.CONF.host
    listed = {a.agent_type: a for a in admin_conn.network.agents(host=host)}
    assert {"DHCP agent", "L3 agent"} <= set(listed)
    dhcp, l3 = listed["DHCP agent"], listed["L3 agent"]
    assert (dhcp.binary, dhcp.topic, dhcp.availability_zone) == (
        "neutron-dhcp-agent", "dhcp_agent", "nova")
    assert (l3.binary, l3.topic) == ("neutron-l3-agent", "l3_agent")
    assert dhcp.is_alive and dhcp.is_admin_state_up and l3.is_alive
    assert {"networks", "subnets", "ports"} <= set(dhcp.configuration)
    assert {"routers", "floating_ips", "agent_mode"} <= set(l3.configuration)
    shown = raw("GET", f"/agents/{dhcp.id}").json()["agent"]
    for field in ("heartbeat_timestamp", "started_at", "created_at"):
        dt.datetime.strptime(shown[field], "%Y-%m-%d %H:%M:%S")  # neutron's: no T, no zone
    assert "resources_synced" in shown
    assert list(member_conn.network.agents()) == []  # admin only, as neutron's policy
    # filters, as neutron's
    assert [a.agent_type for a in admin_conn.network.agents(agent_type="L3 agent")] and all(
        a.agent_type == "L3 agent" for a in admin_conn.network.agents(agent_type="L3 agent"))


def test_heartbeats_liveness_and_delete(admin_conn, raw):
    host = unique("cmp")
    first = _report(host, start_flag=True)
    assert first["status"] == "new"
    agent = admin_conn.network.get_agent(first["id"])
    assert (agent.host, agent.binary, agent.topic) == (host, "neutron-linuxbridge-agent", "N/A")
    assert agent.is_alive and agent.availability_zone is None
    assert agent.configuration == {"devices": 3}
    # a live agent is not deleted: it would register again at its next heartbeat
    response = raw("DELETE", f"/agents/{agent.id}")
    assert response.status_code == 409
    assert response.json()["NeutronError"]["type"] == "AgentAlive"
    # what an admin sets stays through heartbeats
    admin_conn.network.update_agent(agent, is_admin_state_up=False, description="drain")
    assert _report(host)["admin_state_up"] is False
    _age(agent.id, config.CONF.network.agent_down_time + 1)
    dead = admin_conn.network.get_agent(agent.id)
    assert dead.is_alive is False and dead.description == "drain"
    assert _report(host)["status"] == "revived"
    assert admin_conn.network.get_agent(agent.id).is_alive
    _age(agent.id, config.CONF.network.agent_down_time + 1)
    admin_conn.network.delete_agent(agent)
    with pytest.raises(sdk_exc.NotFoundException):
        admin_conn.network.get_agent(agent.id)
    # a dead agent's host that comes back registers again, under the same id
    again = _report(host)
    assert (again["id"], again["status"], again["admin_state_up"]) == (agent.id, "new", True)
    _age(agent.id, 3600)
    admin_conn.network.delete_agent(agent)


def test_bad_input(raw, member_raw):
    for method, body in (("GET", None), ("PUT", {"agent": {"description": "x"}}),
                         ("DELETE", None)):
        response = raw(method, "/agents/no-such-agent", body)
        assert response.status_code == 404, method
        assert response.json()["NeutronError"]["type"] == "AgentNotFound"
    dhcp_id = agents.agent_id(config.CONF.host, "neutron-dhcp-agent")
    for body in ({"agent": {"host": "x"}}, {"agent": {"admin_state_up": "maybe"}},
                 {"agent": {"description": 5}}, {"agent": []}, [], {"nope": {}}):
        assert raw("PUT", f"/agents/{dhcp_id}", body).status_code == 400, body
    assert member_raw("DELETE", f"/agents/{dhcp_id}").status_code == 404
    assert raw("POST", "/agents", {"agent": {}}).status_code in (404, 405)
    # what an agent reports is checked too
    for state in ({"agent_type": "Open vSwitch agent", "host": "h"},
                  {"agent_type": "DHCP agent", "host": ""},
                  {"agent_type": "DHCP agent", "host": "h", "configurations": []}):
        with pytest.raises(Exception) as error:
            agent_rpc.NetworkServiceClient().report_state(state)
        assert "Bad agent request" in str(error.value)


def test_dhcp_networks_and_agents(admin_conn, raw):
    network = admin_conn.network.create_network(name=unique("n"))
    try:
        dhcp = next(a for a in admin_conn.network.agents(host=config.CONF.host)
                    if a.agent_type == "DHCP agent")
        assert raw("GET", f"/networks/{network.id}/dhcp-agents").json()["agents"] == []
        admin_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                         cidr="10.77.0.0/24")
        hosting = list(admin_conn.network.network_hosting_dhcp_agents(network))
        assert dhcp.id in [a.id for a in hosting]
        assert network.id in [n.id for n in admin_conn.network.dhcp_agent_hosting_networks(
            dhcp)]
        l3 = next(a for a in admin_conn.network.agents(host=config.CONF.host)
                  if a.agent_type == "L3 agent")
        assert raw("GET", f"/agents/{l3.id}/dhcp-networks").json()["networks"] == []
        assert raw("GET", "/networks/no-such/dhcp-agents").status_code == 404
    finally:
        admin_conn.network.delete_network(network)


@pytest.mark.cli
def test_openstack_network_agent_cli(cloud):
    host = unique("cmp")
    agent_id = _report(host, start_flag=True)["id"]
    listed = cloud.cli("network", "agent", "list", "--host", host, "-f", "json")
    assert [(a["ID"], a["Agent Type"], a["Host"], a["Alive"], a["State"]) for a in listed] \
        == [(agent_id, "Linux bridge agent", host, True, True)]
    cloud.cli("network", "agent", "set", "--disable", "--description", "off", agent_id)
    shown = cloud.cli("network", "agent", "show", agent_id, "-f", "json")
    assert (shown["admin_state_up"], shown["description"]) == (False, "off")
    _age(agent_id, 3600)
    listed = cloud.cli("network", "agent", "list", "--host", host, "-f", "json")
    assert listed[0]["Alive"] is False
    cloud.cli("network", "agent", "delete", agent_id, parse=False)
    assert cloud.cli("network", "agent", "list", "--host", host, "-f", "json") == []


def test_what_an_agent_is_told_to_plumb(admin_conn):
    """host_state / network_plan / firewall_state (host_plans.py over RPC): a compute
    host gets bridges only, and its ports' security groups; bad input is refused."""
    from pocketstack.common.context import RequestContext

    service = agent_rpc.NetworkServiceClient()
    host = unique("cmp")
    network = admin_conn.network.create_network(name=unique("n"))
    try:
        admin_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                         cidr="10.78.0.0/24")
        assert service.host_state([host]) == ([], {}, False)
        admin_conn.network.create_port(network_id=network.id, binding_host_id=host)
        plans, routers, network_node = service.host_state([host])
        assert [p.network_id for p in plans] == [network.id] and not network_node
        assert plans[0].dhcp_port_id is None  # DHCP is the network node's
        assert service.network_plan(network.id, [host]) == plans[0]
        assert service.network_plan("no-such-network", [host]) is None
        ports, rules, members, host_taps, _, _ = service.firewall_state([host])
        assert [p.network_id for p in ports] == [network.id] and rules and host_taps == []
        for kwargs in ({"hosts": "cmp"}, {"hosts": [""]}, {"hosts": [3]}):
            with pytest.raises(Exception) as error:
                service.client.call(RequestContext.admin(), "host_state", **kwargs)
            assert "hosts must be a list" in str(error.value)
        with pytest.raises(Exception):
            service.client.call(RequestContext.admin(), "network_plan", network_id=5,
                                hosts=[host])
        # a network node in another process reads the DHCP files over RPC
        port = next(admin_conn.network.ports(network_id=network.id,
                                             device_owner=""))
        files = service.dhcp_files([network.id, "no-such-network"])
        assert files["no-such-network"] is None
        assert port.mac_address in files[network.id]["host"]
        assert set(files[network.id]) == {"host", "addn_hosts", "opts", "leases"}
        for bad in ("x", [1], None):
            with pytest.raises(Exception) as error:
                service.client.call(RequestContext.admin(), "dhcp_files", network_ids=bad)
            assert "network_ids must be a list" in str(error.value)
    finally:
        for port in admin_conn.network.ports(network_id=network.id):
            admin_conn.network.delete_port(port)
        admin_conn.network.delete_network(network)
