"""Request body schemas per microversion, after placement/schemas/ upstream."""
from __future__ import annotations

import copy
import functools

from pocketstack.placement import errors

MAX_INT = 2 ** 31 - 1
FLOAT_MAX = 3.40282e+38
UUID = "^[0-9a-fA-F-]{36}$"
RC = "^[A-Z0-9_]+$"
CUSTOM = "^CUSTOM_[A-Z0-9_]+$"
GROUP_1_33 = r"^[a-zA-Z0-9_-]{1,64}$"
_UUID_FORMAT = {"type": "string", "format": "uuid"}

@functools.cache
def _formats():
    """jsonschema on first use: a start imports none of it (tests/imports/test_startup_imports)."""
    import uuid

    import jsonschema

    checker = jsonschema.FormatChecker()

    @checker.checks("uuid", raises=ValueError)
    def _is_uuid(value) -> bool:
        if isinstance(value, str):
            uuid.UUID(value)
        return True

    return checker


def validate(data, schema) -> dict:
    import jsonschema

    try:
        jsonschema.validate(data, schema, format_checker=_formats())
    except jsonschema.ValidationError as exc:
        raise errors.bad_request(f"JSON does not validate: {exc.message}") from None
    return data


def _int(minimum: int) -> dict:
    return {"type": "integer", "minimum": minimum, "maximum": MAX_INT}


# --- resource providers ------------------------------------------------------------------
POST_RP = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 200},
                                            "uuid": _UUID_FORMAT},
           "required": ["name"], "additionalProperties": False}
PUT_RP = copy.deepcopy(POST_RP)
PUT_RP["properties"].pop("uuid")
POST_RP_1_14 = copy.deepcopy(POST_RP)
POST_RP_1_14["properties"]["parent_provider_uuid"] = {"anyOf": [_UUID_FORMAT,
                                                                {"type": "null"}]}
PUT_RP_1_14 = copy.deepcopy(POST_RP_1_14)
PUT_RP_1_14["properties"].pop("uuid")

# --- inventories -------------------------------------------------------------------------
_INVENTORY = {"type": "object", "properties": {
    "resource_provider_generation": {"type": "integer"}, "total": _int(1),
    "reserved": _int(0), "min_unit": _int(1), "max_unit": _int(1), "step_size": _int(1),
    # upstream sets no minimum; a negative ratio would make a negative capacity, so it is
    # refused like the other out-of-range fields (0 stays: no capacity at all)
    "allocation_ratio": {"type": "number", "minimum": 0, "maximum": FLOAT_MAX}},
    "required": ["total", "resource_provider_generation"], "additionalProperties": False}
POST_INVENTORY = copy.deepcopy(_INVENTORY)
POST_INVENTORY["properties"]["resource_class"] = {"type": "string", "pattern": RC}
POST_INVENTORY["required"] = ["total", "resource_class"]
PUT_INVENTORY_ONE = _INVENTORY
_RECORD = copy.deepcopy(_INVENTORY)
_RECORD["required"] = ["total"]
PUT_INVENTORIES = {"type": "object", "properties": {
    "resource_provider_generation": {"type": "integer"},
    "inventories": {"type": "object", "patternProperties": {RC: _RECORD},
                    "additionalProperties": False}},
    "required": ["resource_provider_generation", "inventories"],
    "additionalProperties": False}

# --- aggregates, traits, resource classes ------------------------------------------------
_AGGREGATES = {"type": "array", "items": _UUID_FORMAT, "uniqueItems": True}
PUT_AGGREGATES_1_1 = _AGGREGATES
PUT_AGGREGATES_1_19 = {"type": "object", "properties": {
    "aggregates": _AGGREGATES, "resource_provider_generation": {"type": "integer"}},
    "required": ["aggregates", "resource_provider_generation"], "additionalProperties": False}
_TRAIT = {"type": "string", "minLength": 1, "maxLength": 255}
SET_PROVIDER_TRAITS = {"type": "object", "properties": {
    "traits": {"type": "array", "items": _TRAIT},
    "resource_provider_generation": {"type": "integer"}},
    "required": ["traits", "resource_provider_generation"], "additionalProperties": False}
RESOURCE_CLASS = {"type": "object", "properties": {
    "name": {"type": "string", "pattern": CUSTOM, "maxLength": 255}},
    "required": ["name"], "additionalProperties": False}

# --- allocations -------------------------------------------------------------------------
_RESOURCES = {"type": "object", "minProperties": 1,
              "patternProperties": {RC: {"type": "integer", "minimum": 1,
                                         "maximum": MAX_INT}},  # the column's range
              "additionalProperties": False}
ALLOCATIONS_1_0 = {"type": "object", "properties": {"allocations": {
    "type": "array", "minItems": 1, "items": {
        "type": "object", "properties": {
            "resource_provider": {"type": "object", "properties": {"uuid": _UUID_FORMAT},
                                  "additionalProperties": False, "required": ["uuid"]},
            "resources": _RESOURCES},
        "required": ["resource_provider", "resources"], "additionalProperties": False}}},
    "required": ["allocations"], "additionalProperties": False}
_OWNER = {"type": "string", "minLength": 1, "maxLength": 255}
ALLOCATIONS_1_8 = copy.deepcopy(ALLOCATIONS_1_0)
ALLOCATIONS_1_8["properties"].update(project_id=_OWNER, user_id=_OWNER)
ALLOCATIONS_1_8["required"] += ["project_id", "user_id"]
ALLOCATIONS_1_12 = {"type": "object", "properties": {
    "allocations": {"type": "object", "minProperties": 1, "patternProperties": {UUID: {
        "type": "object", "properties": {"generation": {"type": "integer"},
                                         "resources": _RESOURCES},
        "required": ["resources"], "additionalProperties": False}},
        "additionalProperties": False},
    "project_id": _OWNER, "user_id": _OWNER},
    "required": ["allocations", "project_id", "user_id"], "additionalProperties": False}
DELETABLE = copy.deepcopy(ALLOCATIONS_1_12)
DELETABLE["properties"]["allocations"]["minProperties"] = 0
_GENERATION = {"type": ["integer", "null"]}
ALLOCATIONS_1_28 = copy.deepcopy(DELETABLE)
ALLOCATIONS_1_28["properties"]["consumer_generation"] = _GENERATION
ALLOCATIONS_1_28["required"].append("consumer_generation")
_MAPPINGS = {"type": "object", "minProperties": 1, "patternProperties": {
    GROUP_1_33: {"type": "array", "minItems": 1, "items": _UUID_FORMAT}}}
# (no additionalProperties: False - the unsuffixed group's key "" must pass, as upstream)
ALLOCATIONS_1_34 = copy.deepcopy(ALLOCATIONS_1_28)
ALLOCATIONS_1_34["properties"]["mappings"] = _MAPPINGS
ALLOCATIONS_1_38 = copy.deepcopy(ALLOCATIONS_1_34)
ALLOCATIONS_1_38["properties"]["consumer_type"] = {"type": "string", "pattern": RC,
                                                   "minLength": 1, "maxLength": 255}
ALLOCATIONS_1_38["required"].append("consumer_type")


def _many(one: dict, minimum: int = 1) -> dict:
    return {"type": "object", "minProperties": minimum, "additionalProperties": False,
            "patternProperties": {UUID: one}}


POST_ALLOCATIONS_1_13 = _many(DELETABLE)
POST_ALLOCATIONS_1_28 = _many(ALLOCATIONS_1_28)
POST_ALLOCATIONS_1_34 = _many(ALLOCATIONS_1_34)
POST_ALLOCATIONS_1_38 = _many(ALLOCATIONS_1_38)


def put_allocations(version: tuple[int, int]) -> dict:
    for since, schema in (((1, 38), ALLOCATIONS_1_38), ((1, 34), ALLOCATIONS_1_34),
                          ((1, 28), ALLOCATIONS_1_28), ((1, 12), ALLOCATIONS_1_12),
                          ((1, 8), ALLOCATIONS_1_8)):
        if version >= since:
            return schema
    return ALLOCATIONS_1_0


def post_allocations(version: tuple[int, int], minimum: int = 1) -> dict:
    for since, one in (((1, 38), ALLOCATIONS_1_38), ((1, 34), ALLOCATIONS_1_34),
                       ((1, 28), ALLOCATIONS_1_28)):
        if version >= since:
            return _many(one, minimum)
    return _many(DELETABLE, minimum)


def reshaper(version: tuple[int, int]) -> dict:
    return {"type": "object", "properties": {
        "inventories": {"type": "object", "patternProperties": {UUID: PUT_INVENTORIES},
                        "minProperties": 1, "additionalProperties": False},
        "allocations": post_allocations(version, minimum=0)},
        "required": ["inventories", "allocations"], "additionalProperties": False}


def re_match(pattern: str, value: str) -> bool:
    import re

    return re.match(pattern, value) is not None and len(value) <= 255
