"""/types, /types/{id}, extra specs and /types/{id}/action (type access)."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.volume import types, views
from pocketstack.volume.rest.common import body, check_project, respond


def list_types(req):
    check_project(req)
    found = types.list_types(req.context, req.query.get("is_public"))
    return respond(req, {"volume_types": [views.volume_type(t, req.context) for t in found]})


def show(req):
    check_project(req)
    vt = types.get_type(req.context, req.params["type_id"])
    return respond(req, {"volume_type": views.volume_type(vt, req.context)})


def create(req):
    vt = types.create_type(req.context, body(req))
    return respond(req, {"volume_type": views.volume_type(vt, req.context)})


def update(req):
    vt = types.update_type(req.context, req.params["type_id"], body(req))
    return respond(req, {"volume_type": views.volume_type(vt, req.context)})


def delete(req):
    check_project(req)
    types.delete_type(req.context, req.params["type_id"])
    return respond(req, None, 202)


def list_specs(req):
    check_project(req)
    return respond(req, {"extra_specs": types.get_extra_specs(req.context,
                                                              req.params["type_id"])})


def create_specs(req):
    specs = types.set_extra_specs(req.context, req.params["type_id"], body(req))
    return respond(req, {"extra_specs": specs})


def show_spec(req):
    check_project(req)
    specs = types.get_extra_specs(req.context, req.params["type_id"])
    key = req.params["key"]
    if key not in specs:
        raise exceptions.NotFound(f"Volume Type {req.params['type_id']} has no extra specs "
                                  f"with key {key}.")
    return respond(req, {key: specs[key]})


def update_spec(req):
    return respond(req, types.update_extra_spec(req.context, req.params["type_id"],
                                                req.params["key"], body(req)))


def delete_spec(req):
    check_project(req)
    types.delete_extra_spec(req.context, req.params["type_id"], req.params["key"])
    return respond(req, None, 202)


def list_access(req):
    check_project(req)
    return respond(req, {"volume_type_access": types.list_access(req.context,
                                                                 req.params["type_id"])})


def action(req):
    data = body(req)
    if not isinstance(data, dict) or len(data) != 1:
        raise exceptions.BadRequest("Malformed request body: one action is expected.")
    name, args = next(iter(data.items()))
    if name not in ("addProjectAccess", "removeProjectAccess"):
        raise exceptions.BadRequest(f"There is no such action: {name}")
    if not isinstance(args, dict) or not args.get("project"):
        raise exceptions.BadRequest("Missing required element 'project' in request body.")
    types.change_access(req.context, req.params["type_id"], str(args["project"]),
                        add=name == "addProjectAccess")
    return respond(req, None, 202)
