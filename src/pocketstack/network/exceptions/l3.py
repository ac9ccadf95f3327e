"""Routers, their gateways and interfaces, floating IPs, port forwardings and L3 agent
scheduling."""
from __future__ import annotations

from pocketstack.common import exceptions as base
from pocketstack.network.exceptions.common import InUse, NotFoundById


class RouterNotFound(NotFoundById):
    what = "Router"
    full_stop = ""


class FloatingIPNotFound(NotFoundById):
    what = "Floating IP"
    full_stop = ""


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


class RoutesExhausted(base.BadRequest):
    def __init__(self, router_id: str, quota: int):
        super().__init__(f"Unable to complete operation for {router_id}. The number of routes "
                         f"exceeds the maximum {quota}.")


class PortForwardingNotFound(NotFoundById):
    what = "Port Forwarding"


class PortForwardingConflict(base.Conflict):
    pass


class FipInUseByPortForwarding(base.Conflict):
    pass


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
