"""Barbican's validation errors: its messages, so clients and scripts see upstream's text."""
from __future__ import annotations

import jsonschema

from pocketstack.common import exceptions


def invalid_object(schema: str, reason: str, prop) -> exceptions.BadRequest:
    return exceptions.BadRequest(f"Provided object does not match schema '{schema}': "
                                 f"{reason}. Invalid property: '{prop}'")


def check_schema(body, schema: dict, name: str) -> None:
    try:
        jsonschema.validate(body, schema)
    except jsonschema.ValidationError as e:
        path = list(e.schema_path)
        raise invalid_object(name, e.message, path[1] if len(path) > 1 else None) from None


def require(condition, schema: str, reason: str, prop: str) -> None:
    if not condition:
        raise invalid_object(schema, reason, prop)


def issue(operation: str, reason: str, error=exceptions.BadRequest):
    """An error raised inside a handler, as barbican's handle_exceptions words it."""
    return error(f"{operation} issue seen - {reason}.")


def forbidden(operation: str) -> exceptions.Forbidden:
    return exceptions.Forbidden(f"{operation} attempt not allowed - please review your "
                                "user/project privileges")
