"""Security groups as nftables rules, one table (family inet) for this host's guests.

The guest bridges pass bridged IP traffic through the inet hooks (bridge option
nf_call_iptables), where connection tracking works; the kernels here lack conntrack in
the bridge family. Bridged packets carry the bridge as both in- and out-interface, so a
port is told apart by its fixed IPs on its bridge:

* ``oifname brqX ip daddr <port ip>`` jumps to the port's ingress chain (an element of
  the verdict map ``ingress4``/``ingress6``): replies to what
  it sent, DHCP, IPv6 neighbour discovery, then an allow-list from its groups' ingress
  rules (remote prefix, remote group as a set of member addresses, protocol, ports),
  else drop;
* ``iifname brqX ip saddr <port ip>`` jumps to its egress chain first (map
  ``egress4``/``egress6``): its groups'
  egress rules (the default group allows all) return to the receiver's ingress check,
  anything else is dropped;
* nothing is routed between a guest bridge and any other interface, and nothing from a
  guest bridge is delivered to the host itself;
* a bridge-family table (render_l2) drops what a guest sends with a MAC or address not
  its own, and keeps every frame from guests and DHCP veths away from the host (ARP too).

The tables are described by a Layout of what the network service sends (host_plans.py).
The first time (and after any refusal) both tables are swapped whole in one ``nft -f``
transaction; after that only what changed is sent, also as one transaction: binding a
port adds its chains and its map and set elements, however many ports the host has (a
whole-table swap grows with them).
"""
from __future__ import annotations

import dataclasses
import ipaddress
import logging
import os

from pocketstack.common import config
from pocketstack.network import agent
from pocketstack.network.agent import ip as host

LOG = logging.getLogger(__name__)
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
    remote_address_group_id: str | None = None


def _hex(uuid: str) -> str:
    return uuid.replace("-", "")


def set_name(group_id: str, version: int) -> str:
    return f"g_{_hex(group_id)}_{version}"


def address_set_name(address_group_id: str, version: int) -> str:
    return f"a_{_hex(address_group_id)}_{version}"


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
    elif rule.remote_address_group_id:
        parts.append(f"{family} {peer} "
                     f"@{address_set_name(rule.remote_address_group_id, version)}")
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


@dataclasses.dataclass
class Layout:
    """What the tables hold, piece by piece, so a change to one port is applied as that
    port's pieces only (render_changes) instead of swapping the whole table."""
    sets: dict[str, tuple[str, tuple[str, ...]]]       # inet: name -> (type, elements)
    chains: dict[str, tuple[str, ...]]                 # inet: in_/out_ chain -> rules
    maps: dict[str, dict[str, str]]                    # inet vmap -> {key: chain}
    l2_chains: dict[str, tuple[str, ...]]              # bridge: spoof_ chain -> rules
    spoof: dict[str, str]                              # bridge: tap -> spoof_ chain
    taps: tuple[str, ...]                              # bridge: taps kept from the host
    down: tuple[str, ...] = ()                         # bridge: taps of admin-down ports


# (map, type, key expression): a port's address on its bridge -> its chain
MAPS = (("egress4", "ifname . ipv4_addr", "iifname . ip saddr"),
        ("egress6", "ifname . ipv6_addr", "iifname . ip6 saddr"),
        ("ingress4", "ifname . ipv4_addr", "oifname . ip daddr"),
        ("ingress6", "ifname . ipv6_addr", "oifname . ip6 daddr"))


def layout(ports: list[GuestPort], rules: list[Rule], members: dict[str, list[str]],
           host_taps: list[str] = (),
           address_groups: dict[str, list[str]] | None = None,
           down_taps: list[str] = ()) -> Layout:
    """``members``: group id -> fixed IPs of every port in it; ``host_taps``: the DHCP
    veths, kept from the host like guests' taps; ``address_groups``: address group id ->
    its CIDRs (interval sets: an nft set of prefixes); ``down_taps``: the taps of ports
    that are administratively down (or on a network that is), which pass no frame either
    way, port security or not (as neutron's agent sets their tap down)."""
    by_group: dict[str, list[Rule]] = {}
    for rule in rules:
        by_group.setdefault(rule.group_id, []).append(rule)
    sets = {}
    for group_id in sorted({r.remote_group_id for r in rules if r.remote_group_id}):
        for version, kind in ((4, "ipv4_addr"), (6, "ipv6_addr")):
            ips = sorted(ip for ip in members.get(group_id, [])
                         if ipaddress.ip_address(ip).version == version)
            sets[set_name(group_id, version)] = (kind, tuple(ips))
    for group_id in sorted({r.remote_address_group_id for r in rules
                            if r.remote_address_group_id}):
        cidrs = [ipaddress.ip_network(c) for c in (address_groups or {}).get(group_id, [])]
        for version, kind in ((4, "ipv4_addr"), (6, "ipv6_addr")):
            # collapsed: an interval set refuses overlapping elements
            merged = ipaddress.collapse_addresses(c for c in cidrs if c.version == version)
            sets[address_set_name(group_id, version)] = (f"{kind}; flags interval",
                                                         tuple(str(c) for c in merged))
    chains: dict[str, tuple[str, ...]] = {}
    maps: dict[str, dict[str, str]] = {name: {} for name, _, _ in MAPS}
    for port in ports:
        port_rules = [r for g in port.groups for r in by_group.get(g, [])]
        chains[f"in_{_hex(port.id)}"] = (
            "ct state established,related accept", "udp sport 67 udp dport 68 accept",
            "icmpv6 type @nd accept",
            *(f"{m} accept" for m in _matches(port_rules, "ingress")), "drop")
        chains[f"out_{_hex(port.id)}"] = (
            "ct state established,related return",
            *(f"{m} return" for m in _matches(port_rules, "egress")), "drop")
        bridge = agent.bridge_name(port.network_id)
        for address in port.ips:
            version = 6 if ":" in address else 4
            key = f'"{bridge}" . {address}'
            maps[f"egress{version}"][key] = f"out_{_hex(port.id)}"
            maps[f"ingress{version}"][key] = f"in_{_hex(port.id)}"
    l2_chains, spoof = {}, {}
    for port in ports:
        if port.mac:
            l2_chains[f"spoof_{_hex(port.id)}"] = _spoof_rules(port)
            spoof[agent.tap_name(port.id)] = f"spoof_{_hex(port.id)}"
    taps = tuple(sorted({agent.tap_name(p.id) for p in ports} | set(host_taps)))
    return Layout(sets, chains, maps, l2_chains, spoof, taps, tuple(sorted(set(down_taps))))


def _elements(values) -> str:
    return "{ " + ", ".join(values) + " }"


def render(table: str, ports: list[GuestPort], rules: list[Rule],
           members: dict[str, list[str]]) -> str:
    """The inet table's nft text (tests; the agent applies render_layout)."""
    return _render_inet(table, layout(ports, rules, members))


def render_l2(table: str, ports: list[GuestPort], host_taps: list[str]) -> str:
    """The bridge-family table: what enters the bridge from a guest's tap must carry its
    MAC and addresses (or an allowed address pair's; 0.0.0.0 for DHCP), ARP included;
    nothing from a guest's tap or a DHCP veth reaches the host itself (no ARP answers
    either). Stateless, so it needs no connection tracking in the bridge family."""
    return _render_bridge(table, layout(ports, [], {}, host_taps))


def render_layout(table: str, plan: Layout) -> str:
    """Both tables, whole."""
    return _render_inet(table, plan) + _render_bridge(table, plan)


def _render_inet(table: str, plan: Layout) -> str:
    # IPv6 neighbour discovery every port accepts (one named set: nft parses an inline
    # set per port slowly)
    lines = [f"table inet {table} {{",
             "  set nd { type icmpv6_type; elements = { nd-neighbor-solicit, "
             "nd-neighbor-advert, nd-router-advert }; }"]
    for name, (kind, ips) in plan.sets.items():
        elements = f" elements = {_elements(ips)};" if ips else ""
        lines.append(f"  set {name} {{ type {kind};{elements} }}")
    for name, kind, _ in MAPS:
        entries = [f"{key} : jump {chain}" for key, chain in (plan.maps.get(name) or {}).items()]
        elements = f" elements = {_elements(entries)};" if entries else ""
        lines.append(f"  map {name} {{ type {kind} : verdict;{elements} }}")
    # The sender's egress chain first (it returns what it allows), then the receiver's
    # ingress chain decides: an accept ends the whole hook, so it can only come last.
    lines += ["  chain guests {",
              "    type filter hook forward priority 0; policy accept;",
              '    iifname "brq*" oifname != "brq*" drop',
              '    oifname "brq*" iifname != "brq*" drop',
              *(f"    {key} vmap @{name}" for name, _, key in MAPS),
              "  }",
              "  chain host {",
              "    type filter hook input priority 0; policy accept;",
              '    iifname "brq*" drop',
              "  }"]
    for name, rules in plan.chains.items():
        lines += [f"  chain {name} {{", *(f"    {r}" for r in rules), "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _render_bridge(table: str, plan: Layout) -> str:
    entries = [f'"{tap}" : jump {chain}' for tap, chain in plan.spoof.items()]
    spoof = f" elements = {_elements(entries)};" if entries else ""
    names = [f'"{tap}"' for tap in plan.taps]
    taps = f" elements = {_elements(names)};" if names else ""
    down = [f'"{tap}"' for tap in plan.down]
    down = f" elements = {_elements(down)};" if down else ""
    lines = [f"table bridge {table} {{",
             f"  set guest_taps {{ type ifname;{taps} }}",
             f"  set down_taps {{ type ifname;{down} }}",
             f"  map spoof {{ type ifname : verdict;{spoof} }}",
             "  chain ports {",
             "    type filter hook prerouting priority -300; policy accept;",
             "    iifname @down_taps drop",
             "    iifname vmap @spoof",
             "  }",
             "  chain to_ports {",
             "    type filter hook forward priority 0; policy accept;",
             "    oifname @down_taps drop",
             "  }",
             "  chain host {",
             "    type filter hook input priority 0; policy accept;",
             "    iifname @guest_taps drop",
             "  }"]
    for name, rules in plan.l2_chains.items():
        lines += [f"  chain {name} {{", *(f"    {r}" for r in rules), "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_changes(table: str, old: Layout, new: Layout) -> str:
    """The nft commands that turn ``old`` into ``new`` in one transaction, touching only
    what changed (a bind adds one port's chains and map entries); "" if nothing did.
    Order matters: sets and chains exist before anything refers to them, and go only
    after nothing does."""
    inet, bridge = f"inet {table}", f"bridge {table}"
    out: list[str] = []
    for name, (kind, ips) in new.sets.items():
        if old.sets.get(name) != (kind, ips):
            if name not in old.sets:
                out.append(f"add set {inet} {name} {{ type {kind}; }}")
            else:
                out.append(f"flush set {inet} {name}")
            if ips:
                out.append(f"add element {inet} {name} {_elements(ips)}")
    for family, old_chains, new_chains in ((inet, old.chains, new.chains),
                                           (bridge, old.l2_chains, new.l2_chains)):
        for name, rules in new_chains.items():
            if old_chains.get(name) != rules:
                out.append(f"add chain {family} {name}")
                out.append(f"flush chain {family} {name}")
                out += [f"add rule {family} {name} {r}" for r in rules]
    for name, _, _ in MAPS:
        before, after = old.maps.get(name) or {}, new.maps.get(name) or {}
        gone = [k for k in before if after.get(k) != before[k]]
        added = [f"{k} : jump {c}" for k, c in after.items() if before.get(k) != c]
        if gone:
            out.append(f"delete element {inet} {name} {_elements(gone)}")
        if added:
            out.append(f"add element {inet} {name} {_elements(added)}")
    gone = [f'"{t}"' for t in old.spoof if new.spoof.get(t) != old.spoof[t]]
    added = [f'"{t}" : jump {c}' for t, c in new.spoof.items() if old.spoof.get(t) != c]
    if gone:
        out.append(f"delete element {bridge} spoof {_elements(gone)}")
    if added:
        out.append(f"add element {bridge} spoof {_elements(added)}")
    for name, before, after in (("guest_taps", old.taps, new.taps),
                                ("down_taps", old.down, new.down)):
        gone = [f'"{t}"' for t in before if t not in after]
        added = [f'"{t}"' for t in after if t not in before]
        if gone:
            out.append(f"delete element {bridge} {name} {_elements(gone)}")
        if added:
            out.append(f"add element {bridge} {name} {_elements(added)}")
    out += [f"delete chain {inet} {n}" for n in old.chains if n not in new.chains]
    out += [f"delete chain {bridge} {n}" for n in old.l2_chains if n not in new.l2_chains]
    out += [f"delete set {inet} {n}" for n in old.sets if n not in new.sets]
    return "".join(line + "\n" for line in out)


def _matches(rules: list[Rule], direction: str) -> list[str]:
    out = []
    for rule in rules:
        if rule.direction != direction:
            continue
        match = _match(rule)
        if match is not None and match not in out:
            out.append(match)
    return out


def _spoof_rules(port: GuestPort) -> tuple[str, ...]:
    macs = sorted({port.mac} | {p["mac_address"] for p in port.pairs
                                if p.get("mac_address")})
    v4 = sorted({a for a in port.ips if ":" not in a} |
                {p["ip_address"] for p in port.pairs if ":" not in p["ip_address"]})
    v6 = sorted({a for a in port.ips if ":" in a} |
                {p["ip_address"] for p in port.pairs if ":" in p["ip_address"]})
    rules = [f"ether saddr != {_one_or_set(macs)} drop"]
    if v4:
        addresses = _one_or_set(v4)
        rules += [f"arp saddr ip != {addresses} arp saddr ip != 0.0.0.0 drop",
                  f"ip saddr != {addresses} ip saddr != 0.0.0.0 drop"]
    else:
        rules += ["ether type { ip, arp } drop"]
    if v6:
        rules += [f"ip6 saddr != {_one_or_set(v6)} ip6 saddr != fe80::/10 "
                  "ip6 saddr != :: drop"]
    return tuple(rules)


def _one_or_set(values: list[str]) -> str:
    """A value alone when there is one (an inline set costs nft noticeably more)."""
    return values[0] if len(values) == 1 else "{ " + ", ".join(values) + " }"


LEGACY_TABLE = "pocketstack"  # every cloud's tables were named so before each had its own


def table_name() -> str:
    """[network] nft_table, else this cloud's own: tables are the machine's, and another
    cloud's agent replaces its tables whole at its start."""
    return config.CONF.network.nft_table or f"pocketstack_{config.cloud_id()[:12]}"


def _record_path() -> str:
    return os.path.join(config.data_dir(), "network", "nft-table")


def forget_previous_table(made_before: bool) -> None:
    """At the agent's start: remove the tables this cloud used under another name (the
    name [network] nft_table gave before, or the shared name of before when this data dir
    has an agent of its own from then, ``made_before``), and record the one it uses now."""
    table, path = table_name(), _record_path()
    try:
        with open(path) as f:
            previous = f.read().strip()
    except FileNotFoundError:
        previous = LEGACY_TABLE if made_before else None
    if previous and previous != table:
        LOG.info("Removing this cloud's nftables tables %s (now %s)", previous, table)
        for family in ("inet", "bridge"):
            host.run("nft", "delete", "table", family, previous, check=False)
    if previous != table:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                       "w") as f:
            f.write(table + "\n")


def apply_layout(old: Layout | None, new: Layout | None) -> None:
    """Make the host's tables hold ``new`` (``None``: no tables): only the changes when
    ``old`` is what they hold now, else (or if nft refuses the changes, e.g. someone
    flushed the ruleset) the whole tables swapped in one transaction."""
    table = table_name()
    if old is not None and new is not None:
        script = render_changes(table, old, new)
        if not script:
            return
        try:
            host.run("nft", "-f", "-", stdin=script)
            return
        except host.CommandFailed as error:
            LOG.warning("Incremental nftables change refused (%s); replacing the tables",
                        error)
    apply(render_layout(table, new) if new is not None else None)


def apply(text: str | None) -> None:
    """Replace the tables (inet and bridge) in one transaction (``None``: remove them)."""
    table = table_name()
    script = "".join(f"table {family} {table} {{}}\ndelete table {family} {table}\n"
                     for family in ("inet", "bridge")) + (text or "")
    host.run("nft", "-f", "-", stdin=script)


def remove() -> None:
    apply(None)
