"""Request schemas of POST/PUT /servers per microversion (nova's schemas/servers.py)."""
from __future__ import annotations

import copy

from pocketstack.compute.rest.common import (BOOLEAN, DESCRIPTION, METADATA, NAME,
                                             POSITIVE_INT, TAG)

_UUID = {"type": "string", "format": "uuid"}
_IP = {"type": "string", "oneOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
_BDM = {"type": "object", "properties": {
    "virtual_name": {"type": "string", "maxLength": 255},
    "volume_id": _UUID, "snapshot_id": _UUID,
    "volume_size": {"type": ["integer", "string"], "pattern": r"^[0-9]+$", "minimum": 1,
                    "maximum": 2147483647},
    "device_name": {"type": "string", "minLength": 1, "maxLength": 255,
                    "pattern": r"^[a-zA-Z0-9._/-]*$"},
    "delete_on_termination": BOOLEAN, "no_device": {},
    "connection_info": {"type": "string", "maxLength": 16777215},
    "source_type": {"type": "string", "enum": ["volume", "image", "snapshot", "blank"]},
    "uuid": {"type": "string", "minLength": 1, "maxLength": 255,
             "pattern": r"^[a-zA-Z0-9._-]*$"},
    "image_id": _UUID,
    "destination_type": {"type": "string", "enum": ["local", "volume"]},
    "guest_format": {"type": "string", "maxLength": 255},
    "device_type": {"type": "string", "maxLength": 255},
    "disk_bus": {"type": "string", "maxLength": 255},
    "boot_index": {"type": ["integer", "string", "null"], "pattern": r"^-?[0-9]+$"},
}, "additionalProperties": False}
_HINTS = {"type": "object", "properties": {
    "group": {"oneOf": [{"type": "array", "items": _UUID}, _UUID]},
    "different_host": {"oneOf": [_UUID, {"type": "array", "items": _UUID}]},
    "same_host": {"type": ["string", "array"], "items": _UUID},
    "query": {"type": ["string", "object"]},
    "target_cell": NAME,
    "different_cell": {"type": ["string", "array"], "items": {"type": "string"}},
    "build_near_host_ip": _IP,
    "cidr": {"type": "string", "pattern": r"^/[0-9a-f.:]+$"},
}, "additionalProperties": True}
_PERSONALITY = {"type": "array", "items": {"type": "object", "properties": {
    "path": {"type": "string"}, "contents": {"type": "string", "format": "base64"}},
    "additionalProperties": False}}

_NETWORK_ITEM = {"type": "object", "properties": {
    "fixed_ip": _IP, "port": {"type": ["string", "null"], "format": "uuid"},
    "uuid": {"type": "string"}}, "additionalProperties": False}

CREATE_21 = {
    "type": "object",
    "properties": {
        "server": {
            "type": "object",
            "properties": {
                "name": NAME,
                "imageRef": {"type": "string", "maxLength": 255},
                "flavorRef": {"type": ["string", "integer"], "minLength": 1},
                "adminPass": {"type": "string"},
                "metadata": METADATA,
                "networks": {"type": "array", "items": _NETWORK_ITEM},
                "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
                "accessIPv4": {"type": "string", "format": "ipv4"},
                "accessIPv6": {"type": "string", "format": "ipv6"},
                "personality": _PERSONALITY,
                "availability_zone": NAME,
                "block_device_mapping": {"type": "array", "items": _BDM},
                "block_device_mapping_v2": {"type": "array", "items": _BDM},
                "config_drive": BOOLEAN,
                "key_name": NAME,
                "min_count": POSITIVE_INT,
                "max_count": POSITIVE_INT,
                "return_reservation_id": BOOLEAN,
                "security_groups": {"type": "array", "items": {
                    "type": "object", "properties": {"name": NAME},
                    "additionalProperties": False}},
                "user_data": {"type": "string", "format": "base64", "maxLength": 65535},
            },
            "required": ["name", "flavorRef"],
            "additionalProperties": False,
        },
        "os:scheduler_hints": _HINTS,
        "OS-SCH-HNT:scheduler_hints": _HINTS,
    },
    "required": ["server"],
    "additionalProperties": False,
}


def _server(schema):
    return schema["properties"]["server"]["properties"]


CREATE_219 = copy.deepcopy(CREATE_21)
_server(CREATE_219)["description"] = DESCRIPTION
CREATE_232 = copy.deepcopy(CREATE_219)
_server(CREATE_232)["networks"]["items"]["properties"]["tag"] = TAG
_server(CREATE_232)["block_device_mapping_v2"]["items"]["properties"]["tag"] = TAG
CREATE_233 = copy.deepcopy(CREATE_219)
_server(CREATE_233)["networks"]["items"]["properties"]["tag"] = TAG
CREATE_237 = copy.deepcopy(CREATE_233)
CREATE_237["properties"]["server"]["required"].append("networks")
_server(CREATE_237)["networks"] = {"oneOf": [
    {"type": "array", "items": {"type": "object", "properties": {
        "fixed_ip": _IP, "port": {"type": ["string", "null"], "format": "uuid"},
        "uuid": {"type": "string", "format": "uuid"}}, "additionalProperties": False}},
    {"type": "string", "enum": ["none", "auto"]}]}
CREATE_242 = copy.deepcopy(CREATE_237)
_server(CREATE_242)["networks"]["oneOf"][0]["items"]["properties"]["tag"] = TAG
_server(CREATE_242)["block_device_mapping_v2"]["items"]["properties"]["tag"] = TAG
CREATE_252 = copy.deepcopy(CREATE_242)
_server(CREATE_252)["tags"] = {"type": "array", "items": TAG, "maxItems": 50}
CREATE_257 = copy.deepcopy(CREATE_252)
del _server(CREATE_257)["personality"]
_server(CREATE_257)["user_data"] = {"type": "string", "format": "base64", "maxLength": 65535}
CREATE_263 = copy.deepcopy(CREATE_257)
_server(CREATE_263)["trusted_image_certificates"] = {
    "type": ["array", "null"], "minItems": 1, "maxItems": 50, "uniqueItems": True,
    "items": {"type": "string", "minLength": 1}}
CREATE_267 = copy.deepcopy(CREATE_263)
_server(CREATE_267)["block_device_mapping_v2"]["items"]["properties"]["volume_type"] = {
    "type": ["string", "null"], "minLength": 0, "maxLength": 255}
CREATE_274 = copy.deepcopy(CREATE_267)
_server(CREATE_274)["host"] = {"type": "string", "minLength": 1, "maxLength": 255}
_server(CREATE_274)["hypervisor_hostname"] = {"type": "string", "minLength": 1,
                                              "maxLength": 255}

# nova's parameter_types.hostname (2.90)
HOSTNAME = {"type": "string", "pattern": "^[a-zA-Z0-9]+[a-zA-Z0-9-]*[a-zA-Z0-9]+$",
            "minLength": 2, "maxLength": 63}
CREATE_290 = copy.deepcopy(CREATE_274)
_server(CREATE_290)["hostname"] = HOSTNAME
# nova's parameter_types.fqdn (2.94): a fully qualified name may be the hostname
FQDN = {"type": "string", "pattern": "^[a-zA-Z0-9-._]*$", "minLength": 1, "maxLength": 255}
CREATE_294 = copy.deepcopy(CREATE_290)
_server(CREATE_294)["hostname"] = FQDN

_CREATE_BY_VERSION = [((2, 94), CREATE_294), ((2, 90), CREATE_290),
                      ((2, 74), CREATE_274), ((2, 67), CREATE_267), ((2, 63), CREATE_263),
                      ((2, 57), CREATE_257), ((2, 52), CREATE_252), ((2, 42), CREATE_242),
                      ((2, 37), CREATE_237), ((2, 33), CREATE_233), ((2, 32), CREATE_232),
                      ((2, 19), CREATE_219), ((2, 1), CREATE_21)]


def create_schema(version) -> dict:
    return next(schema for v, schema in _CREATE_BY_VERSION if version >= v)


UPDATE_21 = {"type": "object", "properties": {"server": {
    "type": "object", "properties": {
        "name": NAME, "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
        "accessIPv4": {"type": "string", "format": "ipv4"},
        "accessIPv6": {"type": "string", "format": "ipv6"}},
    "additionalProperties": False}}, "required": ["server"], "additionalProperties": False}
UPDATE_219 = copy.deepcopy(UPDATE_21)
UPDATE_219["properties"]["server"]["properties"]["description"] = DESCRIPTION


UPDATE_290 = copy.deepcopy(UPDATE_219)
UPDATE_290["properties"]["server"]["properties"]["hostname"] = HOSTNAME
UPDATE_294 = copy.deepcopy(UPDATE_219)
UPDATE_294["properties"]["server"]["properties"]["hostname"] = FQDN


def update_schema(version) -> dict:
    if version >= (2, 94):
        return UPDATE_294
    if version >= (2, 90):
        return UPDATE_290
    return UPDATE_219 if version >= (2, 19) else UPDATE_21


def hostname_schema(version) -> dict | None:
    """The ``hostname`` a create, update or rebuild may set (None before 2.90)."""
    if version >= (2, 94):
        return FQDN
    return HOSTNAME if version >= (2, 90) else None
