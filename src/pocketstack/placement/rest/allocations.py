"""/allocations, /resource_providers/{uuid}/allocations, usages and /reshaper."""
from __future__ import annotations

import uuid as uuidlib

from pocketstack.placement import api, errors, schemas
from pocketstack.placement.rest import util


def _consumer_uuid(req) -> str:
    value = req.params["consumer_uuid"]
    try:
        return str(uuidlib.UUID(value))
    except ValueError:
        raise errors.bad_request(f"Malformed consumer_uuid: {value}") from None


def show(req):
    util.authorize(req, "allocations:list")
    version = util.version(req)
    info, allocs = api.consumer_allocations(req.params["consumer_uuid"])
    body: dict = {"allocations": allocs}
    if version >= (1, 12) and info is not None and allocs:
        body.update(project_id=info["project_id"], user_id=info["user_id"])
        if version >= (1, 28):
            body["consumer_generation"] = info["generation"]
        if version >= (1, 38):
            body["consumer_type"] = info["consumer_type"] or "unknown"
    return util.ok(body)


def _request(consumer: str, data: dict, version) -> api.Request:
    allocations = data["allocations"]
    if isinstance(allocations, list):  # before 1.12
        merged: dict[str, dict[str, int]] = {}
        for item in allocations:
            merged.setdefault(item["resource_provider"]["uuid"], {}).update(item["resources"])
        allocations = merged
    else:
        allocations = {rp: value["resources"] for rp, value in allocations.items()}
    return api.Request(consumer, allocations, data.get("project_id"), data.get("user_id"),
                       data.get("consumer_generation"), version >= (1, 28),
                       data.get("consumer_type"))


def put(req):
    util.authorize(req, "allocations:update")
    version = util.version(req)
    consumer = _consumer_uuid(req)
    data = util.body(req, schemas.put_allocations(version))
    api.set_allocations([_request(consumer, data, version)])
    return util.empty()


def post(req):
    util.require(req, (1, 13), status=405)
    util.authorize(req, "allocations:manage")
    version = util.version(req)
    data = util.body(req, schemas.post_allocations(version))
    api.set_allocations([_request(util.check_uuid(c, "consumer_uuid"), d, version)
                         for c, d in data.items()])
    return util.empty()


def delete(req):
    util.authorize(req, "allocations:delete")
    api.delete_allocations(req.params["consumer_uuid"])
    return util.empty()


def of_provider(req):
    util.authorize(req, "resource_providers:allocations:list")
    generation, allocs = api.provider_allocations(util.provider_uuid(req),
                                                  util.version(req) >= (1, 28))
    return util.ok({"allocations": allocs, "resource_provider_generation": generation})


def provider_usages(req):
    util.authorize(req, "resource_providers:usages")
    generation, usages = api.provider_usages(util.provider_uuid(req))
    return util.ok({"usages": usages, "resource_provider_generation": generation})


def usages(req):
    util.require(req, (1, 9))
    version = util.version(req)
    allowed = {"project_id", "user_id"} | ({"consumer_type"} if version >= (1, 38) else set())
    params = util.query(req, allowed)
    project_id = util.single(params, "project_id")
    if not project_id:
        raise errors.bad_request("Invalid query string parameters: 'project_id' is a "
                                 "required property")
    user_id = util.single(params, "user_id")
    consumer_type = util.single(params, "consumer_type")
    if consumer_type is not None and not (consumer_type in ("all", "unknown") or
                                          schemas.re_match(schemas.RC, consumer_type)):
        raise errors.bad_request(f"Invalid query string parameters: '{consumer_type}' does "
                                 "not match the consumer type pattern")
    util.authorize(req, "usages", {"project_id": project_id, "user_id": user_id})
    return util.ok({"usages": api.project_usages(project_id, user_id, consumer_type,
                                                 version >= (1, 38))})


def reshape(req):
    util.require(req, (1, 30))
    util.authorize(req, "reshaper:reshape")
    version = util.version(req)
    data = util.body(req, schemas.reshaper(version))
    requests = [_request(util.check_uuid(c, "consumer_uuid"), d, version)
                for c, d in data["allocations"].items()]
    api.reshape(data["inventories"], requests, version)
    return util.empty()


