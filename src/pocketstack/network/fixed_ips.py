"""A port's fixed IPs: what a request asks for (by subnet and/or address, or nothing:
one address per IP version and the SLAAC ones), neutron's checks on it, and claiming the
addresses through ipam."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import orm

from pocketstack.common import config
from pocketstack.network import addresses, ipam
from pocketstack.network import exceptions as exc
from pocketstack.network.models import IPAllocation, Network, Port, Subnet


def serves(subnet, device_owner: str) -> bool:
    """subnet-service-types: a subnet with service types gives addresses to ports of
    those device owners only (and to DHCP ports when it serves DHCP)."""
    types = subnet.service_types
    return not types or device_owner in types or (
        device_owner == "network:dhcp" and subnet.enable_dhcp)


def eligible(network: Network, subnets: list, device_owner: str) -> list:
    """The subnets a port of ``device_owner`` may take addresses from, those with service
    types first (neutron's _ipam_get_subnets); none at all while the network has subnets
    is neutron's IpAddressGenerationFailureNoMatchingSubnet."""
    out = [x for x in subnets if serves(x, device_owner)]
    if subnets and not out:
        raise exc.IpAddressGenerationFailureNoMatchingSubnet(network.id, device_owner)
    return sorted(out, key=lambda x: not x.service_types)


def resolve(s, network: Network, subnets: list, requested: list[dict],
            device_owner: str) -> list[tuple]:
    """[(subnet, ip or None)] for the requested fixed_ips, with neutron's checks."""
    if requested:
        subnets = eligible(network, subnets, device_owner)
    by_id = {subnet.id: subnet for subnet in subnets}
    if len(requested) > config.CONF.network.max_fixed_ips_per_port:
        raise exc.InvalidInput("Exceeded maximum amount of fixed ips per port.")
    out = []
    for item in requested:
        subnet_id, address = item.get("subnet_id"), item.get("ip_address")
        if subnet_id:
            subnet = by_id.get(subnet_id)
            if subnet is None:
                if s.get(Subnet, subnet_id) is None:
                    raise exc.SubnetNotFound(subnet_id)
                raise exc.InvalidInput(f"Failed to create port on network {network.id}, "
                                       f"because fixed_ips included invalid subnet "
                                       f"{subnet_id}")
            if address and not ipam.valid_for_subnet(subnet, address, device_owner):
                raise exc.InvalidIpForSubnet(address)
        else:
            subnet = next((x for x in subnets
                           if ipam.valid_for_subnet(x, address, device_owner)), None)
            if subnet is None:
                raise exc.InvalidIpForNetwork(address)
        if (address and addresses.is_auto_address(subnet)
                and device_owner not in ipam.ROUTER_OWNERS):
            raise exc.InvalidInput(f"IPv6 address {address} cannot be directly assigned to a "
                                   f"port on subnet {subnet.id} as the subnet is configured "
                                   "for automatic addresses")
        out.append((subnet, address))
    given = [a for _, a in out if a]
    if len(set(given)) != len(given):
        duplicate = next(a for a in given if given.count(a) > 1)
        raise exc.IpAddressAlreadyAllocated(duplicate, next(
            sub.id for sub, a in out if a == duplicate))
    return out


def defaults(network: Network, subnets: list, device_owner: str) -> list[tuple]:
    """No fixed_ips asked for: one IPv4 address, one stateful IPv6 address, and the
    EUI-64 address of every SLAAC subnet (routers take theirs explicitly), from the
    subnets that serve the port's device owner."""
    subnets = eligible(network, subnets, device_owner)
    out = []
    v4 = [x for x in subnets if x.ip_version == 4]
    v6_stateful = [x for x in subnets if x.ip_version == 6 and not addresses.is_auto_address(x)]
    if v4:
        out.append(("any", v4))
    if v6_stateful:
        out.append(("any", v6_stateful))
    if device_owner not in ipam.ROUTER_OWNERS:
        out += [(x, None) for x in subnets if addresses.is_auto_address(x)]
    return out


def allocate(s, port: Port, plan: list[tuple], start: int = 0,
             attach: bool = True) -> list[IPAllocation]:
    rows, position = [], start
    for subnet, address in plan:
        pending = {r.ip_address for r in rows}
        if subnet == "any":  # the first of these subnets with a free address
            for candidate in address:
                row = ipam.allocate_any(s, port, candidate, position, pending, attach)
                if row is not None:
                    break
            else:
                raise exc.IpAddressGenerationFailure(port.network_id)
        elif address:
            row = ipam.allocate_specific(s, port, subnet, address, position, attach)
        elif addresses.is_auto_address(subnet):
            row = ipam.allocate_specific(s, port, subnet,
                                         addresses.eui64(subnet.cidr, port.mac_address), position,
                                         attach)
        else:
            row = ipam.allocate_any(s, port, subnet, position, pending, attach)
            if row is None:
                raise exc.IpAddressGenerationFailure(port.network_id)
        rows.append(row)
        position += 1
    return rows


def changed(port: Port, requested: list[tuple]) -> tuple[list, list]:
    """neutron's rule: keep what is asked again (same address, or same subnet without an
    address), add the rest, remove what is no longer asked for."""
    original = list(port.fixed_ips)
    keep, add = [], []
    by_address = {a.ip_address: a for a in original}
    for subnet, address in requested:
        if address and address in by_address:
            keep.append(by_address.pop(address))
        elif address:
            add.append((subnet, address))
    remaining = list(by_address.values())
    for subnet, address in requested:
        if address:
            continue
        match = next((a for a in remaining if a.subnet_id == subnet.id), None)
        if match is not None:
            remaining.remove(match)
            keep.append(match)
        else:
            add.append((subnet, None))
    return add, remaining


def add_auto_addresses(s, network: Network, subnet) -> None:
    """A new SLAAC subnet: every port (but routers') gets its EUI-64 address."""
    for port in s.scalars(sa.select(Port).where(Port.network_id == network.id).options(
            orm.selectinload(Port.fixed_ips))):
        if port.device_owner in ipam.ROUTER_OWNERS or not serves(subnet, port.device_owner):
            continue
        position = max([a.position for a in port.fixed_ips] + [-1]) + 1
        ipam.allocate_specific(s, port, subnet, addresses.eui64(subnet.cidr, port.mac_address),
                               position)
