"""Network: what python-neutronclient, openstacksdk and the CLI's project
cleanup hit on the network API."""
from __future__ import annotations

import uuid

import pytest


class Raw:
    """Plain HTTP on the network endpoint: status codes and neutron's error bodies."""

    def __init__(self, session):
        self.session = session

    def __call__(self, method, path, body=None):
        return self.session.request(f"/v2.0{path}", method, json=body, raise_exc=False,
                                    endpoint_filter={"service_type": "network"})

    def error(self, method, path, body=None) -> tuple[int, dict]:
        response = self(method, path, body)
        assert response.status_code >= 400, response.text
        return response.status_code, response.json()["NeutronError"]


@pytest.fixture(scope="module")
def neutron(cloud):
    from neutronclient.v2_0 import client

    return client.Client(session=cloud.session(), region_name="RegionOne")


@pytest.fixture(scope="module")
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture(scope="module")
def member_neutron(cloud, member):
    from neutronclient.v2_0 import client

    return client.Client(session=cloud.user_session(member), region_name="RegionOne")


def _name(prefix="compat"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_agents_one_dhcp_and_one_l3_on_the_api_host(neutron, member_neutron):
    from pocketstack.common import config

    # (host agents that other tests ran in this cloud report under their own hosts)
    agents = [a for a in neutron.list_agents(host=config.CONF.host)["agents"]
              if a["agent_type"] in ("DHCP agent", "L3 agent")]
    assert sorted(a["agent_type"] for a in agents) == ["DHCP agent", "L3 agent"]
    assert all(a["alive"] and a["admin_state_up"] for a in agents)
    dhcp = neutron.list_agents(agent_type="DHCP agent")["agents"]
    assert [a["binary"] for a in dhcp] == ["neutron-dhcp-agent"]
    assert neutron.show_agent(dhcp[0]["id"])["agent"]["topic"] == "dhcp_agent"
    assert member_neutron.list_agents()["agents"] == []


def test_availability_zones_and_service_providers(cloud, neutron):
    zones = neutron.list_availability_zones()["availability_zones"]
    assert {(z["name"], z["resource"], z["state"]) for z in zones} == {
        ("nova", "network", "available"), ("nova", "router", "available")}
    providers = neutron.list_service_providers()["service_providers"]
    assert providers and providers[0]["service_type"] == "L3_ROUTER_NAT"
    conn = cloud.sdk()
    assert list(conn.network.service_providers(service_type="VPN")) == []


def test_network_ip_availability(neutron, member_neutron):
    network = neutron.create_network({"network": {"name": _name()}})["network"]
    try:
        subnet = neutron.create_subnet({"subnet": {
            "network_id": network["id"], "ip_version": 4, "cidr": "10.199.0.0/28"}})["subnet"]
        neutron.create_port({"port": {"network_id": network["id"]}})
        shown = neutron.show_network_ip_availability(network["id"])["network_ip_availability"]
        assert shown["total_ips"] == 13  # .2 - .14: the gateway is outside the pool
        # the port, and the DHCP port if the network serves DHCP
        assert shown["used_ips"] >= 1
        [per_subnet] = shown["subnet_ip_availability"]
        assert per_subnet["subnet_id"] == subnet["id"]
        assert per_subnet["cidr"] == "10.199.0.0/28"
        listed = neutron.list_network_ip_availabilities(network_id=network["id"])
        assert [a["network_id"] for a in listed["network_ip_availabilities"]] == [network["id"]]
        assert member_neutron.list_network_ip_availabilities()[
            "network_ip_availabilities"] == []
    finally:
        for port in neutron.list_ports(network_id=network["id"])["ports"]:
            neutron.delete_port(port["id"])
        neutron.delete_network(network["id"])


def test_quota_details_json_suffix_and_tenant(neutron, member, member_neutron):
    details = neutron.show_quota_details(member["project_id"])["quota"]
    assert details["network"] == {"limit": 100, "used": 0, "reserved": 0}
    assert member_neutron.get_quotas_tenant()["tenant"]["tenant_id"] == member["project_id"]


def test_json_suffix_on_any_path(cloud):
    raw = Raw(cloud.session())
    network = raw("POST", "/networks.json", {"network": {"name": _name()}}).json()["network"]
    assert raw("GET", f"/networks/{network['id']}.json").json()["network"]["id"] == network["id"]
    assert network["id"] in [n["id"] for n in raw("GET", "/networks.json").json()["networks"]]
    assert raw("DELETE", f"/networks/{network['id']}.json").status_code == 204
    assert raw("GET", f"/networks/{network['id']}.json").status_code == 404


def test_quota_list_is_for_admins(neutron, member_neutron):
    from neutronclient.common import exceptions

    assert "quotas" in neutron.list_quotas()
    with pytest.raises(exceptions.Forbidden) as caught:
        member_neutron.list_quotas()
    assert "admin" in str(caught.value)


@pytest.mark.parametrize("remote", ["not-a-uuid", "a6bcccf6-8266-40da-9876-fa0244242d8e"])
def test_rule_with_malformed_or_unknown_remote_group_is_404(cloud, member, remote):
    raw = Raw(cloud.user_session(member))
    group = raw("POST", "/security-groups", {"security_group": {"name": _name()}})
    group = group.json()["security_group"]
    status, fault = raw.error("POST", "/security-group-rules", {"security_group_rule": {
        "security_group_id": group["id"], "direction": "ingress", "remote_group_id": remote}})
    assert (status, fault["type"]) == (404, "SecurityGroupNotFound")
    assert remote in fault["message"]


def test_subnet_cidr_with_host_bits_is_masked(cloud, member):
    conn = cloud.user_sdk(member)
    network = conn.network.create_network(name=_name())
    subnet = conn.network.create_subnet(network_id=network.id, ip_version=4,
                                        cidr="10.99.99.0/16")
    assert subnet.cidr == "10.99.0.0/16"
    assert subnet.gateway_ip == "10.99.0.1"
    conn.network.delete_subnet(subnet)
    conn.network.delete_network(network)


def test_port_without_ip_gets_the_default_group(cloud, member):
    conn = cloud.user_sdk(member)
    network = conn.network.create_network(name=_name())
    port = conn.network.create_port(network_id=network.id)  # the network has no subnet
    assert port.fixed_ips == []
    default = conn.network.find_security_group("default", project_id=member["project_id"])
    assert port.security_group_ids == [default.id]
    other = conn.network.create_security_group(name=_name())
    port = conn.network.update_port(port, security_group_ids=[default.id, other.id])
    assert sorted(port.security_group_ids) == sorted([default.id, other.id])
    conn.network.delete_port(port)
    conn.network.delete_network(network)


def test_admin_sets_any_unicast_or_multicast_mac(cloud):
    conn = cloud.sdk()
    network = conn.network.create_network(name=_name())
    port = conn.network.create_port(network_id=network.id, mac_address="11:22:33:44:55:66")
    assert port.mac_address == "11:22:33:44:55:66"
    conn.network.delete_port(port)
    conn.network.delete_network(network)


@pytest.fixture
def external_network(cloud):
    conn = cloud.sdk()
    network = conn.network.create_network(name=_name("ext"), is_router_external=True)
    yield network
    conn.network.delete_network(network)


def test_router_gateway_on_external_network_without_subnet(cloud, external_network):
    conn = cloud.sdk()
    router = conn.network.create_router(
        name=_name("router"), external_gateway_info={"network_id": external_network.id})
    assert router.external_gateway_info["network_id"] == external_network.id
    assert router.external_gateway_info["external_fixed_ips"] == []
    # neutron's l3-ha / dvr / availability zone extensions' fields
    assert (router.is_ha, router.is_distributed, router.availability_zones) == (
        False, False, ["nova"])
    assert router.availability_zone_hints == []
    conn.network.update_router(router, external_gateway_info={})
    conn.network.delete_router(router)


def test_router_ha_and_zone_hints_on_create(cloud):
    raw = Raw(cloud.session())
    created = raw("POST", "/routers", {"router": {
        "name": _name(), "ha": False, "distributed": False,
        "availability_zone_hints": ["nova"]}})
    assert created.status_code == 201, created.text
    assert created.json()["router"]["ha"] is False
    raw("DELETE", f"/routers/{created.json()['router']['id']}")
    for attrs in ({"ha": True}, {"availability_zone_hints": ["elsewhere"]}):
        status, fault = raw.error("POST", "/routers", {"router": {"name": _name(), **attrs}})
        assert status == 400, fault


def test_floating_ip_port_details(cloud):
    conn = cloud.sdk()
    external = conn.network.create_network(name=_name("ext"), is_router_external=True)
    conn.network.create_subnet(network_id=external.id, ip_version=4, cidr="10.198.0.0/24")
    internal = conn.network.create_network(name=_name())
    subnet = conn.network.create_subnet(network_id=internal.id, ip_version=4,
                                        cidr="10.197.0.0/24")
    router = conn.network.create_router(name=_name(),
                                        external_gateway_info={"network_id": external.id})
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    port = conn.network.create_port(network_id=internal.id, name="with-fip",
                                    device_owner="compute:nova")
    fip = conn.network.create_ip(floating_network_id=external.id)
    assert fip.port_details is None
    fip = conn.network.update_ip(fip, port_id=port.id)
    details = conn.network.get_ip(fip.id).port_details
    assert details["name"] == "with-fip" and details["mac_address"] == port.mac_address
    assert details["network_id"] == internal.id and details["device_owner"] == "compute:nova"
    conn.network.delete_ip(fip)
    conn.network.delete_port(port)
    conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
    conn.network.delete_router(router)
    conn.network.delete_network(internal)
    conn.network.delete_network(external)


def test_segments_one_per_network(cloud, member):
    conn = cloud.sdk()
    network = conn.network.create_network(name=_name(), provider_network_type="vlan",
                                          provider_physical_network="physnet1",
                                          provider_segmentation_id=3999)
    try:
        [segment] = list(conn.network.segments(network_id=network.id))
        assert (segment.network_type, segment.physical_network, segment.segmentation_id) == (
            "vlan", "physnet1", 3999)
        assert conn.network.get_segment(segment.id).network_id == network.id
        assert list(cloud.user_sdk(member).network.segments()) == []
    finally:
        conn.network.delete_network(network)


def test_subnet_pools_and_subnets_from_them(cloud, member):
    conn = cloud.user_sdk(member)
    pool = conn.network.create_subnet_pool(name=_name("pool"),
                                           prefixes=["10.180.0.0/16", "10.181.0.0/16"],
                                           default_prefix_length=24,
                                           minimum_prefix_length=20,
                                           maximum_prefix_length=28)
    assert pool.prefixes == ["10.180.0.0/15"]  # merged, as neutron does
    assert (pool.ip_version, pool.default_prefix_length, pool.minimum_prefix_length) == (
        4, 24, 20)
    network = conn.network.create_network(name=_name())
    first = conn.network.create_subnet(network_id=network.id, subnet_pool_id=pool.id,
                                       ip_version=4)
    assert (first.cidr, first.subnet_pool_id) == ("10.180.0.0/24", pool.id)
    second = conn.network.create_subnet(network_id=network.id, subnet_pool_id=pool.id,
                                        ip_version=4, prefix_length=28)
    assert second.cidr == "10.180.1.0/28"
    chosen = conn.network.create_subnet(network_id=network.id, subnet_pool_id=pool.id,
                                        ip_version=4, cidr="10.181.5.0/24")
    assert chosen.cidr == "10.181.5.0/24"
    assert {s.id for s in conn.network.subnets(subnet_pool_id=pool.id)} == {
        first.id, second.id, chosen.id}
    raw = Raw(cloud.user_session(member))
    for attrs, status in (({"cidr": "10.99.0.0/24"}, 400),        # outside the pool
                          ({"cidr": "10.180.0.128/25"}, 409),     # taken
                          ({"prefixlen": 16}, 400)):              # shorter than min
        got, fault = raw.error("POST", "/subnets", {"subnet": {
            "network_id": network.id, "subnetpool_id": pool.id, "ip_version": 4, **attrs}})
        assert got == status, fault
    got, fault = raw.error("DELETE", f"/subnetpools/{pool.id}")
    assert got == 409, fault
    updated = conn.network.update_subnet_pool(pool, prefixes=["10.180.0.0/14"])
    assert updated.prefixes == ["10.180.0.0/14"]
    got, fault = raw.error("PUT", f"/subnetpools/{pool.id}",
                           {"subnetpool": {"prefixes": ["10.200.0.0/16"]}})
    assert got == 400, fault  # prefixes may only grow
    for subnet in (first, second, chosen):
        conn.network.delete_subnet(subnet)
    conn.network.delete_network(network)
    conn.network.delete_subnet_pool(pool)
    assert conn.network.find_subnet_pool(pool.id) is None


def test_address_scopes_and_their_subnet_pools(cloud, member):
    conn = cloud.user_sdk(member)
    scope = conn.network.create_address_scope(name=_name("scope"), ip_version=4)
    assert (scope.ip_version, scope.is_shared, scope.project_id) == (
        4, False, member["project_id"])
    assert scope.id in [a.id for a in conn.network.address_scopes()]
    renamed = conn.network.update_address_scope(scope, name="renamed")
    assert renamed.name == "renamed"
    pool = conn.network.create_subnet_pool(name=_name("pool"), prefixes=["10.170.0.0/16"],
                                           address_scope_id=scope.id)
    assert pool.address_scope_id == scope.id
    raw = Raw(cloud.user_session(member))
    status, fault = raw.error("POST", "/subnetpools", {"subnetpool": {
        "prefixes": ["fd00:170::/48"], "address_scope_id": scope.id}})
    assert status == 400, fault  # an IPv4 scope takes IPv4 pools only
    status, fault = raw.error("DELETE", f"/address-scopes/{scope.id}")
    assert (status, fault["type"]) == (409, "AddressScopeInUse")
    status, fault = raw.error("POST", "/address-scopes",
                              {"address_scope": {"ip_version": 4, "shared": True}})
    assert status == 403, fault  # sharing is for admins
    conn.network.delete_subnet_pool(pool)
    conn.network.delete_address_scope(scope)
    assert conn.network.find_address_scope(scope.id) is None


def test_floating_ip_port_forwardings(cloud):
    conn = cloud.sdk()
    external = conn.network.create_network(name=_name("ext"), is_router_external=True)
    conn.network.create_subnet(network_id=external.id, ip_version=4, cidr="10.195.0.0/24")
    internal = conn.network.create_network(name=_name())
    subnet = conn.network.create_subnet(network_id=internal.id, ip_version=4,
                                        cidr="10.194.0.0/24")
    router = conn.network.create_router(name=_name(),
                                        external_gateway_info={"network_id": external.id})
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    port = conn.network.create_port(network_id=internal.id)
    address = port.fixed_ips[0]["ip_address"]
    fip = conn.network.create_ip(floating_network_id=external.id)
    pf = conn.network.create_port_forwarding(
        floatingip_id=fip.id, internal_port_id=port.id, internal_ip_address=address,
        internal_port=22, external_port=2222, protocol="tcp")
    assert (pf.external_port, pf.internal_port, pf.protocol) == (2222, 22, "tcp")
    assert [p.id for p in conn.network.port_forwardings(fip)] == [pf.id]
    assert conn.network.get_ip(fip.id).router_id == router.id
    raw = Raw(cloud.session())
    base = f"/floatingips/{fip.id}/port_forwardings"
    status, fault = raw.error("POST", base, {"port_forwarding": {
        "internal_port_id": port.id, "internal_ip_address": address, "internal_port": 80,
        "external_port": 2222, "protocol": "tcp"}})
    # the external port is taken: neutron's port collision check, a 400
    assert (status, fault["type"]) == (400, "BadRequest"), fault
    assert "The following ranges collide: 2222:2222 and 2222:2222" in fault["message"]
    status, fault = raw.error("POST", base, {"port_forwarding": {
        "internal_port_id": port.id, "internal_ip_address": "10.194.0.250",
        "internal_port": 80, "external_port": 8080, "protocol": "tcp"}})
    assert status == 400, fault  # not the port's address
    status, fault = raw.error("PUT", f"/floatingips/{fip.id}",
                              {"floatingip": {"port_id": port.id}})
    assert status == 409, fault  # forwarding ports, so it cannot be associated
    updated = conn.network.update_port_forwarding(pf, fip.id, external_port=2200)
    assert updated.external_port == 2200
    conn.network.delete_port_forwarding(pf, fip.id)
    assert list(conn.network.port_forwardings(fip)) == []
    conn.network.delete_ip(fip)
    conn.network.delete_port(port)
    conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
    conn.network.delete_router(router)
    conn.network.delete_network(internal)
    conn.network.delete_network(external)


def test_trunks_and_subports(cloud, member):
    conn = cloud.user_sdk(member)
    network = conn.network.create_network(name=_name())
    conn.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.193.0.0/24")
    parent, child, other = (conn.network.create_port(network_id=network.id) for _ in range(3))
    trunk = conn.network.create_trunk(port_id=parent.id, name=_name("trunk"), sub_ports=[
        {"port_id": child.id, "segmentation_type": "vlan", "segmentation_id": 100}])
    assert trunk.port_id == parent.id
    assert trunk.sub_ports == [{"port_id": child.id, "segmentation_type": "vlan",
                                "segmentation_id": 100}]
    conn.network.add_trunk_subports(trunk, [{"port_id": other.id,
                                             "segmentation_type": "vlan",
                                             "segmentation_id": 101}])
    listed = conn.network.get_trunk_subports(trunk)["sub_ports"]
    assert [s["segmentation_id"] for s in listed] == [100, 101]
    raw = Raw(cloud.user_session(member))
    status, fault = raw.error("POST", "/trunks", {"trunk": {"port_id": child.id}})
    assert (status, fault["type"]) == (409, "PortInUseAsTrunkPort")
    spare = conn.network.create_port(network_id=network.id)
    status, fault = raw.error("PUT", f"/trunks/{trunk.id}/add_subports", {"sub_ports": [
        {"port_id": spare.id, "segmentation_type": "vlan", "segmentation_id": 100}]})
    assert (status, fault["type"]) == (409, "DuplicateSubPort")
    conn.network.delete_trunk_subports(trunk, [{"port_id": other.id}])
    assert [s["port_id"] for s in conn.network.get_trunk(trunk.id).sub_ports] == [child.id]
    conn.network.delete_trunk(trunk)
    assert conn.network.find_trunk(trunk.id) is None
    for port in (parent, child, other, spare):
        conn.network.delete_port(port)
    conn.network.delete_network(network)


def test_qos_policies_and_bandwidth_limit_rules(cloud, member):
    conn = cloud.sdk()
    policy = conn.network.create_qos_policy(name=_name("qos"), description="gold",
                                            project_id=member["project_id"])
    rule = conn.network.create_qos_bandwidth_limit_rule(policy, max_kbps=10000,
                                                        max_burst_kbps=1000)
    assert (rule.max_kbps, rule.max_burst_kbps, rule.direction) == (10000, 1000, "egress")
    ingress = conn.network.create_qos_bandwidth_limit_rule(policy, max_kbps=5000,
                                                           direction="ingress")
    shown = conn.network.get_qos_policy(policy.id)
    assert sorted((r["direction"], r["max_kbps"], r["type"]) for r in shown.rules) == [
        ("egress", 10000, "bandwidth_limit"), ("ingress", 5000, "bandwidth_limit")]
    raw = Raw(cloud.session())
    status, fault = raw.error("POST", f"/qos/policies/{policy.id}/bandwidth_limit_rules",
                              {"bandwidth_limit_rule": {"max_kbps": 1}})
    assert (status, fault["type"]) == (409, "QoSRulesConflict")  # one per direction
    updated = conn.network.update_qos_bandwidth_limit_rule(rule, policy, max_kbps=20000)
    assert updated.max_kbps == 20000
    assert [t.type for t in conn.network.qos_rule_types()] == [
        "bandwidth_limit", "dscp_marking", "minimum_bandwidth", "minimum_packet_rate",
        "packet_rate_limit"]
    # the member sees its project's policy; writing policies is for admins, as in neutron
    member_conn = cloud.user_sdk(member)
    assert policy.id in [p.id for p in member_conn.network.qos_policies()]
    status, fault = Raw(cloud.user_session(member)).error(
        "POST", "/qos/policies", {"policy": {"name": "mine"}})
    assert status == 403, fault
    conn.network.delete_qos_bandwidth_limit_rule(ingress, policy)
    conn.network.delete_qos_policy(policy)
    assert conn.network.find_qos_policy(policy.id) is None
