"""/resource_classes (1.2) and /traits (1.6)."""
from __future__ import annotations

from pocketstack.placement import api, catalog, errors, schemas
from pocketstack.placement.rest import util


def _class(req, name: str) -> dict:
    return {"name": name, "links": [{"rel": "self",
                                     "href": f"{util.base(req)}/resource_classes/{name}"}]}


def list_classes(req):
    util.require(req, (1, 2))
    util.authorize(req, "resource_classes:list")
    return util.ok({"resource_classes": [_class(req, n) for n in
                                         api.call(catalog.list_classes)]})


def create_class(req):
    util.require(req, (1, 2))
    util.authorize(req, "resource_classes:create")
    name = util.body(req, schemas.RESOURCE_CLASS)["name"]
    api.call(catalog.create_class, name, write=True)
    return util.empty(201, {"Location": util.location(req, f"/resource_classes/{name}")})


def show_class(req):
    util.require(req, (1, 2))
    util.authorize(req, "resource_classes:show")
    name = req.params["name"]
    if not api.call(catalog.class_exists, name):
        raise errors.not_found(f"No such resource class {name}.")
    return util.ok(_class(req, name))


def update_class(req):
    util.require(req, (1, 2))
    util.authorize(req, "resource_classes:update")
    name = req.params["name"]
    if util.version(req) >= (1, 7):  # bodiless create-or-nothing
        if not schemas.re_match(schemas.CUSTOM, name):
            raise errors.bad_request(f"JSON does not validate: '{name}' does not match "
                                     f"'{schemas.CUSTOM}'")
        created = api.call(catalog.ensure_class, name, write=True)
        location = {"Location": util.location(req, f"/resource_classes/{name}")}
        return util.empty(201 if created else 204, location)
    new = util.body(req, schemas.RESOURCE_CLASS)["name"]
    api.call(catalog.rename_class, name, new, write=True)
    return util.ok(_class(req, new))


def delete_class(req):
    util.require(req, (1, 2))
    util.authorize(req, "resource_classes:delete")
    api.call(catalog.delete_class, req.params["name"], write=True)
    return util.empty()


def list_traits(req):
    util.require(req, (1, 6))
    util.authorize(req, "traits:list")
    params = util.query(req, {"name", "associated"})
    associated = util.single(params, "associated")
    if associated is not None:
        if associated.lower() not in ("true", "false"):
            raise errors.bad_request(f"The query parameter \"associated\" only accepts "
                                     f"\"true\" or \"false\". Got: {associated}")
        associated = associated.lower() == "true"
    return util.ok({"traits": api.call(catalog.list_traits, util.single(params, "name"),
                                       associated)})


def show_trait(req):
    util.require(req, (1, 6))
    util.authorize(req, "traits:show")
    name = req.params["name"]
    if not api.call(catalog.trait_exists, name):
        raise errors.not_found(f"No such trait(s): {name}.")
    return util.empty()


def put_trait(req):
    util.require(req, (1, 6))
    util.authorize(req, "traits:update")
    name = req.params["name"]
    created = api.call(catalog.ensure_trait, name, write=True)
    return util.empty(201 if created else 204,
                      {"Location": util.location(req, f"/traits/{name}")})


def delete_trait(req):
    util.require(req, (1, 6))
    util.authorize(req, "traits:delete")
    api.call(catalog.delete_trait, req.params["name"], write=True)
    return util.empty()


