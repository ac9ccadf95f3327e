"""A REST call to a service this very process serves, without the socket.

Compute talks to image, network and volume over their REST APIs (seed steps 19-27); in
the all-in-one those APIs are served by the same process, so each call went through
requests, a loopback socket, uvicorn and a second worker thread, ~1-2 ms of CPU a call
on a boot's critical path. ``call`` hands the same request (method, path, query, headers,
JSON body, token) to the same ASGI app instead, on the calling thread: the request id,
token validation, policy, validation and error bodies are exactly the HTTP path's.

It answers None (the caller then uses HTTP) unless the call can run to completion
inline: this process built the app and started the services' background workers (DHCP
writer, event notifier) - the all-in-one, an API worker or a compute process of `up
--workers` (workers.py), not a child forked from one - and the target service is ready,
the route's
handler is a plain ``def`` that reads its whole body (async and streaming handlers need
the event loop), and no database transaction is open on this thread (the handler's own
transaction would silently join it, where over HTTP it is separate).
"""
from __future__ import annotations

import asyncio
import contextvars
import inspect
import json as jsonlib
import os
from urllib.parse import urlencode

from pocketstack.common import config, runtime

INLINE_KEY = "pocketstack.inline"  # in the scope: the router calls the handler directly


class _Served:
    def __init__(self):
        self.app = None  # the PocketstackApp of this cloud, once it serves
        self.pid = 0  # the process that built it: a forked child serves nothing itself


def _served() -> _Served:
    return runtime.current().slot(__name__, _Served)


def register(app) -> None:
    """The cloud's app (wsgi/app.py calls this when it is built)."""
    served = _served()
    served.app, served.pid = app, os.getpid()


def serves_here() -> bool:
    """This process serves the cloud's REST APIs itself (built their app, not forked)."""
    served = _served()
    return served.app is not None and served.pid == os.getpid()


class Response:
    """The parts of a requests.Response the service clients use."""

    def __init__(self, status: int, headers: list, body: bytes):
        self.status_code = status
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
        self.content = body

    @property
    def ok(self) -> bool:
        return self.status_code < 400

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self):
        return jsonlib.loads(self.content)


class NotInline(Exception):
    """The app wanted to suspend (await the event loop) after all."""


def call(method: str, path: str, *, headers: dict, params: dict | list | None = None,
         json=None, body: bytes | None = None) -> Response | None:
    """``path`` is absolute on this cloud's URL (``/network/v2.0/ports``), the body either
    ``json`` or raw ``body`` bytes (whose content type ``headers`` give); None when the
    request must go over HTTP."""
    served = _served()
    app = served.app
    if app is None or served.pid != os.getpid() or not config.CONF.local_service_calls \
            or _in_transaction():
        return None
    if not app.can_run_inline(method, path):
        return None
    try:
        asyncio.get_running_loop()
        return None  # on an event loop: running a handler here would block it
    except RuntimeError:
        pass
    if json is not None:
        body = jsonlib.dumps(json, allow_nan=False).encode()
    body = body or b""
    pairs = params.items() if isinstance(params, dict) else (params or ())
    query = urlencode([(k, v) for k, v in pairs if v is not None], doseq=True)
    netloc = config.public_url().split("://", 1)[-1]
    raw_headers = [(b"host", netloc.encode("latin-1"))]
    raw_headers += [(k.lower().encode("latin-1"), str(v).encode("latin-1"))
                    for k, v in headers.items()]
    if json is not None and not any(k == b"content-type" for k, _ in raw_headers):
        # a JSON body of another media type (glance's json-patch) keeps the caller's
        raw_headers.append((b"content-type", b"application/json"))
    if body and not any(k == b"content-length" for k, _ in raw_headers):
        raw_headers.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
             "http_version": "1.1", "method": method.upper(), "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query.encode(),
             "root_path": "", "headers": raw_headers, "client": ("127.0.0.1", 0),
             "server": None, "state": {}, INLINE_KEY: True}
    # A fresh copy of the caller's context: whatever the app sets (the current cloud)
    # stays inside the call, as it would on another thread.
    return contextvars.copy_context().run(_run, app, scope, body)


def _run(app, scope: dict, body: bytes) -> Response:
    sent = {"status": 500, "headers": [], "body": []}
    request = {"type": "http.request", "body": body, "more_body": False}

    async def receive():
        nonlocal request
        message, request = request, {"type": "http.disconnect"}
        return message

    async def send(message):
        if message["type"] == "http.response.start":
            sent["status"], sent["headers"] = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            sent["body"].append(message.get("body", b""))

    coro = app(scope, receive, send)
    try:
        coro.send(None)
    except StopIteration:
        return Response(sent["status"], sent["headers"], b"".join(sent["body"]))
    # can_run_inline said no await would wait, yet one did: a bug, not a user's error.
    coro.close()
    raise NotInline(f"{scope['method']} {scope['path']} needed the event loop")


def _in_transaction() -> bool:
    from pocketstack.common import db

    return getattr(db._local, "session", None) is not None


def inline_handler(handler) -> bool:
    """A handler the router can call on the calling thread."""
    return not (inspect.iscoroutinefunction(handler) or getattr(handler, "streaming", False))

