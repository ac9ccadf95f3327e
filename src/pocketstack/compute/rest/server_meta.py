"""/servers/{id}/metadata, /servers/{id}/tags and /servers/{id}/ips."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute import instances, quotas, states
from pocketstack.compute.models import InstanceTag
from pocketstack.compute.rest.common import METADATA, TAG, at_least, authorize, body, respond
from pocketstack.compute.rest.views import addresses


def _inst(req, rule):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, rule, {"project_id": inst.project_id})
    return inst


def _writable(inst):
    if inst.task_state in (states.DELETING,) or inst.vm_state in (states.DELETED,):
        raise exceptions.Conflict(f"Cannot change metadata of instance {inst.uuid} while it "
                                  f"is in vm_state {inst.vm_state}")


def _save_meta(inst, meta: dict) -> dict:
    limit = quotas.limits(inst.project_id)["metadata_items"]
    if 0 <= limit < len(meta):
        raise quotas.QuotaExceeded(f"Quota exceeded for metadata_items: the limit is {limit}")
    instances.update(inst.uuid, {"metadata_": meta})
    return meta


def list_metadata(req):
    inst = _inst(req, "os_compute_api:server-metadata:index")
    return respond(req, {"metadata": inst.metadata_ or {}})


def create_metadata(req):
    inst = _inst(req, "os_compute_api:server-metadata:create")
    _writable(inst)
    data = body(req, {"type": "object", "properties": {"metadata": METADATA},
                      "required": ["metadata"], "additionalProperties": False})
    meta = dict(inst.metadata_ or {}, **data["metadata"])
    return respond(req, {"metadata": _save_meta(inst, meta)})


def replace_metadata(req):
    inst = _inst(req, "os_compute_api:server-metadata:update_all")
    _writable(inst)
    data = body(req, {"type": "object", "properties": {"metadata": METADATA},
                      "required": ["metadata"], "additionalProperties": False})
    return respond(req, {"metadata": _save_meta(inst, dict(data["metadata"]))})


def show_metadata_item(req):
    inst = _inst(req, "os_compute_api:server-metadata:show")
    key = req.params["key"]
    if key not in (inst.metadata_ or {}):
        raise exceptions.NotFound("Metadata item was not found")
    return respond(req, {"meta": {key: inst.metadata_[key]}})


def update_metadata_item(req):
    inst = _inst(req, "os_compute_api:server-metadata:update")
    _writable(inst)
    data = body(req, {"type": "object", "properties": {"meta": dict(
        METADATA, minProperties=1, maxProperties=1)}, "required": ["meta"],
        "additionalProperties": False})
    key = req.params["key"]
    if key not in data["meta"]:
        raise exceptions.BadRequest("Request body and URI mismatch")
    _save_meta(inst, dict(inst.metadata_ or {}, **data["meta"]))
    return respond(req, {"meta": data["meta"]})


def delete_metadata_item(req):
    inst = _inst(req, "os_compute_api:server-metadata:delete")
    _writable(inst)
    key = req.params["key"]
    meta = dict(inst.metadata_ or {})
    if key not in meta:
        raise exceptions.NotFound("Metadata item was not found")
    del meta[key]
    instances.update(inst.uuid, {"metadata_": meta})
    return respond(req, None, 204)


# --- tags (2.26) -----------------------------------------------------------------------

def _tags_inst(req, rule):
    if not at_least(req, "2.26"):
        raise exceptions.NotFound("The resource could not be found.")
    return _inst(req, rule)


def _tags(uuid):
    with db.reader() as s:
        return sorted(s.scalars(sa.select(InstanceTag.tag)
                                .where(InstanceTag.instance_uuid == uuid)).all())


def list_tags(req):
    inst = _tags_inst(req, "os_compute_api:os-server-tags:index")
    return respond(req, {"tags": _tags(inst.uuid)})


def replace_tags(req):
    inst = _tags_inst(req, "os_compute_api:os-server-tags:update_all")
    data = body(req, {"type": "object", "properties": {"tags": {
        "type": "array", "items": TAG, "maxItems": 50}}, "required": ["tags"],
        "additionalProperties": False})
    with db.transaction() as s:
        s.execute(sa.delete(InstanceTag).where(InstanceTag.instance_uuid == inst.uuid))
        for tag in dict.fromkeys(data["tags"]):
            s.add(InstanceTag(instance_uuid=inst.uuid, tag=tag))
    return respond(req, {"tags": _tags(inst.uuid)})


def delete_tags(req):
    inst = _tags_inst(req, "os_compute_api:os-server-tags:delete_all")
    with db.transaction() as s:
        s.execute(sa.delete(InstanceTag).where(InstanceTag.instance_uuid == inst.uuid))
    return respond(req, None, 204)


def check_tag(req):
    inst = _tags_inst(req, "os_compute_api:os-server-tags:show")
    if req.params["tag"] not in _tags(inst.uuid):
        raise exceptions.NotFound(f"Tag {req.params['tag']} could not be found.")
    return respond(req, None, 204)


def add_tag(req):
    inst = _tags_inst(req, "os_compute_api:os-server-tags:update")
    tag = req.params["tag"]
    from pocketstack.compute.rest.common import validate

    validate(TAG, tag)
    existing = _tags(inst.uuid)
    if tag in existing:
        return respond(req, None, 204)
    if len(existing) >= 50:
        raise exceptions.BadRequest("The number of tags exceeded the per-server limit 50")
    with db.transaction() as s:
        s.add(InstanceTag(instance_uuid=inst.uuid, tag=tag))
    return respond(req, None, 201, headers={
        "Location": f"{req.service_url}/v2.1/servers/{inst.uuid}/tags/{tag}"})


def delete_tag(req):
    inst = _tags_inst(req, "os_compute_api:os-server-tags:delete")
    with db.transaction() as s:
        n = s.execute(sa.delete(InstanceTag).where(InstanceTag.instance_uuid == inst.uuid,
                                                   InstanceTag.tag == req.params["tag"])).rowcount
    if not n:
        raise exceptions.NotFound(f"Tag {req.params['tag']} could not be found.")
    return respond(req, None, 204)


# --- ips -------------------------------------------------------------------------------

def _ips(inst) -> dict:
    return {net: [{"version": e["version"], "addr": e["addr"]} for e in entries]
            for net, entries in addresses(inst).items()}


def list_ips(req):
    inst = _inst(req, "os_compute_api:ips:index")
    return respond(req, {"addresses": _ips(inst)})


def show_ips(req):
    inst = _inst(req, "os_compute_api:ips:show")
    net = req.params["network"]
    ips = _ips(inst)
    if net not in ips:
        raise exceptions.NotFound("Instance is not a member of specified network")
    return respond(req, {net: ips[net]})
