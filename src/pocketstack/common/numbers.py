"""Numbers users send, parsed once and strictly.

``str.isdigit()`` accepts "²" and "٣" that ``int()`` then refuses or reads as something
else; ``int()`` accepts "1_000", " 7" and 5,000-digit strings (ValueError past Python's
limit); and an integer >= 2**63 overflows every database column. ``float()`` accepts "nan",
"inf" and "1e999". These helpers accept ASCII decimal digits within the bounds of a
64-bit column and finite numbers only, and raise the caller's 4xx (BadRequest unless told).
"""
from __future__ import annotations

import math
import re

from pocketstack.common import exceptions

INT64_MAX = 2**63 - 1
INT64_MIN = -2**63
INT32_MAX = 2**31 - 1

_INT_TEXT = re.compile(r"[+-]?[0-9]{1,19}", re.ASCII)


def is_int_text(value, *, signed: bool = False) -> bool:
    """True for text of ASCII digits (a sign too if ``signed``) that fits in an int64."""
    if not isinstance(value, str) or not _INT_TEXT.fullmatch(value):
        return False
    if not signed and value[0] in "+-":
        return False
    return INT64_MIN <= int(value) <= INT64_MAX


def parse_int(value, name: str, *, minimum: int | None = None, maximum: int = INT64_MAX,
              error: type[exceptions.PocketstackError] = exceptions.BadRequest,
              message: str | None = None) -> int:
    """An int from a query parameter, header or JSON value; ``error`` otherwise.

    Accepts a JSON integer (not a bool) or text of ASCII digits with an optional sign.
    """
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, str) and is_int_text(value.strip(), signed=True):
        number = int(value.strip())
    else:
        number = None
    if number is None or (minimum is not None and number < minimum) or number > maximum:
        if message is None:
            bound = (f" between {minimum} and {maximum}" if minimum is not None
                     else f" of at most {maximum}")
            message = f"Invalid value {_show(value)} for {name}: must be an integer{bound}."
        raise error(message)
    return number


def parse_limit(value, name: str, max_limit: int, *,
                error: type[exceptions.PocketstackError] = exceptions.BadRequest,
                message: str | None = None) -> int:
    """A page size: ASCII digits, clamped to ``max_limit`` however many there are (as
    nova, neutron and glance clamp); anything else is ``error``."""
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.isascii() and text.isdigit():
        return max_limit if len(text) > 18 else min(int(text), max_limit)
    return min(parse_int(value, name, minimum=0, error=error, message=message), max_limit)


def parse_float(value, name: str, *, minimum: float | None = None,
                maximum: float | None = None,
                error: type[exceptions.PocketstackError] = exceptions.BadRequest) -> float:
    """A finite float from a JSON number or numeric text; NaN and Infinity are refused."""
    number = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value) if abs(value) < 1e308 or isinstance(value, float) else None
    elif isinstance(value, str) and len(value) <= 64:
        try:
            number = float(value)
        except ValueError:
            number = None
    if (number is None or not math.isfinite(number)
            or (minimum is not None and number < minimum)
            or (maximum is not None and number > maximum)):
        raise error(f"Invalid value {_show(value)} for {name}: must be a finite number"
                    + (f" of at least {minimum}" if minimum is not None else "") + ".")
    return number


def contains_non_finite(value) -> bool:
    """True if a decoded JSON document holds NaN or +-Infinity anywhere."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
