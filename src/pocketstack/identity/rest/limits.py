"""/v3/registered_limits, /v3/limits (unified limits) and /v3/policies."""
from __future__ import annotations

from pocketstack.identity import base, limits, schemas
from pocketstack.identity.rest import common
from pocketstack.wsgi import routing

_LIMIT_VALUE = {"type": "integer", "minimum": -1, "maximum": 2 ** 31 - 1}
_NAME = {"type": "string", "minLength": 1, "maxLength": 255}
_registered = {"service_id": schemas.id_string, "region_id": schemas.nullable(_NAME),
               "resource_name": _NAME, "default_limit": _LIMIT_VALUE,
               "description": schemas.nullable(schemas.description)}
_limit = {"service_id": schemas.id_string, "region_id": schemas.nullable(_NAME),
          "project_id": schemas.nullable(schemas.id_string),
          "domain_id": schemas.nullable(schemas.id_string), "resource_name": _NAME,
          "resource_limit": _LIMIT_VALUE, "description": schemas.nullable(schemas.description)}


def _many(key: str, entity: dict) -> dict:
    return {"type": "object", "required": [key], "additionalProperties": False,
            "properties": {key: {"type": "array", "minItems": 1, "items": entity}}}


REGISTERED_CREATE = _many("registered_limits", schemas._entity(
    _registered, ["service_id", "resource_name", "default_limit"], extra=False))
REGISTERED_UPDATE = schemas.envelope("registered_limit", schemas._entity(
    _registered, extra=False, update=True))
LIMIT_CREATE = _many("limits", schemas._entity(
    _limit, ["service_id", "resource_name", "resource_limit"], extra=False))
LIMIT_UPDATE = schemas.envelope("limit", schemas._entity(
    {"resource_limit": _LIMIT_VALUE, "description": schemas.nullable(schemas.description)},
    extra=False, update=True))
_policy = {"type": {"type": "string", "minLength": 1, "maxLength": 255},
           "blob": {"type": "string", "minLength": 1}}
POLICY_CREATE = schemas.envelope("policy", schemas._entity(_policy, ["type", "blob"]))
POLICY_UPDATE = schemas.envelope("policy", schemas._entity(_policy, update=True))


def registered_view(req, r) -> dict:
    return {"id": r.id, "service_id": r.service_id, "region_id": r.region_id,
            "resource_name": r.resource_name, "default_limit": r.default_limit,
            "description": r.description,
            "links": {"self": common.self_url(req, f"/v3/registered_limits/{r.id}")}}


def limit_view(req, pair) -> dict:
    limit, registered = pair
    return {"id": limit.id, "project_id": limit.project_id, "domain_id": limit.domain_id,
            "service_id": registered.service_id, "region_id": registered.region_id,
            "resource_name": registered.resource_name, "resource_limit": limit.resource_limit,
            "description": limit.description,
            "links": {"self": common.self_url(req, f"/v3/limits/{limit.id}")}}


def _filters(req, keys) -> dict:
    return {k: req.query.get(k) for k in keys if req.query.get(k) is not None}


def _items(req, key: str, rows: list, view, status: int = 200):
    return routing.json_response({key: [view(req, r) for r in rows]}, status=status)


# --- registered limits -----------------------------------------------------------------

def list_registered_limits(req):
    common.authorize(req, "identity:list_registered_limits")
    found = limits.list_registered_limits(
        _filters(req, ("service_id", "region_id", "resource_name")))
    return common.collection(req, "registered_limits", found, registered_view)


def create_registered_limits(req):
    common.authorize(req, "identity:create_registered_limits")
    refs = common.body(req, REGISTERED_CREATE)["registered_limits"]
    return _items(req, "registered_limits", limits.create_registered_limits(refs),
                  registered_view, 201)


def get_registered_limit(req):
    common.authorize(req, "identity:get_registered_limit")
    found = limits.get_registered_limit(req.params["registered_limit_id"])
    return common.member(req, "registered_limit", found, registered_view)


def update_registered_limit(req):
    common.authorize(req, "identity:update_registered_limit")
    ref = common.body(req, REGISTERED_UPDATE)["registered_limit"]
    updated = limits.update_registered_limit(req.params["registered_limit_id"], ref)
    return common.member(req, "registered_limit", updated, registered_view)


def delete_registered_limit(req):
    common.authorize(req, "identity:delete_registered_limit")
    limits.delete_registered_limit(req.params["registered_limit_id"])
    return routing.empty()


# --- limits ----------------------------------------------------------------------------

def limit_model(req):
    common.authorize(req, "identity:get_limit_model")
    return routing.json_response({"model": limits.MODEL})


def list_limits(req):
    common.authorize(req, "identity:list_limits")
    filters = _filters(req, ("service_id", "region_id", "resource_name", "project_id",
                             "domain_id"))
    # Others than admins and system readers see the limits of their own project only.
    own = None if common.allowed(req, "identity:get_limit", {"target": {"limit": {}}}) \
        else req.context.project_id or ""
    return common.collection(req, "limits", limits.list_limits(filters, own), limit_view)


def create_limits(req):
    common.authorize(req, "identity:create_limits")
    refs = common.body(req, LIMIT_CREATE)["limits"]
    return _items(req, "limits", limits.create_limits(refs), limit_view, 201)


def get_limit(req):
    pair = limits.get_limit(req.params["limit_id"])
    common.authorize(req, "identity:get_limit", {"target": {"limit": {
        "project_id": pair[0].project_id}}})
    return common.member(req, "limit", pair, limit_view)


def update_limit(req):
    common.authorize(req, "identity:update_limit")
    ref = common.body(req, LIMIT_UPDATE)["limit"]
    return common.member(req, "limit", limits.update_limit(req.params["limit_id"], ref),
                         limit_view)


def delete_limit(req):
    common.authorize(req, "identity:delete_limit")
    limits.delete_limit(req.params["limit_id"])
    return routing.empty()


# --- policies --------------------------------------------------------------------------

def policy_view(req, p) -> dict:
    return {"id": p.id, "type": p.type, "blob": p.blob, **(p.extra or {}),
            "links": {"self": common.self_url(req, f"/v3/policies/{p.id}")}}


def list_policies(req):
    common.authorize(req, "identity:list_policies")
    found = limits.list_policies(base.attr_filters(req.query, "type"))
    return common.collection(req, "policies", found, policy_view)


def create_policy(req):
    common.authorize(req, "identity:create_policy")
    ref = common.body(req, POLICY_CREATE)["policy"]
    return common.member(req, "policy", limits.create_policy(ref), policy_view, 201)


def get_policy(req):
    common.authorize(req, "identity:get_policy")
    return common.member(req, "policy", limits.get_policy(req.params["policy_id"]),
                         policy_view)


def update_policy(req):
    common.authorize(req, "identity:update_policy")
    ref = common.body(req, POLICY_UPDATE)["policy"]
    return common.member(req, "policy", limits.update_policy(req.params["policy_id"], ref),
                         policy_view)


def delete_policy(req):
    common.authorize(req, "identity:delete_policy")
    limits.delete_policy(req.params["policy_id"])
    return routing.empty()
