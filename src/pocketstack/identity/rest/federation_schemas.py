"""Request schemas of OS-FEDERATION, after keystone/federation/schema.py and the attribute
mapping schemas of keystone/federation/utils.py (versions 1.0, 2.0 and 3.0)."""
from __future__ import annotations

import copy

from pocketstack.identity import schemas

ID = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": r"^[A-Za-z0-9_.~-]+$"}
_remote_id = {"type": "string", "maxLength": 255}
_idp = {"enabled": schemas.boolean, "description": schemas.nullable(schemas.description),
        "authorization_ttl": {"type": ["integer", "null"], "minimum": 0},
        "remote_ids": {"type": ["array", "null"], "items": _remote_id, "uniqueItems": True}}
IDP_CREATE = schemas.envelope("identity_provider", schemas._entity(
    dict(_idp, domain_id=schemas.nullable(schemas.id_string)), extra=False))
IDP_UPDATE = schemas.envelope("identity_provider", schemas._entity(
    _idp, extra=False, update=True))

_remote_attr = {"type": "string", "maxLength": 64}
PROTOCOL_CREATE = schemas.envelope("protocol", schemas._entity(
    {"mapping_id": ID, "remote_id_attribute": schemas.nullable(_remote_attr)},
    ["mapping_id"], extra=False))
PROTOCOL_UPDATE = schemas.envelope("protocol", schemas._entity(
    {"mapping_id": ID, "remote_id_attribute": _remote_attr}, ["mapping_id"], extra=False))

_sp = {"auth_url": schemas.url, "sp_url": schemas.url,
       "description": schemas.nullable(schemas.description), "enabled": schemas.boolean,
       "relay_state_prefix": {"type": "string", "minLength": 1}}
SP_CREATE = schemas.envelope("service_provider", schemas._entity(
    _sp, ["auth_url", "sp_url"], extra=False))
SP_UPDATE = schemas.envelope("service_provider", schemas._entity(_sp, extra=False,
                                                                 update=True))

# Keystone's mapping schema leaves other keys alone (openstacksdk sends the id too).
MAPPING = schemas.envelope("mapping", schemas._entity(
    {"rules": {"type": "array"}, "schema_version": {"type": ["string", "null"]}},
    ["rules"]))

# --- attribute mapping rules -------------------------------------------------------------

_domain = {"type": "object", "additionalProperties": False,
           "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
_match = {kind: {"type": "object", "additionalProperties": False, "required": ["type", kind],
                 "properties": {"type": {"type": "string"}, kind: {"type": "array"},
                                "regex": {"type": "boolean"}}}
          for kind in ("any_one_of", "not_any_of", "blacklist", "whitelist")}
_projects = {"type": "array", "items": {
    "type": "object", "required": ["name", "roles"], "additionalProperties": False,
    "properties": {"name": {"type": "string"}, "roles": {
        "type": "array", "items": {"type": "object", "required": ["name"],
                                   "additionalProperties": False,
                                   "properties": {"name": {"type": "string"}}}}}}}
_local = {"type": "object", "additionalProperties": False, "properties": {
    "user": {"type": "object", "additionalProperties": False, "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "email": {"type": "string"},
        "domain": _domain, "type": {"enum": ["ephemeral", "local"]}}},
    "projects": _projects,
    "group": {"type": "object", "oneOf": [
        {"type": "object", "required": ["id"], "additionalProperties": False,
         "properties": {"id": {"type": "string"}}},
        {"type": "object", "required": ["name", "domain"], "additionalProperties": False,
         "properties": {"name": {"type": "string"}, "domain": _domain}}]},
    "groups": {"type": "string"}, "group_ids": {"type": "string"}, "domain": _domain}}
_remote = {"type": "object", "oneOf": [
    {"type": "object", "required": ["type"], "additionalProperties": False,
     "properties": {"type": {"type": "string"}}}, *_match.values()]}

RULES_1_0 = {"type": "array", "minItems": 1, "items": {
    "type": "object", "required": ["local", "remote"], "additionalProperties": False,
    "properties": {"local": {"type": "array", "items": _local},
                   "remote": {"type": "array", "minItems": 1, "items": _remote}}}}
RULES_2_0 = copy.deepcopy(RULES_1_0)  # 2.0: a project may name its domain
RULES_2_0["items"]["properties"]["local"]["items"]["properties"]["projects"]["items"][
    "properties"]["domain"] = _domain
RULES_3_0 = copy.deepcopy(RULES_2_0)  # 3.0: projects_json
RULES_3_0["items"]["properties"]["local"]["items"]["properties"]["projects_json"] = {
    "type": "string"}
RULES = {"1.0": RULES_1_0, "2.0": RULES_2_0, "3.0": RULES_3_0}
