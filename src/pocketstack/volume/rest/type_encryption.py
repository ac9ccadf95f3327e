"""/types/{type_id}/encryption and /types/{type_id}/encryption/{key_or_id}; a volume's
encryption metadata (/volumes/{volume_id}/encryption[/{key}])."""
from __future__ import annotations

from pocketstack.common import exceptions
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


def volume_index(req):
    check_project(req)
    return respond(req, type_encryption.volume_metadata(req.context, req.params["volume_id"]))


def volume_show(req):
    """One field of the volume's encryption metadata, its value alone (cinder's show)."""
    check_project(req)
    values = type_encryption.volume_metadata(req.context, req.params["volume_id"])
    key = req.params["key"]
    if key not in values:
        raise exceptions.NotFound(f"Volume encryption metadata has no {key!r}.")
    return respond(req, values[key])
