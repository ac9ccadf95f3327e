"""/types/{type_id}/encryption and /types/{type_id}/encryption/{key_or_id}."""
from __future__ import annotations

from pocketstack.volume import type_encryption
from pocketstack.volume.rest.common import body, check_project, respond


def index(req):
    check_project(req)
    return respond(req, type_encryption.get(req.context, req.params["type_id"]))


def create(req):
    return respond(req, type_encryption.create(req.context, req.params["type_id"], body(req)))


def show(req):
    """The path's last part names a field of the encryption (cinder's show)."""
    check_project(req)
    return respond(req, type_encryption.show_key(req.context, req.params["type_id"],
                                                 req.params["encryption_id"]))


def update(req):
    return respond(req, type_encryption.update(req.context, req.params["type_id"], body(req)))


def delete(req):
    check_project(req)
    type_encryption.delete(req.context, req.params["type_id"])
    return respond(req, None, 202)
