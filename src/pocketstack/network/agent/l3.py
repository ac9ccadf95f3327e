"""Routers on this host (neutron's L3 agent, legacy routers): a namespace
``qrouter-<router id>`` per router with an interface or gateway on a network this host
plumbs (or a gateway on the external network of such a router). In it:

* ``qr-<port id[:11]>`` per router interface: a veth whose other end, ``tap<port
  id[:11]>``, is on the project network's bridge; it carries the interface's addresses;
* ``qg-<port id[:11]>`` for the gateway, the same on the external network's bridge, with
  the gateway port's addresses, each floating IP as a /32 (so the router answers ARP for
  it) and a default route via the external subnet's gateway;
* the router's static routes (``routes``), ip_forward on;
* 169.254.169.254/32 on its loopback, where the agent's metadata proxy of the router
  listens (DHCP routes 169.254.169.254 to the router on subnets that have one);
* one nftables table ``ip qrouter``: floating IPs as DNAT/SNAT pairs, port forwardings
  as DNAT of their external ports, then SNAT of
  everything else leaving by the gateway to the gateway's address (``enable_snat``);
  a floating IP taken away also takes its connections (conntrack.py).

The plans come from the network service (network/host_plans.py, over RPC); ``plug`` makes one router
match its plan
(only what differs from the previous plan, so a floating IP change is one ``ip`` batch
and one ``nft`` transaction); ``unplug`` removes the namespace and its veth pairs.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import json
import logging
import os
import shutil

from pocketstack.common import config
from pocketstack.network import agent
from pocketstack.network.agent import conntrack
from pocketstack.network.agent import ip as host

LOG = logging.getLogger(__name__)
INTERFACE = "network:router_interface"
GATEWAY = "network:router_gateway"
NFT_TABLE = "qrouter"
METADATA_ADDRESS = "169.254.169.254"
METADATA_CIDR = METADATA_ADDRESS + "/32"


@dataclasses.dataclass(frozen=True)
class RouterPort:
    id: str
    network_id: str
    mac: str
    mtu: int
    addresses: tuple[str, ...]  # ip/prefixlen
    gateway: bool = False

    @property
    def device(self) -> str:
        """Its name inside the router's namespace, as neutron names it."""
        return ("qg-" if self.gateway else "qr-") + self.id[:11]

    @property
    def tap(self) -> str:
        """Its other end, on the network's bridge."""
        return agent.tap_name(self.id)


@dataclasses.dataclass(frozen=True)
class RouterPlan:
    router_id: str
    interfaces: tuple[RouterPort, ...]
    gateway: RouterPort | None = None
    gateway_ip: str | None = None                  # external subnet's: the default route
    snat: bool = True
    routes: tuple[tuple[str, str], ...] = ()       # (destination, nexthop)
    floating_ips: tuple[tuple[str, str], ...] = ()  # (floating address, fixed address)
    # port forwardings: (floating address, protocol, external first, last, internal
    # address, internal first, last)
    forwardings: tuple[tuple[str, str, int, int, str, int, int], ...] = ()

    @property
    def ports(self) -> tuple[RouterPort, ...]:
        return self.interfaces + ((self.gateway,) if self.gateway else ())

    @property
    def floating_addresses(self) -> set[str]:
        """The floating IPs the gateway answers for (associated or forwarding ports)."""
        return {f for f, _ in self.floating_ips} | {pf[0] for pf in self.forwardings}


def namespace(router_id: str) -> str:
    return "qrouter-" + router_id


def state_dir(router_id: str | None = None) -> str:
    """Its existence records that this agent made the router's namespace (another cloud
    on the host keeps its own)."""
    root = os.path.join(config.data_dir(), "network", "l3")
    return os.path.join(root, router_id) if router_id else root


def managed() -> set[str]:
    root = state_dir()
    return set(os.listdir(root)) if os.path.isdir(root) else set()


def networks_of(plans: dict[str, RouterPlan]) -> set[str]:
    return {p.network_id for plan in plans.values() for p in plan.ports}


def taps_of(plans: dict[str, RouterPlan]) -> list[str]:
    return sorted(p.tap for plan in plans.values() for p in plan.ports)


# --- nftables ------------------------------------------------------------------------

def render_nat(plan: RouterPlan) -> str:
    """The namespace's one table. A NAT statement ends the chain, so each floating IP's
    SNAT comes before the gateway's catch-all SNAT."""
    gw = plan.gateway
    # each connection a floating IP's rules translate is marked with that address, so
    # taking the floating IP away can delete them (conntrack.py)
    dnat = [f"ip daddr {floating} ct mark set {conntrack.mark_of(floating):#x} "
            f"dnat to {fixed}" for floating, fixed in plan.floating_ips]
    dnat += [_forwarding(*pf) for pf in plan.forwardings]
    snat = []
    if gw is not None:
        snat = [f'oifname "{gw.device}" ip saddr {fixed} '
                f"ct mark set {conntrack.mark_of(floating):#x} snat to {floating}"
                for floating, fixed in plan.floating_ips]
        address = next((a.split("/")[0] for a in gw.addresses if ":" not in a), None)
        if address and plan.floating_addresses:
            # a guest reaching another's floating IP from inside (hairpin): without this
            # the reply would go straight back, from the fixed address the sender never
            # asked for
            snat.append(f'iifname != "{gw.device}" ct status dnat snat to {address}')
        if plan.snat and address:
            snat.append(f'oifname "{gw.device}" snat to {address}')
    lines = [f"table ip {NFT_TABLE} {{",
             "  chain prerouting {", "    type nat hook prerouting priority -100;",
             *(f"    {r}" for r in dnat), "  }",
             # the router's own packets to a floating IP (neutron keeps this too)
             "  chain output {", "    type nat hook output priority -100;",
             *(f"    {r}" for r in dnat), "  }",
             "  chain postrouting {", "    type nat hook postrouting priority 100;",
             *(f"    {r}" for r in snat), "  }",
             "}"]
    return "\n".join(lines) + "\n"


def _forwarding(floating: str, protocol: str, first: int, last: int, internal: str,
                inner_first: int, inner_last: int) -> str:
    """One port forwarding's DNAT: a port to a port, a range to one port (1-N), or a
    range to a range of the same size, port by port (N-N: a map, since a NAT range alone
    would pick any port of it)."""
    ports = str(first) if first == last else f"{first}-{last}"
    match = (f"ip daddr {floating} {protocol} dport {ports} "
             f"ct mark set {conntrack.mark_of(floating):#x} ")
    if inner_first == inner_last:
        return match + f"dnat to {internal}:{inner_first}"
    if inner_first == first:
        return match + f"dnat to {internal}"  # the same ports
    pairs = ", ".join(f"{first + i} : {inner_first + i}" for i in range(last - first + 1))
    return match + f"dnat to {internal} : {protocol} dport map {{ {pairs} }}"


# --- plumbing ------------------------------------------------------------------------

def _batch(commands: list[str], ns: str | None = None, force: bool = False) -> None:
    if commands:
        host.run("ip", *(["-n", ns] if ns else []), *(["-force"] if force else []),
                 "-batch", "-", stdin="\n".join(commands) + "\n")


def _links(ns: str) -> dict[str, set[str]]:
    """Device name -> its addresses (ip/prefixlen, no link-local), inside ``ns``."""
    out = host.ip("-j", "addr", "show", ns=ns, check=False)
    return {link["ifname"]: {f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])
                             if a.get("scope") != "link"}
            for link in json.loads(out or "[]")}


def intact(plan: RouterPlan) -> bool:
    """Does the host still have the namespace and every veth? (No process started.)"""
    return (namespace(plan.router_id) in host.namespaces() and
            all(host.link_exists(p.tap) for p in plan.ports))


def plug(plan: RouterPlan, old: RouterPlan | None = None) -> None:
    """Make the router's namespace match ``plan``; ``old`` is what this agent plugged
    before and the host still has (None: unknown, everything is read back and checked).
    Knowing ``old``, a floating IP change is one ``ip`` batch and one ``nft`` run."""
    ns = namespace(plan.router_id)
    os.makedirs(state_dir(plan.router_id), exist_ok=True)
    new_ns = ns not in host.namespaces()
    known = None if new_ns else old
    if known is None or known.ports != plan.ports:
        _veths(plan, ns, new_ns)
    if known is None:
        host.run("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=ns)
    _addresses(plan, ns, known)
    if known is None or _route_facts(known) != _route_facts(plan):
        _routes(plan, ns)
    if known is None or render_nat(known) != render_nat(plan):
        # the table swapped whole in one transaction: never a moment without NAT
        host.run("nft", "-f", "-", ns=ns, stdin=f"table ip {NFT_TABLE} {{}}\n"
                 f"delete table ip {NFT_TABLE}\n" + render_nat(plan))
    if old is not None:
        # connections of a floating IP taken away (or moved to another fixed IP) keep
        # their translation until deleted (a forwarding removed while its floating IP
        # keeps others leaves its open connections be)
        gone = {f for f, _ in set(old.floating_ips) - set(plan.floating_ips)} | (
            old.floating_addresses - plan.floating_addresses)
        conntrack.delete_marked(ns, sorted(conntrack.mark_of(f) for f in gone))
    if plan.gateway is not None:
        before = known.floating_addresses \
            if known is not None and known.gateway == plan.gateway else set()
        for floating in sorted(plan.floating_addresses - before):
            try:
                host.announce(ns, plan.gateway.device, plan.gateway.mac, floating)
            except OSError as error:  # only a speed-up: ARP finds it anyway
                LOG.warning("Gratuitous ARP for %s failed: %s", floating, error)


def _veths(plan: RouterPlan, ns: str, new_ns: bool) -> None:
    """The namespace and a veth pair per port, its outer end on the port's bridge."""
    commands = [f"netns add {ns}"] if new_ns else []
    for port in plan.ports:
        if new_ns and host.link_exists(port.tap):
            # the end of a pair whose namespace is gone (torn down in the background)
            host.ip("link", "del", port.tap, check=False)
        if new_ns or not host.link_exists(port.tap):
            commands.append(f"link add {port.tap} mtu {port.mtu} type veth peer name "
                            f"{port.device} netns {ns}")
        commands.append(f"link set {port.tap} master {agent.bridge_name(port.network_id)} up")
    _batch(commands)
    for port in plan.ports:
        host.disable_ipv6(port.tap)


def _wanted_addresses(plan: RouterPlan) -> dict[str, set[str]]:
    wanted = {p.device: set(p.addresses) for p in plan.ports}
    if plan.gateway is not None:
        wanted[plan.gateway.device] |= {f"{floating}/32" for floating in plan.floating_addresses}
    return wanted


def _addresses(plan: RouterPlan, ns: str, known: RouterPlan | None) -> None:
    wanted = _wanted_addresses(plan)
    if known is not None and known.ports == plan.ports:
        have = _wanted_addresses(known)
        commands = [c for port in plan.ports for c in _address_changes(
            port.device, have[port.device], wanted[port.device])]
        _batch(commands, ns)
        return
    have = _links(ns)
    commands = ["link set lo up", f"addr replace {METADATA_CIDR} dev lo"]
    # an interface removed, or the gateway cleared: the pair goes with its inner end
    commands += [f"link del {name}" for name in sorted(have)
                 if name[:3] in ("qr-", "qg-") and name not in wanted]
    for port in plan.ports:
        commands += [f"link set {port.device} address {port.mac} mtu {port.mtu}",
                     *_address_changes(port.device, have.get(port.device, set()),
                                       wanted[port.device]),
                     f"link set {port.device} up"]
    _batch(commands, ns)


def _address_changes(device: str, have: set[str], wanted: set[str]) -> list[str]:
    return [*(f"addr del {a} dev {device}" for a in sorted(have - wanted)),
            *(f"addr add {a} dev {device}" for a in sorted(wanted - have))]


def _route_facts(plan: RouterPlan) -> tuple:
    return plan.routes, plan.gateway_ip, plan.gateway.device if plan.gateway else None


def _routes(plan: RouterPlan, ns: str) -> None:
    """The default route via the external gateway and the static routes, all tagged
    ``proto static`` so the ones no longer wanted can be told from connected routes."""
    wanted = {}
    if plan.gateway is not None and plan.gateway_ip:
        wanted["default"] = f"route replace default via {plan.gateway_ip} " \
                            f"dev {plan.gateway.device} proto static"
    for destination, nexthop in plan.routes:
        net = ipaddress.ip_network(destination, strict=False)
        if net.version == 4:
            key = "default" if net.prefixlen == 0 else str(net)
            wanted[key] = f"route replace {net} via {nexthop} proto static"
    out = host.ip("-j", "-4", "route", "show", "proto", "static", ns=ns, check=False)
    have = {r["dst"] for r in json.loads(out or "[]")}
    commands = [f"route del {dst} proto static" for dst in sorted(have - set(wanted))]
    commands += list(wanted.values())
    try:
        _batch(commands, ns, force=True)  # one unreachable nexthop does not stop the rest
    except host.CommandFailed as error:
        LOG.warning("Router %s: some routes were refused: %s", plan.router_id, error)


def unplug(router_id: str) -> None:
    """Remove the namespace with its veth pairs (deleted first: the kernel tears a
    namespace down in the background, which would leave their bridge ends for a while)."""
    ns = namespace(router_id)
    if ns in host.namespaces():
        for name in _links(ns):
            if name[:3] in ("qr-", "qg-") and host.link_exists("tap" + name[3:]):
                host.ip("link", "del", "tap" + name[3:], check=False)
        host.ip("netns", "del", ns)
    shutil.rmtree(state_dir(router_id), ignore_errors=True)
