"""Ports and their addresses (IPAM, MACs, binding)."""
from __future__ import annotations

from pocketstack.common import exceptions as base
from pocketstack.network.exceptions.common import InUse, NotFoundById


class PortNotFound(NotFoundById):
    what = "Port"


class PortInUse(InUse):
    def __init__(self, port_id: str, net_id: str, device_id: str):
        super().__init__(f"Unable to complete operation on port {port_id} for network "
                         f"{net_id}. Port already has an attached device {device_id}.")


class ServicePortInUse(InUse):
    def __init__(self, port_id: str, reason: str):
        super().__init__(f"Port {port_id} cannot be deleted directly via the port API: "
                         f"{reason}.")


class MacAddressInUse(InUse):
    def __init__(self, net_id: str, mac: str):
        super().__init__(f"Unable to complete operation for network {net_id}. "
                         f"The mac address {mac} is in use.")


class IpAddressAlreadyAllocated(base.Conflict):
    def __init__(self, ip: str, subnet_id: str):
        super().__init__(f"IP address {ip} already allocated in subnet {subnet_id}")


class IpAddressGenerationFailure(base.Conflict):
    def __init__(self, net_id: str):
        super().__init__(f"No more IP addresses available on network {net_id}.")


class PortBound(InUse):
    def __init__(self, port_id: str, vif_type: str, old_mac: str, new_mac: str):
        super().__init__(f"Unable to complete operation on port {port_id}, port is already "
                         f"bound, port type: {vif_type}, old_mac {old_mac}, new_mac {new_mac}.")


class NetworkMacAddressGenerationFailure(base.ServiceUnavailable):
    def __init__(self, net_id: str):
        super().__init__(f"Unable to generate unique mac on network {net_id}.")


class InvalidIpForNetwork(base.BadRequest):
    def __init__(self, ip_address: str):
        super().__init__(f"IP address {ip_address} is not a valid IP for any of the subnets "
                         "on the specified network.")


class InvalidIpForSubnet(base.BadRequest):
    def __init__(self, ip_address: str):
        super().__init__(f"IP address {ip_address} is not a valid IP for the specified "
                         "subnet.")


class IpAddressGenerationFailureNoMatchingSubnet(base.BadRequest):
    def __init__(self, network_id: str, service_type: str):
        super().__init__(f"No valid service subnet for the given device owner, network "
                         f"{network_id}, service type {service_type}.")
