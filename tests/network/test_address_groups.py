"""Address groups (/v2.0/address-groups, add/remove addresses) and security group rules
naming one as remote_address_group_id, through openstacksdk; and the host firewall's
nftables interval sets for them (checked by nft itself, and applied to a table of the
test's own when run as root)."""
from __future__ import annotations

import os
import subprocess

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc

from pocketstack.network.agent.firewall import (GuestPort, Rule, layout, render,
                                                render_changes)


def test_address_group_lifecycle(member_conn, member_raw):
    net = member_conn.network
    group = net.create_address_group(name=unique("ag"), description="office",
                                     addresses=["10.1.0.7/24", "192.0.2.5", "2001:db8::/64"])
    # normalized as neutron: network/prefixlen
    assert sorted(group.addresses) == ["10.1.0.0/24", "192.0.2.5/32", "2001:db8::/64"]
    group = net.add_addresses_to_address_group(group, ["198.51.100.0/24"])
    assert "198.51.100.0/24" in group.addresses
    with pytest.raises(sdk_exc.BadRequestException) as caught:
        net.add_addresses_to_address_group(group, ["198.51.100.0/24"])
    assert "already exist in the address group" in str(caught.value)
    group = net.remove_addresses_from_address_group(group, ["192.0.2.5/32"])
    assert "192.0.2.5/32" not in group.addresses
    with pytest.raises(sdk_exc.NotFoundException) as caught:
        net.remove_addresses_from_address_group(group, ["203.0.113.0/24"])
    assert "not found in the address group" in str(caught.value)
    renamed = net.update_address_group(group, name="renamed")
    assert renamed.name == "renamed"
    assert group.id in {g.id for g in net.address_groups(name="renamed")}
    response = member_raw("PUT", f"/address-groups/{group.id}",
                          {"address_group": {"addresses": ["10.0.0.0/8"]}})
    assert response.status_code == 400  # addresses change only through the actions
    response = member_raw("POST", "/address-groups",
                          {"address_group": {"addresses": ["not-a-cidr"]}})
    assert response.status_code == 400
    assert response.json()["NeutronError"]["type"] == "HTTPBadRequest"
    net.delete_address_group(group)
    with pytest.raises(sdk_exc.NotFoundException):
        net.get_address_group(group.id)


def test_rules_with_address_groups(member_conn, member_raw, admin_conn):
    net = member_conn.network
    ag = net.create_address_group(name=unique("ag"), addresses=["10.2.0.0/16"])
    sg = net.create_security_group(name=unique("sg"))
    rule = net.create_security_group_rule(security_group_id=sg.id, direction="ingress",
                                          protocol="tcp", port_range_min=443,
                                          port_range_max=443, remote_address_group_id=ag.id)
    assert rule.remote_address_group_id == ag.id
    assert net.get_security_group_rule(rule.id).remote_address_group_id == ag.id
    listed = list(net.security_group_rules(remote_address_group_id=ag.id))
    assert [r.id for r in listed] == [rule.id]
    # the same rule again is a duplicate; with a prefix as well, two remotes
    with pytest.raises(sdk_exc.ConflictException):
        net.create_security_group_rule(security_group_id=sg.id, direction="ingress",
                                       protocol="tcp", port_range_min=443,
                                       port_range_max=443, remote_address_group_id=ag.id)
    response = member_raw("POST", "/security-group-rules", {"security_group_rule": {
        "security_group_id": sg.id, "direction": "ingress",
        "remote_ip_prefix": "10.0.0.0/8", "remote_address_group_id": ag.id}})
    assert response.status_code == 400
    assert response.json()["NeutronError"]["type"] == "SecurityGroupMultipleRemoteEntites"
    # another project's group, or none, is not found
    theirs = admin_conn.network.create_address_group(name=unique("ag"))
    for missing in (theirs.id, "00000000-0000-0000-0000-000000000000"):
        response = member_raw("POST", "/security-group-rules", {"security_group_rule": {
            "security_group_id": sg.id, "direction": "ingress",
            "remote_address_group_id": missing}})
        assert response.status_code == 404
        assert response.json()["NeutronError"]["type"] == "AddressGroupNotFound"
    # in use: not deleted
    with pytest.raises(sdk_exc.ConflictException) as caught:
        net.delete_address_group(ag)
    assert "is in use on one or more security group rules" in str(caught.value)
    net.delete_security_group_rule(rule)
    net.delete_address_group(ag)
    net.delete_security_group(sg)
    admin_conn.network.delete_address_group(theirs)
    assert admin_conn.network.find_extension("address-group") is not None


NET = "5e0b8a2c-1111-4222-8333-944455556666"
AG = "7d1e2f3a-aaaa-4bbb-8ccc-000000000042"
SG = "3f6c1d2e-aaaa-4bbb-8ccc-000000000001"
PORT = GuestPort("aaaaaaaa-0000-4000-8000-000000000001", NET, ["10.0.0.5", "fd00::5"], [SG],
                 "fa:16:3e:00:00:05")
RULES = [Rule(SG, "ingress", "IPv4", "tcp", 22, 22, None, None, AG),
         Rule(SG, "ingress", "IPv6", None, None, None, None, None, AG),
         Rule(SG, "egress", "IPv4", None, None, None, None, None)]


def test_firewall_matches_address_groups_as_interval_sets():
    groups = {AG: ["10.2.0.0/16", "10.2.3.0/24", "192.0.2.5/32", "2001:db8::/64"]}
    text = render("guestnet_ag", [PORT], RULES, {})
    assert "set a_7d1e2f3aaaaa4bbb8ccc000000000042_4 { type ipv4_addr; flags interval; }" \
        in text  # no addresses known: an empty set, matching nothing
    plan = layout([PORT], RULES, {}, [], groups)
    assert plan.sets["a_7d1e2f3aaaaa4bbb8ccc000000000042_4"] == (
        "ipv4_addr; flags interval", ("10.2.0.0/16", "192.0.2.5/32"))  # collapsed
    inbound = plan.chains["in_aaaaaaaa000040008000000000000001"]
    assert ("meta nfproto ipv4 ip saddr @a_7d1e2f3aaaaa4bbb8ccc000000000042_4 tcp dport 22"
            " accept") in inbound
    assert ("meta nfproto ipv6 ip6 saddr @a_7d1e2f3aaaaa4bbb8ccc000000000042_6 accept"
            in inbound)
    from pocketstack.network.agent.firewall import render_layout
    proc = subprocess.run(["nft", "--check", "-f", "-"], capture_output=True, text=True,
                          input=render_layout("guestnet_ag", plan), timeout=30)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="applies nftables tables")
def test_firewall_address_group_changes_apply():
    from pocketstack.common import config
    from pocketstack.network.agent import firewall

    table = f"guestnet_ag_{os.getpid()}"
    config.CONF.set_override("nft_table", table, group="network")
    before = layout([PORT], RULES, {}, [], {AG: ["10.2.0.0/16"]})
    after = layout([PORT], RULES, {}, [], {AG: ["10.2.0.0/16", "10.9.0.0/16"]})
    try:
        firewall.apply_layout(None, before)
        assert "add element" in render_changes(table, before, after)
        firewall.apply_layout(before, after)
        listed = subprocess.run(["nft", "list", "set", "inet", table,
                                 "a_7d1e2f3aaaaa4bbb8ccc000000000042_4"],
                                capture_output=True, text=True, check=True).stdout
        assert "10.2.0.0/16" in listed and "10.9.0.0/16" in listed
    finally:
        firewall.apply_layout(None, None)
        config.CONF.clear_override("nft_table", group="network")
