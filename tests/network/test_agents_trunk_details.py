"""PUT /v2.0/agents/{id}, the l3_agent_scheduler views of this host's L3 agent, the
segment extension's API, and ports' trunk_details - through openstacksdk."""
from __future__ import annotations

from network_helpers import unique


def _l3(conn):
    return next(a for a in conn.network.agents() if a.agent_type == "L3 agent")


def test_update_agent(admin_conn, member_conn, member_raw, raw):
    agent = _l3(admin_conn)
    try:
        updated = admin_conn.network.update_agent(agent, is_admin_state_up=False,
                                                  description="maintenance")
        assert (updated.is_admin_state_up, updated.description) == (False, "maintenance")
        shown = admin_conn.network.get_agent(agent.id)
        assert (shown.is_admin_state_up, shown.description) == (False, "maintenance")
        # read-only attributes and other keys are neutron's 400
        response = raw("PUT", f"/agents/{agent.id}", {"agent": {"host": "elsewhere"}})
        assert response.status_code == 400
        # members do not see agents at all
        response = member_raw("PUT", f"/agents/{agent.id}",
                              {"agent": {"admin_state_up": True}})
        assert response.status_code == 404
        assert response.json()["NeutronError"]["type"] == "AgentNotFound"
    finally:
        admin_conn.network.update_agent(agent, is_admin_state_up=True, description=None)
    assert admin_conn.network.get_agent(agent.id).is_admin_state_up is True


def test_l3_agent_scheduler_views(admin_conn, member_conn, raw, member_raw):
    router = member_conn.network.create_router(name=unique("r"))
    agent = _l3(admin_conn)
    hosting = list(admin_conn.network.routers_hosting_l3_agents(router))
    assert [a.id for a in hosting] == [agent.id]
    assert router.id in {r.id for r in admin_conn.network.agent_hosted_routers(agent)}
    # admin only, as neutron's policy
    assert member_raw("GET", f"/routers/{router.id}/l3-agents").status_code == 403
    member_conn.network.delete_router(router)
    for alias in ("l3_agent_scheduler", "segment", "trunk-details"):
        assert admin_conn.network.find_extension(alias) is not None, alias


def test_segments(admin_conn):
    network = admin_conn.network.create_network(name=unique("n"))
    segments = list(admin_conn.network.segments(network_id=network.id))
    assert len(segments) == 1 and segments[0].network_type
    renamed = admin_conn.network.update_segment(segments[0], name="seg-a")
    assert admin_conn.network.get_segment(renamed.id).name == "seg-a"
    admin_conn.network.delete_network(network)


def test_trunk_details(member_conn):
    net = member_conn.network
    network = net.create_network(name=unique("n"))
    net.create_subnet(network_id=network.id, ip_version=4, cidr="10.60.0.0/24")
    parent = net.create_port(network_id=network.id)
    child = net.create_port(network_id=network.id)
    plain = net.get_port(net.create_port(network_id=network.id))
    trunk = net.create_trunk(port_id=parent.id, sub_ports=[
        {"port_id": child.id, "segmentation_type": "vlan", "segmentation_id": 101}])
    details = net.get_port(parent).trunk_details
    assert details == {"trunk_id": trunk.id, "sub_ports": [{
        "segmentation_id": 101, "segmentation_type": "vlan", "port_id": child.id,
        "mac_address": child.mac_address}]}
    listed = {p.id: p.trunk_details for p in net.ports(network_id=network.id)}
    assert listed[parent.id]["trunk_id"] == trunk.id
    assert listed[plain.id] is None and plain.trunk_details is None
    net.delete_trunk(trunk)
    assert net.get_port(parent.id).trunk_details is None  # a fresh object: key absent
