"""One network on this host: its bridge, its DHCP namespace joined to the bridge by a veth
pair, and the dnsmasq inside (neutron's linuxbridge agent and dnsmasq driver).

Every step checks first, so ``plug`` can run again at any time (start-up reconcile, a
second port, a new subnet) and only changes what differs.
"""
from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import logging
import os
import shutil
import signal

from pocketstack.common import config, processes
from pocketstack.network import agent, dhcp
from pocketstack.network.agent import ip as host
from pocketstack.network.agent import overlay, provider_links

LOG = logging.getLogger(__name__)
METADATA_ADDRESS = "169.254.169.254"


@dataclasses.dataclass
class NetworkPlan:
    """What this host needs for a network (read from the database by agent.py)."""
    network_id: str
    mtu: int
    dhcp_port_id: str | None = None
    dhcp_mac: str | None = None
    dhcp_addresses: list[str] = dataclasses.field(default_factory=list)  # ip/prefixlen
    dhcp_subnets: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (id, cidr)
    dns_domain: str = ""  # its guests' domain (dhcp.network_domain): dnsmasq's --domain
    # How the bridge reaches other hosts (overlay.py, provider_links.py)
    network_type: str = "local"
    segmentation_id: int | None = None
    physical_network: str | None = None
    flood: list[str] = dataclasses.field(default_factory=list)  # VTEPs of hosts with it
    fdb: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (mac, VTEP)


def veth_names(dhcp_port_id: str) -> tuple[str, str]:
    """(root end on the bridge, end inside the namespace), as neutron names them."""
    return agent.tap_name(dhcp_port_id), "ns-" + dhcp_port_id[:11]


def state_dir(network_id: str) -> str:
    """Where this agent keeps a network's dnsmasq pid, log and config; its existence also
    records that this agent plumbed the network (other clouds on the host have theirs)."""
    return os.path.join(config.data_dir(), "network", "agent", network_id)


# --- plug ------------------------------------------------------------------------------

def plug(plan: NetworkPlan) -> None:
    """Make the host match the plan. The `ip` commands go in two batches (one process
    for the host, one inside the namespace): a process start costs more than the work."""
    os.makedirs(state_dir(plan.network_id), exist_ok=True)
    bridge = agent.bridge_name(plan.network_id)
    if plan.dhcp_port_id is None or not plan.dhcp_subnets:
        _batch([*_bridge_commands(bridge, plan.mtu), f"link set {bridge} up"])
        host.disable_ipv6(bridge)
        _remove_namespace(plan.network_id)  # no DHCP (any more): guests only share L2
        return
    ns = agent.namespace(plan.network_id)
    root_end, ns_end = veth_names(plan.dhcp_port_id)
    new_ns = ns not in host.namespaces()
    fresh = new_ns or not host.link_exists(root_end)
    if new_ns and host.link_exists(root_end):
        # The kernel tears a deleted namespace down in the background: a network unplugged
        # and plugged again at once (its last guest gone, a new one bound) can still see
        # the old pair's root end, whose other end is gone with the old namespace.
        host.ip("link", "del", root_end, check=False)
    commands = _bridge_commands(bridge, plan.mtu)
    if new_ns:
        commands.append(f"netns add {ns}")
        _touch(os.path.join(state_dir(plan.network_id), "namespace"))
    if fresh:
        commands.append(f"link add {root_end} mtu {plan.mtu} type veth peer name {ns_end} "
                        f"netns {ns}")
    commands += [f"link set {bridge} up", f"link set {root_end} master {bridge} up"]
    _batch(commands)
    host.disable_ipv6(bridge)
    host.disable_ipv6(root_end)
    wanted = set(plan.dhcp_addresses) | {METADATA_ADDRESS + "/32"}
    have = set() if fresh else host.addresses(ns_end, ns=ns)
    _batch(["link set lo up", f"link set {ns_end} address {plan.dhcp_mac} mtu {plan.mtu}",
            *(f"addr del {a} dev {ns_end}" for a in sorted(have - wanted)),
            *(f"addr add {a} dev {ns_end}" for a in sorted(wanted - have)),
            f"link set {ns_end} up"], ns=ns)
    _dnsmasq(plan, ns, ns_end)


def intact(plan: NetworkPlan) -> bool:
    """Does the host still have what ``plug(plan)`` made? (No process started: the API
    asks this for every port it binds.)"""
    if not host.link_exists(agent.bridge_name(plan.network_id)):
        return False
    if plan.dhcp_port_id is None or not plan.dhcp_subnets:
        return True
    return (agent.namespace(plan.network_id) in host.namespaces() and
            host.link_exists(veth_names(plan.dhcp_port_id)[0]) and
            dnsmasq_pid(plan.network_id) is not None)


def _bridge_commands(bridge: str, mtu: int) -> list[str]:
    if host.link_exists(bridge):
        return []
    # nf_call_iptables: bridged IPv4/IPv6 goes through the inet hooks, where the security
    # group rules (with connection tracking) filter it.
    return [f"link add {bridge} mtu {mtu} type bridge nf_call_iptables 1 "
            "nf_call_ip6tables 1"]


def _batch(commands: list[str], ns: str | None = None) -> None:
    if commands:
        host.run("ip", *(["-n", ns] if ns else []), "-batch", "-",
                 stdin="\n".join(commands) + "\n")


def _dnsmasq_args(plan: NetworkPlan, ns_end: str) -> list[str]:
    files = dhcp.network_dir(plan.network_id)
    state = state_dir(plan.network_id)
    conf = config.CONF.network
    lease = "infinite" if conf.dhcp_lease_duration == -1 else f"{conf.dhcp_lease_duration}s"
    args = ["dnsmasq", "--no-hosts", "--no-resolv", "--conf-file=/dev/null",
            "--user=root", "--group=root",  # SIGHUP re-reads files in the 0700 data dir
            f"--pid-file={state}/dnsmasq.pid", f"--log-facility={state}/dnsmasq.log",
            f"--dhcp-hostsfile={files}/host", f"--addn-hosts={files}/addn_hosts",
            f"--dhcp-optsfile={files}/opts", f"--dhcp-leasefile={files}/leases",
            "--bind-interfaces", f"--interface={ns_end}", "--except-interface=lo",
            f"--dhcp-option-force=option:mtu,{plan.mtu}", "--dhcp-lease-max=16777216",
            "--dhcp-match=set:ipxe,175", "--local-service"]
    domain = plan.dns_domain or (conf.dns_domain or "").rstrip(".")
    if domain:
        args.append(f"--domain={domain}")
    for subnet_id, cidr in plan.dhcp_subnets:
        net = ipaddress.ip_network(cidr)
        args.append(f"--dhcp-range=set:subnet-{subnet_id},{net.network_address},static,"
                    f"{net.netmask},{lease}")
    return args


def _dnsmasq(plan: NetworkPlan, ns: str, ns_end: str) -> None:
    """Start dnsmasq if it does not run (or runs with other subnets), else SIGHUP it so
    it re-reads the host, addn_hosts and opts files."""
    if not os.path.exists(os.path.join(dhcp.network_dir(plan.network_id), "host")):
        dhcp.write(plan.network_id)  # the writer has not caught up yet: dnsmasq needs them
    args = _dnsmasq_args(plan, ns_end)
    state = state_dir(plan.network_id)
    args_file = os.path.join(state, "dnsmasq.args")
    pid = dnsmasq_pid(plan.network_id)
    previous = _read(args_file)
    if pid is not None and previous == "\n".join(args):
        os.kill(pid, signal.SIGHUP)
        return
    if pid is not None:
        _stop(pid)
    with open(args_file, "w") as f:
        f.write("\n".join(args))
    host.run(*args, ns=ns)  # daemonizes once it listens and wrote its pid file


def reload(network_id: str) -> None:
    pid = dnsmasq_pid(network_id)
    if pid is not None:
        os.kill(pid, signal.SIGHUP)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def dnsmasq_pid(network_id: str) -> int | None:
    """The pid of this network's dnsmasq if it runs."""
    text = _read(os.path.join(state_dir(network_id), "dnsmasq.pid"))
    if not text or not text.strip().isdigit():
        return None
    pid = int(text.strip())
    cmdline = _read(f"/proc/{pid}/cmdline") or ""
    return pid if "dnsmasq" in cmdline and network_id in cmdline else None


def _stop(pid: int) -> None:
    """SIGTERM, then SIGKILL after 2 s; the process may be gone (or reaped) at any point."""
    processes.stop(pid, grace=2, kill=True)


# --- unplug ----------------------------------------------------------------------------

def _touch(path: str) -> None:
    with open(path, "a"):
        pass


def _remove_namespace(network_id: str) -> None:
    """The network's DHCP namespace, if this agent made it: namespace names are the
    machine's, and another agent on it (a network node beside compute hosts in their
    own network namespaces) may serve the network."""
    pid = dnsmasq_pid(network_id)
    if pid is not None:
        _stop(pid)
    state = state_dir(network_id)
    marks = [os.path.join(state, name) for name in ("namespace", "dnsmasq.args")]
    ns = agent.namespace(network_id)
    if any(os.path.exists(m) for m in marks) and ns in host.namespaces():
        host.ip("netns", "del", ns)  # takes the veth pair with it
    for mark in marks:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(mark)


def unplug(network_id: str) -> None:
    """Remove everything this host has for the network."""
    _remove_namespace(network_id)
    bridge = agent.bridge_name(network_id)
    # a bridge's deletion leaves the devices on it: the ones made for it go first
    overlay.release(bridge)
    provider_links.release(bridge)
    if host.link_exists(bridge):  # the namespace took its veth pair with it
        host.ip("link", "del", bridge)
    shutil.rmtree(state_dir(network_id), ignore_errors=True)
