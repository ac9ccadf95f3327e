"""What every placement handler shares: version, policy, body and query parsing."""
from __future__ import annotations

import uuid as uuidlib

from pocketstack.common import exceptions, policy
from pocketstack.placement import errors, microversion, schemas
from pocketstack.wsgi import routing

version = microversion.of
require = microversion.require


def authorize(req, action: str, target: dict | None = None) -> None:
    ctx = req.context
    policy.authorize(ctx, f"placement:{action}", target or {"project_id": ctx.project_id,
                                                            "user_id": ctx.user_id})


def base(req) -> str:
    """Links are relative to the host, under the mount point (/placement), as upstream."""
    return req.raw.scope.get("root_path", "")


def location(req, path: str) -> str:
    """An absolute Location, as webob makes upstream's (osc-placement GETs it as is)."""
    return req.service_url + path


def body(req, schema: dict) -> dict:
    ctype = (req.headers.get("content-type") or "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise exceptions.UnsupportedMediaType(
            f"The media type {ctype or None} is not supported, use application/json")
    try:
        data = req.json()
    except exceptions.BadRequest as error:
        raise errors.bad_request(f"Malformed JSON: {error.message}") from None
    return schemas.validate(data, schema)


def check_uuid(value: str, what: str = "uuid") -> str:
    try:
        return str(uuidlib.UUID(value))
    except ValueError:
        raise errors.bad_request(f"Malformed {what}: {value}") from None


def provider_uuid(req) -> str:
    """The path's provider uuid; a malformed one cannot exist (404, as upstream)."""
    value = req.params["uuid"]
    try:
        return str(uuidlib.UUID(value))
    except ValueError:
        raise errors.not_found(f"No resource provider with uuid {value} found",
                               errors.RESOURCE_PROVIDER_NOT_FOUND) from None


def query(req, allowed: set[str]) -> dict[str, list[str]]:
    """Query parameters as lists; an unknown one is a 400, as upstream's schemas."""
    out: dict[str, list[str]] = {}
    for key, value in req.query.multi_items():
        out.setdefault(key, []).append(value)
    extra = sorted(set(out) - allowed)
    if extra:
        raise errors.bad_request(f"Invalid query string parameters: Additional properties "
                                 f"are not allowed ({', '.join(map(repr, extra))} "
                                 f"{'was' if len(extra) == 1 else 'were'} unexpected)")
    return out


def single(params: dict[str, list[str]], key: str) -> str | None:
    values = params.get(key)
    if not values:
        return None
    if len(values) > 1:
        raise errors.bad_request(f"Query parameter '{key}' is specified multiple times.",
                                 errors.ILLEGAL_DUPLICATE_QUERYPARAM)
    return values[0]


def ok(body_: dict, status: int = 200, headers: dict | None = None):
    return routing.json_response(body_, status, headers)


empty = routing.empty
