"""Security groups and their rules, port security and address groups."""
from __future__ import annotations

from pocketstack.common import exceptions as base
from pocketstack.network.exceptions.common import InUse, NotFoundById


class SecurityGroupNotFound(base.NotFound):
    def __init__(self, id: str):
        super().__init__(f"Security group {id} does not exist")


class SecurityGroupRuleNotFound(base.NotFound):
    def __init__(self, id: str):
        super().__init__(f"Security group rule {id} does not exist")


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


class AddressGroupNotFound(NotFoundById):
    what = "Address group"


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
