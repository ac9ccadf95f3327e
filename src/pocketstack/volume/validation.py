"""Input checks with cinder's rules and messages (cinder/api/validation/parameter_types)."""
from __future__ import annotations

from typing import Any

from pocketstack.common import exceptions, numbers

MAX_INT = 0x7FFFFFFF  # cinder's db.MAX_INT: sizes are 32-bit columns

TRUE = ("true", "1", "on", "yes", "y", "t")
FALSE = ("false", "0", "off", "no", "n", "f")


def bad(message: str) -> exceptions.BadRequest:
    return exceptions.BadRequest(message)


def obj(body: Any, key: str) -> dict:
    """``body[key]`` as a JSON object, or 400."""
    if not isinstance(body, dict) or not isinstance(body.get(key), dict):
        raise bad(f"Missing required element '{key}' in request body.")
    return body[key]


def size(value: Any, name: str = "size") -> int:
    """A positive whole number of GiB (an integer or a string of digits)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise bad(f"Invalid input for field/attribute {name}. Value: {value!r}. "
                  f"{value!r} is not valid under any of the given schemas")
    if isinstance(value, str):
        if not numbers.is_int_text(value.strip()):
            raise bad(f"Invalid input for field/attribute {name}. Value: {value}. "
                      f"'{value}' does not match '^[0-9]+$'")
        value = int(value.strip())
    if value < 1:
        raise bad(f"Invalid input for field/attribute {name}. Value: {value}. "
                  f"{value} is less than the minimum of 1")
    if value > MAX_INT:
        raise bad(f"Invalid input for field/attribute {name}. Value: {value}. "
                  f"{value} is greater than the maximum of {MAX_INT}")
    return value


def text(value: Any, name: str, max_length: int = 255, nullable: bool = True) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise bad(f"Invalid input for field/attribute {name}. Value: {value!r}. "
                  f"{value!r} is not of type 'string'")
    if len(value) > max_length:
        raise bad(f"Invalid input for field/attribute {name}. Value: {value}. "
                  f"'{value[:20]}…' is too long (at most {max_length} characters)")
    return value


def boolean(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE + FALSE:
        return value.strip().lower() in TRUE
    if not isinstance(value, str):  # cinder's schema: {'type': ['boolean', 'string'], ...}
        raise bad(f"Invalid input for field/attribute {name}. Value: {value!r}. "
                  f"{value!r} is not of type 'boolean', 'string'")
    raise bad(f"Invalid input for field/attribute {name}. Value: {value!r}. "
              f"{value!r} is not a valid boolean.")


def metadata(value: Any, name: str = "metadata") -> dict[str, str]:
    if not isinstance(value, dict):
        raise bad(f"Invalid input for field/attribute {name}. Value: {value!r}. "
                  f"{value!r} is not of type 'object'")
    for key, item in value.items():
        if not 1 <= len(key) <= 255:
            raise bad("Metadata property key blank or longer than 255 characters.")
        if not isinstance(item, str):
            raise bad(f"Invalid input for field/attribute {name}. Value for {key!r} must be "
                      "a string.")
        if len(item) > 255:
            raise bad("Metadata property value greater than 255 characters.")
    return dict(value)


def uuid_like(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise bad(f"Invalid input for field/attribute {name}. Value: {value!r}. "
                  "Must be a string id.")
    return value


def only(body: dict, allowed: tuple[str, ...], where: str) -> None:
    extra = sorted(set(body) - set(allowed))
    if extra:
        raise bad(f"Additional properties are not allowed ({', '.join(repr(e) for e in extra)} "
                  f"{'was' if len(extra) == 1 else 'were'} unexpected) in {where}")
