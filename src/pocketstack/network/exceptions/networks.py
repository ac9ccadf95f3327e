"""Networks, subnets, segments, subnet pools and address scopes."""
from __future__ import annotations

from pocketstack.common import exceptions as base
from pocketstack.network.exceptions.common import InUse, NotFoundById


class NetworkNotFound(NotFoundById):
    what = "Network"


class SubnetNotFound(NotFoundById):
    what = "Subnet"


class NetworkInUse(InUse):
    def __init__(self, net_id: str, reason: str = "There are one or more ports still in use "
                                                  "on the network"):
        super().__init__(f"Unable to complete operation on network {net_id}. {reason}.")


class SubnetInUse(InUse):
    def __init__(self, subnet_id: str, reason: str = "One or more ports have an IP allocation "
                                                     "from this subnet"):
        super().__init__(f"Unable to complete operation on subnet {subnet_id}: {reason}.")


class OverlappingAllocationPools(base.Conflict):
    def __init__(self, pool_1: str, pool_2: str, subnet_cidr: str):
        super().__init__(f"Found overlapping allocation pools: {pool_1} {pool_2} for subnet "
                         f"{subnet_cidr}.")


class GatewayConflictWithAllocationPools(InUse):
    def __init__(self, ip_address: str, pool: str):
        super().__init__(f"Gateway ip {ip_address} conflicts with allocation pool {pool}.")


class GatewayIpInUse(InUse):
    def __init__(self, ip_address: str, port_id: str):
        super().__init__(f"Current gateway ip {ip_address} already in use by port {port_id}. "
                         "Unable to update.")


class InvalidSharedSetting(base.Conflict):
    def __init__(self, network: str):
        super().__init__(f"Unable to reconfigure sharing settings for network {network}. "
                         "Multiple projects are using it.")


class SegmentationIdInUse(InUse):
    def __init__(self, network_type: str, segmentation_id, physical_network):
        where = f" on physical network {physical_network}" if physical_network else ""
        super().__init__(f"Unable to create the network. The {network_type} segmentation id "
                         f"{segmentation_id}{where} is in use.")


class NoNetworkAvailable(base.ServiceUnavailable):
    """Every segmentation id of the type's tenant ranges is taken (neutron-lib's, a
    ResourceExhausted: 503)."""

    def __init__(self):
        super().__init__("Unable to create the network. No tenant network is available for "
                         "allocation.")


class NetworkMTUSubnetConflict(base.Conflict):
    def __init__(self, net_id: str, subnet_id: str):
        super().__init__(f"MTU of {net_id} is not compatible with subnet {subnet_id}: IPv6 "
                         "needs at least 1280.")


class InvalidAllocationPool(base.BadRequest):
    def __init__(self, pool: str):
        super().__init__(f"The allocation pool {pool} is not valid.")


class OutOfBoundsAllocationPool(base.BadRequest):
    def __init__(self, pool: str, subnet_cidr: str):
        super().__init__(f"The allocation pool {pool} spans beyond the subnet cidr "
                         f"{subnet_cidr}.")


class InvalidCIDR(base.BadRequest):
    def __init__(self, input: str):
        super().__init__(f"Invalid CIDR {input} given as IP prefix.")


class HostRoutesExhausted(base.BadRequest):
    def __init__(self, subnet_id: str, quota: int):
        super().__init__(f"Unable to complete operation for {subnet_id}. The number of host "
                         f"routes exceeds the limit {quota}.")


class DNSNameServersExhausted(base.BadRequest):
    def __init__(self, subnet_id: str, quota: int):
        super().__init__(f"Unable to complete operation for {subnet_id}. The number of DNS "
                         f"nameservers exceeds the limit {quota}.")


class SegmentNotFound(NotFoundById):
    what = "Segment"


class SegmentInUse(InUse):
    def __init__(self, segment_id: str, reason: str):
        super().__init__(f"Segment '{segment_id}' cannot be deleted while it is in use: "
                         f"{reason}.")


class SubnetPoolNotFound(NotFoundById):
    what = "Subnet pool"


class SubnetPoolInUse(InUse):
    def __init__(self, pool_id: str):
        super().__init__(f"Subnet pool {pool_id} cannot be deleted: subnets are allocated "
                         "from it.")


class IllegalSubnetPoolPrefixUpdate(base.BadRequest):
    def __init__(self, msg: str):
        super().__init__(f"Illegal update to prefixes: {msg}.")


class SubnetAllocationFailed(base.Conflict):
    def __init__(self, reason: str):
        super().__init__(f"Failed to allocate subnet: {reason}.")


class AddressScopeNotFound(NotFoundById):
    what = "Address scope"


class AddressScopeInUse(InUse):
    def __init__(self, scope_id: str):
        super().__init__(f"Unable to complete operation on address scope {scope_id}. There "
                         "are one or more subnet pools in use on the address scope.")


class DefaultExternalNetworkExists(base.Conflict):
    def __init__(self, network_id: str):
        super().__init__(f"A default external network already exists: {network_id}.")


class SegmentsSetInConjunctionWithProviders(base.BadRequest):
    def __init__(self):
        super().__init__("Segments and provider values cannot both be set.")


class SegmentsContainDuplicateEntry(base.BadRequest):
    def __init__(self):
        super().__init__("Duplicate segment entry in request.")


class InvalidSubnetServiceType(base.BadRequest):
    def __init__(self, service_type):
        super().__init__(f"Subnet service type {service_type} does not correspond to a "
                         "valid device owner.")


class InvalidInputSubnetServiceType(base.BadRequest):
    def __init__(self, service_type):
        super().__init__(f"Subnet service type {service_type} is not a string.")
