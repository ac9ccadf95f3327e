"""/resource_providers and /resource_providers/{uuid}."""
from __future__ import annotations

from pocketstack.placement import api, errors, filters, schemas
from pocketstack.placement.rest import util

_LIST_PARAMS = [((1, 0), {"name", "uuid"}), ((1, 3), {"member_of"}), ((1, 4), {"resources"}),
                ((1, 14), {"in_tree"}), ((1, 18), {"required"})]


def list_providers(req):
    util.authorize(req, "resource_providers:list")
    version = util.version(req)
    allowed = set().union(*(names for since, names in _LIST_PARAMS if version >= since))
    params = util.query(req, allowed)
    kwargs = {"name": util.single(params, "name")}
    if "uuid" in params:
        kwargs["rp_uuid"] = _filter_uuid(util.single(params, "uuid"), "uuid")
    if "in_tree" in params:
        kwargs["in_tree"] = _filter_uuid(util.single(params, "in_tree"), "in_tree")
    if "member_of" in params:
        kwargs["member_of"] = filters.parse_member_of(params["member_of"], version, (1, 3))
    if "resources" in params:
        kwargs["resources"] = filters.parse_resources(util.single(params, "resources"))
    if "required" in params:
        kwargs["required"] = filters.parse_required(params["required"], version)
    rps = api.list_providers(**kwargs, version=version, base=util.base(req))
    return util.ok({"resource_providers": rps})


def _filter_uuid(value: str, key: str) -> str:
    try:
        return util.check_uuid(value)
    except Exception:
        raise errors.bad_request(f"Invalid query string parameters: '{value}' is not a "
                                 f"'uuid' ({key})") from None


def create_provider(req):
    util.authorize(req, "resource_providers:create")
    version = util.version(req)
    data = util.body(req, schemas.POST_RP_1_14 if version >= (1, 14) else schemas.POST_RP)
    rp = api.create_provider(data["name"], data.get("uuid"), data.get("parent_provider_uuid"),
                             version=version, base=util.base(req))
    location = {"Location": util.location(req, f"/resource_providers/{rp['uuid']}")}
    if version >= (1, 20):
        return util.ok(rp, 200, location)
    return util.empty(201, location)


def show_provider(req):
    util.authorize(req, "resource_providers:show")
    return util.ok(api.get_provider(util.provider_uuid(req), version=util.version(req),
                                    base=util.base(req)))


def update_provider(req):
    util.authorize(req, "resource_providers:update")
    version = util.version(req)
    data = util.body(req, schemas.PUT_RP_1_14 if version >= (1, 14) else schemas.PUT_RP)
    return util.ok(api.update_provider(
        util.provider_uuid(req), data["name"], data.get("parent_provider_uuid"),
        "parent_provider_uuid" in data, version=version, base=util.base(req)))


def delete_provider(req):
    util.authorize(req, "resource_providers:delete")
    api.delete_provider(util.provider_uuid(req))
    return util.empty()


# --- inventories -------------------------------------------------------------------------

def _inventory(generation: int, record: dict) -> dict:
    return dict(record, resource_provider_generation=generation)


def list_inventories(req):
    util.authorize(req, "resource_providers:inventories:list")
    generation, invs = api.get_inventories(util.provider_uuid(req))
    return util.ok({"inventories": invs, "resource_provider_generation": generation})


def set_inventories(req):
    util.authorize(req, "resource_providers:inventories:update")
    data = util.body(req, schemas.PUT_INVENTORIES)
    generation, invs = api.set_inventories(util.provider_uuid(req),
                                           data["resource_provider_generation"],
                                           data["inventories"], util.version(req))
    return util.ok({"inventories": invs, "resource_provider_generation": generation})


def delete_inventories(req):
    util.require(req, (1, 5), status=405)
    util.authorize(req, "resource_providers:inventories:delete")
    api.delete_inventories(util.provider_uuid(req))
    return util.empty()


def create_inventory(req):
    util.authorize(req, "resource_providers:inventories:create")
    rp_uuid = util.provider_uuid(req)
    data = util.body(req, schemas.POST_INVENTORY)
    rc = data.pop("resource_class")
    generation, record = api.create_inventory(rp_uuid, rc, data, util.version(req))
    href = util.location(req, f"/resource_providers/{rp_uuid}/inventories/{rc}")
    return util.ok(_inventory(generation, record), 201, {"Location": href})


def show_inventory(req):
    util.authorize(req, "resource_providers:inventories:show")
    generation, record = api.get_inventory(util.provider_uuid(req), req.params["rc"])
    return util.ok(_inventory(generation, record))


def update_inventory(req):
    util.authorize(req, "resource_providers:inventories:update")
    rp_uuid = util.provider_uuid(req)
    data = util.body(req, schemas.PUT_INVENTORY_ONE)
    generation, record = api.update_inventory(rp_uuid, req.params["rc"], data,
                                              util.version(req))
    return util.ok(_inventory(generation, record))


def delete_inventory(req):
    util.authorize(req, "resource_providers:inventories:delete")
    api.delete_inventory(util.provider_uuid(req), req.params["rc"])
    return util.empty()


# --- a provider's traits and aggregates ----------------------------------------------------

def list_provider_traits(req):
    util.require(req, (1, 6))
    util.authorize(req, "resource_providers:traits:list")
    generation, traits = api.provider_traits(util.provider_uuid(req))
    return util.ok({"traits": traits, "resource_provider_generation": generation})


def set_provider_traits(req):
    util.require(req, (1, 6))
    util.authorize(req, "resource_providers:traits:update")
    data = util.body(req, schemas.SET_PROVIDER_TRAITS)
    generation, traits = api.set_provider_traits(util.provider_uuid(req), data["traits"],
                                                 data["resource_provider_generation"])
    return util.ok({"traits": traits, "resource_provider_generation": generation})


def delete_provider_traits(req):
    util.require(req, (1, 6))
    util.authorize(req, "resource_providers:traits:delete")
    api.delete_provider_traits(util.provider_uuid(req))
    return util.empty()


def _aggregates(req, generation: int, aggregates: list[str]):
    body = {"aggregates": aggregates}
    if util.version(req) >= (1, 19):
        body["resource_provider_generation"] = generation
    return util.ok(body)


def list_aggregates(req):
    util.require(req, (1, 1))
    util.authorize(req, "resource_providers:aggregates:list")
    return _aggregates(req, *api.provider_aggregates(util.provider_uuid(req)))


def set_aggregates(req):
    util.require(req, (1, 1))
    util.authorize(req, "resource_providers:aggregates:update")
    new = util.version(req) >= (1, 19)
    data = util.body(req, schemas.PUT_AGGREGATES_1_19 if new else schemas.PUT_AGGREGATES_1_1)
    aggregates = data["aggregates"] if new else data
    generation = data["resource_provider_generation"] if new else None
    return _aggregates(req, *api.set_provider_aggregates(
        util.provider_uuid(req), aggregates, generation, new))
