"""Routers and floating IPs as API resources: gateway on an external network, interfaces,
extra routes, floating IP allocation, association and disassociation."""
from __future__ import annotations

import ipaddress

import pytest
from network_helpers import unique


@pytest.fixture(scope="module")
def public(admin_conn):
    network = admin_conn.network.create_network(name=unique("public"),
                                                is_router_external=True)
    subnet = admin_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                              cidr="172.24.4.0/28", enable_dhcp=False)
    yield network, subnet
    for fip in admin_conn.network.ips(floating_network_id=network.id):
        admin_conn.network.delete_ip(fip)
    for router in admin_conn.network.routers():
        info = router.external_gateway_info or {}
        if info.get("network_id") == network.id:
            admin_conn.network.update_router(router, external_gateway_info=None)
    admin_conn.network.delete_network(network)


@pytest.fixture
def tenant(member_conn):
    network = member_conn.network.create_network(name=unique("private"))
    subnet = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                               cidr="10.0.0.0/28")
    return network, subnet


def test_router_gateway_interfaces_and_floating_ip(member_conn, member_raw, public, tenant):
    public_net, public_subnet = public
    network, subnet = tenant
    router = member_conn.network.create_router(
        name=unique("r"), external_gateway_info={"network_id": public_net.id})
    info = router.external_gateway_info
    assert info["network_id"] == public_net.id and info["enable_snat"] is True
    gw_ip = info["external_fixed_ips"][0]["ip_address"]
    assert ipaddress.ip_address(gw_ip) in ipaddress.ip_network("172.24.4.0/28")
    # the gateway port is the cloud's, not the project's
    assert member_raw("GET", f"/ports?device_id={router.id}").json()["ports"] == []

    iface = member_conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    assert iface["subnet_id"] == subnet.id and iface["network_id"] == network.id
    port = member_conn.network.get_port(iface["port_id"])
    assert port.device_owner == "network:router_interface" and port.device_id == router.id
    assert port.fixed_ips == [{"subnet_id": subnet.id, "ip_address": "10.0.0.1"}]
    status, fault = member_raw.error("PUT", f"/routers/{router.id}/add_router_interface",
                                     {"subnet_id": subnet.id})
    assert status == 400 and "already has a port" in fault["message"]
    status, fault = member_raw.error("DELETE", f"/ports/{port.id}")
    assert (status, fault["type"]) == (409, "ServicePortInUse")

    server_port = member_conn.network.create_port(network_id=network.id)
    fip = member_conn.network.create_ip(floating_network_id=public_net.id,
                                        port_id=server_port.id)
    assert fip.status == "ACTIVE" and fip.router_id == router.id
    assert fip.fixed_ip_address == server_port.fixed_ips[0]["ip_address"]
    assert ipaddress.ip_address(fip.floating_ip_address) in \
        ipaddress.ip_network("172.24.4.0/28")
    status, fault = member_raw.error("POST", "/floatingips", {"floatingip": {
        "floating_network_id": public_net.id, "port_id": server_port.id}})
    assert (status, fault["type"]) == (409, "FloatingIPPortAlreadyAssociated")
    status, fault = member_raw.error("PUT", f"/routers/{router.id}/remove_router_interface",
                                     {"subnet_id": subnet.id})
    assert (status, fault["type"]) == (409, "RouterInterfaceInUseByFloatingIP")
    status, fault = member_raw.error("DELETE", f"/routers/{router.id}")
    assert (status, fault["type"]) == (409, "RouterInUse")

    fip = member_conn.network.update_ip(fip, port_id=None)
    assert (fip.status, fip.port_id, fip.router_id) == ("DOWN", None, None)
    fip = member_conn.network.update_ip(fip, port_id=server_port.id)
    assert fip.port_id == server_port.id
    member_conn.network.delete_port(server_port)  # disassociates, as neutron does
    assert member_conn.network.get_ip(fip.id).port_id is None
    member_conn.network.delete_ip(fip)

    member_conn.network.update_router(router, routes=[{"destination": "192.168.0.0/16",
                                                       "nexthop": "10.0.0.5"}])
    status, fault = member_raw.error("PUT", f"/routers/{router.id}", {"router": {
        "routes": [{"destination": "192.168.0.0/16", "nexthop": "10.99.0.5"}]}})
    assert status == 400 and "not connected" in fault["message"]
    member_conn.network.update_router(router, routes=[])
    member_conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
    assert member_raw.error("GET", f"/ports/{port.id}")[0] == 404
    status, fault = member_raw.error("PUT", f"/routers/{router.id}/remove_router_interface",
                                     {"subnet_id": subnet.id})
    assert (status, fault["type"]) == (404, "RouterInterfaceNotFoundForSubnet")
    member_conn.network.delete_router(router)
    # the gateway address went back to the pool
    admin_ports = [p for p in member_conn.network.ports(network_id=public_net.id)]
    assert admin_ports == []


def test_router_and_floating_ip_errors(member_conn, member_raw, public, tenant):
    public_net, _ = public
    network, subnet = tenant
    status, fault = member_raw.error("POST", "/routers", {"router": {
        "external_gateway_info": {"network_id": network.id}}})
    assert status == 400 and "not an external network" in fault["message"]
    status, fault = member_raw.error("POST", "/routers", {"router": {
        "external_gateway_info": {"network_id": public_net.id, "enable_snat": False}}})
    assert status == 403  # choosing SNAT is for admins
    status, fault = member_raw.error("POST", "/floatingips", {"floatingip": {
        "floating_network_id": network.id}})
    assert status == 400
    port = member_conn.network.create_port(network_id=network.id)
    status, fault = member_raw.error("POST", "/floatingips", {"floatingip": {
        "floating_network_id": public_net.id, "port_id": port.id}})
    assert (status, fault["type"]) == (404, "ExternalGatewayForFloatingIPNotFound")
    router = member_conn.network.create_router(name=unique("r"))
    status, fault = member_raw.error("PUT", f"/routers/{router.id}/add_router_interface",
                                     {})
    assert status == 400
    status, fault = member_raw.error("PUT", f"/routers/{router.id}/add_router_interface",
                                     {"port_id": port.id, "subnet_id": subnet.id})
    assert status == 400
    no_gw = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                              cidr="10.0.1.0/28", gateway_ip=None)
    status, fault = member_raw.error("PUT", f"/routers/{router.id}/add_router_interface",
                                     {"subnet_id": no_gw.id})
    assert status == 400 and "gateway IP" in fault["message"]
    iface = member_conn.network.add_interface_to_router(router, port_id=port.id)
    assert iface["port_id"] == port.id
    assert member_conn.network.get_port(port.id).device_owner == "network:router_interface"
    member_conn.network.remove_interface_from_router(router, port_id=port.id)
    member_conn.network.delete_router(router)


def test_floating_ip_pool_exhaustion(admin_conn, member_conn, member_raw):
    tiny = admin_conn.network.create_network(name=unique("tiny"), is_router_external=True)
    admin_conn.network.create_subnet(network_id=tiny.id, ip_version=4, cidr="172.30.0.0/30",
                                     enable_dhcp=False)
    fips = [member_conn.network.create_ip(floating_network_id=tiny.id) for _ in range(1)]
    status, fault = member_raw.error("POST", "/floatingips", {"floatingip": {
        "floating_network_id": tiny.id}})
    assert (status, fault["type"]) == (409, "IpAddressGenerationFailure")
    for fip in fips:
        member_conn.network.delete_ip(fip)
    admin_conn.network.delete_network(tiny)


def test_test_tool_setup_and_teardown_for_a_project(cloud, admin_conn, raw):
    """What test tools do per test project, as admin: network, /28 subnet, router and
    interface for the project, then remove all of it and the project's default group."""
    project = cloud.make_user(roles=("member",))["project_id"]
    net = admin_conn.network.create_network(name=unique("tt"), project_id=project)
    subnet = admin_conn.network.create_subnet(network_id=net.id, ip_version=4,
                                              cidr="10.100.0.0/28", project_id=project)
    router = admin_conn.network.create_router(name=unique("tt"), project_id=project)
    admin_conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    assert {net.project_id, subnet.project_id, router.project_id} == {project}
    admin_conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
    admin_conn.network.delete_router(router)
    admin_conn.network.delete_subnet(subnet)
    admin_conn.network.delete_network(net)
    groups = list(admin_conn.network.security_groups(project_id=project, name="default"))
    assert len(groups) == 1
    admin_conn.network.delete_security_group(groups[0])
    assert raw("GET", f"/ports?project_id={project}").json()["ports"] == []
    assert raw("GET", f"/security-groups?project_id={project}").json()["security_groups"] == []
