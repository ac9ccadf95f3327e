"""Issue 9: security groups rendered as nftables rules (network/agent/firewall.py). The
text is checked here; whether the kernel filters as it says is test_guestnet_host.py's
job. With root, the rendered table is also checked by nft itself (--check: nothing is
applied)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from pocketstack.network.agent.firewall import GuestPort, Rule, render, render_l2

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
    jumps = [line for line in guests if "jump" in line]
    # every sender's egress jump comes before any receiver's ingress jump
    assert [j.split()[0] for j in jumps] == ["iifname"] * 3 + ["oifname"] * 3
    assert 'oifname "brq5e0b8a2c-11" ip6 daddr fd00::6 jump ' \
           "in_bbbbbbbb000040008000000000000002" in guests
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
    assert 'iifname "tapaaaaaaaa-00" jump spoof_aaaaaaaa000040008000000000000001' in \
        chain(text, "ports")
    assert chain(text, "host")[-1] == \
        'iifname { "tapaaaaaaaa-00", "tapbbbbbbbb-00", "tapdddddddd-00" } drop'
    assert chain(text, "spoof_aaaaaaaa000040008000000000000001") == [
        "ether saddr != { fa:16:3e:00:00:05, fa:16:3e:00:00:09 } drop",
        "arp saddr ip != { 10.0.0.5, 10.0.9.0/24 } arp saddr ip != 0.0.0.0 drop",
        "ip saddr != { 10.0.0.5, 10.0.9.0/24 } ip saddr != 0.0.0.0 drop",
        "ip6 saddr != fd00::5 ip6 saddr != fe80::/10 ip6 saddr != :: drop"]
    assert "ether type { ip, arp } drop" in chain(text, "spoof_bbbbbbbb000040008000000000000002")
