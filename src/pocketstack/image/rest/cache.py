"""/v2/cache (Image API 2.14, admin): the API host's image cache (cache.py)."""
from __future__ import annotations

from pocketstack.image import cache
from pocketstack.wsgi import routing


def state(req):
    return routing.json_response(cache.state(req.context))


def queue(req):
    cache.queue(req.context, req.params["image_id"])
    return routing.empty(202)  # 2.16: always 202


def delete(req):
    cache.delete(req.context, req.params["image_id"])
    return routing.empty()


def clear(req):
    cache.clear(req.context, req.headers.get("x-image-cache-clear-target", ""))
    return routing.empty()


def clean(req):
    cache.clean(req.context)
    return routing.empty(200)


def prune(req):
    return routing.json_response(cache.prune(req.context))


def nodes(req):
    return routing.json_response(cache.nodes(req.context, req.params["image_id"],
                                             req.service_url))
