"""Time in the formats OpenStack APIs use."""
from __future__ import annotations

import datetime as dt


def utcnow() -> dt.datetime:
    """Naive UTC now (what the database stores)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def isotime_us(value: dt.datetime | None) -> str | None:
    """Keystone's token times: 2026-11-21T20:19:15.000000Z."""
    if value is None:
        return None
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def isotime(value: dt.datetime | None) -> str | None:
    """Second precision with Z (glance, nova 'created'/'updated')."""
    if value is None:
        return None
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def isotime_naive(value: dt.datetime | None) -> str | None:
    """Microseconds, no zone (neutron's and nova's *_at fields)."""
    if value is None:
        return None
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f")


def parse_isotime(text: str) -> dt.datetime:
    """Parse an ISO 8601 time into naive UTC; raises ValueError."""
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value
