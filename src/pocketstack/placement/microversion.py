"""Placement microversions (1.0 - 1.39) and the layer that reads and echoes them.

``OpenStack-API-Version: placement X.Y`` (or ``latest``) picks the version; none means
1.0. A malformed value is a 400, one outside the range a 406 that names min and max, as
microversion-parse does upstream. Every response, errors included, echoes the version
and ``Vary: openstack-api-version``.
"""
from __future__ import annotations

import json
import re

from pocketstack.common import exceptions
from pocketstack.wsgi import faults

MIN = (1, 0)
MAX = (1, 39)
HEADER = b"openstack-api-version"
_VERSION = re.compile(r"^([1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def text(version: tuple[int, int]) -> str:
    return "%d.%d" % version


def parse(headers) -> tuple[int, int]:
    """The requested version from the header list; raises 400/406."""
    value = None
    for key, raw in headers:
        if key.lower() == HEADER:
            for part in raw.decode("latin-1").split(","):
                service, _, wanted = part.strip().partition(" ")
                if service.lower() == "placement":
                    value = wanted.strip()
    if value is None:
        return MIN
    if value == "latest":
        return MAX
    m = _VERSION.match(value)
    try:
        version = (int(m.group(1)), int(m.group(2))) if m else None
    except ValueError:  # past int()'s 4,300 digits: microversion-parse's 400 too
        version = None
    if version is None:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise exceptions.BadRequest(f"invalid version string: {shown}")
    if not MIN <= version <= MAX:
        raise exceptions.NotAcceptable(
            f"Unacceptable version header: {value}")
    return version


class Microversion:
    """ASGI layer between the request id and the fault wrapper (wsgi/app.pipeline)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        try:
            version = parse(scope.get("headers", ()))
        except exceptions.PocketstackError as error:
            scope[faults.PLACEMENT_MAX_VERSION_KEY] = (text(MIN), text(MAX))
            return await _send_error(scope, send, error)
        scope[faults.PLACEMENT_VERSION_KEY] = version
        echo = [(b"openstack-api-version", f"placement {text(version)}".encode()),
                (b"vary", b"openstack-api-version")]
        read = scope["method"] in ("GET", "HEAD") and version >= (1, 15)

        async def send_with_version(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + echo
                if read and message["status"] == 200:  # 1.15: caches must revalidate
                    headers += [(b"cache-control", b"no-cache"),
                                (b"last-modified", _http_date().encode())]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_version)


def _http_date() -> str:
    from email.utils import formatdate

    return formatdate(usegmt=True)


async def _send_error(scope, send, error) -> None:
    body = json.dumps(faults.placement_scoped(error, scope)).encode()
    await send({"type": "http.response.start", "status": error.code,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def of(req) -> tuple[int, int]:
    """The version of a handler's request."""
    return req.raw.scope.get(faults.PLACEMENT_VERSION_KEY, MIN)


def require(req, minimum: tuple[int, int], status: int = 404) -> None:
    """Routes that exist from a version on are 404 (or 405) below it, as upstream."""
    if of(req) < minimum:
        if status == 405:
            raise exceptions.MethodNotAllowed("The method is not allowed for this resource.")
        raise exceptions.NotFound("The resource could not be found.")
