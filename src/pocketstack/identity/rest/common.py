"""What every identity handler shares: policy in Keystone's words, body validation,
query filters and the {"<things>": [...], "links": {...}} collection shape."""
from __future__ import annotations

from pocketstack.common import exceptions, policy
from pocketstack.identity import schemas
from pocketstack.wsgi import routing

FALSE_VALUES = ("0", "false", "no", "off")


def authorize(req, action: str, target: dict | None = None) -> None:
    """Keystone's 403: "You are not authorized to perform the requested action: <rule>."."""
    ctx = req.context
    if ctx.is_service:
        return
    if not policy.enforcer().enforce(action, _flatten(target or {}), ctx.policy_creds(),
                                     do_raise=False):
        raise exceptions.Forbidden(
            f"You are not authorized to perform the requested action: {action}.")


def allowed(req, action: str, target: dict | None = None) -> bool:
    try:
        authorize(req, action, target)
    except exceptions.Forbidden:
        return False
    return True


def _flatten(target: dict, prefix: str = "") -> dict:
    """{"target": {"project": {"id": x}}} -> {"target.project.id": x}, as Keystone does.

    None values are left out: a check against a missing key fails, whereas
    ``domain_id:%(target.domain_id)s`` with None would match every token that has no
    domain scope (oslo.policy compares the strings "None" and "None").
    """
    flat = {}
    for key, value in target.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        elif value is not None:
            flat[name] = value
    return flat


def json_body(req):
    """The parsed body, or Keystone's 400 for a missing or malformed one."""
    try:
        return req.json()
    except exceptions.BadRequest:
        raise exceptions.ValidationError(
            "Expecting to find valid JSON in request body. The server could not comply with "
            "the request since it is either malformed or otherwise incorrect. The client is "
            "assumed to be in error.") from None


def body(req, schema: dict) -> dict:
    return schemas.validate(schema, json_body(req))


def query_bool(req, name: str) -> bool | None:
    """Keystone's query booleans: present with any value but 0/false means true."""
    if name not in req.query:
        return None
    return req.query[name].strip().lower() not in FALSE_VALUES


def flag(req, name: str) -> bool:
    """Key-only flags such as ?effective or ?include_names: true unless '0'/'false'."""
    value = query_bool(req, name)
    return bool(value)


def name_filter(req) -> dict:
    """?name=x plus Keystone's comparators name__contains, __icontains, __startswith, …"""
    out = {}
    for key, value in req.query.items():
        if key == "name" or key.startswith("name__"):
            out[key] = value
    return out


def self_url(req, path: str) -> str:
    return f"{req.service_url}{path}"


def request_url(req, query: bool = True) -> str:
    """This request's URL as the client sent it (what an OAuth1 client signs)."""
    url = f"{req.service_url}{req.raw.url.path[len(req.raw.scope.get('root_path', '')):]}"
    return url + (f"?{req.raw.url.query}" if query and req.raw.url.query else "")


def collection(req, key: str, items: list, view) -> routing.Response:
    url = f"{req.service_url}{req.raw.url.path[len(req.raw.scope.get('root_path', '')):]}"
    if req.raw.url.query:
        url += "?" + req.raw.url.query
    return routing.json_response({key: [view(req, item) for item in items],
                                  "links": {"self": url, "previous": None, "next": None}})


def member(req, key: str, item, view, status: int = 200) -> routing.Response:
    return routing.json_response({key: view(req, item)}, status=status)
