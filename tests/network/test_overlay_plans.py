"""L2population's server half (network/l2pop.py, host_plans.py): what the network
service tells each host's agent about a vxlan network — the VTEPs to flood to (other
hosts with the network, nobody else) and each remote port's MAC -> VTEP — from port
bindings and the tunneling_ip agents report. No agent runs here: heartbeats are
reported over RPC by hand and bindings written to the table (binding a port to a host
with a live agent would call that agent)."""
from __future__ import annotations

import sqlalchemy as sa
from network_helpers import unique

from pocketstack.common import config, db
from pocketstack.network import agent_hosts, agent_rpc, host_plans
from pocketstack.network.models import NetworkAgent, Port


def _report(host: str, vtep: str | None) -> None:
    configurations = {"tunneling_ip": vtep, "tunnel_types": ["vxlan"]} if vtep else {}
    agent_rpc.NetworkServiceClient().report_state(
        {"agent_type": "Linux bridge agent", "host": host, "configurations": configurations})


def _bind(port_id: str, host: str | None) -> None:
    with db.transaction() as s:
        s.execute(sa.update(Port).where(Port.id == port_id).values(host_id=host))


def _forget_agents(hosts) -> None:
    with db.transaction() as s:
        s.execute(sa.delete(NetworkAgent).where(  # the node's DHCP and L3 agents stay
            NetworkAgent.host.in_(sorted(hosts)),
            NetworkAgent.agent_type == "Linux bridge agent"))
    agent_hosts.forget()


def _overlay(network_id: str, host: str):
    plan = host_plans.network_plan(network_id, [host])
    return plan["flood"], sorted(tuple(x) for x in plan["fdb"])


def test_flood_list_and_forwarding_entries_follow_bindings(admin_conn):
    a, b, c, plain = (unique(x) for x in ("ova", "ovb", "ovc", "ovplain"))
    node = config.CONF.host  # the network node: DHCP and router ports are bound to it
    vteps = {a: "192.0.2.1", b: "192.0.2.2", c: "192.0.2.3"}
    net = admin_conn.network.create_network(name=unique("ovnet"),
                                            provider_network_type="vxlan")
    subnet = admin_conn.network.create_subnet(network_id=net.id, ip_version=4,
                                              cidr="10.95.0.0/24")  # a DHCP port
    router = admin_conn.network.create_router(name=unique("ovr"))
    try:
        for host, vtep in vteps.items():
            _report(host, vtep)
        _report(plain, None)
        port_a, port_b = (admin_conn.network.create_port(network_id=net.id) for _ in "ab")
        _bind(port_a.id, a)
        _bind(port_b.id, b)
        plan = host_plans.network_plan(net.id, [a])
        assert (plan["network_type"], plan["segmentation_id"]) == (
            "vxlan", net.provider_segmentation_id)
        # A floods to B only (C has no port there), and knows B's port is behind B; the
        # network node reports no VTEP, so its DHCP port is not reachable over the overlay
        assert _overlay(net.id, a) == ([vteps[b]], [(port_b.mac_address, vteps[b])])
        assert _overlay(net.id, b) == ([vteps[a]], [(port_a.mac_address, vteps[a])])
        assert _overlay(net.id, plain) == ([], [])  # no VTEP: no overlay for that host

        # the port moves to C: A's entries follow, B drops out of the flood list
        _bind(port_b.id, c)
        assert _overlay(net.id, a) == ([vteps[c]], [(port_b.mac_address, vteps[c])])

        # a router on the network (bound to the network node before it has an agent: a
        # port bound to a live agent's host is plumbed there at once)
        admin_conn.network.add_interface_to_router(router, subnet_id=subnet.id)
        dhcp_port, = admin_conn.network.ports(network_id=net.id, device_owner="network:dhcp")
        router_port, = admin_conn.network.ports(network_id=net.id,
                                                device_owner="network:router_interface")
        # the router is plumbed at once, its network's bridge with it: no VTEP, no overlay
        state = host_plans.host_state([node])
        assert [(p["network_id"], p["flood"], p["fdb"]) for p in state["networks"]
                if p["network_id"] == net.id] == [(net.id, [], [])]
        assert router.id in {r["router_id"] for r in state["routers"]}
        assert _overlay(net.id, a) == ([vteps[c]], [(port_b.mac_address, vteps[c])])
        _report(node, "192.0.2.9")  # the network node gets a VTEP: it serves the network
        try:
            assert _overlay(net.id, a) == (sorted([vteps[c], "192.0.2.9"]), sorted([
                (port_b.mac_address, vteps[c]), (dhcp_port.mac_address, "192.0.2.9"),
                (router_port.mac_address, "192.0.2.9")]))
            # ... with no guest of its own there: DHCP and the router for A's and C's
            state = host_plans.host_state([node])
            plan, = (p for p in state["networks"] if p["network_id"] == net.id)
            assert plan["dhcp_port_id"] == dhcp_port.id
            assert plan["flood"] == sorted([vteps[a], vteps[c]])
            assert sorted(tuple(x) for x in plan["fdb"]) == sorted([
                (port_a.mac_address, vteps[a]), (port_b.mac_address, vteps[c])])
            assert router.id in {r["router_id"] for r in state["routers"]}
            taps = host_plans.firewall_state([node])["dhcp_taps"]
            assert "tap" + dhcp_port.id[:11] in taps and "tap" + router_port.id[:11] in taps
        finally:
            _forget_agents({node})
        admin_conn.network.remove_interface_from_router(router, subnet_id=subnet.id)

        # a port gone is gone from the others' entries
        admin_conn.network.delete_port(port_b)
        assert _overlay(net.id, a) == ([], [])
        admin_conn.network.delete_port(port_a)
    finally:
        _forget_agents({a, b, c, plain, node})
        admin_conn.network.delete_router(router)
        for port in admin_conn.network.ports(network_id=net.id):
            if not port.device_owner.startswith("network:"):
                admin_conn.network.delete_port(port)
        admin_conn.network.delete_network(net)
