"""Networks and subnets: defaults, sharing and external networks, provider attributes,
and every bad subnet input neutron refuses."""
from __future__ import annotations

import pytest
from network_helpers import Raw, unique


def test_network_defaults_and_provider_attributes(admin_conn, member_conn, member_raw, raw):
    net = member_conn.network.create_network(name=unique("n"))
    body = member_raw("GET", f"/networks/{net.id}").json()["network"]
    assert body["status"] == "ACTIVE" and body["mtu"] == 1442 and body["shared"] is False
    assert body["router:external"] is False and body["port_security_enabled"] is True
    assert "provider:network_type" not in body  # admins only
    admin_view = raw("GET", f"/networks/{net.id}").json()["network"]
    assert admin_view["provider:network_type"] == "geneve"
    assert admin_view["provider:segmentation_id"] >= 1
    vlan = admin_conn.network.create_network(name=unique("vlan"), provider_network_type="vlan",
                                             provider_physical_network="physnet1",
                                             provider_segmentation_id=120)
    assert (vlan.mtu, vlan.provider_segmentation_id) == (1500, 120)
    status, fault = raw.error("POST", "/networks", {"network": {
        "provider:network_type": "vlan", "provider:physical_network": "physnet1",
        "provider:segmentation_id": 120}})
    assert status == 409
    for bad in ({"provider:network_type": "vlan"},
                {"provider:network_type": "vlan", "provider:physical_network": "p",
                 "provider:segmentation_id": 5000},
                {"provider:network_type": "carrier-pigeon"},
                {"provider:segmentation_id": 7},
                {"mtu": 9000}, {"mtu": 10}, {"admin_state_up": "perhaps"}):
        assert raw.error("POST", "/networks", {"network": bad})[0] == 400, bad
    status, fault = member_raw.error("POST", "/networks", {"network": {
        "provider:network_type": "vlan", "provider:physical_network": "physnet1"}})
    assert status == 403
    admin_conn.network.delete_network(vlan)


def test_shared_and_external_networks(cloud, admin_conn, member_conn, member_raw):
    shared = admin_conn.network.create_network(name=unique("shared"), is_shared=True)
    public = admin_conn.network.create_network(name=unique("public"), is_router_external=True)
    private = admin_conn.network.create_network(name=unique("adminonly"))
    try:
        seen = {n.id for n in member_conn.network.networks()}
        assert shared.id in seen and public.id in seen and private.id not in seen
        subnet = admin_conn.network.create_subnet(network_id=shared.id, ip_version=4,
                                                  cidr="10.77.0.0/24")
        assert member_conn.network.get_subnet(subnet.id).cidr == "10.77.0.0/24"
        port = member_conn.network.create_port(network_id=shared.id)
        assert port.project_id == member_conn.current_project_id
        # a member may not share, rename someone else's network, or add subnets to it
        assert member_raw.error("POST", "/networks", {"network": {"shared": True}})[0] == 403
        assert member_raw.error("PUT", f"/networks/{shared.id}",
                                {"network": {"name": "x"}})[0] == 403
        assert member_raw.error("POST", "/subnets", {"subnet": {
            "network_id": shared.id, "cidr": "10.78.0.0/24", "ip_version": 4}})[0] == 403
        # unsharing while another project has a port there is refused
        raw = Raw(cloud.session())
        status, fault = raw.error("PUT", f"/networks/{shared.id}",
                                  {"network": {"shared": False}})
        assert (status, fault["type"]) == (409, "InvalidSharedSetting")
        member_conn.network.delete_port(port)
    finally:
        for n in (shared, public, private):
            admin_conn.network.delete_network(n)


def _subnet_error(member_raw, network_id, **attrs):
    body = {"subnet": {"network_id": network_id, "ip_version": 4, **attrs}}
    return member_raw.error("POST", "/subnets", body)


@pytest.fixture
def network(member_conn):
    return member_conn.network.create_network(name=unique("sub"))


def test_subnet_defaults(member_conn, network):
    subnet = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                               cidr="192.168.10.0/24")
    assert subnet.gateway_ip == "192.168.10.1" and subnet.is_dhcp_enabled
    assert subnet.allocation_pools == [{"start": "192.168.10.2", "end": "192.168.10.254"}]
    no_gateway = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                                   cidr="192.168.11.0/24", gateway_ip=None)
    assert no_gateway.gateway_ip is None
    assert no_gateway.allocation_pools == [{"start": "192.168.11.1",
                                            "end": "192.168.11.254"}]
    middle = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                               cidr="192.168.12.0/24",
                                               gateway_ip="192.168.12.100",
                                               host_routes=[{"destination": "10.0.0.0/8",
                                                             "nexthop": "192.168.12.5"}])
    assert middle.allocation_pools == [{"start": "192.168.12.1", "end": "192.168.12.99"},
                                       {"start": "192.168.12.101", "end": "192.168.12.254"}]
    v6 = member_conn.network.create_subnet(network_id=network.id, ip_version=6,
                                           cidr="fd00:aa::/64")
    assert v6.gateway_ip == "fd00:aa::1"
    assert v6.allocation_pools == [{"start": "fd00:aa::2",
                                    "end": "fd00:aa::ffff:ffff:ffff:ffff"}]
    assert network.id == member_conn.network.get_network(network.id).id
    assert len(member_conn.network.get_network(network.id).subnet_ids) == 4


@pytest.mark.parametrize("attrs, status, kind", [
    ({"cidr": "10.0.0.0/33"}, 400, "HTTPBadRequest"),
    ({"cidr": "banana"}, 400, "HTTPBadRequest"),
    ({"cidr": 10}, 400, "HTTPBadRequest"),
    ({"cidr": "10.0.0.0/31"}, 400, "InvalidInput"),          # too small for DHCP
    ({"cidr": "224.0.0.0/24"}, 400, "InvalidInput"),         # multicast with DHCP
    ({"cidr": "fd00::/64"}, 400, "InvalidInput"),            # version mismatch
    ({"cidr": "10.1.0.0/24", "gateway_ip": "10.1.0.0"}, 400, "InvalidInput"),
    ({"cidr": "10.1.0.0/24", "gateway_ip": "fd00::1"}, 400, "InvalidInput"),
    ({"cidr": "10.1.0.0/24", "allocation_pools": [{"start": "10.2.0.2", "end": "10.2.0.9"}]},
     400, "OutOfBoundsAllocationPool"),
    ({"cidr": "10.1.0.0/24", "allocation_pools": [{"start": "10.1.0.9", "end": "10.1.0.2"}]},
     400, "InvalidAllocationPool"),
    ({"cidr": "10.1.0.0/24", "allocation_pools": [{"start": "10.1.0.2", "end": "10.1.0.255"}]},
     400, "OutOfBoundsAllocationPool"),                      # the broadcast address
    ({"cidr": "10.1.0.0/24", "allocation_pools": [{"start": "10.1.0.2"}]}, 400,
     "HTTPBadRequest"),
    ({"cidr": "10.1.0.0/24", "allocation_pools": [{"start": "10.1.0.2", "end": "10.1.0.20"},
                                                  {"start": "10.1.0.10", "end": "10.1.0.30"}]},
     409, "OverlappingAllocationPools"),
    ({"cidr": "10.1.0.0/24", "allocation_pools": [{"start": "10.1.0.1", "end": "10.1.0.20"}]},
     409, "GatewayConflictWithAllocationPools"),
    ({"cidr": "10.1.0.0/24", "dns_nameservers": ["8.8.8.8"] * 2}, 400, "InvalidInput"),
    ({"cidr": "10.1.0.0/24", "dns_nameservers": ["dns.example"]}, 400, "HTTPBadRequest"),
    ({"cidr": "10.1.0.0/24", "dns_nameservers": [f"8.8.8.{i}" for i in range(6)]}, 400,
     "DNSNameServersExhausted"),
    ({"cidr": "10.1.0.0/24", "host_routes": [{"destination": "fd00::/8",
                                              "nexthop": "10.1.0.3"}]}, 400, "InvalidInput"),
    ({"cidr": "10.1.0.0/24", "ipv6_ra_mode": "slaac"}, 400, "InvalidInput"),
    ({"cidr": "10.1.0.0/24", "enable_dhcp": "sometimes"}, 400, "HTTPBadRequest"),
    ({"cidr": "10.1.0.0/24", "subnetpool_id": "11111111-2222-3333-4444-555555555555"}, 404,
     "SubnetPoolNotFound"),
    ({}, 400, "HTTPBadRequest"),                             # no cidr
])
def test_bad_subnets(member_raw, network, attrs, status, kind):
    got_status, fault = _subnet_error(member_raw, network.id, **attrs)
    assert (got_status, fault["type"]) == (status, kind), fault


@pytest.mark.parametrize("attrs", [
    {"ip_version": 6, "cidr": "fd00:1::/64", "ipv6_ra_mode": "slaac",
     "ipv6_address_mode": "dhcpv6-stateful"},
    {"ip_version": 6, "cidr": "fd00:1::/80", "ipv6_address_mode": "slaac"},
    {"ip_version": 6, "cidr": "fd00:1::/64", "ipv6_address_mode": "slaac",
     "enable_dhcp": False},
    {"ip_version": 6, "cidr": "::/64"},
    {"ip_version": 5, "cidr": "10.0.0.0/24"},
])
def test_bad_ipv6_subnets(member_raw, network, attrs):
    status, fault = member_raw.error("POST", "/subnets", {"subnet": {"network_id": network.id,
                                                                     **attrs}})
    assert status == 400, fault


def test_overlapping_cidr_and_missing_network(member_conn, member_raw, network):
    member_conn.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.5.0.0/16")
    status, fault = _subnet_error(member_raw, network.id, cidr="10.5.3.0/24")
    assert (status, fault["type"]) == (400, "InvalidInput")
    assert "overlaps with another subnet" in fault["message"]
    other = member_conn.network.create_network(name=unique("other"))
    assert member_conn.network.create_subnet(network_id=other.id, ip_version=4,
                                             cidr="10.5.3.0/24")  # other network: fine
    status, fault = _subnet_error(member_raw, "11111111-2222-3333-4444-555555555555",
                                  cidr="10.6.0.0/24")
    assert (status, fault["type"]) == (404, "NetworkNotFound")
    status, fault = _subnet_error(member_raw, "not-a-uuid", cidr="10.6.0.0/24")
    assert status == 400


def test_subnet_update(member_conn, member_raw, network):
    subnet = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                               cidr="10.8.0.0/24")
    updated = member_conn.network.update_subnet(
        subnet, name="renamed", dns_nameservers=["1.1.1.1"],
        allocation_pools=[{"start": "10.8.0.10", "end": "10.8.0.20"}])
    assert updated.name == "renamed" and updated.dns_nameservers == ["1.1.1.1"]
    assert updated.allocation_pools == [{"start": "10.8.0.10", "end": "10.8.0.20"}]
    port = member_conn.network.create_port(network_id=network.id,
                                           fixed_ips=[{"subnet_id": subnet.id}])
    assert port.fixed_ips[0]["ip_address"] in {f"10.8.0.{i}" for i in range(10, 21)}
    status, fault = member_raw.error("PUT", f"/subnets/{subnet.id}",
                                     {"subnet": {"gateway_ip": "10.8.0.15"}})
    assert (status, fault["type"]) == (409, "GatewayConflictWithAllocationPools")
    status, fault = member_raw.error("PUT", f"/subnets/{subnet.id}",
                                     {"subnet": {"cidr": "10.9.0.0/24"}})
    assert status == 400 and "read-only" in fault["message"]


def test_ipv6_needs_an_mtu_of_1280(member_conn, member_raw):
    small = member_conn.network.create_network(name=unique("small-mtu"), mtu=1200)
    status, fault = member_raw.error("POST", "/subnets", {"subnet": {
        "network_id": small.id, "ip_version": 6, "cidr": "fd00:12::/64"}})
    assert status == 400 and "1280" in fault["message"]
    big = member_conn.network.create_network(name=unique("v6"))
    member_conn.network.create_subnet(network_id=big.id, ip_version=6, cidr="fd00:13::/64")
    status, fault = member_raw.error("PUT", f"/networks/{big.id}", {"network": {"mtu": 1200}})
    assert (status, fault["type"]) == (409, "NetworkMTUSubnetConflict")
