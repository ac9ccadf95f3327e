"""The overlay between hosts: a network of type vxlan gets, on each host whose bridge for
it exists, a VXLAN device ``vxlan-<vni>`` on that bridge, sourced from ``[network]
local_ip`` (neutron's linuxbridge agent with l2_population).

The device does not learn and has no multicast group: its forwarding database is what the
network service says (host_plans.py), as neutron's l2population driver tells its agents —

* ``00:00:00:00:00:00 dst <VTEP>`` for each other host with the network: broadcast,
  unknown unicast and multicast (ARP, DHCP) go to those hosts and no others;
* ``<port MAC> dst <VTEP>`` for each port bound on another host: unicast goes straight
  to the one host that has it.

Entries are added and removed to match each plan, and a restarted agent removes the
devices and entries nothing asks for any more. Without ``local_ip`` nothing here runs.
"""
from __future__ import annotations

import json
import logging

from pocketstack.common import config
from pocketstack.network import agent
from pocketstack.network.agent import ip as host

LOG = logging.getLogger(__name__)
VXLAN_PORT = 4789  # IANA's, as neutron's default [vxlan] udp_dstport
FLOOD_MAC = "00:00:00:00:00:00"
PREFIX = "vxlan-"


def local_ip() -> str | None:
    value = config.CONF.network.local_ip
    return str(value) if value else None


def device_name(vni: int) -> str:
    return f"{PREFIX}{vni}"  # at most 14 characters: VNIs have 24 bits


def wanted(plan) -> bool:
    """Does this host carry the network over the overlay?"""
    return plan.network_type == "vxlan" and bool(plan.segmentation_id) and bool(local_ip())


# --- what the host has -----------------------------------------------------------------

def _links(*selector: str) -> list[dict]:
    out = host.ip("-d", "-j", "link", "show", *selector, check=False)
    return json.loads(out or "[]")


def _info(link: dict) -> dict:
    return link.get("linkinfo", {}).get("info_data", {})


def devices() -> dict[str, dict]:
    """This host's VXLAN devices named as ours: name -> its `ip -d -j link` entry."""
    return {link["ifname"]: link for link in _links("type", "vxlan")
            if link["ifname"].startswith(PREFIX)}


def fdb(dev: str) -> set[tuple[str, str]]:
    """(MAC, remote VTEP) entries of the device (not the bridge's own entries)."""
    out = host.run("bridge", "-j", "fdb", "show", "dev", dev, check=False)
    return {(entry["mac"], entry["dst"]) for entry in json.loads(out or "[]")
            if entry.get("dst") and "self" in entry.get("flags", [])}


def intact(plan) -> bool:
    """The device is there (no process started); its entries are checked by plug."""
    return not wanted(plan) or host.link_exists(device_name(plan.segmentation_id))


# --- make it so ------------------------------------------------------------------------

def plug(plan) -> None:
    """The network's VXLAN device on its bridge, with exactly the plan's entries."""
    dev, local = device_name(plan.segmentation_id), local_ip()
    bridge = agent.bridge_name(plan.network_id)
    link = next(iter(_links("dev", dev)), None) if host.link_exists(dev) else None
    commands = []
    if link is not None and not _same_tunnel(_info(link), plan.segmentation_id, local):
        commands.append(f"link del {dev}")  # local_ip changed, or a stranger's device
        link = None
    if link is None:
        commands.append(f"link add {dev} mtu {plan.mtu} type vxlan id "
                        f"{plan.segmentation_id} local {local} dstport {VXLAN_PORT} "
                        "nolearning")
    commands.append(f"link set {dev} master {bridge} mtu {plan.mtu} up")
    host.run("ip", "-batch", "-", stdin="\n".join(commands) + "\n")
    host.disable_ipv6(dev)
    sync_fdb(dev, wanted_fdb(plan))


def _same_tunnel(info: dict, vni: int, local: str) -> bool:
    return (info.get("id") == vni and info.get("local") == local
            and info.get("port") == VXLAN_PORT and info.get("learning") is False)


def wanted_fdb(plan) -> set[tuple[str, str]]:
    return ({(FLOOD_MAC, vtep) for vtep in plan.flood}
            | {(mac.lower(), vtep) for mac, vtep in plan.fdb})


def sync_fdb(dev: str, wanted_entries: set[tuple[str, str]]) -> None:
    """Remove the entries not wanted, then add the missing ones, in one `bridge`
    process. The flood MAC takes one entry per VTEP (append); a port's MAC one (replace:
    a port that moved hosts points to its new one)."""
    have = fdb(dev)
    commands = [f"fdb del {mac} dev {dev} dst {vtep}"
                for mac, vtep in sorted(have - wanted_entries)]
    for mac, vtep in sorted(wanted_entries - have):
        verb = "append" if mac == FLOOD_MAC else "replace"
        commands.append(f"fdb {verb} {mac} dev {dev} dst {vtep} self permanent")
    if commands:
        LOG.debug("FDB of %s: removing %s, adding %s", dev, sorted(have - wanted_entries),
                  sorted(wanted_entries - have))
        # -force: one entry gone meanwhile does not stop the others
        host.run("bridge", "-force", "-batch", "-", stdin="\n".join(commands) + "\n")


# --- remove ----------------------------------------------------------------------------

def release(bridge: str) -> None:
    """Delete the VXLAN devices on ``bridge`` (before the bridge goes: deleting a bridge
    leaves its ports)."""
    for name in host.bridge_ports(bridge):
        if name.startswith(PREFIX):
            host.ip("link", "del", name, check=False)


def remove_stale(keep: set[str], bridges: set[str]) -> None:
    """Delete our VXLAN devices that no plan wants: on one of this agent's ``bridges``
    (a network no longer carried here, or ``local_ip`` unset since), or, on an overlay
    host, on no bridge at all (left by a crash). Other clouds' bridges are theirs."""
    for name, link in devices().items():
        master = link.get("master")
        if name not in keep and (master in bridges or (master is None and local_ip())):
            LOG.info("Removing VXLAN device %s (no network wants it)", name)
            host.ip("link", "del", name, check=False)
