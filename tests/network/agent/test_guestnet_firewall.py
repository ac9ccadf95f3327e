"""Security groups rendered as nftables rules (network/agent/firewall.py). The
text is checked here; whether the kernel filters as it says is test_guestnet_host.py's
job. With root, the rendered table is also checked by nft itself (--check: nothing is
applied)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from pocketstack.network.agent.firewall import (GuestPort, Rule, layout, render, render_changes,
                                                render_l2)

NET = "5e0b8a2c-1111-4222-8333-944455556666"
WEB = GuestPort("aaaaaaaa-0000-4000-8000-000000000001", NET, ["10.0.0.5"], ["sg-web"])
DB = GuestPort("bbbbbbbb-0000-4000-8000-000000000002", NET, ["10.0.0.6", "fd00::6"],
               ["sg-db"])


def rule(group, direction="ingress", ethertype="IPv4", protocol=None, low=None, high=None,
         prefix=None, remote=None):
    return Rule(group, direction, ethertype, protocol, low, high, prefix, remote)


RULES = [
    rule("sg-web", protocol="tcp", low=80, high=80, prefix="0.0.0.0/0"),
    rule("sg-web", protocol="tcp", low=8000, high=8080, prefix="192.168.0.0/16"),
    rule("sg-web", protocol="icmp", low=8, prefix="10.0.0.0/24"),
    rule("sg-web", "egress"), rule("sg-web", "egress", "IPv6"),
    rule("sg-db", protocol="6", low=5432, high=5432, remote="sg-web"),
    rule("sg-db", ethertype="IPv6", protocol="ipv6-icmp", remote="sg-db"),
    rule("sg-db", protocol="udp", prefix="fd00::/64"),  # an IPv6 prefix on IPv4: never
]
MEMBERS = {"sg-web": ["10.0.0.5"], "sg-db": ["10.0.0.6", "fd00::6"]}


def chain(text: str, name: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"  chain {name} {{")
    end = lines.index("  }", start)
    return [line.strip() for line in lines[start + 1:end]]


def test_ingress_allow_lists_per_port():
    text = render("t", [WEB, DB], RULES, MEMBERS)
    web_in = chain(text, "in_aaaaaaaa000040008000000000000001")
    assert web_in[0] == "ct state established,related accept"
    assert "meta nfproto ipv4 ip saddr 0.0.0.0/0 tcp dport 80 accept" in web_in
    assert "meta nfproto ipv4 ip saddr 192.168.0.0/16 tcp dport 8000-8080 accept" in web_in
    assert "meta nfproto ipv4 ip saddr 10.0.0.0/24 meta l4proto icmp icmp type 8 accept" \
        in web_in
    assert web_in[-1] == "drop"
    db_in = chain(text, "in_bbbbbbbb000040008000000000000002")
    # set names: the group id without dashes (nft identifiers)
    assert "meta nfproto ipv4 ip saddr @g_sgweb_4 tcp dport 5432 accept" in db_in
    assert "meta nfproto ipv6 ip6 saddr @g_sgdb_6 meta l4proto icmpv6 accept" in db_in
    assert not any("udp" in line and "fd00" in line for line in db_in)


def test_egress_returns_to_the_receivers_check_and_sets_hold_members():
    text = render("t", [WEB, DB], RULES, MEMBERS)
    web_out = chain(text, "out_aaaaaaaa000040008000000000000001")
    assert web_out == ["ct state established,related return", "meta nfproto ipv4 return",
                       "meta nfproto ipv6 return", "drop"]
    db_out = chain(text, "out_bbbbbbbb000040008000000000000002")
    assert db_out == ["ct state established,related return", "drop"]  # no egress rule
    assert "  set g_sgweb_4 { type ipv4_addr; elements = { 10.0.0.5 }; }" in text
    assert "  set g_sgdb_6 { type ipv6_addr; elements = { fd00::6 }; }" in text
    guests = chain(text, "guests")
    maps = [line for line in guests if "vmap" in line]
    # every sender's egress jump comes before any receiver's ingress jump
    assert maps == ["iifname . ip saddr vmap @egress4", "iifname . ip6 saddr vmap @egress6",
                    "oifname . ip daddr vmap @ingress4", "oifname . ip6 daddr vmap @ingress6"]
    assert ('  map ingress6 { type ifname . ipv6_addr : verdict; elements = { '
            '"brq5e0b8a2c-11" . fd00::6 : jump in_bbbbbbbb000040008000000000000002 }; }'
            in text.splitlines())
    # nothing routed in or out of guest bridges, nothing delivered to the host
    assert 'iifname "brq*" oifname != "brq*" drop' in guests
    assert 'iifname "brq*" drop' in chain(text, "host")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("nft") is None,
                    reason="nft --check needs root and nftables")
def test_nft_accepts_the_table():
    # group ids are UUIDs in real use: set names must be nft identifiers
    members = {"3f6c1d2e-aaaa-4bbb-8ccc-000000000001": ["10.0.0.5"]}
    rules = [rule("3f6c1d2e-aaaa-4bbb-8ccc-000000000001",
                  remote="3f6c1d2e-aaaa-4bbb-8ccc-000000000001", protocol="tcp", low=22),
             *RULES[:5]]
    port = GuestPort(WEB.id, NET, ["10.0.0.5", "fd00::5"],
                     ["3f6c1d2e-aaaa-4bbb-8ccc-000000000001", "sg-web"])
    port.mac, port.pairs = "fa:16:3e:00:00:05", [{"ip_address": "10.0.9.0/24",
                                                  "mac_address": "fa:16:3e:00:00:09"}]
    text = render("guestnet_check", [port], rules, members) + render_l2(
        "guestnet_check", [port], ["tapdddddddd-00"])
    proc = subprocess.run(["nft", "--check", "-f", "-"], input=text, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr + text


def test_anti_spoofing_and_host_isolation_per_tap():
    port = GuestPort(WEB.id, NET, ["10.0.0.5", "fd00::5"], [], "fa:16:3e:00:00:05",
                     [{"ip_address": "10.0.9.0/24", "mac_address": "fa:16:3e:00:00:09"}])
    v6_only = GuestPort(DB.id, NET, ["fd00::6"], [], "fa:16:3e:00:00:06")
    text = render_l2("t", [port, v6_only], ["tapdddddddd-00"])
    assert chain(text, "ports")[-1] == "iifname vmap @spoof"
    assert ('  map spoof { type ifname : verdict; elements = { "tapaaaaaaaa-00" : jump '
            'spoof_aaaaaaaa000040008000000000000001, "tapbbbbbbbb-00" : jump '
            'spoof_bbbbbbbb000040008000000000000002 }; }') in text.splitlines()
    assert chain(text, "host")[-1] == "iifname @guest_taps drop"
    assert ('  set guest_taps { type ifname; elements = { "tapaaaaaaaa-00", '
            '"tapbbbbbbbb-00", "tapdddddddd-00" }; }') in text.splitlines()
    assert chain(text, "spoof_aaaaaaaa000040008000000000000001") == [
        "ether saddr != { fa:16:3e:00:00:05, fa:16:3e:00:00:09 } drop",
        "arp saddr ip != { 10.0.0.5, 10.0.9.0/24 } arp saddr ip != 0.0.0.0 drop",
        "ip saddr != { 10.0.0.5, 10.0.9.0/24 } ip saddr != 0.0.0.0 drop",
        "ip6 saddr != fd00::5 ip6 saddr != fe80::/10 ip6 saddr != :: drop"]
    assert "ether type { ip, arp } drop" in chain(text, "spoof_bbbbbbbb000040008000000000000002")


def test_a_bind_sends_only_the_new_ports_pieces():
    """The agent's change per port: the new port's chains and its map and set elements;
    the other ports' chains are not sent again."""
    web = GuestPort(WEB.id, NET, WEB.ips, WEB.groups, "fa:16:3e:00:00:05")
    db = GuestPort(DB.id, NET, DB.ips, DB.groups, "fa:16:3e:00:00:06")
    before = layout([web], RULES, {"sg-web": ["10.0.0.5"]}, ["tapdddddddd-00"])
    after = layout([web, db], RULES, MEMBERS, ["tapdddddddd-00"])
    script = render_changes("t", before, after).splitlines()
    assert not any("aaaaaaaa" in line for line in script), script
    assert "add chain inet t in_bbbbbbbb000040008000000000000002" in script
    assert ('add element inet t ingress6 { "brq5e0b8a2c-11" . fd00::6 : jump '
            'in_bbbbbbbb000040008000000000000002 }') in script
    assert ('add element bridge t spoof { "tapbbbbbbbb-00" : jump '
            'spoof_bbbbbbbb000040008000000000000002 }') in script
    assert 'add element bridge t guest_taps { "tapbbbbbbbb-00" }' in script
    assert render_changes("t", after, after) == ""
    # and back: its elements leave before its chains are deleted
    back = render_changes("t", after, before).splitlines()
    assert back.index('delete element bridge t guest_taps { "tapbbbbbbbb-00" }') < \
        back.index("delete chain inet t in_bbbbbbbb000040008000000000000002")
    assert "flush set inet t g_sgdb_6" in back  # the group has no member left


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("nft") is None,
                    reason="applying nftables needs root and nftables")
def test_changes_applied_leave_the_same_tables_as_a_whole_swap():
    """Applied for real (a table of this test's own): ports added, changed and removed
    one change at a time end where a whole swap of the final state ends."""
    from pocketstack.common import config
    from pocketstack.network.agent import firewall

    table = f"guestnet_inc_{os.getpid()}"
    config.CONF.set_override("nft_table", table, group="network")

    def listing():
        return "".join(subprocess.run(["nft", "list", "table", family, table],
                                      capture_output=True, text=True, check=True).stdout
                       for family in ("inet", "bridge"))

    web = GuestPort(WEB.id, NET, WEB.ips, WEB.groups, "fa:16:3e:00:00:05")
    db = GuestPort(DB.id, NET, DB.ips, DB.groups, "fa:16:3e:00:00:06")
    db_moved = GuestPort(DB.id, NET, ["10.0.0.7"], ["sg-web"], "fa:16:3e:00:00:07")
    steps = [layout([web], RULES, {"sg-web": ["10.0.0.5"]}, ["tapdddddddd-00"]),
             layout([web, db], RULES, MEMBERS, ["tapdddddddd-00"]),
             layout([web, db_moved], RULES, {"sg-web": ["10.0.0.5", "10.0.0.7"]}, []),
             layout([db_moved], RULES, {"sg-web": ["10.0.0.7"]}, [])]
    try:
        firewall.apply_layout(None, steps[0])
        for old, new in zip(steps, steps[1:]):
            assert render_changes(table, old, new)
            firewall.apply_layout(old, new)
        incremental = listing()
        firewall.apply_layout(None, steps[-1])
        assert incremental == listing()
        assert "aaaaaaaa" not in incremental and "in_bbbbbbbb" in incremental
    finally:
        firewall.apply_layout(None, None)
        config.CONF.clear_override("nft_table", group="network")
