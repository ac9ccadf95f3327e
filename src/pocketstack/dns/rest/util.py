"""What every designate handler shares: the all-projects and sudo headers, pagination
(limit, marker, next link) and self links."""
from __future__ import annotations

from urllib.parse import urlencode

from pocketstack.common import policy
from pocketstack.dns import errors
from pocketstack.wsgi import routing

DEFAULT_LIMIT, MAX_LIMIT = 20, 1000  # designate's default_limit_v2 and max_limit_v2
TRUE = ("1", "true", "yes", "y", "on")


def all_projects(req) -> bool:
    """X-Auth-All-Projects (or ?all_projects=), which only admins may use."""
    value = req.headers.get("x-auth-all-projects") or req.query.get("all_projects") or ""
    wanted = value.strip().lower() in TRUE
    if wanted:
        policy.authorize(req.context, "all_tenants", {"project_id": req.context.project_id})
    return wanted


def sudo(req):
    """X-Auth-Sudo-Project-Id: an admin acting as another project."""
    project = req.headers.get("x-auth-sudo-project-id")
    if project:
        policy.authorize(req.context, "all_tenants", {"project_id": req.context.project_id})
        ctx = type(req.context).from_dict(req.context.to_dict())
        ctx.project_id = project
        return ctx
    return req.context


def link(req, path: str) -> dict:
    return {"self": f"{req.service_url}{path}"}


def page(req, key: str, items: list, view, path: str) -> routing.Response:
    """``items`` (in list order, with ids) cut by ``limit``/``marker``, as designate lists."""
    limit = req.query.get("limit")
    if limit == "max":
        limit = MAX_LIMIT
    try:
        limit = DEFAULT_LIMIT if limit in (None, "") else int(limit)
    except ValueError:
        raise errors.bad_request("limit should be an integer", "invalid_limit") from None
    if limit <= 0:
        raise errors.bad_request("limit must be positive", "invalid_limit")
    limit = min(limit, MAX_LIMIT)
    total = len(items)  # every match, as designate's total_count
    marker = req.query.get("marker")
    if marker:
        ids = [_id(item) for item in items]
        if marker not in ids:
            raise errors.bad_request("Marker %s could not be found" % marker, "invalid_marker")
        items = items[ids.index(marker) + 1:]
    shown = items[:limit]
    base = f"{req.service_url}{path}"
    query = {k: v for k, v in req.query.items() if k != "marker"}
    links = {"self": base + (f"?{urlencode(query)}" if query else "")}
    if len(items) > limit and shown:
        last = _id(shown[-1])
        links["next"] = base + "?" + urlencode({**query, "limit": limit, "marker": last})
    return routing.json_response({key: [view(item) for item in shown], "links": links,
                                  "metadata": {"total_count": total}})


def _id(item) -> str:
    """A listed row's id (rows come alone or first in a tuple)."""
    found = getattr(item, "id", None)
    return found if isinstance(found, str) else item[0].id


def body(req) -> dict:
    data = req.json()
    if not isinstance(data, dict):
        raise errors.bad_request("Provided object does not match schema")
    return data
