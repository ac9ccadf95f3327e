"""QoS rules of every type (bandwidth_limit, dscp_marking, minimum_bandwidth,
minimum_packet_rate, packet_rate_limit) through openstacksdk, their alias API by rule id alone and
the rule
types through keystoneauth, and tags on QoS policies."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


@pytest.fixture
def policy(admin_conn):
    policy = admin_conn.network.create_qos_policy(name=unique("qos"))
    yield policy
    admin_conn.network.delete_qos_policy(policy.id, ignore_missing=True)


def test_rules_of_every_type(admin_conn, policy):
    net = admin_conn.network
    dscp = net.create_qos_dscp_marking_rule(policy, dscp_mark=26)
    assert dscp.dscp_mark == 26
    minimum = net.create_qos_minimum_bandwidth_rule(policy, min_kbps=1000)
    assert (minimum.min_kbps, minimum.direction) == (1000, "egress")
    ingress = net.create_qos_minimum_bandwidth_rule(policy, min_kbps=500, direction="ingress")
    pps = net.create_qos_minimum_packet_rate_rule(policy, min_kpps=100)
    assert (pps.min_kpps, pps.direction) == (100, "egress")
    limit = net.create_qos_bandwidth_limit_rule(policy, max_kbps=5000)

    shown = net.get_qos_policy(policy)
    types = sorted((r["type"], r.get("direction")) for r in shown.rules)
    assert types == [("bandwidth_limit", "egress"), ("dscp_marking", None),
                     ("minimum_bandwidth", "egress"), ("minimum_bandwidth", "ingress"),
                     ("minimum_packet_rate", "egress")]
    assert all(r["qos_policy_id"] == policy.id for r in shown.rules)

    assert net.update_qos_dscp_marking_rule(dscp, policy, dscp_mark=46).dscp_mark == 46
    assert net.get_qos_dscp_marking_rule(dscp, policy).dscp_mark == 46
    assert [r.id for r in net.qos_minimum_bandwidth_rules(policy)] and \
        {r.id for r in net.qos_minimum_bandwidth_rules(policy)} == {minimum.id, ingress.id}
    assert net.update_qos_minimum_packet_rate_rule(pps, policy, min_kpps=200).min_kpps == 200
    for delete, rule in ((net.delete_qos_dscp_marking_rule, dscp),
                         (net.delete_qos_minimum_bandwidth_rule, minimum),
                         (net.delete_qos_minimum_packet_rate_rule, pps),
                         (net.delete_qos_bandwidth_limit_rule, limit)):
        delete(rule, policy, ignore_missing=False)
    with pytest.raises(sdk_exc.NotFoundException):
        net.get_qos_dscp_marking_rule(dscp, policy)
    assert [r["type"] for r in net.get_qos_policy(policy).rules] == ["minimum_bandwidth"]


def _error(raw, method, path, body=None):
    response = raw(method, path, body)
    fault = response.json()["NeutronError"]
    assert set(fault) == {"type", "message", "detail"}
    return response.status_code, fault


def test_packet_rate_limit_rules(admin_conn, raw, policy):
    """qos-pps: a packet rate limit per direction, listed among the policy's rules."""
    net = admin_conn.network
    egress = net.create_qos_packet_rate_limit_rule(policy, max_kpps=1000)
    assert (egress.max_kpps, egress.max_burst_kpps, egress.direction) == (1000, 0, "egress")
    ingress = net.create_qos_packet_rate_limit_rule(policy, max_kpps=300, max_burst_kpps=50,
                                                    direction="ingress")
    shown = net.get_qos_policy(policy)
    assert sorted((r["type"], r["direction"], r["max_kpps"], r["max_burst_kpps"])
                  for r in shown.rules) == [
        ("packet_rate_limit", "egress", 1000, 0), ("packet_rate_limit", "ingress", 300, 50)]
    assert {r.id for r in net.qos_packet_rate_limit_rules(policy)} == {egress.id, ingress.id}
    updated = net.update_qos_packet_rate_limit_rule(egress, policy, max_burst_kpps=200)
    assert (updated.max_kpps, updated.max_burst_kpps) == (1000, 200)
    assert net.get_qos_packet_rate_limit_rule(egress, policy).max_burst_kpps == 200
    # one per direction; max_kpps required; no 'any' direction; no alias collection
    path = f"/qos/policies/{policy.id}/packet_rate_limit_rules"
    status, fault = _error(raw, "POST", path, {"packet_rate_limit_rule": {"max_kpps": 5}})
    assert (status, fault["type"]) == (409, "QoSRulesConflict")
    for body in ({"max_burst_kpps": 5}, {"max_kpps": -1}, {"max_kpps": 5, "direction": "any"},
                 {"max_kpps": "x"}):
        assert raw("POST", path, {"packet_rate_limit_rule": body}).status_code == 400, body
    assert raw("GET", f"/qos/alias_packet_rate_limit_rules/{egress.id}").status_code == 404
    net.delete_qos_packet_rate_limit_rule(ingress, policy)
    assert [r["direction"] for r in net.get_qos_policy(policy).rules] == ["egress"]


def test_conflicts_and_bad_values(admin_conn, raw, policy):
    path = f"/qos/policies/{policy.id}"
    net = admin_conn.network
    dscp = net.create_qos_dscp_marking_rule(policy, dscp_mark=10)
    status, fault = _error(raw, "POST", f"{path}/dscp_marking_rules",
                           {"dscp_marking_rule": {"dscp_mark": 12}})
    assert (status, fault["type"]) == (409, "QoSRulesConflict")
    assert fault["message"] == (f"Rule dscp_marking conflicts with rule {dscp.id} which "
                                f"already exists in QoS Policy {policy.id}.")
    status, fault = _error(raw, "POST", f"{path}/dscp_marking_rules",
                           {"dscp_marking_rule": {"dscp_mark": 9}})
    assert (status, fault["type"]) == (400, "HTTPBadRequest")
    assert "Invalid input for dscp_mark" in fault["message"]
    status, fault = _error(raw, "POST", f"{path}/minimum_bandwidth_rules",
                           {"minimum_bandwidth_rule": {}})
    assert status == 400 and "'min_kbps' not specified" in fault["message"]
    status, _ = _error(raw, "POST", f"{path}/minimum_packet_rate_rules",
                       {"minimum_packet_rate_rule": {"min_kpps": -1}})
    assert status == 400

    # a minimum above the limit of the same direction, and the other way round
    net.create_qos_bandwidth_limit_rule(policy, max_kbps=1000)
    status, fault = _error(raw, "POST", f"{path}/minimum_bandwidth_rules",
                           {"minimum_bandwidth_rule": {"min_kbps": 2000}})
    assert (status, fault["type"]) == (409, "QoSRuleParameterConflict")
    assert fault["message"] == (f"Unable to add the rule with value 2000 to the policy "
                                f"{policy.id} as the existing rule of type bandwidth_limit "
                                f"has value 1000.")
    net.create_qos_minimum_bandwidth_rule(policy, min_kbps=2000, direction="ingress")

    # minimum packet rate: 'any' does not mix with a direction
    net.create_qos_minimum_packet_rate_rule(policy, min_kpps=10, direction="any")
    status, fault = _error(raw, "POST", f"{path}/minimum_packet_rate_rules",
                           {"minimum_packet_rate_rule": {"min_kpps": 10,
                                                         "direction": "ingress"}})
    assert (status, fault["type"]) == (409, "QoSRuleParameterConflict")
    # a rule of another policy, or of another type, is not found
    status, fault = _error(raw, "GET", f"{path}/minimum_bandwidth_rules/{dscp.id}")
    assert (status, fault["type"]) == (404, "QosRuleNotFound")
    status, fault = _error(raw, "GET", f"{path}/no_such_rules")
    assert status == 404


def test_members_read_but_do_not_write_rules(admin_conn, member_conn, member, policy):
    net = admin_conn.network
    net.update_qos_policy(policy, shared=True)
    rule = net.create_qos_dscp_marking_rule(policy, dscp_mark=8)
    assert member_conn.network.get_qos_dscp_marking_rule(rule, policy).dscp_mark == 8
    with pytest.raises(sdk_exc.ForbiddenException):
        member_conn.network.create_qos_minimum_bandwidth_rule(policy, min_kbps=10)
    with pytest.raises(sdk_exc.ForbiddenException):
        member_conn.network.delete_qos_dscp_marking_rule(rule, policy)
    net.update_qos_policy(policy, shared=False)


def test_alias_rules(admin_conn, raw, member_raw, policy):
    net = admin_conn.network
    limit = net.create_qos_bandwidth_limit_rule(policy, max_kbps=100)
    pps = net.create_qos_minimum_packet_rate_rule(policy, min_kpps=5)
    response = raw("GET", f"/qos/alias_bandwidth_limit_rules/{limit.id}")
    assert response.status_code == 200
    assert response.json() == {"alias_bandwidth_limit_rule": {
        "id": limit.id, "max_kbps": 100, "max_burst_kbps": 0, "direction": "egress"}}
    response = raw("PUT", f"/qos/alias_minimum_packet_rate_rules/{pps.id}",
                   {"alias_minimum_packet_rate_rule": {"min_kpps": 7}})
    assert response.json()["alias_minimum_packet_rate_rule"]["min_kpps"] == 7
    assert net.get_qos_minimum_packet_rate_rule(pps, policy).min_kpps == 7
    # the id of a rule of another type
    status, fault = _error(raw, "GET", f"/qos/alias_dscp_marking_rules/{limit.id}")
    assert (status, fault["type"]) == (404, "QosRuleNotFound")
    assert fault["message"] == f"QoS rule {limit.id} for policy  could not be found."
    # another project's policy is not there for a member
    status, fault = _error(member_raw, "GET", f"/qos/alias_bandwidth_limit_rules/{limit.id}")
    assert (status, fault["type"]) == (404, "QosPolicyNotFound")
    assert raw("DELETE", f"/qos/alias_minimum_packet_rate_rules/{pps.id}").status_code == 204
    assert [r["type"] for r in net.get_qos_policy(policy).rules] == ["bandwidth_limit"]


def test_rule_types(admin_conn, member_conn, member_raw):
    types = {t.type for t in admin_conn.network.qos_rule_types()}
    assert types == {"bandwidth_limit", "dscp_marking", "minimum_bandwidth",
                     "minimum_packet_rate", "packet_rate_limit"}
    assert {t.type for t in member_conn.network.qos_rule_types(all_rules=True)} == types
    shown = admin_conn.network.get_qos_rule_type("dscp_marking")
    assert shown.type == "dscp_marking" and shown.drivers == []
    status, fault = _error(member_raw, "GET", "/qos/rule-types/dscp_marking")
    assert (status, fault["type"]) == (403, "NotAuthorized")
    for name in ("qos-rules-alias", "qos-bw-minimum-ingress",
                 "qos-pps-minimum", "qos-pps", "qos-rule-type-details"):
        assert admin_conn.network.find_extension(name) is not None, name


def test_tags_on_qos_policies(admin_conn, policy):
    net = admin_conn.network
    net.set_tags(policy, ["gold", "east"])
    assert sorted(net.get_qos_policy(policy).tags) == ["east", "gold"]
    tagged = [p.id for p in net.qos_policies(tags="gold")]
    assert tagged == [policy.id]
    net.remove_tag(policy, "east")
    assert net.get_qos_policy(policy).tags == ["gold"]
    created = net.create_qos_policy(name=unique("qos"), tags=["silver"])
    assert created.tags == ["silver"]
    net.delete_qos_policy(created)


def test_tags_under_qos_path(admin_conn, raw, policy):
    """The documented /qos/policies/{id}/tags reaches the same tags."""
    assert raw("PUT", f"/qos/policies/{policy.id}/tags/blue").status_code == 201
    assert raw("GET", f"/policies/{policy.id}/tags").json() == {"tags": ["blue"]}
    assert raw("GET", "/qos/policies/00000000-0000-0000-0000-000000000000/tags"
               ).json()["NeutronError"]["type"] == "QosPolicyNotFound"
