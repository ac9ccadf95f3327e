"""/servers/{id}/os-interface: list, show, attach (200 with the attachment), detach (202),
as nova's attach_interfaces controller."""
from __future__ import annotations

import copy

from pocketstack.common import exceptions
from pocketstack.compute import instances, interfaces
from pocketstack.clients.network import NetworkClient
from pocketstack.compute.rest.common import TAG, at_least, authorize, body, respond

_CREATE = {"type": "object", "properties": {"interfaceAttachment": {
    "type": "object", "properties": {
        "net_id": {"type": "string", "format": "uuid"},
        "port_id": {"type": "string", "format": "uuid"},
        "fixed_ips": {"type": "array", "minItems": 1, "maxItems": 1, "items": {
            "type": "object", "properties": {"ip_address": {
                "type": "string", "oneOf": [{"format": "ipv4"}, {"format": "ipv6"}]}},
            "required": ["ip_address"], "additionalProperties": False}}},
    "additionalProperties": False}}, "additionalProperties": False}
_CREATE_249 = copy.deepcopy(_CREATE)
_CREATE_249["properties"]["interfaceAttachment"]["properties"]["tag"] = TAG


def _view(req, port: dict, inst) -> dict:
    out = {"net_id": port["network_id"], "port_id": port["id"],
           "mac_addr": port["mac_address"], "port_state": port["status"],
           "fixed_ips": [{"subnet_id": ip.get("subnet_id"), "ip_address": ip["ip_address"]}
                         for ip in port.get("fixed_ips") or []]}
    if at_least(req, "2.70"):
        out["tag"] = next((v.get("tag") for v in inst.network_info or []
                           if v["port_id"] == port["id"]), None)
    return out


def list_interfaces(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-attach-interfaces:list", {"project_id": inst.project_id})
    ports = NetworkClient(req.context).list_ports(device_id=inst.uuid)
    return respond(req, {"interfaceAttachments": [_view(req, p, inst) for p in ports]})


def _show(req, inst, port_id: str):
    port = NetworkClient(req.context).get_port(port_id)
    if port is None:
        raise exceptions.NotFound(f"Port {port_id} could not be found.")
    if port.get("device_id") != inst.uuid:
        raise exceptions.NotFound(f"Instance {inst.uuid} does not have a port with id "
                                  f"{port_id}")
    return respond(req, {"interfaceAttachment": _view(req, port, inst)})


def show_interface(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-attach-interfaces:show", {"project_id": inst.project_id})
    return _show(req, inst, req.params["port_id"])


def attach_interface(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-attach-interfaces:create",
              {"project_id": inst.project_id})
    data = body(req, _CREATE_249 if at_least(req, "2.49") else _CREATE)
    att = data.get("interfaceAttachment") or {}
    net_id, port_id = att.get("net_id"), att.get("port_id")
    fixed_ip = (att.get("fixed_ips") or [{}])[0].get("ip_address")
    if net_id and port_id:
        raise exceptions.BadRequest("Must not input both network_id and port_id")
    if fixed_ip and not net_id:
        raise exceptions.BadRequest("Must input network_id when request IP address")
    vif = interfaces.attach(req.context, inst, net_id, port_id, fixed_ip, att.get("tag"))
    inst = instances.get(req.context, inst.uuid)
    return _show(req, inst, vif["port_id"])


def detach_interface(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-attach-interfaces:delete",
              {"project_id": inst.project_id})
    interfaces.detach(req.context, inst, req.params["port_id"])
    return respond(req, None, 202)
