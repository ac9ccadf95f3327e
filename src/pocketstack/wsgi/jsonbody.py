"""The one JSON decoder for request bodies: every service's handlers get their
body through ``ApiRequest.json()``, which calls ``decode`` here, so these rules hold for
every endpoint, authenticated or not, before any handler runs:

* strict UTF-8 (RFC 8259 section 8.1): no UTF-16/32 guessing, no invalid sequences;
* nesting at most MAX_DEPTH deep — the C scanner recurses per level, and a 50,000-deep
  ``[[[...]]]`` of 100 kB would otherwise end in RecursionError;
* no lone UTF-16 surrogates from ``\\ud800`` escapes: they decode into Python strings that
  cannot be encoded again (database, bcrypt, logs), so they fail far from here;
* no NaN, Infinity or -Infinity, neither as literals nor as overflowing numbers (1e999):
  they are not JSON, and stored once they would be served to every client;
* no NUL character (``\\u0000``): PostgreSQL refuses it in text, and no OpenStack field
  carries one.

Each violation raises BadRequest, which the fault wrapper turns into the service's 400.
Integer ranges are left to each field's validation, which names the field and its bounds
(an integer of thousands of digits is refused here: Python will not convert it).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from pocketstack.common import exceptions

MAX_DEPTH = 64

# Escapes first, then strings without them: both linear (one pattern for both would
# backtrack quadratically on an unclosed string full of escaped quotes).
_ESCAPE = re.compile(r"\\.", re.S)
_STRING = re.compile(r'"[^"]*"')
_BRACKET = re.compile(r"[\[\]{}]")
# An escaped NUL (not an escaped backslash followed by "u0000").
_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


class _Invalid(ValueError):
    """A body that is well-formed JSON text but holds a value we refuse."""


def _constant(name: str):
    raise _Invalid(f"{name} is not a valid JSON number.")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Invalid(f"The number {text[:30]} is out of range.")
    return value


_DECODER = json.JSONDecoder(parse_float=_float, parse_constant=_constant)


def nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in ``text`` (brackets inside strings ignored)."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub("", _ESCAPE.sub("", text))):
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    break  # deep enough to refuse: no need to read on
        else:
            depth -= 1
    return deepest


def decode(body: bytes) -> Any:
    """The parsed body; BadRequest for anything that is not JSON we accept."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise exceptions.BadRequest(
            f"Malformed request body: not valid UTF-8 (byte {error.start}).") from None
    # Counting brackets is cheap; the exact scan runs only for bodies that could be deep.
    if text.count("[") + text.count("{") > MAX_DEPTH and nesting_depth(text) > MAX_DEPTH:
        raise exceptions.BadRequest(
            f"Malformed request body: JSON nested deeper than {MAX_DEPTH} levels.")
    try:
        value = _DECODER.decode(text.lstrip("\ufeff"))
    except _Invalid as error:
        raise exceptions.BadRequest(f"Invalid request body: {error}") from None
    except (ValueError, RecursionError) as error:
        raise exceptions.BadRequest(f"Malformed request body: {error}") from None
    if "\\u" in text:
        _refuse_lone_surrogates(value)
        if _NUL.search(text):
            raise exceptions.BadRequest(
                "Invalid request body: a string holds a NUL character (\\u0000).")
    return value


def _refuse_lone_surrogates(value: Any) -> None:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise exceptions.BadRequest(
            "Invalid request body: a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), "
            "which is not a character.") from None
