"""Barbican's validation errors: its messages, so clients and scripts see upstream's text."""
from __future__ import annotations

from pocketstack.common import exceptions


def invalid_object(schema: str, reason: str, prop) -> exceptions.BadRequest:
    return exceptions.BadRequest(f"Provided object does not match schema '{schema}': "
                                 f"{reason}. Invalid property: '{prop}'")


_VALIDATORS: dict[int, object] = {}


def _validator(schema: dict):
    """One validator per (module-level) schema: jsonschema.validate checks the schema
    itself on every call, most of a secret POST's time."""
    import jsonschema  # on the first validation: a start need not import it

    validator = _VALIDATORS.get(id(schema))
    if validator is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = _VALIDATORS[id(schema)] = cls(schema)
    return validator


def check_schema(body, schema: dict, name: str) -> None:
    """barbican's _assert_schema_is_valid: the best error, as jsonschema.validate picks it,
    with the property its schema path names."""
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(body))
    if error is not None:
        path = list(error.schema_path)
        raise invalid_object(name, error.message, path[1] if len(path) > 1 else None)


def require(condition, schema: str, reason: str, prop: str) -> None:
    if not condition:
        raise invalid_object(schema, reason, prop)


def issue(operation: str, reason: str, error=exceptions.BadRequest):
    """An error raised inside a handler, as barbican's handle_exceptions words it."""
    return error(f"{operation} issue seen - {reason}.")


def forbidden(operation: str) -> exceptions.Forbidden:
    return exceptions.Forbidden(f"{operation} attempt not allowed - please review your "
                                "user/project privileges")
