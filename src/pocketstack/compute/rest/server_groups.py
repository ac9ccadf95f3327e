"""/os-server-groups: list (all_projects for admin, limit/offset), create, show, delete,
with nova's shape per microversion (policies + metadata before 2.64, policy + rules from
2.64; project_id and user_id from 2.13)."""
from __future__ import annotations

import copy

import sqlalchemy as sa

from pocketstack.common import db, exceptions, numbers, policy
from pocketstack.compute import server_groups
from pocketstack.compute.models import ServerGroup
from pocketstack.compute.rest.common import NAME, at_least, authorize, body, respond

_CREATE = {"type": "object", "properties": {"server_group": {
    "type": "object", "properties": {
        "name": NAME,
        "policies": {"type": "array", "items": [{"type": "string",
                                                 "enum": ["anti-affinity", "affinity"]}],
                     "uniqueItems": True, "minItems": 1, "maxItems": 1,
                     "additionalItems": False}},
    "required": ["name", "policies"], "additionalProperties": False}},
    "required": ["server_group"], "additionalProperties": False}
_CREATE_215 = copy.deepcopy(_CREATE)
_CREATE_215["properties"]["server_group"]["properties"]["policies"]["items"][0]["enum"] += [
    "soft-anti-affinity", "soft-affinity"]
_CREATE_264 = copy.deepcopy(_CREATE_215)
_G = _CREATE_264["properties"]["server_group"]
del _G["properties"]["policies"]
_G["required"] = ["name", "policy"]
_G["properties"]["policy"] = {"type": "string", "enum": list(server_groups.POLICIES)}
_G["properties"]["rules"] = {"type": "object", "properties": {"max_server_per_host": {
    "type": ["integer", "string"], "pattern": r"^[0-9]*$", "minimum": 1, "minLength": 1}},
    "additionalProperties": False}


def _view(req, g: ServerGroup, members: list[str]) -> dict:
    out = {"id": g.uuid, "name": g.name}
    if at_least(req, "2.64"):
        out["policy"] = g.policy
        out["rules"] = g.rules or {}
    else:
        out["policies"] = [g.policy]
        out["metadata"] = {}
    out["members"] = members
    if at_least(req, "2.13"):
        out["project_id"] = g.project_id
        out["user_id"] = g.user_id
    return out


def _int_param(req, name: str, max_limit: int | None = None) -> int | None:
    value = req.query.get(name)
    if value is None:
        return None
    message = (f"Invalid input for query parameters {name}. Value: {value}. '{value}' is "
               "not a 'non-negative integer'")
    if max_limit is not None:
        return numbers.parse_limit(value, name, max_limit, message=message)
    return numbers.parse_int(value, name, minimum=0, message=message)


def list_groups(req):
    ctx = req.context
    authorize(req, "os_compute_api:os-server-groups:index", {"project_id": ctx.project_id})
    if at_least(req, "2.75"):
        extra = set(req.query.keys()) - {"all_projects", "limit", "offset"}
        if extra:
            raise exceptions.BadRequest(f"Additional properties are not allowed "
                                        f"({', '.join(sorted(extra))} was unexpected)")
    limit, offset = _int_param(req, "limit", 1000), _int_param(req, "offset") or 0
    stmt = sa.select(ServerGroup).order_by(ServerGroup.created_at, ServerGroup.uuid)
    if not ("all_projects" in req.query and ctx.is_admin and policy.check(
            ctx, "os_compute_api:os-server-groups:index:all_projects",
            {"project_id": ctx.project_id})):
        stmt = stmt.where(ServerGroup.project_id == ctx.project_id)
    stmt = stmt.offset(offset)
    if limit is not None:
        stmt = stmt.limit(min(limit, 1000))
    else:
        stmt = stmt.limit(1000)
    with db.reader() as s:
        rows = s.scalars(stmt).all()
        members = server_groups.members(s, [g.uuid for g in rows])
    return respond(req, {"server_groups": [_view(req, g, members[g.uuid]) for g in rows]})


def create_group(req):
    ctx = req.context
    authorize(req, "os_compute_api:os-server-groups:create", {"project_id": ctx.project_id})
    schema = _CREATE_264 if at_least(req, "2.64") else (
        _CREATE_215 if at_least(req, "2.15") else _CREATE)
    data = body(req, schema)["server_group"]
    if at_least(req, "2.64"):
        row = server_groups.create(ctx, data["name"], data["policy"], data.get("rules"))
    else:
        row = server_groups.create(ctx, data["name"], data["policies"][0], None)
    return respond(req, {"server_group": _view(req, row, [])})


def show_group(req):
    ctx = req.context
    row = server_groups.get(ctx, req.params["group_id"])
    authorize(req, "os_compute_api:os-server-groups:show", {"project_id": row.project_id})
    with db.reader() as s:
        members = server_groups.members(s, [row.uuid])[row.uuid]
    return respond(req, {"server_group": _view(req, row, members)})


def delete_group(req):
    ctx = req.context
    row = server_groups.get(ctx, req.params["group_id"])
    authorize(req, "os_compute_api:os-server-groups:delete", {"project_id": row.project_id})
    server_groups.delete(ctx, row.uuid)
    return respond(req, None, 204)
