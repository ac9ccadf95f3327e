"""Helpers every network handler uses: query parameters as lists, collection bodies with
``<collection>_links``, and bodies that must be JSON objects."""
from __future__ import annotations

from pocketstack.network import listing
from pocketstack.network.exceptions import HTTPBadRequest
from pocketstack.wsgi import routing


def params(req) -> dict[str, list[str]]:
    query = req.query
    return {key: query.getlist(key) for key in query.keys()}


def body(req) -> dict:
    value = req.json()
    if not isinstance(value, dict):
        raise HTTPBadRequest("The request body must be a JSON object.")
    return value


def collection(req, coll: listing.Collection, items: list[dict], page: listing.Page,
               key: str | None = None):
    key = key or coll.name.replace("-", "_")
    out = {key: items}
    if page.limit:
        out[f"{key}_links"] = listing.links(page, coll, req.service_url, params(req))
    return routing.json_response(out)


def created(body: dict):
    return routing.json_response(body, status=201)


def ok(body: dict):
    return routing.json_response(body)


def deleted():
    return routing.empty(204)


def select(item: dict, req) -> dict:
    """``fields=`` on a single resource."""
    return listing.select_fields(item, params(req))
