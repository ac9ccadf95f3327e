"""/flavors, extra specs and access (nova's flavors, flavor_manage, flavors_extraspecs,
flavor_access)."""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import db, exceptions, numbers, policy
from pocketstack.compute import extra_specs
from pocketstack.compute.models import Flavor, FlavorAccess, FlavorExtraSpec
from pocketstack.compute.rest.common import (BOOLEAN, DESCRIPTION, at_least, authorize, body,
                                             bool_from_string,
                                             limit_marker, links, next_link, respond, to_bool)

_FLAVOR_NAME = {"type": "string", "minLength": 1, "maxLength": 255,
                "pattern": r"^(?! )[a-zA-Z0-9. _-]+(?<! )$"}
_INT = {"type": ["integer", "string"], "pattern": r"^[0-9]{1,19}$"}  # int() stays cheap

CREATE = {
    "type": "object",
    "properties": {"flavor": {
        "type": "object",
        "properties": {
            "name": _FLAVOR_NAME,
            # nova accepts an integer id too, and keeps it as a string
            "id": {"type": ["string", "integer", "null"], "minLength": 1, "maxLength": 255,
                   "pattern": r"^(?! )[a-zA-Z0-9. _-]+(?<! )$"},
            "ram": dict(_INT, minimum=1), "vcpus": dict(_INT, minimum=1),
            "disk": dict(_INT, minimum=0), "OS-FLV-EXT-DATA:ephemeral": dict(_INT, minimum=0),
            "swap": dict(_INT, minimum=0),
            "rxtx_factor": {"type": ["number", "string"], "pattern": r"^[0-9]+(\.[0-9]+)?$",
                            "minimum": 0, "exclusiveMinimum": True,
                            "maximum": 3.40282e+38},  # nova's: a 32-bit float
            "os-flavor-access:is_public": BOOLEAN,
        },
        "required": ["name", "ram", "vcpus", "disk"],
        "additionalProperties": False}},
    "required": ["flavor"], "additionalProperties": False}


def _find(s, flavorid: str, ctx=None) -> Flavor:
    f = s.scalar(sa.select(Flavor).where(Flavor.flavorid == flavorid))
    if f is None or (ctx is not None and not _visible(s, f, ctx)):
        raise exceptions.NotFound(f"Flavor {flavorid} could not be found.")
    return f


def _visible(s, f: Flavor, ctx) -> bool:
    if f.is_public or ctx.is_admin:
        return True
    return s.get(FlavorAccess, (f.id, ctx.project_id)) is not None


_f, _fs, _fa = Flavor.__table__.c, FlavorExtraSpec.__table__.c, FlavorAccess.__table__.c
_FLAVOR_BY_ID = sa.select(Flavor.__table__).where(_f.flavorid == sa.bindparam("flavorid"))
_SPECS_OF = sa.select(_fs.key, _fs.value).where(_fs.flavor_id == sa.bindparam("id"))
_ACCESS_OF = sa.select(_fa.project_id).where(_fa.flavor_id == sa.bindparam("id"),
                                             _fa.project_id == sa.bindparam("project_id"))


def get_flavor(ctx, flavorid: str, session=None) -> dict:
    """The flavor as a boot snapshots it (used by compute/api.py on every create: Core
    statements built once, no ORM objects)."""
    def run(s):
        conn = s.connection()
        f = conn.execute(_FLAVOR_BY_ID, {"flavorid": str(flavorid)}).mappings().first()
        if f is None or not (f["is_public"] or ctx.is_admin or conn.execute(
                _ACCESS_OF, {"id": f["id"], "project_id": ctx.project_id}).first()):
            raise exceptions.NotFound(f"Flavor {flavorid} could not be found.")
        specs = dict(conn.execute(_SPECS_OF, {"id": f["id"]}).all())
        return _snapshot(f, specs)

    if session is not None:
        return run(session)
    with db.reader() as s:
        return run(s)


def _snapshot(f, specs: dict) -> dict:
    return {"flavorid": f["flavorid"], "name": f["name"], "memory_mb": f["memory_mb"],
            "vcpus": f["vcpus"], "root_gb": f["root_gb"], "ephemeral_gb": f["ephemeral_gb"],
            "swap": f["swap"], "rxtx_factor": f["rxtx_factor"], "is_public": f["is_public"],
            "disabled": f["disabled"], "description": f["description"], "extra_specs": specs}


def snapshot(s, f: Flavor) -> dict:
    specs = dict(s.execute(sa.select(FlavorExtraSpec.key, FlavorExtraSpec.value)
                           .where(FlavorExtraSpec.flavor_id == f.id)).all())
    return {"flavorid": f.flavorid, "name": f.name, "memory_mb": f.memory_mb,
            "vcpus": f.vcpus, "root_gb": f.root_gb, "ephemeral_gb": f.ephemeral_gb,
            "swap": f.swap, "rxtx_factor": f.rxtx_factor, "is_public": f.is_public,
            "disabled": f.disabled, "description": f.description, "extra_specs": specs}


def view(req, f: Flavor, detail: bool, specs: dict | None = None) -> dict:
    out = {"id": f.flavorid, "name": f.name, "links": links(req, "flavors", f.flavorid)}
    if at_least(req, "2.55"):
        out["description"] = f.description
    if not detail:
        return out
    out.update({
        "ram": f.memory_mb, "disk": f.root_gb, "vcpus": f.vcpus,
        "OS-FLV-EXT-DATA:ephemeral": f.ephemeral_gb, "OS-FLV-DISABLED:disabled": f.disabled,
        "os-flavor-access:is_public": f.is_public,
        "swap": f.swap if (f.swap or at_least(req, "2.75")) else "",
        "rxtx_factor": f.rxtx_factor,
    })
    if at_least(req, "2.61") and specs is not None and policy.check(
            req.context, "os_compute_api:os-flavor-extra-specs:index"):
        out["extra_specs"] = specs
    return out


def _specs(s, ids) -> dict[int, dict]:
    out: dict[int, dict] = {i: {} for i in ids}
    if ids:
        for fid, key, value in s.execute(sa.select(FlavorExtraSpec.flavor_id, FlavorExtraSpec.key,
                                                   FlavorExtraSpec.value)
                                          .where(FlavorExtraSpec.flavor_id.in_(ids))):
            out[fid][key] = value
    return out


def _list(req, detail: bool):
    ctx = req.context
    q = req.query
    limit, marker = limit_marker(req)
    sort_key = q.get("sort_key", "flavorid")
    sort_dir = q.get("sort_dir", "asc")
    columns = {"flavorid": Flavor.flavorid, "id": Flavor.flavorid, "name": Flavor.name,
               "memory_mb": Flavor.memory_mb, "vcpus": Flavor.vcpus, "root_gb": Flavor.root_gb,
               "created_at": Flavor.created_at, "swap": Flavor.swap,
               "ephemeral_gb": Flavor.ephemeral_gb, "rxtx_factor": Flavor.rxtx_factor,
               "disabled": Flavor.disabled, "is_public": Flavor.is_public,
               "description": Flavor.description}
    if sort_key not in columns:
        raise exceptions.BadRequest(f"Invalid sort_key: {sort_key}")
    if sort_dir not in ("asc", "desc"):
        raise exceptions.BadRequest(f"Invalid sort_dir: {sort_dir}")
    with db.reader() as s:
        stmt = sa.select(Flavor).where(Flavor.disabled.is_(False))
        is_public = q.get("is_public")
        if ctx.is_admin and is_public is not None:
            if is_public.lower() != "none":  # nova's utils.is_none_string: every flavor
                try:
                    public = bool_from_string(is_public, strict=True)
                except ValueError:
                    raise exceptions.BadRequest(
                        f"Invalid is_public filter [{is_public}]") from None
                stmt = stmt.where(Flavor.is_public.is_(public))
        elif ctx.is_admin:
            stmt = stmt.where(Flavor.is_public.is_(True))
        else:
            access = sa.select(FlavorAccess.flavor_id).where(
                FlavorAccess.project_id == ctx.project_id)
            stmt = stmt.where(sa.or_(Flavor.is_public.is_(True), Flavor.id.in_(access)))
        for name, col in (("minRam", Flavor.memory_mb), ("minDisk", Flavor.root_gb)):
            if q.get(name) is not None:
                minimum = numbers.parse_int(q[name], name, minimum=0,
                                            message=f"Invalid {name} filter [{q[name]}]")
                stmt = stmt.where(col >= minimum)
        col = columns[sort_key]
        stmt = stmt.order_by(col.desc() if sort_dir == "desc" else col.asc(), Flavor.id)
        rows = s.scalars(stmt).all()
        if marker is not None:
            ids = [r.flavorid for r in rows]
            if marker not in ids:
                raise exceptions.BadRequest(f"marker [{marker}] not found")
            rows = rows[ids.index(marker) + 1:]
        rows = rows[:limit]
        specs = _specs(s, [r.id for r in rows]) if detail and at_least(req, "2.61") else {}
    items = [view(req, r, detail, specs.get(r.id)) for r in rows]
    out = {"flavors": items}
    nl = next_link(req, "flavors/detail" if detail else "flavors", items, limit)
    if nl and req.query.get("limit"):
        out["flavors_links"] = nl
    return respond(req, out)


def list_flavors(req):
    return _list(req, False)


def list_flavors_detail(req):
    return _list(req, True)


def show_flavor(req):
    with db.reader() as s:
        f = _find(s, req.params["flavor_id"], req.context)
        specs = _specs(s, [f.id])[f.id]
    return respond(req, {"flavor": view(req, f, True, specs)})


def create_flavor(req):
    authorize(req, "os_compute_api:os-flavor-manage:create")
    schema = CREATE
    if at_least(req, "2.55"):
        import copy

        schema = copy.deepcopy(CREATE)
        schema["properties"]["flavor"]["properties"]["description"] = DESCRIPTION
    data = body(req, schema)["flavor"]
    flavorid = data["id"] if data.get("id") is not None else str(uuidlib.uuid4())
    flavor = Flavor(flavorid=str(flavorid), name=data["name"].strip(),
                    memory_mb=int(data["ram"]), vcpus=int(data["vcpus"]),
                    root_gb=int(data["disk"]),
                    ephemeral_gb=int(data.get("OS-FLV-EXT-DATA:ephemeral", 0)),
                    swap=int(data.get("swap", 0) or 0),
                    # "9" * 400 passes the pattern and float() makes it Infinity.
                    rxtx_factor=numbers.parse_float(data.get("rxtx_factor", 1.0),
                                                    "rxtx_factor"),
                    is_public=to_bool(data.get("os-flavor-access:is_public", True)),
                    description=data.get("description"))
    for v, what in ((flavor.memory_mb, "ram"), (flavor.vcpus, "vcpus"),
                    (flavor.root_gb, "disk"), (flavor.swap, "swap"),
                    (flavor.ephemeral_gb, "OS-FLV-EXT-DATA:ephemeral")):
        if v > 2147483647:
            raise exceptions.BadRequest(f"Invalid input for field/attribute {what}. "
                                        f"Value: {v}. {v} is greater than the maximum of "
                                        "2147483647")
    try:
        with db.transaction() as s:
            if s.scalar(sa.select(Flavor.id).where(Flavor.name == flavor.name)):
                raise exceptions.Conflict(f"Flavor with name {flavor.name} already exists.")
            if s.scalar(sa.select(Flavor.id).where(Flavor.flavorid == flavor.flavorid)):
                raise exceptions.Conflict(f"Flavor with ID {flavor.flavorid} already exists.")
            s.add(flavor)
            s.flush()
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            raise exceptions.Conflict(f"Flavor {flavor.name} already exists.") from None
        raise
    return respond(req, {"flavor": view(req, flavor, True, {})})


def update_flavor(req):
    if not at_least(req, "2.55"):
        raise exceptions.MethodNotAllowed("The method PUT is not allowed for this resource.")
    authorize(req, "os_compute_api:os-flavor-manage:update")
    data = body(req, {"type": "object", "properties": {"flavor": {
        "type": "object", "properties": {"description": DESCRIPTION},
        "required": ["description"], "additionalProperties": False}},
        "required": ["flavor"], "additionalProperties": False})["flavor"]
    with db.transaction() as s:
        f = _find(s, req.params["flavor_id"])
        f.description = data["description"]
        specs = _specs(s, [f.id])[f.id]
    return respond(req, {"flavor": view(req, f, True, specs)})


def delete_flavor(req):
    authorize(req, "os_compute_api:os-flavor-manage:delete")
    with db.transaction() as s:
        f = _find(s, req.params["flavor_id"])
        s.delete(f)
    return respond(req, None, 202)


# --- extra specs -------------------------------------------------------------------------

_SPECS = {"type": "object", "properties": {"extra_specs": {
    "type": "object",
    "patternProperties": {r"^[a-zA-Z0-9-_:. ]{1,255}$": {
        "type": ["string", "number", "boolean"], "minLength": 0, "maxLength": 255}},
    "additionalProperties": False}}, "required": ["extra_specs"], "additionalProperties": False}


def list_extra_specs(req):
    authorize(req, "os_compute_api:os-flavor-extra-specs:index")
    with db.reader() as s:
        f = _find(s, req.params["flavor_id"], req.context)
        return respond(req, {"extra_specs": _specs(s, [f.id])[f.id]})


def create_extra_specs(req):
    authorize(req, "os_compute_api:os-flavor-extra-specs:create")
    data = body(req, _SPECS)["extra_specs"]
    if at_least(req, "2.86"):
        for key, value in data.items():
            extra_specs.validate(key, str(value).lower() if isinstance(value, bool)
                                 else str(value))
    with db.transaction() as s:
        f = _find(s, req.params["flavor_id"])
        for key, value in data.items():
            value = str(value).lower() if isinstance(value, bool) else str(value)
            row = s.get(FlavorExtraSpec, (f.id, key))
            if row is None:
                s.add(FlavorExtraSpec(flavor_id=f.id, key=key, value=value))
            else:
                row.value = value
    return respond(req, {"extra_specs": {k: (str(v).lower() if isinstance(v, bool) else str(v))
                                         for k, v in data.items()}})


def show_extra_spec(req):
    authorize(req, "os_compute_api:os-flavor-extra-specs:show")
    key = req.params["key"]
    with db.reader() as s:
        f = _find(s, req.params["flavor_id"], req.context)
        row = s.get(FlavorExtraSpec, (f.id, key))
        if row is None:
            raise exceptions.NotFound(f"Flavor {f.flavorid} has no extra specs with key {key}.")
        return respond(req, {key: row.value})


def update_extra_spec(req):
    authorize(req, "os_compute_api:os-flavor-extra-specs:update")
    key = req.params["key"]
    data = body(req, {"type": "object", "patternProperties": {
        r"^[a-zA-Z0-9-_:. ]{1,255}$": {"type": ["string", "number", "boolean"],
                                       "maxLength": 255}},
        "additionalProperties": False, "minProperties": 1, "maxProperties": 1})
    if key not in data:
        raise exceptions.BadRequest("Request body and URI mismatch")
    value = data[key]
    value = str(value).lower() if isinstance(value, bool) else str(value)
    if at_least(req, "2.86"):
        extra_specs.validate(key, value)
    with db.transaction() as s:
        f = _find(s, req.params["flavor_id"])
        row = s.get(FlavorExtraSpec, (f.id, key))
        if row is None:
            s.add(FlavorExtraSpec(flavor_id=f.id, key=key, value=value))
        else:
            row.value = value
    return respond(req, {key: value})


def delete_extra_spec(req):
    authorize(req, "os_compute_api:os-flavor-extra-specs:delete")
    key = req.params["key"]
    with db.transaction() as s:
        f = _find(s, req.params["flavor_id"])
        row = s.get(FlavorExtraSpec, (f.id, key))
        if row is None:
            raise exceptions.NotFound(f"Flavor {f.flavorid} has no extra specs with key {key}.")
        s.delete(row)
    return respond(req, None, 200)


# --- access ------------------------------------------------------------------------------

def list_access(req):
    authorize(req, "os_compute_api:os-flavor-access")
    with db.reader() as s:
        f = _find(s, req.params["flavor_id"])
        if f.is_public:
            raise exceptions.NotFound("Access list not available for public flavors.")
        return respond(req, {"flavor_access": _access(s, f)})


def _access(s, f):
    return [{"flavor_id": f.flavorid, "tenant_id": p} for p in s.scalars(
        sa.select(FlavorAccess.project_id).where(FlavorAccess.flavor_id == f.id)
        .order_by(FlavorAccess.project_id))]


_TENANT = {"type": "object", "properties": {"tenant": {"type": "string", "minLength": 1,
                                                       "maxLength": 255}},
           "required": ["tenant"], "additionalProperties": False}


def flavor_action(req):
    data = body(req)
    if len(data) != 1:
        raise exceptions.BadRequest("There is either no action or more than one action.")
    action, args = next(iter(data.items()))
    if action not in ("addTenantAccess", "removeTenantAccess"):
        raise exceptions.BadRequest(f"Unknown action {action}")
    from pocketstack.compute.rest.common import validate

    validate({"type": "object", "properties": {action: _TENANT}, "required": [action],
              "additionalProperties": False}, data)
    tenant = args["tenant"]
    with db.transaction() as s:
        f = _find(s, req.params["flavor_id"])
        if action == "addTenantAccess":
            authorize(req, "os_compute_api:os-flavor-access:add_tenant_access")
            if f.is_public:
                raise exceptions.Conflict("Can not add access to a public flavor.")
            if s.get(FlavorAccess, (f.id, tenant)) is not None:
                raise exceptions.Conflict(f"Flavor access already exists for flavor "
                                          f"{f.flavorid} and project {tenant} combination.")
            s.add(FlavorAccess(flavor_id=f.id, project_id=tenant))
        else:
            authorize(req, "os_compute_api:os-flavor-access:remove_tenant_access")
            row = s.get(FlavorAccess, (f.id, tenant))
            if row is None:
                raise exceptions.NotFound(f"Flavor access not found for {f.flavorid} / "
                                          f"{tenant} combination.")
            s.delete(row)
        s.flush()
        return respond(req, {"flavor_access": _access(s, f)})
