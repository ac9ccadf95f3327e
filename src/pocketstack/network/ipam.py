"""IP address management: allocation pools, EUI-64 (SLAAC) addresses, and handing out
addresses so that none is ever given twice.

The guarantee is the primary key (subnet_id, ip_address) of network_ip_allocations: each
address is inserted inside a savepoint, and a duplicate-key error means someone else got it
first, so we pick another. On SQLite writers are serialized anyway; on PostgreSQL and
MariaDB concurrent requests race for the same lowest address, and the losers retry among a
random few of the next free ones.
"""
from __future__ import annotations

import ipaddress
import random

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import exceptions as exc
from pocketstack.network.models import IPAllocation, Subnet

AUTO_ADDRESS_MODES = ("slaac", "dhcpv6-stateless")
ROUTER_OWNERS = ("network:router_interface", "network:router_gateway",
                 "network:ha_router_replicated_interface",
                 "network:router_interface_distributed", "network:router_centralized_snat")
RETRIES = 20
WINDOW = 16


def is_auto_address(subnet) -> bool:
    """SLAAC or DHCPv6-stateless: addresses come from the MAC, not from the pools."""
    if subnet.ip_version != 6:
        return False
    return subnet.ipv6_address_mode in AUTO_ADDRESS_MODES or (
        subnet.ipv6_address_mode is None and subnet.ipv6_ra_mode in AUTO_ADDRESS_MODES)


def eui64(prefix: str, mac: str) -> str:
    """The SLAAC address of ``mac`` on ``prefix`` (RFC 4291 modified EUI-64)."""
    octets = [int(part, 16) for part in mac.split(":")]
    octets[0] ^= 0x02  # flip the universal/local bit
    interface_id = int.from_bytes(bytes(octets[:3] + [0xFF, 0xFE] + octets[3:]), "big")
    network = ipaddress.ip_network(prefix)
    return str(ipaddress.IPv6Address(int(network.network_address) | interface_id))


def pool_text(start: str, end: str) -> str:
    return f"{start}-{end}"


def default_pools(cidr: str, gateway_ip: str | None) -> list[dict]:
    """The whole subnet minus the network address, the IPv4 broadcast and the gateway."""
    network = ipaddress.ip_network(cidr)
    first = int(network.network_address) + 1
    last = int(network.broadcast_address) - (1 if network.version == 4 else 0)
    if network.version == 4 and network.prefixlen >= 31:  # point-to-point: both usable
        first, last = int(network.network_address), int(network.broadcast_address)
    ranges = [(first, last)]
    if gateway_ip:
        gateway = int(ipaddress.ip_address(gateway_ip))
        if first <= gateway <= last:
            ranges = [(first, gateway - 1), (gateway + 1, last)]
    make = ipaddress.ip_address
    return [{"start": str(make(a)), "end": str(make(b))} for a, b in ranges if a <= b]


def validate_pools(pools: list[dict], cidr: str, gateway_ip: str | None) -> list[dict]:
    network = ipaddress.ip_network(cidr)
    first = int(network.network_address) + (0 if network.version == 4 and
                                            network.prefixlen >= 31 else 1)
    last = int(network.broadcast_address) - (1 if network.version == 4 and
                                             network.prefixlen < 31 else 0)
    ranges = []
    for pool in pools:
        text = pool_text(pool["start"], pool["end"])
        start, end = ipaddress.ip_address(pool["start"]), ipaddress.ip_address(pool["end"])
        if start.version != network.version or end.version != network.version or start > end:
            raise exc.InvalidAllocationPool(text)
        if int(start) < first or int(end) > last:
            raise exc.OutOfBoundsAllocationPool(text, cidr)
        ranges.append((int(start), int(end), text))
    ranges.sort()
    for (a1, b1, t1), (a2, b2, t2) in zip(ranges, ranges[1:]):
        if a2 <= b1:
            raise exc.OverlappingAllocationPools(t1, t2, cidr)
    if gateway_ip:
        gateway = int(ipaddress.ip_address(gateway_ip))
        for a, b, text in ranges:
            if a <= gateway <= b:
                raise exc.GatewayConflictWithAllocationPools(gateway_ip, text)
    return [{"start": str(ipaddress.ip_address(a)), "end": str(ipaddress.ip_address(b))}
            for a, b, _ in ranges]


def valid_for_subnet(subnet, address: str, device_owner: str = "") -> bool:
    """May ``address`` be a fixed IP on ``subnet``? (never the IPv4 network or broadcast
    address; the IPv6 subnet-router anycast address only for routers)."""
    ip = ipaddress.ip_address(address)
    network = ipaddress.ip_network(subnet.cidr)
    if ip not in network:
        return False
    if network.version == 6:
        return ip != network.network_address or device_owner in ROUTER_OWNERS + ("",)
    if network.prefixlen >= 31:
        return True
    return ip not in (network.network_address, network.broadcast_address)


def _free_addresses(s, subnet, exclude: set[str]):
    """Free addresses of the subnet's pools, lowest first."""
    taken = {int(ipaddress.ip_address(a)) for a in s.scalars(
        sa.select(IPAllocation.ip_address).where(IPAllocation.subnet_id == subnet.id))}
    taken |= {int(ipaddress.ip_address(a)) for a in exclude}
    make = ipaddress.ip_address
    for pool in subnet.allocation_pools or []:
        start, end = int(make(pool["start"])), int(make(pool["end"]))
        for value in sorted(v for v in taken if start <= v <= end) + [end + 1]:
            while start < value and start <= end:
                yield str(make(start))
                start += 1
            start = max(start, value + 1)
            if start > end:
                break


def _insert(s, port, subnet, address: str, position: int) -> bool:
    """Claim ``address``; False when another port holds it (the savepoint is undone)."""
    try:
        with s.begin_nested():
            s.add(IPAllocation(subnet_id=subnet.id, ip_address=address, port_id=port.id,
                               network_id=port.network_id, position=position))
            s.flush()
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            return False
        raise
    return True


def allocate_specific(s, port, subnet, address: str, position: int) -> str:
    if not _insert(s, port, subnet, address, position):
        raise exc.IpAddressAlreadyAllocated(address, subnet.id)
    return address


def allocate_any(s, port, subnet, position: int) -> str | None:
    """An address from the subnet's pools, or None when they are exhausted."""
    tried: set[str] = set()
    for attempt in range(RETRIES):
        candidates = []
        for address in _free_addresses(s, subnet, tried):
            candidates.append(address)
            if attempt == 0 or len(candidates) >= WINDOW:
                break
        if not candidates:
            return None
        address = candidates[0] if attempt == 0 else random.choice(candidates)
        if _insert(s, port, subnet, address, position):
            return address
        tried.add(address)
    raise exc.IpAddressGenerationFailure(port.network_id)


def release(s, port_id: str, subnet_id: str, address: str) -> None:
    s.execute(sa.delete(IPAllocation).where(IPAllocation.port_id == port_id,
                                            IPAllocation.subnet_id == subnet_id,
                                            IPAllocation.ip_address == address))


def subnets_of(s, network_id: str) -> list[Subnet]:
    return list(s.scalars(sa.select(Subnet).where(Subnet.network_id == network_id)
                          .order_by(Subnet.created_at, Subnet.id)))
