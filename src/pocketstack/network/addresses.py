"""An address as a value: its integer and text forms, and the IPv6 subnets whose addresses
come from the MAC (SLAAC, DHCPv6-stateless) with the EUI-64 address that gives. No
database: the DHCP files, fixed IPs and the allocator (ipam.py) all use these."""
from __future__ import annotations

import ipaddress
import socket

AUTO_ADDRESS_MODES = ("slaac", "dhcpv6-stateless")


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


def to_int(address: str) -> int:
    """An address as an integer, fast (socket's C parser instead of ipaddress)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return int.from_bytes(socket.inet_pton(family, address), "big")


def to_text(value: int, version: int) -> str:
    if version == 4:
        return socket.inet_ntop(socket.AF_INET, value.to_bytes(4, "big"))
    return str(ipaddress.IPv6Address(value))
