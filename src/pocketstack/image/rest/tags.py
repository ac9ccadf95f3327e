"""/v2/images/{id}/tags/{tag}."""
from __future__ import annotations

from pocketstack.image import api
from pocketstack.wsgi import routing


def add_tag(req):
    api.add_tag(req.context, req.params["image_id"], req.params["tag"])
    return routing.empty()


def delete_tag(req):
    api.delete_tag(req.context, req.params["image_id"], req.params["tag"])
    return routing.empty()
