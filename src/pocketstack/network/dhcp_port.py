"""The network's DHCP port (device_owner network:dhcp), as neutron's DHCP agent keeps it:
one per network, with an address on each DHCP-enabled subnet, gone when no subnet wants
DHCP."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import config
from pocketstack.network import addresses, base, ipam, port_delete, ports
from pocketstack.network.models import Network, Port


def device_id(network_id: str) -> str:
    host = config.CONF.host
    return f"dhcp{uuid.uuid5(uuid.NAMESPACE_DNS, host)}-{network_id}"


def sync(s, network: Network, effects: base.AfterCommit) -> None:
    """One DHCP port per network, with an address on each DHCP-enabled subnet (neutron's
    DHCP agent does this); removed when no subnet wants DHCP any more."""
    subnets = [x for x in ipam.subnets_of(s, network.id) if x.enable_dhcp]
    port = s.scalar(sa.select(Port).where(Port.network_id == network.id,
                                          Port.device_owner == ports.DHCP_OWNER).limit(1))
    if not subnets:
        if port is not None:
            port_delete.delete_in(s, port, effects)
        return
    if port is None:
        port = Port(id=base.new_id(), project_id=network.project_id, network_id=network.id,
                    device_owner=ports.DHCP_OWNER, device_id=device_id(network.id),
                    host_id=config.CONF.host, port_security_enabled=False,
                    admin_state_up=True, name="", description="", dns_name="")
        base.init_standard(port)
        ports.binding_state(port)
        ports.insert_with_mac(s, port, None)
        s.flush()
    s.refresh(port, ["fixed_ips"])
    wanted = {x.id: x for x in subnets}
    for alloc in list(port.fixed_ips):
        if alloc.subnet_id not in wanted:
            s.delete(alloc)
    have = {a.subnet_id for a in port.fixed_ips if a.subnet_id in wanted}
    position = max([a.position for a in port.fixed_ips] + [-1]) + 1
    for subnet in subnets:
        if subnet.id in have:
            continue
        if addresses.is_auto_address(subnet):
            ipam.allocate_specific(s, port, subnet,
                                   addresses.eui64(subnet.cidr, port.mac_address), position)
        elif ipam.allocate_any(s, port, subnet, position) is None:
            continue  # a full subnet simply gets no DHCP address, as with neutron's agent
        position += 1
    s.flush()
    effects.dhcp(network.id)
