"""The services beside L2/L3: QoS, trunks, RBAC, flavors and service profiles, agents."""
from __future__ import annotations

from pocketstack.common import exceptions as base
from pocketstack.network.exceptions.common import InUse, NotFoundById


class AgentNotFound(NotFoundById):
    what = "Agent"


class TrunkNotFound(NotFoundById):
    what = "Trunk"


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


class QosPolicyNotFound(NotFoundById):
    what = "QoS policy"


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


class FlavorNotFound(NotFoundById):
    what = "Flavor"


class ServiceProfileNotFound(NotFoundById):
    what = "Service Profile"


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


class ServiceProfileDriverNotFound(NotFoundById):
    what = "Service Profile driver"


class ServiceProfileEmpty(base.BadRequest):
    message = "Service Profile needs either a driver or metainfo."


class InvalidServiceType(base.BadRequest):
    def __init__(self, service_type: str):
        super().__init__(f"Invalid service type {service_type}.")


class AgentAlive(base.Conflict):
    def __init__(self, agent_id: str):
        super().__init__(f"Agent {agent_id} is alive: only an agent that stopped reporting "
                         "its state can be deleted; stop it first.")
