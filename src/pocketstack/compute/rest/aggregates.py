"""/os-aggregates (admin): list, create (no hosts/metadata in the answer, as nova), show,
update, delete, and the add_host / remove_host / set_metadata actions; uuid from 2.41."""
from __future__ import annotations

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import isotime_naive
from pocketstack.compute import aggregates
from pocketstack.compute.models import Aggregate
from pocketstack.compute.rest.common import NAME, at_least, authorize, body, respond, validate

import sqlalchemy as sa

_AZ = {"oneOf": [{"type": "string", "minLength": 1, "maxLength": 255,
                  "pattern": r"^(?![\s])[^\x00-\x1f\x7f:]*(?<![\s])$"}, {"type": "null"}]}
_CREATE = {"type": "object", "properties": {"aggregate": {
    "type": "object", "properties": {"name": NAME, "availability_zone": _AZ},
    "required": ["name"], "additionalProperties": False}},
    "required": ["aggregate"], "additionalProperties": False}
_UPDATE = {"type": "object", "properties": {"aggregate": {
    "type": "object", "properties": {"name": NAME, "availability_zone": _AZ},
    "additionalProperties": False,
    "anyOf": [{"required": ["name"]}, {"required": ["availability_zone"]}]}},
    "required": ["aggregate"], "additionalProperties": False}
_HOST = {"type": "object", "properties": {"host": {
    "type": "string", "minLength": 1, "maxLength": 255,
    "pattern": r"^[a-zA-Z0-9-._]*$"}}, "required": ["host"], "additionalProperties": False}
_METADATA = {"type": "object", "properties": {"metadata": {
    "type": "object", "patternProperties": {"^[a-zA-Z0-9-_:. ]{1,255}$": {
        "type": ["string", "null"], "maxLength": 255}},
    "additionalProperties": False}}, "required": ["metadata"], "additionalProperties": False}

_IMAGES = {"type": "object", "properties": {"cache": {
    "type": ["array"], "minItems": 1, "items": {
        "type": "object", "properties": {"id": {"type": "string", "format": "uuid"}},
        "additionalProperties": False, "required": ["id"]}}},
    "required": ["cache"], "additionalProperties": False}


def _view(req, agg: Aggregate, full: bool = True) -> dict:
    out = {"availability_zone": (agg.metadata_ or {}).get(aggregates.AZ),
           "created_at": isotime_naive(agg.created_at), "deleted": False, "deleted_at": None,
           "id": agg.id, "name": agg.name, "updated_at": isotime_naive(agg.updated_at)}
    if full:
        out["hosts"] = list(agg.hosts or [])
        out["metadata"] = dict(agg.metadata_ or {})
    if at_least(req, "2.41"):
        out["uuid"] = agg.uuid
    return out


def list_aggregates(req):
    authorize(req, "os_compute_api:os-aggregates:index", {})
    with db.reader() as s:
        rows = s.scalars(sa.select(Aggregate).order_by(Aggregate.id)).all()
    return respond(req, {"aggregates": [_view(req, a) for a in rows]})


def create_aggregate(req):
    authorize(req, "os_compute_api:os-aggregates:create", {})
    data = body(req, _CREATE)["aggregate"]
    agg = aggregates.create(data["name"], data.get("availability_zone"))
    return respond(req, {"aggregate": _view(req, agg, full=False)})


def show_aggregate(req):
    authorize(req, "os_compute_api:os-aggregates:show", {})
    agg_id = aggregates.parse_id(req.params["aggregate_id"])
    with db.reader() as s:
        agg = aggregates.get(s, agg_id)
    return respond(req, {"aggregate": _view(req, agg)})


def update_aggregate(req):
    authorize(req, "os_compute_api:os-aggregates:update", {})
    agg_id = aggregates.parse_id(req.params["aggregate_id"])
    data = body(req, _UPDATE)["aggregate"]
    return respond(req, {"aggregate": _view(req, aggregates.update(agg_id, data))})


def delete_aggregate(req):
    authorize(req, "os_compute_api:os-aggregates:delete", {})
    aggregates.delete(aggregates.parse_id(req.params["aggregate_id"]))
    return respond(req, None, 200)


def aggregate_action(req):
    data = req.json()
    if not isinstance(data, dict) or len(data) != 1:
        raise exceptions.BadRequest("There is either no action or more than one action.")
    name, args = next(iter(data.items()))
    if name not in ("add_host", "remove_host", "set_metadata"):
        raise exceptions.BadRequest(f"There is no such action: {name}")
    authorize(req, f"os_compute_api:os-aggregates:{name}", {})
    agg_id = aggregates.parse_id(req.params["aggregate_id"])
    if name == "set_metadata":
        validate(_METADATA, args)
        agg = aggregates.set_metadata(agg_id, args["metadata"])
    else:
        validate(_HOST, args)
        agg = getattr(aggregates, name)(agg_id, args["host"])
    return respond(req, {"aggregate": _view(req, agg)})


def cache_images(req):
    """2.81: ask every host of the aggregate to precache images; 202, the work is cast."""
    if not at_least(req, "2.81"):
        raise exceptions.NotFound("The resource could not be found.")
    authorize(req, "compute:aggregates:images", {})
    agg_id = aggregates.parse_id(req.params["aggregate_id"])
    image_ids = [item["id"] for item in body(req, _IMAGES)["cache"]]
    if len(set(image_ids)) != len(image_ids):
        raise exceptions.BadRequest("Duplicate images in request")
    with db.reader() as s:
        hosts = list(aggregates.get(s, agg_id).hosts or [])
    from pocketstack.compute.rpcapi import ComputeAPI

    rpc = ComputeAPI()
    for host in hosts:
        rpc.cache_images(req.context, host, image_ids)
    return respond(req, None, 202)
