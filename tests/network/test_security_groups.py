"""Security groups: the per-project default group with neutron's rules, CRUD, duplicate
rules, and rule validation."""
from __future__ import annotations

import pytest
from network_helpers import Raw, unique


def _rule_shapes(group):
    return sorted((r["direction"], r["ethertype"], r["protocol"],
                   r["remote_group_id"] == group.id, r["remote_ip_prefix"])
                  for r in group.security_group_rules)


def test_default_group_on_first_use(member_conn):
    groups = list(member_conn.network.security_groups())
    assert [g.name for g in groups] == ["default"]
    default = groups[0]
    assert _rule_shapes(default) == [("egress", "IPv4", None, False, None),
                                     ("egress", "IPv6", None, False, None),
                                     ("ingress", "IPv4", None, True, None),
                                     ("ingress", "IPv6", None, True, None)]
    assert [g.id for g in member_conn.network.security_groups()] == [default.id]  # just one


def test_default_group_is_protected(member_conn, member_raw, raw):
    default = next(iter(member_conn.network.security_groups(name="default")))
    status, fault = member_raw.error("DELETE", f"/security-groups/{default.id}")
    assert (status, fault["type"]) == (409, "SecurityGroupCannotRemoveDefault")
    status, fault = member_raw.error("PUT", f"/security-groups/{default.id}",
                                     {"security_group": {"name": "other"}})
    assert (status, fault["type"]) == (409, "SecurityGroupCannotUpdateDefault")
    status, fault = member_raw.error("POST", "/security-groups",
                                     {"security_group": {"name": "default"}})
    assert (status, fault["type"]) == (409, "SecurityGroupDefaultAlreadyExists")
    # test tools delete a project's default group as admin at the end
    assert raw("DELETE", f"/security-groups/{default.id}").status_code == 204


def test_group_crud_and_in_use(member_conn, member_raw):
    group = member_conn.network.create_security_group(name=unique("web"), description="d")
    assert sorted((r["direction"], r["ethertype"]) for r in group.security_group_rules) == \
        [("egress", "IPv4"), ("egress", "IPv6")]
    group = member_conn.network.update_security_group(group, description="changed")
    assert group.description == "changed"
    net = member_conn.network.create_network(name=unique("sgnet"))
    member_conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.0.0.0/24")
    port = member_conn.network.create_port(network_id=net.id, security_group_ids=[group.id])
    status, fault = member_raw.error("DELETE", f"/security-groups/{group.id}")
    assert (status, fault["type"]) == (409, "SecurityGroupInUse")
    member_conn.network.delete_port(port)
    member_conn.network.delete_security_group(group)
    assert member_raw.error("GET", f"/security-groups/{group.id}")[0] == 404


def test_rules_and_duplicates(member_conn, member_raw):
    group = member_conn.network.create_security_group(name=unique("ssh"))
    rule = member_conn.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_ip_prefix="10.0.0.1/24")
    assert (rule.protocol, rule.port_range_min, rule.port_range_max) == ("tcp", 22, 22)
    body = member_raw("GET", f"/security-group-rules/{rule.id}").json()["security_group_rule"]
    assert body["normalized_cidr"] == "10.0.0.0/24" and body["ethertype"] == "IPv4"
    # the same rule, written differently (protocol number, same network) is a duplicate
    status, fault = member_raw.error("POST", "/security-group-rules", {"security_group_rule": {
        "security_group_id": group.id, "direction": "ingress", "protocol": "6",
        "port_range_min": 22, "port_range_max": 22, "remote_ip_prefix": "10.0.0.0/24"}})
    assert (status, fault["type"]) == (409, "SecurityGroupRuleExists")
    assert rule.id in fault["message"]
    # egress to anywhere already exists (0.0.0.0/0 means the same as no prefix)
    status, fault = member_raw.error("POST", "/security-group-rules", {"security_group_rule": {
        "security_group_id": group.id, "direction": "egress",
        "remote_ip_prefix": "0.0.0.0/0"}})
    assert status == 409
    full_range = member_conn.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", protocol="udp",
        port_range_min=1, port_range_max=65535)
    assert full_range.port_range_min is None  # neutron drops the full range
    icmp6 = member_conn.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", protocol="icmp", ether_type="IPv6")
    assert icmp6.protocol == "ipv6-icmp"
    member_conn.network.delete_security_group_rule(rule)
    assert member_raw.error("GET", f"/security-group-rules/{rule.id}")[0] == 404
    listed = [r.id for r in member_conn.network.security_group_rules(
        security_group_id=group.id, direction="ingress")]
    assert sorted(listed) == sorted([full_range.id, icmp6.id])


@pytest.mark.parametrize("attrs, kind", [
    ({"direction": "sideways"}, "HTTPBadRequest"),
    ({}, "HTTPBadRequest"),
    ({"direction": "ingress", "protocol": "tcpp"}, "SecurityGroupRuleInvalidProtocol"),
    ({"direction": "ingress", "protocol": "256"}, "SecurityGroupRuleInvalidProtocol"),
    ({"direction": "ingress", "ethertype": "IPv5"}, "SecurityGroupRuleInvalidEtherType"),
    ({"direction": "ingress", "protocol": "tcp", "port_range_min": 80, "port_range_max": 22},
     "SecurityGroupInvalidPortRange"),
    ({"direction": "ingress", "protocol": "tcp", "port_range_min": 0, "port_range_max": 22},
     "SecurityGroupInvalidPortValue"),
    ({"direction": "ingress", "protocol": "tcp", "port_range_min": 70000,
      "port_range_max": 70000}, "SecurityGroupInvalidPortValue"),
    ({"direction": "ingress", "protocol": "tcp", "port_range_min": 22},
     "SecurityGroupInvalidPortRange"),
    ({"direction": "ingress", "port_range_min": 22, "port_range_max": 22},
     "SecurityGroupProtocolRequiredWithPorts"),
    ({"direction": "ingress", "protocol": "gre", "port_range_min": 22, "port_range_max": 22},
     "SecurityGroupInvalidProtocolForPort"),
    ({"direction": "ingress", "protocol": "icmp", "port_range_min": 300},
     "SecurityGroupInvalidIcmpValue"),
    ({"direction": "ingress", "protocol": "icmp", "port_range_max": 0},
     "SecurityGroupMissingIcmpType"),
    ({"direction": "ingress", "ethertype": "IPv4", "remote_ip_prefix": "fd00::/8"},
     "SecurityGroupRuleParameterConflict"),
    ({"direction": "ingress", "ethertype": "IPv6", "remote_ip_prefix": "10.0.0.0/8"},
     "SecurityGroupRuleParameterConflict"),
    ({"direction": "ingress", "remote_ip_prefix": "10.0.0.0/40"}, "InvalidCIDR"),
    ({"direction": "ingress", "ethertype": "IPv4", "protocol": "ipv6-icmp"},
     "SecurityGroupEthertypeConflictWithProtocol"),
    ({"direction": "ingress", "remote_ip_prefix": "10.0.0.0/8",
      "remote_group_id": "SELF"}, "SecurityGroupMultipleRemoteEntites"),
    ({"direction": "ingress", "remote_group_id": "11111111-2222-3333-4444-555555555555"},
     "SecurityGroupNotFound"),
])
def test_bad_rules(member_conn, member_raw, attrs, kind):
    group = member_conn.network.create_security_group(name=unique("bad"))
    if attrs.get("remote_group_id") == "SELF":
        attrs = dict(attrs, remote_group_id=group.id)
    status, fault = member_raw.error("POST", "/security-group-rules", {"security_group_rule": {
        "security_group_id": group.id, **attrs}})
    assert fault["type"] == kind, fault
    assert status == (404 if kind.endswith("NotFound") else 400)


def test_other_projects_group_is_invisible(cloud, member_conn):
    group = member_conn.network.create_security_group(name=unique("mine"))
    stranger = cloud.user_sdk(cloud.make_user(roles=("member",)))
    assert group.id not in [g.id for g in stranger.network.security_groups()]
    raw = Raw(cloud.session(**{}))  # admin sees it
    assert raw("GET", f"/security-groups/{group.id}").status_code == 200
    stranger_raw = Raw(stranger.session)
    status, fault = stranger_raw.error("POST", "/security-group-rules", {
        "security_group_rule": {"security_group_id": group.id, "direction": "ingress"}})
    assert (status, fault["type"]) == (404, "SecurityGroupNotFound")
