"""Security groups as nftables rules, one table (family inet) for this host's guests.

The guest bridges pass bridged IP traffic through the inet hooks (bridge option
nf_call_iptables), where connection tracking works; the kernels here lack conntrack in
the bridge family. Bridged packets carry the bridge as both in- and out-interface, so a
port is told apart by its fixed IPs on its bridge:

* ``oifname brqX ip daddr <port ip>`` jumps to the port's ingress chain: replies to what
  it sent, DHCP, IPv6 neighbour discovery, then an allow-list from its groups' ingress
  rules (remote prefix, remote group as a set of member addresses, protocol, ports),
  else drop;
* ``iifname brqX ip saddr <port ip>`` jumps to its egress chain first: its groups'
  egress rules (the default group allows all) return to the receiver's ingress check,
  anything else is dropped;
* nothing is routed between a guest bridge and any other interface, and nothing from a
  guest bridge is delivered to the host itself;
* a bridge-family table (render_l2) drops what a guest sends with a MAC or address not
  its own, and keeps every frame from guests and DHCP veths away from the host (ARP too).

The whole table is rendered from the database and swapped in one ``nft -f`` transaction.
"""
from __future__ import annotations

import dataclasses
import ipaddress

from pocketstack.common import config
from pocketstack.network import agent
from pocketstack.network.agent import ip as host

PROTOCOL_NUMBERS = {"1": "icmp", "6": "tcp", "17": "udp", "58": "icmpv6", "132": "sctp"}


@dataclasses.dataclass
class GuestPort:
    id: str
    network_id: str
    ips: list[str]
    groups: list[str]
    mac: str = ""
    pairs: list[dict] = dataclasses.field(default_factory=list)  # allowed address pairs


@dataclasses.dataclass
class Rule:
    group_id: str
    direction: str            # ingress | egress
    ethertype: str            # IPv4 | IPv6
    protocol: str | None
    port_range_min: int | None
    port_range_max: int | None
    remote_ip_prefix: str | None
    remote_group_id: str | None


def _hex(uuid: str) -> str:
    return uuid.replace("-", "")


def set_name(group_id: str, version: int) -> str:
    return f"g_{_hex(group_id)}_{version}"


def _match(rule: Rule) -> str | None:
    """The nft expression of one rule (without the verdict); None if it cannot match."""
    version = 6 if rule.ethertype == "IPv6" else 4
    family = "ip6" if version == 6 else "ip"
    peer = "saddr" if rule.direction == "ingress" else "daddr"
    parts = [f"meta nfproto ipv{version}"]
    if rule.remote_ip_prefix:
        net = ipaddress.ip_network(rule.remote_ip_prefix, strict=False)
        if net.version != version:
            return None
        parts.append(f"{family} {peer} {net}")
    elif rule.remote_group_id:
        parts.append(f"{family} {peer} @{set_name(rule.remote_group_id, version)}")
    protocol = (rule.protocol or "").lower()
    protocol = PROTOCOL_NUMBERS.get(protocol, protocol)
    if protocol in ("ipv6-icmp", "icmp") and version == 6:
        protocol = "icmpv6"
    if protocol in ("tcp", "udp", "sctp"):
        low, high = rule.port_range_min, rule.port_range_max
        if low is not None:
            ports = str(low) if high in (None, low) else f"{low}-{high}"
            parts.append(f"{protocol} dport {ports}")
        else:
            parts.append(f"meta l4proto {protocol}")
    elif protocol in ("icmp", "icmpv6"):
        parts.append(f"meta l4proto {protocol}")
        if rule.port_range_min is not None:
            parts.append(f"{protocol} type {rule.port_range_min}")
            if rule.port_range_max is not None:
                parts.append(f"{protocol} code {rule.port_range_max}")
    elif protocol.isdigit():
        parts.append(f"meta l4proto {protocol}")
    elif protocol:
        parts.append(f"meta l4proto {protocol}")
    return " ".join(parts)


def render(table: str, ports: list[GuestPort], rules: list[Rule],
           members: dict[str, list[str]]) -> str:
    """The table's nft text. ``members``: group id -> fixed IPs of every port in it."""
    by_group: dict[str, list[Rule]] = {}
    for rule in rules:
        by_group.setdefault(rule.group_id, []).append(rule)
    remote_groups = sorted({r.remote_group_id for r in rules if r.remote_group_id})
    # IPv6 neighbour discovery every port accepts (one set: nft parses an inline set per
    # port slowly, and the table is rendered on every bind)
    lines = [f"table inet {table} {{",
             "  set nd { type icmpv6_type; elements = { nd-neighbor-solicit, "
             "nd-neighbor-advert, nd-router-advert }; }"]
    for group_id in remote_groups:
        for version, kind in ((4, "ipv4_addr"), (6, "ipv6_addr")):
            ips = sorted(ip for ip in members.get(group_id, [])
                         if ipaddress.ip_address(ip).version == version)
            elements = f" elements = {{ {', '.join(ips)} }};" if ips else ""
            lines.append(f"  set {set_name(group_id, version)} {{ type {kind};{elements} }}")
    lines += ["  chain guests {",
              "    type filter hook forward priority 0; policy accept;",
              '    iifname "brq*" oifname != "brq*" drop',
              '    oifname "brq*" iifname != "brq*" drop']
    # The sender's egress chain first (it returns what it allows), then the receiver's
    # ingress chain decides: an accept ends the whole hook, so it can only come last.
    for direction, peer, chain in (("iifname", "saddr", "out"), ("oifname", "daddr", "in")):
        for port in ports:
            bridge = agent.bridge_name(port.network_id)
            for address in port.ips:
                family = "ip6" if ":" in address else "ip"
                lines.append(f'    {direction} "{bridge}" {family} {peer} {address} '
                             f"jump {chain}_{_hex(port.id)}")
    lines += ["  }",
              "  chain host {",
              "    type filter hook input priority 0; policy accept;",
              '    iifname "brq*" drop',
              "  }"]
    for port in ports:
        port_rules = [r for g in port.groups for r in by_group.get(g, [])]
        lines += [f"  chain in_{_hex(port.id)} {{",
                  "    ct state established,related accept",
                  "    udp sport 67 udp dport 68 accept",
                  "    icmpv6 type @nd accept"]
        lines += [f"    {m} accept" for m in _matches(port_rules, "ingress")]
        lines += ["    drop", "  }",
                  f"  chain out_{_hex(port.id)} {{",
                  "    ct state established,related return"]
        lines += [f"    {m} return" for m in _matches(port_rules, "egress")]
        lines += ["    drop", "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _matches(rules: list[Rule], direction: str) -> list[str]:
    out = []
    for rule in rules:
        if rule.direction != direction:
            continue
        match = _match(rule)
        if match is not None and match not in out:
            out.append(match)
    return out


def render_l2(table: str, ports: list[GuestPort], host_taps: list[str]) -> str:
    """The bridge-family table: what enters the bridge from a guest's tap must carry its
    MAC and addresses (or an allowed address pair's; 0.0.0.0 for DHCP), ARP included;
    nothing from a guest's tap or a DHCP veth reaches the host itself (no ARP answers
    either). Stateless, so it needs no connection tracking in the bridge family."""
    lines = [f"table bridge {table} {{",
             "  chain ports {",
             "    type filter hook prerouting priority -300; policy accept;"]
    lines += [f'    iifname "{agent.tap_name(p.id)}" jump spoof_{_hex(p.id)}'
              for p in ports if p.mac]
    lines.append("  }")
    taps = sorted({agent.tap_name(p.id) for p in ports} | set(host_taps))
    if taps:
        names = ", ".join(f'"{t}"' for t in taps)
        lines += ["  chain host {", "    type filter hook input priority 0; policy accept;",
                  f"    iifname {{ {names} }} drop", "  }"]
    for port in ports:
        if not port.mac:
            continue
        macs = sorted({port.mac} | {p["mac_address"] for p in port.pairs
                                    if p.get("mac_address")})
        v4 = sorted({a for a in port.ips if ":" not in a} |
                    {p["ip_address"] for p in port.pairs if ":" not in p["ip_address"]})
        v6 = sorted({a for a in port.ips if ":" in a} |
                    {p["ip_address"] for p in port.pairs if ":" in p["ip_address"]})
        lines += [f"  chain spoof_{_hex(port.id)} {{",
                  f"    ether saddr != {_one_or_set(macs)} drop"]
        if v4:
            addresses = _one_or_set(v4)
            lines += [f"    arp saddr ip != {addresses} arp saddr ip != 0.0.0.0 drop",
                      f"    ip saddr != {addresses} ip saddr != 0.0.0.0 drop"]
        else:
            lines += ["    ether type { ip, arp } drop"]
        if v6:
            lines += [f"    ip6 saddr != {_one_or_set(v6)} ip6 saddr != fe80::/10 "
                      "ip6 saddr != :: drop"]
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _one_or_set(values: list[str]) -> str:
    """A value alone when there is one (an inline set costs nft noticeably more)."""
    return values[0] if len(values) == 1 else "{ " + ", ".join(values) + " }"


def table_name() -> str:
    return config.CONF.network.nft_table


def apply(text: str | None) -> None:
    """Replace the tables (inet and bridge) in one transaction (``None``: remove them)."""
    table = table_name()
    script = "".join(f"table {family} {table} {{}}\ndelete table {family} {table}\n"
                     for family in ("inet", "bridge")) + (text or "")
    host.run("nft", "-f", "-", stdin=script)


def remove() -> None:
    apply(None)
