"""The VIP: a port on the VIP subnet, made through the network service's API (never its
tables), as Octavia's allowed-address-pairs network driver makes it."""
from __future__ import annotations

import logging

from pocketstack.clients.network import NetworkClient
from pocketstack.common import exceptions
from pocketstack.loadbalancer import validation

LOG = logging.getLogger(__name__)
OWNER = "Octavia"  # the device_owner of the ports the service makes


def _user(ctx) -> NetworkClient:
    return NetworkClient(ctx, caller="loadbalancer")


def _service() -> NetworkClient:
    return NetworkClient(caller="loadbalancer", as_service=True)


def invalid_subresource(resource: str, obj_id: str) -> exceptions.BadRequest:
    return validation.Invalid(f"{resource} {obj_id} not found.")


def subnet_visible(ctx, subnet_id: str) -> dict:
    """The subnet as the caller sees it; 400 when the caller cannot use it."""
    subnet = _user(ctx).get_subnet(subnet_id)
    if subnet is None:
        raise invalid_subresource("Subnet", subnet_id)
    return subnet


def qos_policy_visible(ctx, policy_id: str) -> None:
    """400 as Octavia's when the caller cannot use the QoS policy."""
    if _user(ctx).find(f"/qos/policies/{policy_id}", "policy") is None:
        raise invalid_subresource("QoS Policy", policy_id)


def service_subnet(subnet_id: str) -> dict:
    subnet = _service().get_subnet(subnet_id)
    if subnet is None:
        raise exceptions.NotFound(f"Subnet {subnet_id} not found.")
    return subnet


def resolve(ctx, data: dict) -> dict:
    """Where the VIP goes (network, subnet, address, or an existing port), from what the
    request gives; every object must be visible to the caller."""
    client = _user(ctx)
    port_id, network_id = data.get("vip_port_id"), data.get("vip_network_id")
    subnet_id, address = data.get("vip_subnet_id"), data.get("vip_address")
    if port_id:
        port = client.get_port(port_id)
        if port is None:
            raise invalid_subresource("Port", port_id)
        if port.get("device_id") or port.get("device_owner"):
            raise validation.validation_failure(
                f"Port {port_id} already has device owner {port.get('device_owner')} and "
                f"device ID {port.get('device_id')}")
        ips = port.get("fixed_ips") or []
        if not ips:
            raise validation.validation_failure(f"Port {port_id} has no fixed IP.")
        return {"vip_port_id": port_id, "vip_network_id": port["network_id"],
                "vip_subnet_id": ips[0]["subnet_id"], "vip_address": ips[0]["ip_address"],
                "own_port": False}
    if network_id:
        network = client.get_network(network_id)
        if network is None:
            raise invalid_subresource("Network", network_id)
        if subnet_id:
            if subnet_id not in network.get("subnets", []):
                raise invalid_subresource("Subnet", subnet_id)
        else:
            subnets = client.list_subnets(network_id=network_id)
            if not subnets:
                raise validation.validation_failure(
                    "Supplied network does not contain a subnet.")
            subnets.sort(key=lambda sn: sn.get("ip_version") != 4)  # IPv4 first
            subnet_id = subnets[0]["id"]
    else:
        network_id = subnet_visible(ctx, subnet_id)["network_id"]
    return {"vip_network_id": network_id, "vip_subnet_id": subnet_id,
            "vip_address": address, "own_port": True}


def create_port(lb_id: str, project_id: str, where: dict) -> dict:
    """The VIP port (device_owner Octavia, name octavia-lb-<id>), made by the service for
    the load balancer's project. Neutron's refusal (address taken, subnet full) is the
    caller's 409/400."""
    fixed = {"subnet_id": where["vip_subnet_id"]}
    if where.get("vip_address"):
        fixed["ip_address"] = where["vip_address"]
    body = {"name": f"octavia-lb-{lb_id}", "network_id": where["vip_network_id"],
            "admin_state_up": False, "device_id": f"lb-{lb_id}", "device_owner": OWNER,
            "project_id": project_id, "fixed_ips": [fixed]}
    resp = _service().request("POST", "/ports", json={"port": body}, ok=(201, 400, 409))
    if resp.status_code == 201:
        return resp.json()["port"]
    try:
        why = resp.json()["NeutronError"]["message"]
    except (ValueError, KeyError, TypeError):
        why = resp.text[:200]
    if resp.status_code == 409:
        raise exceptions.Conflict(why)
    raise validation.validation_failure(why)


def delete_port(port_id: str | None) -> None:
    if port_id:
        try:
            _service().delete_port(port_id)
        except exceptions.PocketstackError:  # logged; the load balancer goes anyway
            LOG.warning("The VIP port %s could not be deleted", port_id, exc_info=True)


# --- the haproxy data plane's use of the port ---------------------------------------------

def security_group_name(lb_id: str) -> str:
    return f"lb-{lb_id}"


def sync_security_group(lb_id: str, project_id: str, openings: list[tuple[str, int, str | None]]
                        ) -> str:
    """The load balancer's own security group (lb-<id>, as Octavia makes it): ingress to
    each listener's port (protocol, port, allowed CIDR or None), nothing else. Returns
    its id."""
    client = _service()
    name = security_group_name(lb_id)
    found = client.list_security_groups(name=name, project_id=project_id)
    if found:
        group = found[0]
    else:
        group = client.create_security_group(
            {"name": name, "project_id": project_id,
             "description": f"Ingress to load balancer {lb_id}"}).json()["security_group"]
    have = {}
    for rule in group.get("security_group_rules", []):
        if rule["direction"] == "ingress":
            have[(rule["protocol"], rule["port_range_min"], rule["remote_ip_prefix"])] = rule["id"]
    wanted = {(proto.lower(), port, cidr) for proto, port, cidr in openings}
    for key, rule_id in have.items():
        if key not in wanted:
            client.delete_security_group_rule(rule_id)
    for proto, port, cidr in wanted - set(have):
        version = "IPv6" if cidr and ":" in cidr else "IPv4"
        client.create_security_group_rule({
            "security_group_id": group["id"], "direction": "ingress", "ethertype": version,
            "protocol": proto, "port_range_min": port, "port_range_max": port,
            "remote_ip_prefix": cidr})
    return group["id"]


def delete_security_group(lb_id: str, project_id: str) -> None:
    client = _service()
    try:
        for group in client.list_security_groups(name=security_group_name(lb_id),
                                                 project_id=project_id):
            client.delete_security_group(group["id"])
    except exceptions.PocketstackError:
        LOG.warning("The security group of load balancer %s could not be deleted", lb_id,
                    exc_info=True)


def bind(port_id: str, host: str, security_group_id: str) -> dict:
    """Bind the VIP port to the network node host and open it (the agent plumbs its
    network's bridge and filters its tap as any guest's)."""
    return _service().update_port(port_id, {"binding:host_id": host, "admin_state_up": True,
                                            "security_groups": [security_group_id]})
