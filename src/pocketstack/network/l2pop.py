"""Neutron's l2population, the network service's half: for a network of type vxlan, what
one host's VXLAN device should forward where (agent/overlay.py makes it so).

* flood: the VTEPs of the other hosts that have the network's bridge (broadcast and
  unknown unicast go there and nowhere else);
* fdb: (MAC, VTEP) of each port of the network whose host is another of those.

A host has a network's bridge when a guest port of the network is bound to it; the
network node (host_plans.network_node_hosts), where its DHCP and router ports live, also
when it serves guests on overlay hosts (served_networks). A host's VTEP is the ``tunneling_ip`` its
Linux
bridge agent reports in its heartbeat; hosts without one (no ``[network] local_ip``) are
not reached over the overlay.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.network.agent_hosts import tunnel_endpoints
from pocketstack.network.models import Network, Port

DHCP_OWNER = "network:dhcp"
NETWORK_NODE_OWNERS = (DHCP_OWNER, "network:router_interface", "network:router_gateway")


class Endpoints:
    """The VTEPs of one answer, read once per RPC request."""

    def __init__(self, s, network_node_hosts: set[str]):
        self.by_host = tunnel_endpoints(s)
        # the network node's ports are bound to the service's host names; its agent
        # reports under one of them
        node = next((self.by_host[h] for h in sorted(network_node_hosts)
                     if h in self.by_host), None)
        self.network_node = node
        if node is not None:
            for name in network_node_hosts:
                self.by_host.setdefault(name, node)

    def of(self, hosts) -> set[str]:
        return {self.by_host[h] for h in hosts if h in self.by_host}


def entries(s, network_id: str, hosts, endpoints: Endpoints
            ) -> tuple[list[str], list[tuple[str, str]]]:
    """(flood VTEPs, [(MAC, VTEP)]) for the agent of ``hosts`` on one vxlan network."""
    mine = endpoints.of(hosts)
    rows = s.execute(sa.select(Port.mac_address, Port.host_id, Port.device_owner).where(
        Port.network_id == network_id)).all()
    where: list[tuple[str, str]] = []  # (MAC, VTEP) of every port placed on a VTEP
    guests = False  # on an overlay host: then the network node serves the network
    for mac, host_id, owner in rows:
        if owner.startswith("network:"):
            if owner in NETWORK_NODE_OWNERS and endpoints.network_node:
                where.append((mac, endpoints.network_node))
            continue
        vtep = endpoints.by_host.get(host_id) if host_id else None
        if vtep is not None:
            where.append((mac, vtep))
            guests = True
    having = {vtep for mac, vtep in where if vtep != endpoints.network_node or guests}
    flood = sorted(having - mine)
    fdb = sorted({(mac.lower(), vtep) for mac, vtep in where if vtep in flood})
    return flood, fdb


def served_networks(s, endpoints: Endpoints) -> set[str]:
    """The vxlan networks the network node plumbs for guests on other hosts: those with a
    guest port bound to an overlay host, and a DHCP or router port (served from the
    network node)."""
    remote = sorted(h for h, vtep in endpoints.by_host.items()
                    if vtep != endpoints.network_node)
    if endpoints.network_node is None or not remote:
        return set()
    served = sa.select(Port.network_id).where(Port.device_owner.in_(NETWORK_NODE_OWNERS))
    return set(s.scalars(sa.select(Port.network_id).join(
        Network, Network.id == Port.network_id).where(
        Network.network_type == "vxlan", Port.host_id.in_(remote),
        sa.not_(Port.device_owner.startswith("network:")),
        Port.network_id.in_(served)).distinct()))
