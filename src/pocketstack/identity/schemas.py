"""Request body schemas, after Keystone's (keystone/*/schema.py), and the validator.

Keystone lets users, groups, projects, roles, services, endpoints and regions carry extra
attributes (kept in ``extra`` and returned as they were sent), so entity objects allow
additional properties while the envelope ({"project": {...}}) does not.
"""
from __future__ import annotations

import datetime as dt
import functools

from pocketstack.common import exceptions
from pocketstack.common.timeutils import parse_isotime


def nullable(schema: dict) -> dict:
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    return dict(schema, type=types + ["null"])


boolean = {"type": "boolean"}
description = {"type": "string"}
id_string = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": r"^[a-zA-Z0-9-]+$"}
name_64 = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": r"[\S]+"}
name_255 = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"[\S]+"}
tag = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[^,/]*$"}
tags = {"type": "array", "items": tag, "maxItems": 80, "uniqueItems": True}
url = {"type": "string", "minLength": 1, "maxLength": 225,
       "pattern": r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^\s]+$"}
options = {"type": "object"}


def _entity(properties: dict, required=(), *, extra=True, update=False) -> dict:
    entity = {"type": "object", "properties": properties, "additionalProperties": extra}
    if required:
        entity["required"] = list(required)
    if update:
        entity["minProperties"] = 1
    return entity


def envelope(key: str, entity: dict) -> dict:
    return {"type": "object", "properties": {key: entity}, "required": [key],
            "additionalProperties": False}


# --- domains and projects --------------------------------------------------------------

_domain = {"name": name_64, "description": nullable(description), "enabled": boolean,
           "tags": tags, "options": options}
domain_create = envelope("domain", _entity(
    dict(_domain, explicit_domain_id=id_string), ["name"], extra=False))
domain_update = envelope("domain", _entity(_domain, extra=False, update=True))

_project = {"name": name_64, "description": nullable(description), "enabled": boolean,
            "tags": tags, "options": options, "is_domain": boolean,
            "domain_id": nullable(id_string), "parent_id": nullable(id_string)}
project_create = envelope("project", _entity(_project, ["name"]))
project_update = envelope("project", _entity(_project, update=True))
project_tags = {"type": "object", "properties": {"tags": tags}, "required": ["tags"],
                "additionalProperties": False}

# --- users and groups -----------------------------------------------------------------

_user = {"name": name_255, "domain_id": id_string, "enabled": boolean,
         "default_project_id": nullable(id_string), "description": nullable(description),
         "password": {"type": ["string", "null"], "maxLength": 4096},
         "options": options, "federated": {"type": "array"}}
user_create = envelope("user", _entity(_user, ["name"]))
user_update = envelope("user", _entity(_user, update=True))
password_change = envelope("user", _entity(
    {"original_password": {"type": "string"},
     "password": {"type": "string", "minLength": 1, "maxLength": 4096}},
    ["original_password", "password"], extra=False))

_group = {"name": name_255, "domain_id": id_string, "description": nullable(description)}
group_create = envelope("group", _entity(_group, ["name"]))
group_update = envelope("group", _entity(_group, update=True))

# --- roles ----------------------------------------------------------------------------

_role = {"name": name_255, "domain_id": nullable(id_string),
         "description": nullable(description), "options": options}
role_create = envelope("role", _entity(_role, ["name"]))
role_update = envelope("role", _entity(_role, update=True))

# --- catalog --------------------------------------------------------------------------

_service = {"type": {"type": "string", "minLength": 1, "maxLength": 255},
            "name": {"type": "string", "maxLength": 255},
            "description": nullable(description), "enabled": boolean}
service_create = envelope("service", _entity(_service, ["type"]))
service_update = envelope("service", _entity(_service, update=True))

_endpoint = {"service_id": id_string, "url": url,
             "interface": {"type": "string", "enum": ["public", "internal", "admin"]},
             "region_id": nullable({"type": "string", "minLength": 1, "maxLength": 255}),
             "region": nullable({"type": "string", "minLength": 1, "maxLength": 255}),
             "enabled": boolean}
endpoint_create = envelope("endpoint", _entity(_endpoint, ["service_id", "interface", "url"]))
endpoint_update = envelope("endpoint", _entity(_endpoint, update=True))

_region = {"id": {"type": "string", "minLength": 1, "maxLength": 255,
                  "pattern": r"^[^/?#\s]+$"},
           "description": nullable(description),
           "parent_region_id": nullable({"type": "string", "minLength": 1, "maxLength": 255})}
region_create = envelope("region", _entity(_region))
region_update = envelope("region", _entity(
    {k: v for k, v in _region.items() if k != "id"}, update=True))

# --- application credentials ------------------------------------------------------------

_role_ref = {"type": "object",
             "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 64},
                            "name": {"type": "string", "minLength": 1, "maxLength": 255},
                            "domain_id": nullable(id_string)},
             "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
             "additionalProperties": False}
app_cred_create = envelope("application_credential", _entity(
    {"name": name_255, "description": nullable(description),
     "secret": nullable({"type": "string", "minLength": 1, "maxLength": 4096}),
     "expires_at": nullable({"type": "string", "format": "date-time"}),
     "roles": {"type": "array", "items": _role_ref},
     "unrestricted": boolean,
     "access_rules": {"type": "array", "items": {
         "type": "object", "additionalProperties": False,
         "properties": {"id": id_string,
                        "path": {"type": "string", "maxLength": 225, "pattern": r"^/"},
                        "service": id_string,
                        "method": {"enum": ["DELETE", "GET", "HEAD", "PATCH", "POST",
                                            "PUT"]}}}}},
    ["name"], extra=False))


# --- validation -------------------------------------------------------------------------

@functools.cache
def _formats():
    """The format checker, made on the first validation (jsonschema costs a start a
    tenth of a second)."""
    import jsonschema

    checker = jsonschema.FormatChecker()
    checker.checks("date-time")(_is_datetime)
    return checker


def _is_datetime(value) -> bool:
    if not isinstance(value, str):
        return True
    try:
        parse_isotime(value)
    except ValueError:
        return False
    return True


_SECRET_WORDS = ("password", "secret")
_validators: dict = {}  # id(schema) -> jsonschema.Draft202012Validator


def validate(schema: dict, body) -> dict:
    """Check ``body`` against ``schema``; 400 in Keystone's words, never echoing secrets."""
    import jsonschema

    validator = _validators.get(id(schema))
    if validator is None:
        validator = jsonschema.Draft202012Validator(schema, format_checker=_formats())
        _validators[id(schema)] = validator
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is None:
        return body
    path = "/".join(str(p) for p in error.absolute_path)
    if any(word in path for word in _SECRET_WORDS):
        detail = f"Invalid input for field '{path}'."
    elif path:
        detail = f"Invalid input for field '{path}': {_short(error)}"
    else:
        detail = _short(error)
    raise exceptions.ValidationError(detail)


def _short(error) -> str:
    message = error.message
    if len(message) > 300:  # a huge instance echoed back helps nobody
        message = message[:300] + "..."
    return message


def parse_expiry(text: str | None) -> dt.datetime | None:
    return parse_isotime(text) if text else None
