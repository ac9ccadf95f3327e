"""Block storage microversions: `OpenStack-API-Version: volume 3.x`; `latest` is MAX, no
header is 3.0, a version outside MIN..MAX is 406, a malformed one 400. Every response of
the v3 API echoes the version with `Vary`, as cinder does.

MAX is the newest version whose behaviour is implemented (views.py and the handlers check
the switches they need with ``at_least``).
"""
from __future__ import annotations

import re

from pocketstack.common import exceptions
from pocketstack.wsgi import routing

MIN = (3, 0)
MAX = (3, 71)
MIN_STR, MAX_STR = "3.0", "3.71"

# As compute's parser: ASCII digits only (\d takes any script's digits), a few at most (a
# 4,400-digit minor version made int() raise ValueError past Python's limit: a 500).
_VERSION = re.compile(r"^([1-9][0-9]{0,5})\.([1-9][0-9]{0,5}|0)$")
_KEY = "volume.microversion"


def parse(headers) -> tuple[int, int]:
    value = None
    for item in (headers.get("openstack-api-version") or "").split(","):
        service, _, version = item.strip().partition(" ")
        if service.lower() in ("volume", "block-storage"):
            value = version.strip()
    if not value:
        return MIN
    if value.lower() == "latest":
        return MAX
    m = _VERSION.match(value)
    if not m:
        raise exceptions.BadRequest(
            f"API Version String {value[:40]} is of invalid format. Must be of format "
            "MajorNum.MinorNum.")
    version = int(m.group(1)), int(m.group(2))
    if not MIN <= version <= MAX:
        raise exceptions.NotAcceptable(
            f"Version {value} is not supported by the API. Minimum is {MIN_STR} and "
            f"maximum is {MAX_STR}.")
    return version


def version(req) -> tuple[int, int]:
    v = req.raw.scope.get(_KEY)
    if v is None:
        v = parse(req.headers)
        req.raw.scope[_KEY] = v
    return v


def at_least(req, text: str) -> bool:
    major, minor = text.split(".")
    return version(req) >= (int(major), int(minor))


def require(req, text: str) -> None:
    """404 for a URL that exists only from microversion ``text`` on (as cinder)."""
    if not at_least(req, text):
        raise exceptions.NotFound(f"The resource could not be found: it needs "
                                  f"microversion {text} or later.")


def headers(req) -> dict:
    v = version(req)
    return {"OpenStack-API-Version": f"volume {v[0]}.{v[1]}",
            "Vary": "OpenStack-API-Version"}


def respond(req, body, status: int = 200, extra: dict | None = None):
    h = headers(req)
    if extra:
        h.update(extra)
    if body is None:
        return routing.empty(status, headers=h)
    return routing.json_response(body, status, headers=h)
