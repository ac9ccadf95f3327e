"""Range and conditional requests as swob evaluates them."""
from __future__ import annotations

import email.utils
import math
import re

from pocketstack.objectstore.errors import SwiftError

MAX_RANGES = 50
_SPEC = re.compile(r"^\s*(\d*)\s*-\s*(\d*)\s*$")


def parse(header: str | None, length: int) -> list[tuple[int, int]] | None:
    """[(first, last + 1), ...] for a Range header; None to send the whole object (no
    header, or one swob ignores: malformed, or more than 50 ranges). 416 when no range is
    satisfiable."""
    if not header:
        return None
    unit, _, specs = header.partition("=")
    if unit.strip().lower() != "bytes" or not specs.strip():
        return None
    wanted = []
    for spec in specs.split(","):
        if not spec.strip():
            continue
        m = _SPEC.match(spec)
        if not m or not (m.group(1) or m.group(2)):
            return None
        first, last = m.groups()
        if first and last and int(last) < int(first):
            return None
        wanted.append((int(first) if first else None, int(last) if last else None))
    if not wanted or len(wanted) > MAX_RANGES:
        return None
    spans = []
    for first, last in wanted:
        if first is None:  # the last `last` bytes
            if last == 0 or length == 0:
                continue
            spans.append((max(length - last, 0), length))
        elif first < length:
            spans.append((first, length if last is None else min(last + 1, length)))
    if not spans:
        raise SwiftError(416, headers={"Content-Range": f"bytes */{length}"})
    return spans


def _etags(header: str) -> list[str]:
    return [tag.strip().strip('"') for tag in header.split(",") if tag.strip()]


def _time(header: str) -> float | None:
    try:
        parsed = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    return parsed.timestamp() if parsed is not None else None


def evaluate(headers, etag: str, timestamp: str, method: str) -> int | None:
    """The status a conditional GET/HEAD gets instead of the object (304 or 412)."""
    last_modified = math.ceil(float(timestamp))
    if_match = headers.get("if-match")
    if if_match is not None:
        tags = _etags(if_match)
        if "*" not in tags and etag not in tags:
            return 412
    if_none_match = headers.get("if-none-match")
    if if_none_match is not None:
        tags = _etags(if_none_match)
        if "*" in tags or etag in tags:
            return 304 if method in ("GET", "HEAD") else 412
    elif headers.get("if-modified-since") and method in ("GET", "HEAD"):
        since = _time(headers["if-modified-since"])
        if since is not None and last_modified <= since:
            return 304
    if headers.get("if-unmodified-since"):
        since = _time(headers["if-unmodified-since"])
        if since is not None and last_modified > since:
            return 412
    return None
