"""/default-types and /default-types/{project}: cinder's per-project default volume
types, from microversion 3.62 (404 below it, as cinder)."""
from __future__ import annotations

from pocketstack.volume import default_types
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, check_project, respond


def _ready(req) -> None:
    check_project(req)
    microversion.require(req, "3.62")


def list_defaults(req):
    _ready(req)
    return respond(req, {"default_types": default_types.list_defaults(req.context)})


def show(req):
    _ready(req)
    return respond(req, {"default_type": default_types.get_default(
        req.context, req.params["target_project"])})


def set_default(req):
    _ready(req)
    return respond(req, {"default_type": default_types.set_default(
        req.context, req.params["target_project"], body(req))})


def unset(req):
    _ready(req)
    default_types.unset_default(req.context, req.params["target_project"])
    return respond(req, None, 204)
