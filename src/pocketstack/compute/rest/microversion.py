"""Compute microversions: `OpenStack-API-Version: compute X` (2.27+) or the legacy
`X-OpenStack-Nova-API-Version: X`; `latest` means MAX. Unsupported → 406. Every response
echoes the version in both headers plus `Vary`."""
from __future__ import annotations

import re

from pocketstack.common import exceptions

MIN = (2, 1)
MAX = (2, 100)
MIN_STR, MAX_STR = "2.1", "2.100"

# ASCII digits only (\d takes any script's digits), a few at most: a 5,000-digit number
# would cost int() a ValueError past Python's limit.
_VERSION = re.compile(r"^([1-9][0-9]{0,5})\.([1-9][0-9]{0,5}|0)$")


def _parse(text: str) -> tuple[int, int]:
    text = text.strip()
    if text.lower() == "latest":
        return MAX
    m = _VERSION.match(text)
    if not m:
        raise exceptions.BadRequest(
            f"API Version String {text[:40]} is of invalid format. Must be of format "
            "MajorNum.MinorNum.")
    return int(m.group(1)), int(m.group(2))


def from_headers(headers) -> tuple[int, int]:
    value = None
    new = headers.get("openstack-api-version")
    if new:
        for item in new.split(","):
            service, _, version = item.strip().partition(" ")
            if service.lower() == "compute":
                value = version
    if value is None:
        value = headers.get("x-openstack-nova-api-version")
    if value is None:
        return MIN
    version = _parse(value)
    if not MIN <= version <= MAX:
        raise exceptions.NotAcceptable(
            f"Version {value.strip()} is not supported by the API. Minimum is {MIN_STR} "
            f"and maximum is {MAX_STR}.")
    return version


def as_str(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def headers(version: tuple[int, int]) -> dict:
    v = as_str(version)
    return {"OpenStack-API-Version": f"compute {v}", "X-OpenStack-Nova-API-Version": v,
            "Vary": "OpenStack-API-Version, X-OpenStack-Nova-API-Version"}
