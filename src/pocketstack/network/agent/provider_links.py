"""Provider networks on this host's interfaces (neutron's linuxbridge agent with
``physical_interface_mappings``): a flat network's bridge gets the mapped interface
itself, a vlan network's the subinterface ``<interface>.<vlan id>``, made here.

A network on a physical network this host does not map gets a bridge only (its guests
meet on this host), as before; the heartbeat shows the mappings (interface_mappings).
"""
from __future__ import annotations

import logging

from pocketstack.common import config
from pocketstack.network import agent
from pocketstack.network.agent import ip as host

LOG = logging.getLogger(__name__)


def mappings() -> dict[str, str]:
    """physical network -> interface, from ``[network] physical_interface_mappings``
    (its option type refuses a malformed pair at start-up)."""
    return dict(item.split(":", 1) for item in config.CONF.network.physical_interface_mappings)


def uplink(plan) -> str | None:
    """The interface that joins the network's bridge to its physical network here."""
    if plan.network_type not in ("flat", "vlan") or not plan.physical_network:
        return None
    iface = mappings().get(plan.physical_network)
    if iface is None:
        return None
    if plan.network_type == "flat":
        return iface
    return vlan_name(iface, plan.segmentation_id)


def vlan_name(iface: str, vlan_id: int) -> str:
    suffix = f".{vlan_id}"
    return iface[:15 - len(suffix)] + suffix  # interface names have 15 characters at most


def intact(plan) -> bool:
    name = uplink(plan)
    return name is None or host.link_exists(name)


def plug(plan) -> None:
    name = uplink(plan)
    if name is None:
        return
    iface = mappings()[plan.physical_network]
    if not host.link_exists(iface):
        LOG.warning("Interface %s of physical network %s does not exist: network %s "
                    "stays on this host", iface, plan.physical_network, plan.network_id)
        return
    bridge = agent.bridge_name(plan.network_id)
    commands = []
    if plan.network_type == "vlan" and not host.link_exists(name):
        commands.append(f"link add link {iface} name {name} type vlan id "
                        f"{plan.segmentation_id}")
    commands += [f"link set {iface} up", f"link set {name} master {bridge} up"]
    host.run("ip", "-batch", "-", stdin="\n".join(commands) + "\n")


def release(bridge: str) -> None:
    """Before the bridge goes: delete the VLAN subinterfaces on it and take the mapped
    interfaces (flat) off it; the interfaces themselves stay."""
    mapped = set(mappings().values())
    for name in host.bridge_ports(bridge) if mapped else ():
        if name in mapped:
            host.ip("link", "set", name, "nomaster", check=False)
            continue
        vlan_id = name.rpartition(".")[2]
        if vlan_id.isdigit() and name in {vlan_name(i, int(vlan_id)) for i in mapped}:
            host.ip("link", "del", name, check=False)  # ours: <interface>.<vlan id>
