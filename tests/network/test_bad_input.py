"""Garbage in every attribute of every resource: the answer is a result or a 4xx in
neutron's format, never a 500 (and nothing half-written)."""
from __future__ import annotations

import pytest
from network_helpers import unique

GARBAGE = [None, "", "x" * 300, -1, 0, 2 ** 70, 1.5, True, [], {}, ["a"], {"a": 1},
           "not-a-uuid", "10.0.0.0/33", "fa:16:3e:zz:00:00", "\u2603", "' OR 1=1 --"]

ATTRIBUTES = {
    "networks": ["name", "description", "admin_state_up", "shared", "router:external", "mtu",
                 "port_security_enabled", "dns_domain", "provider:network_type",
                 "provider:physical_network", "provider:segmentation_id", "tags",
                 "project_id"],
    "subnets": ["name", "ip_version", "cidr", "gateway_ip", "allocation_pools",
                "dns_nameservers", "host_routes", "enable_dhcp", "ipv6_ra_mode",
                "ipv6_address_mode", "subnetpool_id", "service_types"],
    "ports": ["name", "admin_state_up", "mac_address", "fixed_ips", "device_id",
              "device_owner", "security_groups", "port_security_enabled",
              "allowed_address_pairs", "dns_name", "binding:host_id", "binding:profile",
              "binding:vnic_type", "tags"],
    "security-groups": ["name", "description", "stateful"],
    "security-group-rules": ["direction", "ethertype", "protocol", "port_range_min",
                             "port_range_max", "remote_ip_prefix", "remote_group_id",
                             "description"],
    "routers": ["name", "admin_state_up", "external_gateway_info"],
    "floatingips": ["floating_network_id", "floating_ip_address", "port_id",
                    "fixed_ip_address", "subnet_id"],
}
SINGULAR = {"networks": "network", "subnets": "subnet", "ports": "port",
            "security-groups": "security_group", "security-group-rules": "security_group_rule",
            "routers": "router", "floatingips": "floatingip"}


@pytest.fixture(scope="module")
def world(cloud):
    conn = cloud.sdk()
    net = conn.network.create_network(name=unique("garbage"))
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.0.0.0/24")
    group = conn.network.create_security_group(name=unique("garbage"))
    port = conn.network.create_port(network_id=net.id)
    router = conn.network.create_router(name=unique("garbage"))
    return {"networks": net.id, "subnets": subnet.id, "ports": port.id,
            "security-groups": group.id, "routers": router.id,
            "base": {"subnets": {"network_id": net.id, "ip_version": 4,
                                 "cidr": "10.9.0.0/24"},
                     "ports": {"network_id": net.id},
                     "security-group-rules": {"security_group_id": group.id,
                                              "direction": "ingress"},
                     "floatingips": {"floating_network_id": net.id}}}


def _check(response):
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert set(response.json()["NeutronError"]) == {"type", "message", "detail"}


@pytest.mark.parametrize("collection", sorted(ATTRIBUTES))
def test_garbage_never_500(raw, world, collection):
    key = SINGULAR[collection]
    for attribute in ATTRIBUTES[collection]:
        for value in GARBAGE:
            body = {key: dict(world["base"].get(collection, {}), **{attribute: value})}
            created = raw("POST", f"/{collection}", body)
            _check(created)
            if created.status_code == 201:
                raw("DELETE", f"/{collection}/{created.json()[key]['id']}")
            if collection in world:
                _check(raw("PUT", f"/{collection}/{world[collection]}",
                           {key: {attribute: value}}))


@pytest.mark.parametrize("body", [None, [], "x", 1, {"network": None}, {"network": []},
                                  {"network": "x"}, {"networks": "x"}, {"networks": [1]}])
def test_malformed_bodies(raw, body):
    _check(raw("POST", "/networks", body))


@pytest.mark.parametrize("query", ["limit=abc", "limit=1&marker=nope", "sort_key=name&sort_dir=up",
                                   "sort_key=a&sort_key=b&sort_dir=asc", "fields=",
                                   "fixed_ips=nonsense", "mtu=big", "id=%00", "tags=,,,",
                                   "page_reverse=True&limit=2", "name=" + "x" * 5000,
                                   "limit=99999999999999999999", "mtu=99999999999999999999"])
def test_odd_queries(raw, query):
    _check(raw("GET", f"/ports?{query}"))
    _check(raw("GET", f"/networks?{query}"))


def test_router_interface_garbage(raw, world):
    for body in (None, [], {"subnet_id": None}, {"subnet_id": "x"}, {"port_id": 5},
                 {"subnet_id": world["subnets"], "extra": 1}):
        _check(raw("PUT", f"/routers/{world['routers']}/add_router_interface", body))
        _check(raw("PUT", f"/routers/{world['routers']}/remove_router_interface", body))


def test_quota_garbage(raw, world):
    for body in (None, {"quota": None}, {"quota": {"network": None}},
                 {"quota": {"network": 1.5}}, {"quota": {"check_limit": "maybe"}},
                 {"quota": {"network": 2 ** 70}}, {"quota": {"network": "1e3"}}):
        _check(raw("PUT", "/quotas/some-project", body))
