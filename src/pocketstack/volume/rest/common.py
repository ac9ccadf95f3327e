"""What every v3 handler shares: the URL's project id check, the microversion, links."""
from __future__ import annotations

from urllib.parse import urlencode

from pocketstack.common import exceptions
from pocketstack.volume.rest.microversion import at_least, respond, version  # noqa: F401


def check_project(req) -> None:
    """A project id in the URL must be the token's (cinder: 'Malformed request url')."""
    url_project = req.params.get("project_id")
    if url_project is not None and url_project != req.context.project_id:
        raise exceptions.BadRequest("Malformed request url")


def body(req):
    check_project(req)
    return req.json()


def base(req) -> str:
    return req.service_url


def collection_links(req, collection: str, items: list, limit: int, total: int) -> list:
    """cinder's ``<collection>_links``: a next link when a full page was returned."""
    if not items or len(items) < limit:
        return []
    params = [(k, v) for k, v in req.query.multi_items() if k != "marker"]
    params.append(("marker", items[-1].id))
    project = req.context.project_id
    return [{"rel": "next",
             "href": f"{req.service_url}/v3/{project}/{collection}?{urlencode(params)}"}]
