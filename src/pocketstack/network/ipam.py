"""IP address management: allocation pools, EUI-64 (SLAAC) addresses, and handing out
addresses so that none is ever given twice.

The guarantee is the primary key (subnet_id, ip_address) of network_ip_allocations. On
PostgreSQL and MariaDB each address is inserted inside a savepoint, and a duplicate-key
error means another request got it first: concurrent requests race for the lowest free
address and the losers retry among a random few of the next free ones. On SQLite writers
are serialized (common/db.py), so an address read as free in the write transaction is
free.
"""
from __future__ import annotations

import ipaddress
import random

import sqlalchemy as sa

from pocketstack.common import db, runtime
from pocketstack.network import base
from pocketstack.network.addresses import to_int, to_text
from pocketstack.network import exceptions as exc
from pocketstack.network.models import IPAllocation, Subnet

ROUTER_OWNERS = ("network:router_interface", "network:router_gateway",
                 "network:ha_router_replicated_interface",
                 "network:router_interface_distributed", "network:router_centralized_snat")
RETRIES = 20
WINDOW = 16


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
    for (_a1, b1, t1), (a2, _b2, t2) in zip(ranges, ranges[1:]):
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


# Where this process last found a free address, per subnet: the next search starts there,
# so a port create looks at a few candidates instead of every allocation of the subnet.
def _hints() -> dict[str, int]:
    return runtime.current().slot(__name__ + ".hints", dict)  # common/runtime.py
HINT_WINDOWS = 4

# WINDOW fixed parameters rather than an expanding IN: the statement compiles once.
_CANDIDATES = [f"c{i}" for i in range(WINDOW)]
_TAKEN_AMONG = sa.select(IPAllocation.ip_address).where(
    IPAllocation.subnet_id == sa.bindparam("subnet_id"),
    IPAllocation.ip_address.in_([sa.bindparam(name) for name in _CANDIDATES]))
_TAKEN = sa.select(IPAllocation.ip_address).where(
    IPAllocation.subnet_id == sa.bindparam("subnet_id"))


def _free_addresses(s, subnet, exclude: set[str]):
    """Free addresses of the subnet's pools: first a few windows of WINDOW addresses after
    the hint (one indexed lookup each), then every free address, lowest first."""
    pools = [(to_int(p["start"]), to_int(p["end"])) for p in subnet.allocation_pools or []]
    version = subnet.ip_version
    hint = _hints().get(subnet.id)
    for start, end in pools:
        if hint is None or not start <= hint <= end:
            continue
        cursor = hint
        for _ in range(HINT_WINDOWS):
            if cursor > end:
                break
            candidates = [to_text(v, version) for v in range(cursor, min(cursor + WINDOW,
                                                                          end + 1))]
            params = {"subnet_id": subnet.id}  # a short last window repeats its last
            params.update((name, candidates[min(i, len(candidates) - 1)])
                          for i, name in enumerate(_CANDIDATES))
            taken = {a for a, in base.core(s, _TAKEN_AMONG, params)}
            for address in candidates:
                if address not in taken and address not in exclude:
                    _hints()[subnet.id] = to_int(address) + 1
                    yield address
            cursor += WINDOW
    taken = {to_int(a) for a, in base.core(s, _TAKEN, {"subnet_id": subnet.id})}
    taken |= {to_int(a) for a in exclude}
    for start, end in pools:
        for value in sorted(v for v in taken if start <= v <= end) + [end + 1]:
            while start < value and start <= end:
                _hints()[subnet.id] = start + 1
                yield to_text(start, version)
                start += 1
            start = max(start, value + 1)
            if start > end:
                break


_HOLDER = sa.select(IPAllocation.port_id).where(
    IPAllocation.subnet_id == sa.bindparam("subnet_id"),
    IPAllocation.ip_address == sa.bindparam("address"))


def _insert(s, port, subnet, address: str, position: int, known_free: bool = False,
            attach: bool = True) -> IPAllocation | None:
    """Claim ``address``; None when another port holds it. ``known_free``: just read as
    free in this transaction; ``attach=False`` (SQLite only): the caller inserts the row."""
    row = IPAllocation(subnet_id=subnet.id, ip_address=address, port_id=port.id,
                       network_id=port.network_id, position=position)
    if base.writes_serialized(s):
        # Nobody else writes until we commit: reading is enough (and cheaper than a
        # savepoint per address).
        if not known_free and base.core(s, _HOLDER, {"subnet_id": subnet.id,
                                                      "address": address}).first():
            return None
        if attach:
            s.add(row)
        return row
    try:
        with s.begin_nested():
            s.add(row)
            s.flush()
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            return None
        raise
    return row


def allocate_specific(s, port, subnet, address: str, position: int,
                      attach: bool = True) -> IPAllocation:
    row = _insert(s, port, subnet, address, position, attach=attach)
    if row is None:
        raise exc.IpAddressAlreadyAllocated(address, subnet.id)
    return row


def allocate_any(s, port, subnet, position: int, pending: set[str] = frozenset(),
                 attach: bool = True) -> IPAllocation | None:
    """An address from the subnet's pools, or None when they are exhausted. ``pending``:
    addresses this request has claimed but not flushed yet."""
    tried: set[str] = set(pending)
    for attempt in range(RETRIES):
        candidates = []
        for address in _free_addresses(s, subnet, tried):
            candidates.append(address)
            if attempt == 0 or len(candidates) >= WINDOW:
                break
        if not candidates:
            return None
        address = candidates[0] if attempt == 0 else random.choice(candidates)
        row = _insert(s, port, subnet, address, position, known_free=True, attach=attach)
        if row is not None:
            return row
        tried.add(address)
    raise exc.IpAddressGenerationFailure(port.network_id)


def release(s, port_id: str, subnet_id: str, address: str) -> None:
    s.execute(sa.delete(IPAllocation).where(IPAllocation.port_id == port_id,
                                            IPAllocation.subnet_id == subnet_id,
                                            IPAllocation.ip_address == address))


_SUBNETS = sa.select(*Subnet.__table__.columns).where(
    Subnet.network_id == sa.bindparam("network_id")).order_by(Subnet.created_at, Subnet.id)


def subnets_of(s, network_id: str) -> list:
    """The network's subnets as read-only rows (attribute access like the model's)."""
    s.flush()  # subnets created in this transaction count
    return list(base.core(s, _SUBNETS, {"network_id": network_id}))
