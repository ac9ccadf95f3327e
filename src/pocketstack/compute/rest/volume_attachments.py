"""/servers/{id}/os-volume_attachments: list, show, attach (200 with the attachment),
update (from 2.85 delete_on_termination; a PUT naming another volume is nova's swap,
which only the volume service's migration calls), detach (202); nova's
volume_attachments controller. The attachment id is the volume id, as in nova."""
from __future__ import annotations

import copy

from pocketstack.common import exceptions
from pocketstack.compute import block_devices, instances, volumes
from pocketstack.compute.rest.common import (BOOLEAN, TAG, at_least, authorize, body,
                                             bool_from_string, respond)

_VOLUME_ID = {"type": "string", "format": "uuid"}
_DEVICE = {"type": ["string", "null"],
           "pattern": "(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$"}
_CREATE = {"type": "object", "properties": {"volumeAttachment": {
    "type": "object", "properties": {"volumeId": _VOLUME_ID, "device": _DEVICE},
    "required": ["volumeId"], "additionalProperties": False}},
    "required": ["volumeAttachment"], "additionalProperties": False}
_CREATE_249 = copy.deepcopy(_CREATE)
_CREATE_249["properties"]["volumeAttachment"]["properties"]["tag"] = TAG
_CREATE_279 = copy.deepcopy(_CREATE_249)
_CREATE_279["properties"]["volumeAttachment"]["properties"]["delete_on_termination"] = BOOLEAN
_UPDATE = copy.deepcopy(_CREATE)
del _UPDATE["properties"]["volumeAttachment"]["properties"]["device"]
_UPDATE_285 = copy.deepcopy(_CREATE_279)
_UPDATE_285["properties"]["volumeAttachment"]["properties"].update(
    serverId={"type": "string", "format": "uuid"}, id={"type": "string", "format": "uuid"})


def _view(req, row) -> dict:
    """list and show; from 2.89 the volume attachment's id and the mapping's uuid take the
    place of ``id`` (the volume id again). The attach answer keeps ``id``, as nova's."""
    v289 = at_least(req, "2.89")
    out = {} if v289 else {"id": row.volume_id}
    out.update(volumeId=row.volume_id, serverId=row.instance_uuid)
    if row.device_name:
        out["device"] = row.device_name
    if at_least(req, "2.70"):
        out["tag"] = row.tag
    if at_least(req, "2.79"):
        out["delete_on_termination"] = bool(row.delete_on_termination)
    if v289:
        out["attachment_id"], out["bdm_uuid"] = row.attachment_id, row.uuid
    return out


def _server(req, action: str):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, f"os_compute_api:os-volumes-attachments:{action}",
              {"project_id": inst.project_id})
    return inst


def list_attachments(req):
    inst = _server(req, "index")
    rows = [r for r in block_devices.for_instance(inst.uuid) if r.volume_id]
    try:
        offset = int(req.query.get("offset") or 0)
        limit = int(req.query["limit"]) if req.query.get("limit") else None
    except ValueError:
        raise exceptions.BadRequest("limit and offset must be integers") from None
    if offset < 0 or (limit is not None and limit < 0):
        raise exceptions.BadRequest("limit and offset must be >= 0")
    rows = rows[offset:] if limit is None else rows[offset:offset + limit]
    return respond(req, {"volumeAttachments": [_view(req, r) for r in rows]})


def show_attachment(req):
    inst = _server(req, "show")
    return respond(req, {"volumeAttachment": _view(req, volumes.mapping(
        inst, req.params["volume_id"]))})


def attach_volume(req):
    inst = _server(req, "create")
    schema = (_CREATE_279 if at_least(req, "2.79") else _CREATE_249 if at_least(req, "2.49")
              else _CREATE)
    att = body(req, schema)["volumeAttachment"]
    dot = att.get("delete_on_termination", False)
    if isinstance(dot, str):
        dot = dot.lower() in ("1", "true", "yes", "on", "t", "y")
    device = volumes.attach(req.context, inst, att["volumeId"], att.get("device"),
                            att.get("tag"), bool(dot))
    out = {"id": att["volumeId"], "serverId": inst.uuid, "volumeId": att["volumeId"],
           "device": device}
    if at_least(req, "2.70"):
        out["tag"] = att.get("tag")
    if at_least(req, "2.79"):
        out["delete_on_termination"] = bool(dot)
    return respond(req, {"volumeAttachment": out})


def update_attachment(req):
    """PUT before 2.85 always swaps the volume: admin only, and only for a volume the
    volume service is migrating — ours never migrate. From 2.85 a PUT naming the same
    volume updates the attachment: only delete_on_termination may change (nova's
    _update_volume_regular); the other fields must repeat what they are."""
    inst = instances.get(req.context, req.params["server_id"])
    volume_id = req.params["volume_id"]
    only_swap = not at_least(req, "2.85")
    att = body(req, _UPDATE if only_swap else _UPDATE_285)["volumeAttachment"]
    if only_swap or att["volumeId"] != volume_id:
        authorize(req, "os_compute_api:os-volumes-attachments:swap")
    else:
        authorize(req, "os_compute_api:os-volumes-attachments:update",
                  {"project_id": inst.project_id})
    row = volumes.mapping(inst, volume_id)
    if not only_swap:
        for key, current in (("id", volume_id), ("serverId", inst.uuid),
                             ("device", row.device_name), ("tag", row.tag)):
            if key in att and att[key] != current:
                raise exceptions.BadRequest(f"The {key} property is not mutable")
        if "delete_on_termination" in att:
            volumes.set_delete_on_termination(
                inst, volume_id, bool_from_string(att["delete_on_termination"], strict=True))
        if att["volumeId"] == volume_id:
            return respond(req, None, 202)
    raise exceptions.Conflict(f"volume {volume_id} is not migrating; this API should only "
                              "be called by Cinder")


def detach_volume(req):
    inst = _server(req, "delete")
    volumes.detach(req.context, inst, req.params["volume_id"])
    return respond(req, None, 202)
