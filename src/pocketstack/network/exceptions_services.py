"""Neutron's exceptions for the newer services (L3 agent scheduling, address groups,
flavors), re-exported by exceptions.py so callers keep ``exc.<Name>``."""
from __future__ import annotations

from pocketstack.common import exceptions as base
from pocketstack.network.exceptions import InUse


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
