"""The middleware pipeline every service is mounted behind (pure ASGI, no per-request
allocation beyond what each step needs). Order, outermost first — see ``app.pipeline``:

1. RequestId     — assigns ``req-<uuid>`` and puts ``x-openstack-request-id`` on every
                   response, errors included, so it must wrap everything else.
2. AccessLog     — one line per request with the status the client got: outside the
                   fault wrapper, so it sees the 4xx/500 that exceptions become.
3. FaultWrapper  — turns domain exceptions into the service's error body and anything
                   unexpected into a logged 500 without a traceback; wraps the steps below
                   so their errors come out in the right format with the request id.
4. BodySizeLimit — 413 for a declared Content-Length over the limit before reading it;
                   the router enforces the same limit on chunked bodies as it reads them.
5. TokenAuth     — validates X-Auth-Token locally (Fernet keys + revocation events) into a
                   RequestContext; an invalid token — or an application credential's whose
                   access rules do not allow this request — is remembered and turned into
                   a 401 only if the route needs authentication (public routes such as
                   version discovery and POST /v3/auth/tokens do not).
"""
from __future__ import annotations

import json
import logging
import re
import time
from typing import Callable

from starlette.requests import ClientDisconnect

from pocketstack.common import config, exceptions, numbers
from pocketstack.common.context import new_request_id
from pocketstack.wsgi.routing import AUTH_ERROR_KEY, CONTEXT_KEY, REQUEST_ID_KEY

LOG = logging.getLogger("pocketstack.api")
ACCESS_LOG = logging.getLogger("pocketstack.access")

_REQUEST_ID = re.compile(r"^req-[0-9a-f-]{36}$")


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


class RequestId:
    """``new_id``: a service's own id shape (swift's ``tx…-…`` transaction ids)."""

    def __init__(self, app, also: tuple[str, ...] = (),
                 new_id: Callable[[], str] = new_request_id):
        self.app = app
        self.names = [b"x-openstack-request-id"] + [n.encode() for n in also]
        self.new_id = new_id

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request_id = self.new_id()
        scope[REQUEST_ID_KEY] = request_id
        headers = [(name, request_id.encode()) for name in self.names]

        async def send_with_id(message):
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + headers
            await send(message)

        await self.app(scope, receive, send_with_id)


class FaultWrapper:
    def __init__(self, app, formatter: Callable, auth_uri: Callable[[], str]):
        self.app, self.formatter, self.auth_uri = app, formatter, auth_uri

    async def __call__(self, scope, receive, send):
        started = False

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except exceptions.PocketstackError as error:
            if started:
                LOG.warning("%s: error after the response started: %s",
                            scope.get(REQUEST_ID_KEY), error)
                return
            await self.send_fault(scope, send, error)
        except ClientDisconnect:  # the client gave up (timeout, Ctrl-C): nobody to answer
            LOG.info("%s %s %s: the client disconnected before sending its request",
                     scope.get(REQUEST_ID_KEY), scope.get("method"), scope.get("path"))
        except Exception:  # noqa: BLE001 - the whole point: no traceback to the client
            LOG.exception("%s %s %s: unexpected error", scope.get(REQUEST_ID_KEY),
                          scope.get("method"), scope.get("path"))
            if not started:
                await self.send_fault(scope, send, exceptions.PocketstackError(
                    "An unexpected error prevented the server from fulfilling your request."))

    async def send_fault(self, scope, send, error: exceptions.PocketstackError):
        negotiate = getattr(self.formatter, "negotiate", None)  # glance: by Accept header
        scoped = getattr(self.formatter, "scoped", None)  # placement: request id, version
        if scoped is not None:
            content_type, body = "application/json", json.dumps(scoped(error, scope)).encode()
        elif negotiate is not None:
            content_type, body = negotiate(error, _header(scope, b"accept"))
        else:
            content_type, body = "application/json", json.dumps(self.formatter(error)).encode()
        headers = [(b"content-type", content_type.encode()),
                   (b"content-length", str(len(body)).encode())]
        for key, value in error.headers.items():
            headers.append((key.lower().encode(), str(value).encode()))
        if error.code == 401:
            headers.append((b"www-authenticate", f'Keystone uri="{self.auth_uri()}"'.encode()))
        await send({"type": "http.response.start", "status": error.code, "headers": headers})
        await send({"type": "http.response.body",
                    "body": b"" if scope.get("method") == "HEAD" else body})


class AccessLog:
    """One line per request, in nova's wsgi log shape (request id first, as oslo.log puts
    it): ``req-… 127.0.0.1 "GET /identity/v3 HTTP/1.1" status: 200 len: 345 time: 0.0012``.
    Only the request line is logged: never headers (tokens) or bodies (passwords)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if not config.CONF.access_log:
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        status, length = 0, 0

        async def logging_send(message):
            nonlocal status, length
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                length += len(message.get("body", b""))
            elif message["type"] == "http.response.zerocopysend":  # wsgi/http_protocol.py
                length += message["count"]
            await send(message)

        try:
            await self.app(scope, receive, logging_send)
        finally:
            query = scope.get("query_string", b"").decode("latin-1")
            target = scope.get("raw_path", b"").decode("latin-1") or scope["path"]
            if query:
                target += "?" + query
            client = (scope.get("client") or ("-",))[0]
            ACCESS_LOG.info('%s %s "%s %s HTTP/%s" status: %s len: %d time: %.4f',
                            scope.get(REQUEST_ID_KEY), client, scope["method"], target,
                            scope.get("http_version", "1.1"), status or 500, length,
                            time.perf_counter() - start)


class BodySizeLimit:
    def __init__(self, app, exempt: Callable[[dict], bool] = lambda scope: False):
        self.app, self.exempt = app, exempt

    async def __call__(self, scope, receive, send):
        declared = _header(scope, b"content-length")
        if declared and numbers.is_int_text(declared) and not self.exempt(scope):
            limit = config.CONF.max_request_body_size
            if int(declared) > limit:
                raise exceptions.PayloadTooLarge(
                    f"Request body is larger than the limit of {limit} bytes.")
        await self.app(scope, receive, send)


class TokenAuth:
    """``service_types``: the service's types in the catalog, which an application
    credential's access rules name (none: such a token is good for nothing here)."""

    def __init__(self, app, validate: Callable, service_types: tuple[str, ...] = ()):
        self.app, self.validate, self.service_types = app, validate, service_types

    async def __call__(self, scope, receive, send):
        token = _header(scope, b"x-auth-token")
        if token:
            # the path the service's router dispatches on (wsgi/routing.py)
            path = scope["path"][len(scope.get("root_path", "")):] or "/"
            request = (self.service_types, scope["method"], path)
            try:
                context = self.validate(token, _header(scope, b"x-service-token"), request)
                context.request_id = scope[REQUEST_ID_KEY]
                scope[CONTEXT_KEY] = context
            except exceptions.Unauthorized as error:
                scope[AUTH_ERROR_KEY] = error
        await self.app(scope, receive, send)
