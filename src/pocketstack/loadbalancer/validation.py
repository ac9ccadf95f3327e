"""Request bodies checked field by field, with the messages of Octavia's WSME types.

A schema maps each attribute to a Field; ``parse(body, root, schema)`` returns the
attributes given (converted), raising BadRequest with WSME's wording for a wrong type,
a value out of range, an unknown attribute or a missing mandatory one."""
from __future__ import annotations

import dataclasses
import ipaddress
import re
import uuid
from typing import Any, Callable

from pocketstack.common import exceptions


class Invalid(exceptions.BadRequest):
    pass


# Control characters: no value the API stores may carry one (a newline in a value the data
# plane writes into haproxy.cfg would begin a directive of the caller's).
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def has_control(value: str) -> bool:
    return bool(CONTROL.search(value))


def invalid_field(name: str, value: Any, why: str) -> Invalid:
    return Invalid(f"Invalid input for field/attribute {name}. Value: '{value}'. {why}")


def validation_failure(detail: str) -> Invalid:
    return Invalid(f"Validation failure: {detail}")


def invalid_option(value: Any, option: str) -> Invalid:
    return Invalid(f"{value} is not a valid option for {option}")


@dataclasses.dataclass(frozen=True)
class Field:
    kind: str  # str uuid int float bool enum ip strlist cidrlist list dict
    mandatory: bool = False
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple = ()
    max_length: int = 255
    nullable: bool = True
    check: Callable | None = None  # extra check of the converted value -> message or None


def _convert(name: str, field: Field, value: Any) -> Any:
    if value is None:
        if field.mandatory or not field.nullable:
            raise invalid_field(name, value, "Mandatory field missing.")
        return None
    kind = field.kind
    if kind in ("str", "uuid", "ip", "enum"):
        numeric = kind == "enum" and isinstance(field.choices[0], int)  # redirect codes
        expected = int if numeric else str
        if not isinstance(value, expected) or isinstance(value, bool):
            raise invalid_field(name, value, f"Wrong type. Expected '{expected}', got "
                                             f"'{type(value)}'")
        if kind == "str" and len(value) > field.max_length:
            raise invalid_field(name, value,
                                f"Value should have a maximum character requirement of "
                                f"{field.max_length}")
        if kind == "uuid":
            try:
                uuid.UUID(value)
            except ValueError:
                raise invalid_field(name, value, "Value should be UUID format") from None
        if kind == "ip":
            try:
                _address(value)
            except ValueError:
                raise invalid_field(name, value,
                                    "Value should be IPv4 or IPv6 format") from None
        if kind == "enum" and value not in field.choices:
            raise invalid_field(name, value, "Value should be one of: "
                                + ", ".join(map(str, field.choices)))
        return value
    if kind in ("int", "float"):
        types = (int,) if kind == "int" else (int, float)
        if isinstance(value, bool) or not isinstance(value, types):
            raise invalid_field(name, value, f"Wrong type. Expected '<class '{kind}'>', got "
                                             f"'{type(value)}'")
        if field.minimum is not None and value < field.minimum:
            raise invalid_field(name, value,
                                f"Value should be greater or equal to {field.minimum}")
        if field.maximum is not None and value > field.maximum:
            raise invalid_field(name, value,
                                f"Value should be lower or equal to {field.maximum}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise invalid_field(name, value, f"Wrong type. Expected '<class 'bool'>', got "
                                             f"'{type(value)}'")
        return value
    if kind in ("strlist", "cidrlist"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise invalid_field(name, value, "Wrong type. Expected '[<class 'str'>]'")
        if kind == "strlist" and any(len(v) > field.max_length for v in value):
            raise invalid_field(name, value, f"Value should have a maximum character "
                                             f"requirement of {field.max_length}")
        if kind == "cidrlist":
            for cidr in value:
                try:
                    _address(cidr, network=True)
                except ValueError:
                    raise invalid_field(name, value,
                                        "Value should be IPv4 or IPv6 CIDR format") from None
        return list(value)
    if kind == "list":
        if not isinstance(value, list):
            raise invalid_field(name, value, "Wrong type. Expected '<class 'list'>', got "
                                             f"'{type(value)}'")
        return list(value)
    if kind == "dict":
        if not isinstance(value, dict):
            raise invalid_field(name, value, "Wrong type. Expected '<class 'dict'>', got "
                                             f"'{type(value)}'")
        return dict(value)
    return value


def _address(value: str, network: bool = False):
    """An IP address (or network) as the data plane can write it: Python's ipaddress takes
    an IPv6 scope id of any characters ('fe80::1%<anything>'), which neither WSME's
    address types nor HAProxy do."""
    if "%" in value or has_control(value) or value != value.strip():
        raise ValueError(value)
    return ipaddress.ip_network(value, strict=False) if network else \
        ipaddress.ip_address(value)


def parse(body: Any, root: str, schema: dict[str, Field], *, create: bool) -> dict:
    """The ``root`` object of ``body``, checked against ``schema``; on update (create
    False) no field is mandatory."""
    if not isinstance(body, dict) or not isinstance(body.get(root), dict):
        raise Invalid(f"Missing mandatory field: {root}" if isinstance(body, dict)
                      else "The request body must be a JSON object.")
    data = body[root]
    unknown = sorted(set(data) - set(schema))
    if unknown:
        raise Invalid(f"Unknown attribute for argument {root}: {', '.join(unknown)}")
    out = {}
    for name, field in schema.items():
        if name not in data:
            if create and field.mandatory:
                raise invalid_field(name, None, "Mandatory field missing.")
            continue
        out[name] = _convert(name, dataclasses.replace(field, mandatory=field.mandatory
                                                       and create), data[name])
        if field.check is not None and out[name] is not None:
            why = field.check(out[name])
            if why:
                raise invalid_field(name, data[name], why)
    return out


# --- the shared field kinds -------------------------------------------------------------

NAME = Field("str")
DESCRIPTION = Field("str")
ADMIN_STATE = Field("bool", nullable=False)
TAGS = Field("strlist")
PORT = Field("int", minimum=1, maximum=65535)
UUID = Field("uuid")
