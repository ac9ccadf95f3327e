"""/v2/images/{id}/actions/{deactivate,reactivate}."""
from __future__ import annotations

from pocketstack.image import api
from pocketstack.wsgi import routing


def deactivate(req):
    api.deactivate_image(req.context, req.params["image_id"])
    return routing.empty()


def reactivate(req):
    api.reactivate_image(req.context, req.params["image_id"])
    return routing.empty()
