"""Neutron's l2population, the network service's half: for a network of type vxlan, what
one host's VXLAN device should forward where (agent/overlay.py makes it so).

* flood: the VTEPs of the other hosts that have the network's bridge (broadcast and
  unknown unicast go there and nowhere else);
* fdb: (MAC, VTEP) of each port of the network whose host is another of those.

A host has a network's bridge when a guest port of the network is bound to it; the
network node (host_plans.network_node_hosts) also when a router has a port on it, and
its DHCP and router ports live there. A host's VTEP is the ``tunneling_ip`` its Linux
bridge agent reports in its heartbeat; hosts without one (no ``[network] local_ip``) are
not reached over the overlay.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.network.agent_hosts import tunnel_endpoints
from pocketstack.network.models import Port

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
    node_has_it = False
    for mac, host_id, owner in rows:
        if owner.startswith("network:"):
            if owner in NETWORK_NODE_OWNERS and endpoints.network_node:
                where.append((mac, endpoints.network_node))
                node_has_it = node_has_it or owner != DHCP_OWNER
            continue
        vtep = endpoints.by_host.get(host_id) if host_id else None
        if vtep is not None:
            where.append((mac, vtep))
            node_has_it = node_has_it or vtep == endpoints.network_node
    having = {vtep for mac, vtep in where if vtep != endpoints.network_node or node_has_it}
    flood = sorted(having - mine)
    fdb = sorted({(mac.lower(), vtep) for mac, vtep in where if vtep in flood})
    return flood, fdb
