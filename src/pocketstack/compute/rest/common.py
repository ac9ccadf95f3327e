"""Helpers every compute handler uses: the request's microversion, responses that echo
it, jsonschema validation with nova's formats and messages, links and pagination."""
from __future__ import annotations

import base64
import binascii
import functools
import re
import uuid as uuidlib

from pocketstack.common import exceptions, numbers, policy
from pocketstack.compute.rest import microversion
from pocketstack.wsgi import routing

_VERSION_KEY = "compute.microversion"


def version(req) -> tuple[int, int]:
    v = req.raw.scope.get(_VERSION_KEY)
    if v is None:
        v = microversion.from_headers(req.headers)
        req.raw.scope[_VERSION_KEY] = v
    return v


def at_least(req, text: str) -> bool:
    major, minor = text.split(".")
    return version(req) >= (int(major), int(minor))


def respond(req, body, status: int = 200, headers: dict | None = None):
    h = microversion.headers(version(req))
    if headers:
        h.update(headers)
    if body is None:
        return routing.empty(status, headers=h)
    return routing.json_response(body, status, headers=h)


def authorize(req, action: str, target: dict | None = None) -> None:
    ctx = req.context
    # Compute resources belong to a project. A domain-scoped token has none: oslo.policy
    # would match its project_id None against a target's None, and the row would then fail
    # its NOT NULL constraint. Nova scopes these APIs to projects: 403.
    if (ctx.project_id is None and not ctx.is_service and not ctx.system_scope
            and (target is None or ("project_id" in target and target["project_id"] is None))):
        raise exceptions.Forbidden(
            f"Policy doesn't allow {action} to be performed: it needs a project-scoped "
            "token, and this token is scoped to a domain.")
    policy.authorize(ctx, action, target)


# --- validation -------------------------------------------------------------------------

@functools.cache
def _checker():
    """nova's format checker, made on the first validation (jsonschema costs a start a
    tenth of a second)."""
    from jsonschema import FormatChecker

    checker = FormatChecker()
    for name, check in (("uuid", _is_uuid), ("base64", _is_base64), ("ipv4", _is_ipv4),
                        ("ipv6", _is_ipv6)):
        checker.checks(name)(check)
    return checker


def _is_uuid(value) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return str(uuidlib.UUID(value)) == value.lower() or len(value.replace("-", "")) == 32
    except ValueError:
        return False


def _is_base64(value) -> bool:
    if not isinstance(value, str):
        return True
    try:
        base64.b64decode(value, validate=True)
        return True
    except (binascii.Error, ValueError):
        return False


def _is_ipv4(value) -> bool:
    import ipaddress

    try:
        ipaddress.IPv4Address(value)
        return True
    except ValueError:
        return False


def _is_ipv6(value) -> bool:
    import ipaddress

    try:
        ipaddress.IPv6Address(value)
        return True
    except ValueError:
        return False


def validate(schema: dict, body) -> None:
    """400 with nova's "Invalid input for field/attribute …" message."""
    import jsonschema

    validator = jsonschema.Draft4Validator(schema, format_checker=_checker())
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is None:
        return
    path = "/".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        raise exceptions.ValidationError(
            f"Additional properties are not allowed ({_extra(error)} was unexpected)")
    if error.validator == "required":
        raise exceptions.ValidationError(f"{error.message}")
    field = path.rsplit("/", 1)[-1] if path else ""
    raise exceptions.ValidationError(
        f"Invalid input for field/attribute {field}. Value: {error.instance!r}. "
        f"{error.message}")


def _extra(error) -> str:
    m = re.search(r"\((.*) (?:was|were) unexpected\)", error.message)
    return m.group(1) if m else error.message


def body(req, schema: dict | None = None) -> dict:
    data = req.json()
    if schema is not None:
        validate(schema, data)
    elif not isinstance(data, dict):
        raise exceptions.ValidationError("The request body must be a JSON object.")
    return data


# --- common parameter types (nova's parameter_types) ----------------------------------

_PRINTABLE = r"^(?![\s])[^\x00-\x1f\x7f]*(?<![\s])$"
NAME = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": _PRINTABLE}
DESCRIPTION = {"type": ["string", "null"], "minLength": 0, "maxLength": 255,
               "pattern": r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"}
BOOLEAN = {"type": ["boolean", "string"],
           "enum": [True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes",
                    False, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No",
                    "no"]}
METADATA = {"type": "object",
            "patternProperties": {"^[a-zA-Z0-9-_:. ]{1,255}$": {"type": "string",
                                                                "maxLength": 255}},
            "additionalProperties": False}
TAG = {"type": "string", "minLength": 1, "maxLength": 60, "pattern": r"^[^,/]*$"}
POSITIVE_INT = {"type": ["integer", "string"], "pattern": r"^[0-9]{1,19}$", "minimum": 1,
                "minLength": 1}
NON_NEGATIVE_INT = {"type": ["integer", "string"], "pattern": r"^[0-9]{1,19}$", "minimum": 0,
                    "minLength": 1}


def bool_from_string(value, strict: bool = False, default: bool = False) -> bool:
    """oslo's strutils.bool_from_string, as nova reads booleans in a query: 't', 'true',
    'on', 'y', 'yes', '1' (any case) are true; with ``strict`` anything that is neither
    true nor false is a ValueError, else ``default``."""
    from oslo_utils import strutils

    return strutils.bool_from_string(value, strict=strict, default=default)


def to_bool(value) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("true", "1", "on", "yes")


# --- links and paging ----------------------------------------------------------------

def links(req, collection: str, ident: str) -> list[dict]:
    base = req.service_url
    return [{"rel": "self", "href": f"{base}/v2.1/{collection}/{ident}"},
            {"rel": "bookmark", "href": f"{base}/{collection}/{ident}"}]


def bookmark(req, collection: str, ident: str) -> list[dict]:
    return [{"rel": "bookmark", "href": f"{req.service_url}/{collection}/{ident}"}]


def changes_time(query, name: str):
    """The ``changes-since`` / ``changes-before`` time of a list query (None if absent);
    400 in nova's words for one that is not an ISO 8601 time."""
    from pocketstack.common.timeutils import parse_isotime

    text = query.get(name)
    if not text:
        return None
    try:
        return parse_isotime(text)
    except ValueError:
        raise exceptions.BadRequest(f"Invalid input for query parameters {name}. "
                                    f"Value: {text}.") from None


def changes_window(query, before_allowed: bool):
    """(changes-since, changes-before) of a list query; 400 when since is after before."""
    since = changes_time(query, "changes-since")
    before = changes_time(query, "changes-before") if before_allowed else None
    if since is not None and before is not None and before < since:
        raise exceptions.BadRequest("The value of changes-since must be less than or equal "
                                    "to changes-before.")
    return since, before


def limit_marker(req, max_limit: int = 1000) -> tuple[int, str | None]:
    raw_limit = req.query.get("limit")
    limit = max_limit
    if raw_limit is not None:
        limit = numbers.parse_limit(raw_limit, "limit", max_limit,
                                    message="limit param must be an integer")
    return limit, req.query.get("marker")


def next_link(req, collection: str, items: list[dict], limit: int, key: str = "id"):
    if not items or len(items) < limit:
        return None
    from urllib.parse import urlencode

    params = [(k, v) for k, v in req.query.multi_items() if k != "marker"]
    params.append(("marker", items[-1][key]))
    return [{"rel": "next",
             "href": f"{req.service_url}/v2.1/{collection}?{urlencode(params)}"}]
