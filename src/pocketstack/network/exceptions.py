"""Neutron's exceptions, by neutron's names: the class name is the ``type`` clients see in
``{"NeutronError": {"type", "message", "detail"}}``; the base class picks the status.
Messages follow neutron-lib's wording so people can search for them.
"""
from __future__ import annotations

from pocketstack.common import exceptions as base


class HTTPBadRequest(base.BadRequest):
    """Attribute validation failed (neutron raises webob's HTTPBadRequest for these)."""


class InvalidInput(base.BadRequest):
    def __init__(self, error_message: str):
        super().__init__(f"Invalid input for operation: {error_message}.")


class BadRequest(base.BadRequest):
    def __init__(self, resource: str, msg: str):
        super().__init__(f"Bad {resource} request: {msg}.")


class RevisionNumberConstraintFailed(base.PocketstackError):
    """An ``If-Match: revision_number=N`` update of an object at another revision
    (neutron's revision-if-match extension; a webob HTTPPreconditionFailed there)."""
    code = 412

    def __init__(self, expected: int, current: int):
        super().__init__(f"Constrained to {expected}, but current revision is {current}")


class NotAuthorized(base.Forbidden):
    pass


class ResourceNotFound(base.NotFound):
    """The URL names no resource (HTTPNotFound in neutron)."""


class NetworkNotFound(base.NotFound):
    def __init__(self, net_id: str):
        super().__init__(f"Network {net_id} could not be found.")


class SubnetNotFound(base.NotFound):
    def __init__(self, subnet_id: str):
        super().__init__(f"Subnet {subnet_id} could not be found.")


class PortNotFound(base.NotFound):
    def __init__(self, port_id: str):
        super().__init__(f"Port {port_id} could not be found.")


class SecurityGroupNotFound(base.NotFound):
    def __init__(self, id: str):
        super().__init__(f"Security group {id} does not exist")


class SecurityGroupRuleNotFound(base.NotFound):
    def __init__(self, id: str):
        super().__init__(f"Security group rule {id} does not exist")


class RouterNotFound(base.NotFound):
    def __init__(self, router_id: str):
        super().__init__(f"Router {router_id} could not be found")


class FloatingIPNotFound(base.NotFound):
    def __init__(self, floatingip_id: str):
        super().__init__(f"Floating IP {floatingip_id} could not be found")


class ExtensionNotFound(base.NotFound):
    def __init__(self, alias: str):
        super().__init__(f"Extension with alias {alias} does not exist")


class TagNotFound(base.NotFound):
    def __init__(self, resource_id: str, tag: str):
        super().__init__(f"Tag {tag} could not be found for resource {resource_id}.")


class RouterInterfaceNotFound(base.NotFound):
    def __init__(self, router_id: str, port_id: str):
        super().__init__(f"Router {router_id} does not have an interface with id {port_id}")


class RouterInterfaceNotFoundForSubnet(base.NotFound):
    def __init__(self, router_id: str, subnet_id: str):
        super().__init__(f"Router {router_id} has no interface on subnet {subnet_id}")


class ExternalGatewayForFloatingIPNotFound(base.NotFound):
    def __init__(self, external_network_id: str, subnet_id: str, port_id: str):
        super().__init__(
            f"External network {external_network_id} is not reachable from subnet "
            f"{subnet_id}.  Therefore, cannot associate Port {port_id} with a Floating IP.")


# --- 409 ---------------------------------------------------------------------------------

class Conflict(base.Conflict):
    pass


class InUse(base.Conflict):
    message = "The resource is in use."


class NetworkInUse(InUse):
    def __init__(self, net_id: str, reason: str = "There are one or more ports still in use "
                                                  "on the network"):
        super().__init__(f"Unable to complete operation on network {net_id}. {reason}.")


class SubnetInUse(InUse):
    def __init__(self, subnet_id: str, reason: str = "One or more ports have an IP allocation "
                                                     "from this subnet"):
        super().__init__(f"Unable to complete operation on subnet {subnet_id}: {reason}.")


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


class OverQuota(base.Conflict):
    def __init__(self, overs: list[str]):
        super().__init__(f"Quota exceeded for resources: {sorted(overs)}.")


class InvalidQuotaValue(base.Conflict):
    def __init__(self, unders: list[str]):
        super().__init__("Change would make usage less than 0 for the following resources: "
                         f"{sorted(unders)}.")


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


class SecurityGroupInUse(InUse):
    def __init__(self, id: str, reason: str = "in use"):
        super().__init__(f"Security Group {id} {reason}.")


class SecurityGroupCannotRemoveDefault(InUse):
    message = "Insufficient rights for removing default security group."


class SecurityGroupCannotUpdateDefault(InUse):
    message = "Updating default security group not allowed."


class SecurityGroupDefaultAlreadyExists(InUse):
    message = "Default security group already exists."


class SecurityGroupRuleExists(InUse):
    def __init__(self, rule_id: str):
        super().__init__(f"Security group rule already exists. Rule id is {rule_id}.")


class DuplicateSecurityGroupRuleInPost(InUse):
    message = "Duplicate Security Group Rule in POST."


class PortSecurityPortHasSecurityGroup(InUse):
    message = ("Port has security group associated. Cannot disable port security or ip "
               "address until security group is removed")


class AddressPairAndPortSecurityRequired(base.Conflict):
    message = ("Port Security must be enabled in order to have allowed address pairs on a "
               "port.")


class RouterInUse(InUse):
    def __init__(self, router_id: str, reason: str = "still has ports"):
        super().__init__(f"Router {router_id} {reason}")


class RouterInterfaceInUseByFloatingIP(InUse):
    def __init__(self, router_id: str, subnet_id: str):
        super().__init__(f"Router interface for subnet {subnet_id} on router {router_id} cannot "
                         "be deleted, as it is required by one or more floating IPs.")


class FloatingIPPortAlreadyAssociated(InUse):
    def __init__(self, fip_id: str, floating_ip_address: str, fixed_ip: str, port_id: str,
                 net_id: str):
        super().__init__(
            f"Cannot associate floating IP {floating_ip_address} ({fip_id}) with port "
            f"{port_id} using fixed IP {fixed_ip}, as that fixed IP already has a floating IP "
            f"on external network {net_id}.")


class PortBound(InUse):
    def __init__(self, port_id: str, vif_type: str, old_mac: str, new_mac: str):
        super().__init__(f"Unable to complete operation on port {port_id}, port is already "
                         f"bound, port type: {vif_type}, old_mac {old_mac}, new_mac {new_mac}.")


class NetworkMacAddressGenerationFailure(base.ServiceUnavailable):
    def __init__(self, net_id: str):
        super().__init__(f"Unable to generate unique mac on network {net_id}.")


# --- 400 with neutron's names ------------------------------------------------------------

class InvalidIpForNetwork(base.BadRequest):
    def __init__(self, ip_address: str):
        super().__init__(f"IP address {ip_address} is not a valid IP for any of the subnets "
                         "on the specified network.")


class InvalidIpForSubnet(base.BadRequest):
    def __init__(self, ip_address: str):
        super().__init__(f"IP address {ip_address} is not a valid IP for the specified "
                         "subnet.")


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


class RoutesExhausted(base.BadRequest):
    def __init__(self, router_id: str, quota: int):
        super().__init__(f"Unable to complete operation for {router_id}. The number of routes "
                         f"exceeds the maximum {quota}.")


class DNSNameServersExhausted(base.BadRequest):
    def __init__(self, subnet_id: str, quota: int):
        super().__init__(f"Unable to complete operation for {subnet_id}. The number of DNS "
                         f"nameservers exceeds the limit {quota}.")


class SecurityGroupRuleInvalidProtocol(base.BadRequest):
    def __init__(self, protocol, values):
        super().__init__(f"Security group rule protocol {protocol} not supported. Only protocol "
                         f"values {values} and integer representations [0 to 255] are "
                         "supported.")


class SecurityGroupRuleInvalidEtherType(base.BadRequest):
    def __init__(self, ethertype):
        super().__init__(f"Security group rule for ethertype '{ethertype}' not supported. "
                         "Allowed values are ['IPv4', 'IPv6'].")


class SecurityGroupInvalidPortRange(base.BadRequest):
    message = "For TCP/UDP protocols, port_range_min must be <= port_range_max"


class SecurityGroupInvalidPortValue(base.BadRequest):
    def __init__(self, port):
        super().__init__(f"Invalid value for port {port}")


class SecurityGroupInvalidProtocolForPort(base.BadRequest):
    def __init__(self, protocol):
        super().__init__(f"Ports cannot be specified for protocol {protocol}. Ports are only "
                         "supported for DCCP, SCTP, TCP, UDP, UDPLITE.")


class SecurityGroupInvalidIcmpValue(base.BadRequest):
    def __init__(self, field: str, attr: str, value):
        super().__init__(f"Invalid value for ICMP {field} ({attr}) {value}. It must be 0 to "
                         "255.")


class SecurityGroupMissingIcmpType(base.BadRequest):
    def __init__(self, value):
        super().__init__(f"ICMP code (port-range-max) {value} is provided but ICMP type "
                         "(port-range-min) is missing.")


class SecurityGroupProtocolRequiredWithPorts(base.BadRequest):
    message = "Must also specify protocol if port range is given."


class SecurityGroupEthertypeConflictWithProtocol(base.BadRequest):
    def __init__(self, ethertype: str, protocol: str):
        super().__init__(f"Invalid ethertype {ethertype} for protocol {protocol}.")


class SecurityGroupRuleParameterConflict(base.BadRequest):
    def __init__(self, ethertype: str, cidr: str):
        super().__init__(f"Conflicting value ethertype {ethertype} for CIDR {cidr}")


class SecurityGroupMultipleRemoteEntites(base.BadRequest):
    message = ("Only one of remote_ip_prefix or remote_group_id or remote_address_group_id "
               "may be provided.")


class PortSecurityAndIPRequiredForSecurityGroups(base.BadRequest):
    message = ("Port security must be enabled and port must have an IP address in order to "
               "use security groups.")


class QuotaResourceUnknown(base.NotFound):
    def __init__(self, unknown: list[str]):
        super().__init__(f"Unknown quota resources {unknown}.")


class AdminRequired(base.Forbidden):
    def __init__(self, reason: str):
        super().__init__(f"User does not have admin privileges: {reason}.")


class AgentNotFound(base.NotFound):
    def __init__(self, agent_id: str):
        super().__init__(f"Agent {agent_id} could not be found.")


class SegmentNotFound(base.NotFound):
    def __init__(self, segment_id: str):
        super().__init__(f"Segment {segment_id} could not be found.")


class SegmentInUse(InUse):
    def __init__(self, segment_id: str, reason: str):
        super().__init__(f"Segment '{segment_id}' cannot be deleted while it is in use: "
                         f"{reason}.")


class SubnetPoolNotFound(base.NotFound):
    def __init__(self, pool_id: str):
        super().__init__(f"Subnet pool {pool_id} could not be found.")


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


class AddressScopeNotFound(base.NotFound):
    def __init__(self, scope_id: str):
        super().__init__(f"Address scope {scope_id} could not be found.")


class AddressScopeInUse(InUse):
    def __init__(self, scope_id: str):
        super().__init__(f"Unable to complete operation on address scope {scope_id}. There "
                         "are one or more subnet pools in use on the address scope.")


class PortForwardingNotFound(base.NotFound):
    def __init__(self, pf_id: str):
        super().__init__(f"Port Forwarding {pf_id} could not be found.")


class PortForwardingConflict(base.Conflict):
    pass


class FipInUseByPortForwarding(base.Conflict):
    pass


class TrunkNotFound(base.NotFound):
    def __init__(self, trunk_id: str):
        super().__init__(f"Trunk {trunk_id} could not be found.")


class TrunkInUse(InUse):
    def __init__(self, trunk_id: str):
        super().__init__(f"Trunk {trunk_id} is currently in use.")


class PortInUseAsTrunkPort(InUse):
    def __init__(self, port_id: str):
        super().__init__(f"Port {port_id} is currently in use and is not eligible for use "
                         "as a parent port or subport.")


class DuplicateSubPort(InUse):
    def __init__(self, trunk_id: str):
        super().__init__(f"Trunk {trunk_id} already has a subport with that segmentation "
                         "type and id.")


class SubPortNotFound(base.NotFound):
    def __init__(self, trunk_id: str, port_id):
        super().__init__(f"SubPort on trunk {trunk_id} with parent port {port_id} could not "
                         "be found.")


class QosPolicyNotFound(base.NotFound):
    def __init__(self, policy_id: str):
        super().__init__(f"QoS policy {policy_id} could not be found.")


class QosRuleNotFound(base.NotFound):
    def __init__(self, policy_id: str, rule_id: str):
        super().__init__(f"QoS rule {rule_id} for policy {policy_id} could not be found.")


class QoSRulesConflict(base.Conflict):
    def __init__(self, policy_id: str, rule_id: str, rule_type: str = "bandwidth_limit"):
        super().__init__(f"Rule {rule_type} conflicts with rule {rule_id} which already "
                         f"exists in QoS Policy {policy_id}.")


class QoSRuleParameterConflict(base.Conflict):
    def __init__(self, value, policy_id: str, existing_rule: str, existing_value):
        super().__init__(f"Unable to add the rule with value {value} to the policy "
                         f"{policy_id} as the existing rule of type {existing_rule} has "
                         f"value {existing_value}.")


class RbacPolicyNotFound(base.NotFound):
    def __init__(self, id: str, object_type: str = "rbac_policy"):
        super().__init__(f"RBAC policy of type {object_type} with ID {id} not found")


class RbacPolicyInUse(base.Conflict):
    def __init__(self, object_id: str, details: str):
        super().__init__(f"RBAC policy on object {object_id} cannot be removed because other "
                         f"objects depend on it.\nDetails: {details}")


class DuplicateRbacPolicy(base.Conflict):
    def __init__(self):
        super().__init__("An RBAC policy already exists with those values.")


class InvalidActionForType(base.BadRequest):
    def __init__(self, action: str, object_type: str, valid_actions: list[str]):
        super().__init__(f"Invalid action '{action}' for object type '{object_type}'. Valid "
                         f"actions: {valid_actions}")


class QosPolicyInUse(InUse):
    def __init__(self, policy_id: str, object_type: str, object_id: str):
        super().__init__(f"QoS Policy {policy_id} is used by {object_type} {object_id}.")


class RouterExternalGatewayInUseByFloatingIp(InUse):
    def __init__(self, router_id: str, net_id: str):
        super().__init__(f"Gateway cannot be updated for router {router_id}, since a gateway "
                         f"to external network {net_id} is required by one or more floating "
                         "IPs.")


# external-gateway-multihoming: NeutronExceptions there (a 500 in neutron); a 400 here,
# as the request is what cannot be carried out.
class UnableToMatchGateways(base.BadRequest):
    def __init__(self, router_id: str, reason: str):
        super().__init__(f"Unable to match a requested gateway port to existing gateway "
                         f"ports for router {router_id}: {reason}")


class UnableToRemoveGateways(base.BadRequest):
    def __init__(self, router_id: str, reason: str):
        super().__init__(f"Unable to remove extra gateways from a router {router_id}: "
                         f"{reason}")


# --- the newer services: L3 agent scheduling, address groups, flavors ---


class InvalidL3Agent(base.NotFound):
    def __init__(self, agent_id: str):
        super().__init__(f"Agent {agent_id} is not a L3 Agent or has been disabled")


class RouterHostedByL3Agent(base.Conflict):
    def __init__(self, router_id: str, agent_id: str):
        super().__init__(f"The router {router_id} has been already hosted by the L3 Agent "
                         f"{agent_id}.")


class RouterReschedulingFailed(base.Conflict):
    def __init__(self, router_id: str):
        super().__init__(f"Failed rescheduling router {router_id}: no eligible l3 agent "
                         "found.")


class DefaultExternalNetworkExists(base.Conflict):
    def __init__(self, network_id: str):
        super().__init__(f"A default external network already exists: {network_id}.")


class SegmentsSetInConjunctionWithProviders(base.BadRequest):
    def __init__(self):
        super().__init__("Segments and provider values cannot both be set.")


class SegmentsContainDuplicateEntry(base.BadRequest):
    def __init__(self):
        super().__init__("Duplicate segment entry in request.")


class AddressGroupNotFound(base.NotFound):
    def __init__(self, group_id: str):
        super().__init__(f"Address group {group_id} could not be found.")


class AddressGroupInUse(InUse):
    def __init__(self, group_id: str):
        super().__init__(f"Address group {group_id} is in use on one or more security "
                         "group rules.")


class AddressesNotFound(base.NotFound):
    def __init__(self, addresses: list, group_id: str):
        super().__init__(f"Addresses {addresses} not found in the address group "
                         f"{group_id}.")


class AddressesAlreadyExist(base.BadRequest):
    def __init__(self, addresses: list, group_id: str):
        super().__init__(f"Addresses {addresses} already exist in the address group "
                         f"{group_id}.")


class FlavorNotFound(base.NotFound):
    def __init__(self, flavor_id: str):
        super().__init__(f"Flavor {flavor_id} could not be found.")


class ServiceProfileNotFound(base.NotFound):
    def __init__(self, sp_id: str):
        super().__init__(f"Service Profile {sp_id} could not be found.")


class ServiceProfileInUse(InUse):
    def __init__(self, sp_id: str):
        super().__init__(f"Service Profile {sp_id} is used by some service instance.")


class FlavorServiceProfileBindingExists(base.Conflict):
    def __init__(self, sp_id: str, fl_id: str):
        super().__init__(f"Service Profile {sp_id} is already associated with flavor "
                         f"{fl_id}.")


class FlavorServiceProfileBindingNotFound(base.NotFound):
    def __init__(self, sp_id: str, fl_id: str):
        super().__init__(f"Service Profile {sp_id} is not associated with flavor {fl_id}.")


class ServiceProfileDriverNotFound(base.NotFound):
    def __init__(self, driver: str):
        super().__init__(f"Service Profile driver {driver} could not be found.")


class ServiceProfileEmpty(base.BadRequest):
    message = "Service Profile needs either a driver or metainfo."


class InvalidServiceType(base.BadRequest):
    def __init__(self, service_type: str):
        super().__init__(f"Invalid service type {service_type}.")


class InvalidSubnetServiceType(base.BadRequest):
    def __init__(self, service_type):
        super().__init__(f"Subnet service type {service_type} does not correspond to a "
                         "valid device owner.")


class InvalidInputSubnetServiceType(base.BadRequest):
    def __init__(self, service_type):
        super().__init__(f"Subnet service type {service_type} is not a string.")


class IpAddressGenerationFailureNoMatchingSubnet(base.BadRequest):
    def __init__(self, network_id: str, service_type: str):
        super().__init__(f"No valid service subnet for the given device owner, network "
                         f"{network_id}, service type {service_type}.")


class AgentAlive(base.Conflict):
    def __init__(self, agent_id: str):
        super().__init__(f"Agent {agent_id} is alive: only an agent that stopped reporting "
                         "its state can be deleted; stop it first.")
