"""The operator's side: providers and their capabilities, flavors and flavor profiles,
availability zones and their profiles, amphorae."""
from __future__ import annotations

import json

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import driver, tree, views
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import validation as V
from pocketstack.loadbalancer.validation import Field
from pocketstack.loadbalancer.show import trim

PROVIDER_NAME = Field("str", max_length=64)


def providers(ctx, query) -> dict:
    tree.authorize(ctx, "provider", "get_all", ctx.project_id)
    return {"providers": [trim({"name": n, "description": d}, query)
                          for n, d in C.PROVIDERS.items()]}


def capabilities(ctx, provider: str, kind: str, query) -> dict:
    rule = "provider-flavor" if kind == "flavor" else "provider-availability-zone"
    tree.authorize(ctx, rule, "get_all", ctx.project_id)
    if provider not in C.PROVIDERS:
        raise exceptions.PocketstackError(f"Provider '{provider}' was not found.")
    items = C.FLAVOR_CAPABILITIES if kind == "flavor" else C.AZ_CAPABILITIES
    names = query.getlist("name")
    out = [trim(c, query) for c in items if not names or c["name"] in names]
    key = "flavor_capabilities" if kind == "flavor" else "availability_zone_capabilities"
    return {key: out}


class ProviderNotFound(exceptions.PocketstackError):
    code = 501


def _provider(name: str) -> str:
    if name not in C.PROVIDERS:
        raise ProviderNotFound(f"Provider '{name}' was not found.")
    return name


def _json_data(field: str, value: str, capabilities: list) -> str:
    try:
        data = json.loads(value)
    except ValueError:
        raise V.Invalid(f"Error with file {field}. Reason: the data is not JSON.") from None
    if not isinstance(data, dict):
        raise V.validation_failure(f"{field} must be a JSON object.")
    known = {c["name"] for c in capabilities}
    unknown = sorted(set(data) - known)
    if unknown:
        raise V.Invalid(f"Provider 'amphora' does not support a requested option: "
                        f"{', '.join(unknown)} is not a valid option")
    return value


# Each catalog object kind: model, key, policy name, schema, view, key column.
def _profile_view(p, data_field):
    return {"id": p.id, "name": p.name, "provider_name": p.provider_name,
            data_field: getattr(p, data_field)}


KINDS = {
    "flavorprofile": dict(model=M.FlavorProfile, plural="flavorprofiles",
                          rule="flavor-profile", label="Flavor profile",
                          schema={"name": Field("str", mandatory=True),
                                  "provider_name": Field("str", mandatory=True, max_length=64),
                                  "flavor_data": Field("str", mandatory=True, max_length=4096)},
                          view=lambda p: _profile_view(p, "flavor_data")),
    "availability_zone_profile": dict(
        model=M.AvailabilityZoneProfile, plural="availability_zone_profiles",
        rule="availability-zone-profile", label="Availability Zone Profile",
        schema={"name": Field("str", mandatory=True),
                "provider_name": Field("str", mandatory=True, max_length=64),
                "availability_zone_data": Field("str", mandatory=True, max_length=4096)},
        view=lambda p: _profile_view(p, "availability_zone_data")),
    "flavor": dict(model=M.Flavor, plural="flavors", rule="flavor", label="Flavor",
                   schema={"name": Field("str", mandatory=True), "description": Field("str"),
                           "enabled": Field("bool"),
                           "flavor_profile_id": Field("uuid", mandatory=True)},
                   view=lambda f: {"id": f.id, "name": f.name,
                                   "description": f.description or "", "enabled": f.enabled,
                                   "flavor_profile_id": f.flavor_profile_id}),
    "availability_zone": dict(
        model=M.AvailabilityZone, plural="availability_zones", rule="availability-zone",
        label="Availability Zone",
        schema={"name": Field("str", mandatory=True), "description": Field("str"),
                "enabled": Field("bool"),
                "availability_zone_profile_id": Field("uuid", mandatory=True)},
        view=lambda z: {"name": z.name, "description": z.description or "",
                        "enabled": z.enabled,
                        "availability_zone_profile_id": z.availability_zone_profile_id}),
}
UPDATABLE = {"flavorprofile": ("name", "provider_name", "flavor_data"),
             "availability_zone_profile": ("name", "provider_name", "availability_zone_data"),
             "flavor": ("name", "description", "enabled"),
             "availability_zone": ("description", "enabled")}
USED_BY = {"flavorprofile": (M.Flavor, "flavor_profile_id"),
           "availability_zone_profile": (M.AvailabilityZone, "availability_zone_profile_id"),
           "flavor": (M.LoadBalancer, "flavor_id"),
           "availability_zone": (M.LoadBalancer, "availability_zone")}


def _check(s, kind: str, data: dict) -> None:
    if "provider_name" in data:
        _provider(data["provider_name"])
    if "flavor_data" in data:
        _json_data("flavor_data", data["flavor_data"], C.FLAVOR_CAPABILITIES)
    if "availability_zone_data" in data:
        _json_data("availability_zone_data", data["availability_zone_data"], C.AZ_CAPABILITIES)
    if data.get("flavor_profile_id") and s.get(M.FlavorProfile, data["flavor_profile_id"]) is None:
        raise V.Invalid(f"Flavor profile {data['flavor_profile_id']} not found.")
    zone_profile = data.get("availability_zone_profile_id")
    if zone_profile and s.get(M.AvailabilityZoneProfile, zone_profile) is None:
        raise V.Invalid(f"Availability Zone Profile {zone_profile} not found.")


def _get(s, kind: str, key: str):
    spec = KINDS[kind]
    obj = s.get(spec["model"], key)
    if obj is None:
        raise exceptions.NotFound(f"{spec['label']} {key} not found.")
    return obj


def list_kind(ctx, kind: str, query) -> dict:
    spec = KINDS[kind]
    tree.authorize(ctx, spec["rule"], "get_all", ctx.project_id)
    model = spec["model"]
    stmt = sa.select(model)
    for key in ("id", "name", "provider_name", "enabled", "flavor_profile_id",
                "availability_zone_profile_id"):
        if key in query and hasattr(model, key):
            value = query[key]
            if key == "enabled":
                value = value.lower() in ("true", "1")
            stmt = stmt.where(getattr(model, key) == value)
    with db.reader() as s:
        items = [trim(spec["view"](o), query) for o in s.scalars(stmt.order_by(model.name))]
    return {spec["plural"]: items, f"{spec['plural']}_links": []}


def show_kind(ctx, kind: str, key: str, query) -> dict:
    tree.authorize(ctx, KINDS[kind]["rule"], "get_one", ctx.project_id)
    with db.reader() as s:
        return {kind: trim(KINDS[kind]["view"](_get(s, kind, key)), query)}


def create_kind(ctx, kind: str, body) -> dict:
    spec = KINDS[kind]
    tree.authorize(ctx, spec["rule"], "post", ctx.project_id)
    data = V.parse(body, kind, spec["schema"], create=True)
    with db.transaction() as s:
        _check(s, kind, data)
        model = spec["model"]
        if kind in ("flavor", "availability_zone") and s.scalar(
                sa.select(model).where(model.name == data["name"])) is not None:
            raise exceptions.Conflict(f"A {spec['label']} of name {data['name']} already "
                                      f"exists.")
        if kind == "availability_zone":
            obj = model(enabled=data.pop("enabled", True) is not False, **data)
        elif kind == "flavor":
            obj = model(id=tree.new_id(), enabled=data.pop("enabled", True) is not False,
                        **data)
        else:
            obj = model(id=tree.new_id(), **data)
        s.add(obj)
        s.flush()
        return {kind: spec["view"](obj)}


def update_kind(ctx, kind: str, key: str, body) -> dict:
    spec = KINDS[kind]
    tree.authorize(ctx, spec["rule"], "put", ctx.project_id)
    schema = {k: v for k, v in spec["schema"].items() if k in UPDATABLE[kind]}
    data = V.parse(body, kind, schema, create=False)
    with db.transaction() as s:
        obj = _get(s, kind, key)
        _check(s, kind, data)
        for field, value in data.items():
            if value is None and field in ("name", "provider_name", "flavor_data",
                                           "availability_zone_data", "enabled"):
                raise V.invalid_option("None", field)
            setattr(obj, field, value)
        s.flush()
        return {kind: spec["view"](obj)}


def delete_kind(ctx, kind: str, key: str) -> None:
    spec = KINDS[kind]
    tree.authorize(ctx, spec["rule"], "delete", ctx.project_id)
    with db.transaction() as s:
        obj = _get(s, kind, key)
        model, column = USED_BY[kind]
        if s.scalar(sa.select(sa.func.count()).select_from(model)
                    .where(getattr(model, column) == key)):
            raise exceptions.Conflict(f"{spec['label']} {key} is in use and cannot be "
                                      f"deleted.")
        s.delete(obj)


# --- amphorae -----------------------------------------------------------------------------

def list_amphorae(ctx, query) -> dict:
    tree.authorize(ctx, "amphora", "get_all", ctx.project_id)
    stmt = sa.select(M.Amphora)
    for key, column in (("loadbalancer_id", M.Amphora.load_balancer_id),
                        ("id", M.Amphora.id), ("status", M.Amphora.status),
                        ("role", M.Amphora.role)):
        if key in query:
            stmt = stmt.where(column == query[key])
    with db.reader() as s:
        items = [trim(views.amphora(a), query)
                 for a in s.scalars(stmt.order_by(M.Amphora.created_at))]
    return {"amphorae": items, "amphorae_links": []}


def _amphora(s, amphora_id: str) -> M.Amphora:
    amphora = s.get(M.Amphora, amphora_id)
    if amphora is None:
        raise exceptions.NotFound(f"Amphora {amphora_id} not found.")
    return amphora


def show_amphora(ctx, amphora_id: str, query) -> dict:
    tree.authorize(ctx, "amphora", "get_one", ctx.project_id)
    with db.reader() as s:
        return {"amphora": trim(views.amphora(_amphora(s, amphora_id)), query)}


def amphora_stats(ctx, amphora_id: str) -> dict:
    tree.authorize(ctx, "amphora", "get_stats", ctx.project_id)
    with db.reader() as s:
        amphora = _amphora(s, amphora_id)
        listeners = tree.rows(s, M.Listener, amphora.load_balancer_id) \
            if amphora.load_balancer_id else []
    out = []
    for listener in listeners:
        counts = dict(driver.counters(amphora.load_balancer_id, listener.id) or {})
        out.append({"id": amphora.id, "loadbalancer_id": amphora.load_balancer_id,
                    "listener_id": listener.id, "bytes_in": counts.get("bytes_in", 0),
                    "bytes_out": counts.get("bytes_out", 0),
                    "active_connections": counts.get("active_connections", 0),
                    "total_connections": counts.get("total_connections", 0),
                    "request_errors": counts.get("request_errors", 0)})
    return {"amphora_stats": out}


def failover_amphora(ctx, amphora_id: str) -> None:
    tree.authorize(ctx, "amphora", "put_failover", ctx.project_id)
    with db.transaction() as s:
        amphora = _amphora(s, amphora_id)
        if amphora.load_balancer_id:
            lb = s.get(M.LoadBalancer, amphora.load_balancer_id)
            if lb.provisioning_status not in (C.ACTIVE, C.ERROR):
                raise exceptions.Conflict(f"Invalid state {lb.provisioning_status} of "
                                          f"loadbalancer resource {lb.id}")
            lb.provisioning_status, lb.updated_at = C.PENDING_UPDATE, utcnow()
        amphora.updated_at = utcnow()
    driver.notify()


def configure_amphora(ctx, amphora_id: str) -> None:
    tree.authorize(ctx, "amphora", "put_config", ctx.project_id)
    with db.reader() as s:
        _amphora(s, amphora_id)


def delete_amphora(ctx, amphora_id: str) -> None:
    tree.authorize(ctx, "amphora", "delete", ctx.project_id)
    with db.transaction() as s:
        amphora = _amphora(s, amphora_id)
        if amphora.status not in ("ERROR", "READY"):
            raise exceptions.Conflict(f"Amphora {amphora_id} is not in a state that can be "
                                      f"deleted: {amphora.status}")
        s.delete(amphora)
