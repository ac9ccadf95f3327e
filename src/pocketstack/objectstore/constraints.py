"""Swift's constraints (swift/common/constraints.py): name lengths, metadata limits,
X-Delete-At/After, listing limits. Each check raises swift's status and text."""
from __future__ import annotations

import time

from pocketstack.common import config
from pocketstack.objectstore.errors import SwiftError, bad_request

MAX_META_NAME_LENGTH = 128
MAX_META_VALUE_LENGTH = 256
MAX_META_COUNT = 90
MAX_META_OVERALL_SIZE = 4096
MAX_HEADER_SIZE = 8192
MAX_OBJECT_NAME_LENGTH = 1024
MAX_ACCOUNT_NAME_LENGTH = 256
MAX_CONTAINER_NAME_LENGTH = 256
LISTING_LIMIT = 10000
EXTRA_HEADER_COUNT = 0


def info() -> dict:
    """The ``swift`` section of /info."""
    return {
        "version": "2.35.0",
        "max_file_size": config.CONF.objectstore.max_file_size,
        "max_meta_name_length": MAX_META_NAME_LENGTH,
        "max_meta_value_length": MAX_META_VALUE_LENGTH,
        "max_meta_count": MAX_META_COUNT,
        "max_meta_overall_size": MAX_META_OVERALL_SIZE,
        "max_header_size": MAX_HEADER_SIZE,
        "max_object_name_length": MAX_OBJECT_NAME_LENGTH,
        "container_listing_limit": LISTING_LIMIT,
        "account_listing_limit": LISTING_LIMIT,
        "max_account_name_length": MAX_ACCOUNT_NAME_LENGTH,
        "max_container_name_length": MAX_CONTAINER_NAME_LENGTH,
        "extra_header_count": EXTRA_HEADER_COUNT,
        "valid_api_versions": ["v1", "v1.0"],
        "strict_cors_mode": True,
        "allow_account_management": False,
        "account_autocreate": True,
        "policies": [{"name": "Policy-0", "aliases": "Policy-0", "default": True}],
    }


def check_name(kind: str, name: str, limit: int) -> None:
    if len(name.encode("utf-8")) > limit:
        raise bad_request(f"{kind} name length of {len(name.encode('utf-8'))} longer than "
                          f"{limit}")


def check_metadata(headers, target: str) -> None:
    """The request's X-<target>-Meta-* headers against swift's limits (400 with its text)."""
    prefix = f"x-{target}-meta-"
    count = size = 0
    for key, value in headers.items():
        if len(value) > MAX_HEADER_SIZE:
            raise bad_request(f"Header value too long: {key[:MAX_META_NAME_LENGTH]}")
        if not key.lower().startswith(prefix):
            continue
        name = key[len(prefix):]
        if not name:
            raise bad_request("Metadata name cannot be empty")
        count += 1
        size += len(name.encode()) + len(value.encode("utf-8", "surrogateescape"))
        if len(name) > MAX_META_NAME_LENGTH:
            raise bad_request(f"Metadata name too long: {prefix}{name}")
        if len(value) > MAX_META_VALUE_LENGTH:
            raise bad_request(f"Metadata value longer than {MAX_META_VALUE_LENGTH}: "
                              f"{prefix}{name}")
        if count > MAX_META_COUNT:
            raise bad_request(f"Too many metadata items; max {MAX_META_COUNT}")
        if size > MAX_META_OVERALL_SIZE:
            raise bad_request(f"Total metadata too large; max {MAX_META_OVERALL_SIZE}")


def check_stored_metadata(meta: dict, target: str) -> None:
    """An account's or container's metadata once merged (its server's check)."""
    prefix = f"x-{target}-meta-"
    items = [(k[len(prefix):], v) for k, v in meta.items() if k.startswith(prefix)]
    size = sum(len(k.encode()) + len(v.encode()) for k, v in items)
    if len(items) > MAX_META_COUNT:
        raise bad_request(f"Too many metadata items; max {MAX_META_COUNT}")
    if size > MAX_META_OVERALL_SIZE:
        raise bad_request(f"Total metadata too large; max {MAX_META_OVERALL_SIZE}")


# The latest X-Delete-At swift keeps: later times are capped to it (its expirer sorts
# ten-digit names; utils.normalize_delete_at_timestamp).
MAX_DELETE_AT = 9999999999


def delete_at(headers, now: float) -> int | None:
    """X-Delete-At from X-Delete-After or X-Delete-At (400 as swift for bad values, capped
    at MAX_DELETE_AT as swift does); None when neither is given."""
    if "x-delete-after" in headers:
        try:
            after = int(headers["x-delete-after"])
        except ValueError:
            raise bad_request("Non-integer X-Delete-After") from None
        # integer arithmetic: a float of a huge value overflows
        at = min(max(0, int(now) + after + (1 if after > 0 and now % 1 else 0)),
                 MAX_DELETE_AT)
        if at <= now:
            raise bad_request("X-Delete-After in past")
        return at
    if "x-delete-at" in headers:
        try:
            at = min(max(0, int(headers["x-delete-at"])), MAX_DELETE_AT)
        except ValueError:
            raise bad_request("Non-integer X-Delete-At") from None
        if at <= now:
            raise bad_request("X-Delete-At in past")
        return at
    return None


def listing_limit(query) -> int:
    raw = query.get("limit")
    if raw is None:
        return LISTING_LIMIT
    try:
        limit = int(raw)
    except ValueError:
        raise SwiftError(412, "Value of limit must be a positive integer") from None
    if limit < 0:
        raise SwiftError(412, "Value of limit must be a positive integer")
    if limit > LISTING_LIMIT:
        raise SwiftError(412, f"Maximum limit is {LISTING_LIMIT}")
    return limit


def now() -> float:
    return time.time()
