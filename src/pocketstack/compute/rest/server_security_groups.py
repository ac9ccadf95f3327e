"""A server's security groups, kept by the network service on the server's ports (nova's
security_groups controller and security_group_api with neutron):

GET /servers/{id}/os-security-groups, and the addSecurityGroup / removeSecurityGroup
actions, which add or remove the group on every port of the server.
"""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.compute import instances
from pocketstack.clients.network import NetworkClient
from pocketstack.compute.rest.common import authorize, respond, validate

_ACTION = {"type": "object", "properties": {"name": {
    "type": "string", "minLength": 1, "maxLength": 255}},
    "required": ["name"], "additionalProperties": False}


def _rule(rule: dict, names: dict[str, dict]) -> dict:
    """A neutron rule in nova's format (ingress only, as nova shows them)."""
    protocol = rule.get("protocol")
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    if protocol and low is None and high is None:
        low, high = (1, 65535) if protocol.upper() in ("TCP", "UDP") else (-1, -1)
    out = {"id": rule["id"], "parent_group_id": rule["security_group_id"],
           "ip_protocol": protocol, "from_port": low, "to_port": high,
           "group": {}, "ip_range": {}}
    remote = rule.get("remote_group_id")
    if remote:
        group = names.get(remote, {})
        out["group"] = {"name": group.get("name"), "tenant_id": group.get("tenant_id")}
    else:
        out["ip_range"] = {"cidr": rule.get("remote_ip_prefix") or "0.0.0.0/0"}
    return out


def _group(group: dict, names: dict[str, dict]) -> dict:
    return {"id": group["id"], "name": group["name"],
            "description": group.get("description") or "",
            "tenant_id": group.get("tenant_id") or group.get("project_id"),
            "rules": [_rule(r, names) for r in group.get("security_group_rules") or []
                      if r.get("direction") == "ingress"]}


def list_server_security_groups(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-security-groups:list", {"project_id": inst.project_id})
    client = NetworkClient(req.context)
    ids: list[str] = []
    for port in client.list_ports(device_id=inst.uuid):
        ids += [g for g in port.get("security_groups") or [] if g not in ids]
    groups = client.list_security_groups(id=ids) if ids else []
    by_id = {g["id"]: g for g in groups}
    return respond(req, {"security_groups": [_group(by_id[i], by_id) for i in ids
                                             if i in by_id]})


def _find_group(client: NetworkClient, ctx, name: str) -> dict:
    """By id, else by name in the caller's project: 404 when none, 409 when ambiguous."""
    groups = client.list_security_groups(project_id=ctx.project_id)
    match = [g for g in groups if g["id"] == name] or [g for g in groups if g["name"] == name]
    if not match:
        raise exceptions.NotFound(f"Security group {name} is not found for project "
                                  f"{ctx.project_id}")
    if len(match) > 1:
        raise exceptions.Conflict(f"Multiple security group matches found for name "
                                  f"'{name}', use an ID to be more specific.")
    return match[0]


def _ports(client: NetworkClient, inst) -> list[dict]:
    ports = client.list_ports(device_id=inst.uuid)
    if not ports:
        raise exceptions.NotFound(f"instance_id {inst.uuid} could not be found as device id "
                                  "on any ports")
    return ports


def _remember(inst, client: NetworkClient) -> None:
    """Keep the names the server shows in sync with its ports."""
    ids: list[str] = []
    for port in client.list_ports(device_id=inst.uuid):
        ids += [g for g in port.get("security_groups") or [] if g not in ids]
    groups = {g["id"]: g["name"] for g in client.list_security_groups(id=ids)} if ids else {}
    instances.update(inst.uuid, {"security_groups": [groups[i] for i in ids if i in groups]})


def add_security_group(req, inst, args):
    validate(_ACTION, args)
    authorize(req, "os_compute_api:os-security-groups:add", {"project_id": inst.project_id})
    client = NetworkClient(req.context)
    group = _find_group(client, req.context, args["name"].strip())
    for port in _ports(client, inst):
        if port.get("port_security_enabled") is False or not port.get("fixed_ips"):
            raise exceptions.BadRequest("Network requires port_security_enabled and subnet "
                                        "associated in order to apply security groups.")
        current = list(port.get("security_groups") or [])
        if group["id"] not in current:
            client.update_port(port["id"], {"security_groups": current + [group["id"]]})
    _remember(inst, client)


def remove_security_group(req, inst, args):
    validate(_ACTION, args)
    authorize(req, "os_compute_api:os-security-groups:remove", {"project_id": inst.project_id})
    client = NetworkClient(req.context)
    group = _find_group(client, req.context, args["name"].strip())
    found = False
    for port in _ports(client, inst):
        current = list(port.get("security_groups") or [])
        if group["id"] in current:
            found = True
            client.update_port(port["id"], {"security_groups": [g for g in current
                                                                if g != group["id"]]})
    if not found:
        raise exceptions.BadRequest(f"Security group {args['name']} not associated with the "
                                    "instance")
    _remember(inst, client)


HANDLERS = {"addSecurityGroup": add_security_group,
            "removeSecurityGroup": remove_security_group}
