"""Helpers every network handler uses: query parameters as lists, collection bodies with
``<collection>_links``, and bodies that must be JSON objects."""
from __future__ import annotations

import re

from pocketstack.network import listing
from pocketstack.network.exceptions.common import BadRequest, HTTPBadRequest
from pocketstack.wsgi import routing


def params(req) -> dict[str, list[str]]:
    query = req.query
    return {key: query.getlist(key) for key in query.keys()}


def body(req) -> dict:
    value = req.json()
    if not isinstance(value, dict):
        raise HTTPBadRequest("The request body must be a JSON object.")
    return value


# An entity tag as webob reads If-Match (neutron's request.if_match): quoted, maybe weak.
_ETAG = re.compile(r'(?:^|\s)(W/)?"((?:\\"|.)*?)"')


def if_revision(req) -> int | None:
    """N of ``If-Match: revision_number=N`` (neutron's revision-if-match), None without
    one. Only strong tags count; a value with no quoted tag is one tag, as in webob.
    Two revision tags, or one whose N is not an integer, are neutron's 400."""
    header = req.headers.get("if-match")
    if not header or header.strip() == "*":
        return None
    matches = _ETAG.findall(header)
    tags = [tag for weak, tag in matches if not weak] if matches else [header.strip()]
    revision = None
    for tag in tags:
        if not tag.startswith("revision_number="):
            continue
        if revision is not None:
            raise BadRequest("if-match", "Multiple revision_number etags are not supported")
        try:
            revision = int(tag[len("revision_number="):])
        except ValueError:
            raise BadRequest("if-match", "Revision number etag must be in the format of "
                                         "revision_number=<int>") from None
    return revision


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
