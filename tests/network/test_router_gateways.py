"""A router's external gateways: more addresses on the gateway port (the port stays),
the gateway's QoS policy (qos-gateway-ip), and several gateway ports
(external-gateway-multihoming) through openstacksdk and the openstack CLI."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


@pytest.fixture(scope="module")
def publics(admin_conn):
    made = []
    for cidr in ("172.25.1.0/28", "172.25.2.0/28"):
        network = admin_conn.network.create_network(name=unique("public"),
                                                    is_router_external=True)
        subnet = admin_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                                  cidr=cidr, enable_dhcp=False)
        made.append((network, subnet))
    yield made
    for network, _ in made:
        for fip in admin_conn.network.ips(floating_network_id=network.id):
            admin_conn.network.delete_ip(fip)
        for port in admin_conn.network.ports(network_id=network.id,
                                             device_owner="network:router_gateway"):
            admin_conn.network.remove_external_gateways(
                port.device_id, {"router": {"external_gateways": []}})
        admin_conn.network.delete_network(network)


def _gateway_port(conn, router):
    ports = list(conn.network.ports(device_id=router.id,
                                    device_owner="network:router_gateway"))
    assert len(ports) == 1
    return ports[0]


def test_second_address_keeps_the_port(admin_conn, publics):
    (network, subnet), _ = publics
    net = admin_conn.network
    router = net.create_router(name=unique("r"), external_gateway_info={
        "network_id": network.id})
    first = router.external_gateway_info["external_fixed_ips"]
    port = _gateway_port(admin_conn, router)
    # a floating IP on the gateway's network: the gateway must not be recreated
    internal = net.create_network(name=unique("n"))
    inner = net.create_subnet(network_id=internal.id, ip_version=4, cidr="10.41.0.0/28")
    net.add_interface_to_router(router, subnet_id=inner.id)
    server_port = net.create_port(network_id=internal.id)
    fip = net.create_ip(floating_network_id=network.id, port_id=server_port.id)
    second = "172.25.1.12"
    router = net.update_router(router, external_gateway_info={
        "network_id": network.id,
        "external_fixed_ips": first + [{"subnet_id": subnet.id, "ip_address": second}]})
    ips = router.external_gateway_info["external_fixed_ips"]
    assert ips == first + [{"subnet_id": subnet.id, "ip_address": second}]
    assert _gateway_port(admin_conn, router).id == port.id
    # and back to one address
    router = net.update_router(router, external_gateway_info={
        "network_id": network.id, "external_fixed_ips": first})
    assert router.external_gateway_info["external_fixed_ips"] == first
    net.delete_ip(fip)
    net.delete_port(server_port)
    net.remove_interface_from_router(router, subnet_id=inner.id)
    net.update_router(router, external_gateway_info=None)
    net.delete_router(router)
    net.delete_network(internal)


def test_repeating_the_gateway_is_no_change(admin_conn, publics, raw):
    """The same subnets and explicit addresses again leave the gateway as it is, as
    neutron's _check_for_external_ip_change: a subnet named again without an address
    asks for no second address."""
    (network, subnet), _ = publics
    net = admin_conn.network
    router = net.create_router(name=unique("r"), external_gateway_info={
        "network_id": network.id})
    shown = router.external_gateway_info
    for repeated in (shown,
                     {"network_id": network.id, "external_fixed_ips": [
                         {"subnet_id": subnet.id}]},
                     {"network_id": network.id, "external_fixed_ips": [
                         *shown["external_fixed_ips"], {"subnet_id": subnet.id}]}):
        router = net.update_router(router, external_gateway_info=repeated)
        assert router.external_gateway_info["external_fixed_ips"] == \
            shown["external_fixed_ips"], repeated
    assert len(list(net.ports(network_id=network.id, device_id=router.id))) == 1
    # the subnet's own gateway address is neutron's 400
    status, fault = raw.error("PUT", f"/routers/{router.id}", {"router": {
        "external_gateway_info": {"network_id": network.id, "external_fixed_ips": [
            {"subnet_id": subnet.id, "ip_address": subnet.gateway_ip}]}}})
    assert status == 400 and "is the same as the gateway IP" in fault["message"]
    net.update_router(router, external_gateway_info=None)
    net.delete_router(router)


def test_gateway_qos_policy(admin_conn, member_conn, publics, raw):
    (network, _), _ = publics
    policy = admin_conn.network.create_qos_policy(name=unique("qos"), shared=True)
    router = member_conn.network.create_router(name=unique("r"), external_gateway_info={
        "network_id": network.id, "qos_policy_id": policy.id})
    assert router.external_gateway_info["qos_policy_id"] == policy.id
    # a policy in use stays
    response = raw("DELETE", f"/qos/policies/{policy.id}")
    assert response.status_code == 409
    assert response.json()["NeutronError"]["type"] == "QosPolicyInUse"
    # the gateway info without the key keeps the policy, null clears it
    router = member_conn.network.update_router(router, external_gateway_info={
        "network_id": network.id})
    assert router.external_gateway_info["qos_policy_id"] == policy.id
    router = member_conn.network.update_router(router, external_gateway_info={
        "network_id": network.id, "qos_policy_id": None})
    assert router.external_gateway_info["qos_policy_id"] is None
    # a policy the member cannot see is not found
    private = admin_conn.network.create_qos_policy(name=unique("qos"))
    with pytest.raises(sdk_exc.NotFoundException):
        member_conn.network.update_router(router, external_gateway_info={
            "network_id": network.id, "qos_policy_id": private.id})
    member_conn.network.delete_router(router)
    admin_conn.network.delete_qos_policy(policy)
    admin_conn.network.delete_qos_policy(private)
    assert admin_conn.network.find_extension("qos-gateway-ip") is not None


def test_multihoming(admin_conn, member_conn, publics, member_raw):
    (net_a, sub_a), (net_b, sub_b) = publics
    net = member_conn.network
    router = net.create_router(name=unique("r"))
    router = net.add_external_gateways(router, {"router": {"external_gateways": [
        {"network_id": net_a.id}, {"network_id": net_b.id}, {"network_id": net_a.id}]}})
    gateways = router.external_gateways
    assert [g["network_id"] for g in gateways] == [net_a.id, net_b.id, net_a.id]
    assert router.external_gateway_info["network_id"] == net_a.id
    assert all(len(g["external_fixed_ips"]) == 1 for g in gateways)
    second_a = gateways[2]["external_fixed_ips"][0]["ip_address"]

    # two gateways on net_a: naming only the network is ambiguous
    response = member_raw("PUT", f"/routers/{router.id}/remove_external_gateways",
                          {"router": {"external_gateways": [{"network_id": net_a.id}]}})
    assert response.status_code == 400
    assert response.json()["NeutronError"]["type"] == "UnableToMatchGateways"
    # a member may not pick addresses
    response = member_raw("PUT", f"/routers/{router.id}/add_external_gateways", {
        "router": {"external_gateways": [{"network_id": net_b.id, "external_fixed_ips": [
            {"subnet_id": sub_b.id}]}]}})
    assert response.status_code == 403

    # remove the first one: the other gateway on net_a... the next one becomes the
    # compatibility gateway
    first_a = gateways[0]["external_fixed_ips"][0]["ip_address"]
    router = net.remove_external_gateways(router, {"router": {"external_gateways": [
        {"network_id": net_a.id, "external_fixed_ips": [{"ip_address": first_a}]}]}})
    assert [g["network_id"] for g in router.external_gateways] == [net_b.id, net_a.id]
    assert router.external_gateway_info["network_id"] == net_b.id

    # update: net_a's gateway first, net_b's goes
    router = net.update_external_gateways(router, {"router": {"external_gateways": [
        {"network_id": net_a.id}]}})
    assert [g["network_id"] for g in router.external_gateways] == [net_a.id]
    assert router.external_gateways[0]["external_fixed_ips"][0]["ip_address"] == second_a
    assert router.external_gateway_info["network_id"] == net_a.id

    # external_gateway_info=None removes one gateway; an empty update removes all
    net.add_external_gateways(router, {"router": {"external_gateways": [
        {"network_id": net_b.id}]}})
    router = net.update_router(router, external_gateway_info=None)
    assert [g["network_id"] for g in router.external_gateways] == [net_b.id]
    router = net.update_external_gateways(router, {"router": {"external_gateways": []}})
    assert router.external_gateways == [] and router.external_gateway_info is None
    # a router with extra gateways is deleted with them
    net.add_external_gateways(router, {"router": {"external_gateways": [
        {"network_id": net_a.id}, {"network_id": net_b.id}]}})
    net.delete_router(router)
    assert not list(admin_conn.network.ports(device_id=router.id))


@pytest.mark.cli
def test_cli_router_gateways(cloud, member, publics):
    """openstackclient uses the multihoming API once the extension is listed."""
    (net_a, _), (net_b, _) = publics
    created = cloud.cli("router", "create", unique("r"), "--external-gateway", net_a.id,
                        "--external-gateway", net_b.id, "-f", "json", user=member)
    shown = cloud.cli("router", "show", created["id"], "-f", "json", user=member)
    assert [g["network_id"] for g in shown["external_gateways"]] == [net_a.id, net_b.id]
    # its unset sends remove_external_gateways with {} (nothing, in neutron too) and
    # then clears external_gateway_info: one gateway goes, the other takes its place
    cloud.cli("router", "unset", "--external-gateway", created["id"], user=member)
    shown = cloud.cli("router", "show", created["id"], "-f", "json", user=member)
    assert [g["network_id"] for g in shown["external_gateways"]] == [net_b.id]
    assert shown["external_gateway_info"]["network_id"] == net_b.id
    cloud.cli("router", "delete", created["id"], user=member)
