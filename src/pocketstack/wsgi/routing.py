"""Route tables and thin handlers, placement style.

A service declares its URLs in one table::

    ROUTES = {
        "/v3/projects": {"GET": projects.list_projects, "POST": projects.create_project},
        "/v3/projects/{project_id}": {"GET": projects.get_project, ...},
    }

and ``build_router(ROUTES)`` turns it into an ASGI app. A handler takes an ``ApiRequest``
and returns a Starlette ``Response`` (``json_response`` for the usual case). Plain ``def``
handlers run in the thread pool with the JSON body already read; ``async def`` handlers run
on the event loop (for hot paths and streaming). Decorators mark the exceptions:
``@public`` (no token needed), ``@streaming`` (body not pre-read, no JSON size limit).
A method missing from a path's entry is a 405; an unknown path a 404 — both in the
service's error format, raised as domain exceptions.
"""
from __future__ import annotations

import inspect
import json
import math
import re
from typing import Any, Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from pocketstack.common import exceptions
from pocketstack.common.context import RequestContext
from pocketstack.wsgi import jsonbody
from pocketstack.wsgi.inprocess import INLINE_KEY

CONTEXT_KEY = "pocketstack.context"
REQUEST_ID_KEY = "pocketstack.request_id"
AUTH_ERROR_KEY = "pocketstack.auth_error"
# Set by the app, which strips a trailing slash before routing: whether the URL had one
# (cinder answers ``GET /volumes/`` - an empty id - with a 404, not the list).
TRAILING_SLASH_KEY = "pocketstack.trailing_slash"


def public(handler: Callable) -> Callable:
    handler.public = True
    return handler


def streaming(handler: Callable) -> Callable:
    handler.streaming = True
    return handler


class ApiRequest:
    """What a handler sees: context, path params, query, headers and the parsed body."""

    __slots__ = ("raw", "context", "params", "_body", "_json")

    def __init__(self, raw: Request, context: RequestContext):
        self.raw = raw
        self.context = context
        self.params: dict[str, str] = raw.path_params
        self._body: bytes = b""
        self._json: Any = None

    @property
    def query(self):
        return self.raw.query_params

    @property
    def headers(self):
        return self.raw.headers

    @property
    def method(self) -> str:
        return self.raw.method

    @property
    def trailing_slash(self) -> bool:
        return bool(self.raw.scope.get(TRAILING_SLASH_KEY))

    @property
    def body(self) -> bytes:
        return self._body

    @property
    def service_url(self) -> str:
        """The URL of this service's root as the client reached it (for links)."""
        scope = self.raw.scope
        host = self.raw.headers.get("host") or "%s:%s" % tuple(scope.get("server")
                                                                or ("localhost", 80))
        return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}"

    def json(self, required: bool = True) -> Any:
        """The request body as JSON; 400 when malformed (or absent and required)."""
        if self._json is None:
            if not self._body.strip():
                if required:
                    raise exceptions.BadRequest("The request body is missing or empty.")
                return None
            self._json = jsonbody.decode(self._body)
        return self._json

    async def _read_body(self, limit: int) -> None:
        chunks, size = [], 0
        async for chunk in self.raw.stream():
            size += len(chunk)
            if size > limit:
                raise exceptions.PayloadTooLarge(
                    f"Request body is larger than the limit of {limit} bytes.")
            chunks.append(chunk)
        self._body = b"".join(chunks)


def _dumps(body: Any) -> bytes:
    """JSON without NaN/Infinity (not JSON: browsers' parsers reject them): a non-finite
    float that reached a response (a row stored before numbers were parsed strictly) is served as
    null."""
    try:
        return json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
    except ValueError:
        return json.dumps(_finite(body), separators=(",", ":")).encode()


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_response(body: Any, status: int = 200, headers: dict | None = None) -> Response:
    content = b"" if body is None else _dumps(body)
    return Response(content, status_code=status, headers=headers,
                    media_type="application/json" if body is not None else None)


def empty(status: int = 204, headers: dict | None = None) -> Response:
    return Response(b"", status_code=status, headers=headers)


_PARAM = re.compile(r"{([a-zA-Z_][a-zA-Z0-9_]*)(?::path)?}")
_SEGMENT_PARAM = re.compile(r"(.*){([a-zA-Z_][a-zA-Z0-9_]*)}(.*)")


class _Route:
    """One path template. It is matched segment by segment (a literal, or ``{name}`` with
    an optional literal prefix/suffix such as ``{id}.json``, or a last ``{name:path}``):
    a regex per route cost each service's first request the compilation of all of its
    routes' (~340 in all, ~12 ms of CPU), and a match scanned every one of them. A template
    of another shape gets a regex."""

    __slots__ = ("path", "methods", "width", "literals", "params", "tail", "regex")

    def __init__(self, path: str, methods: dict[str, Callable]):
        self.path = path
        self.methods = dict(methods)
        if "GET" in self.methods and "HEAD" not in self.methods:
            self.methods["HEAD"] = self.methods["GET"]
        parts = path.split("/")
        self.width = len(parts)  # segments of a path it matches (with a tail: more)
        self.literals: list[tuple[int, str]] = []  # (position, text), most telling first
        self.params: list[tuple[int, str, str, str]] = []  # (position, prefix, name, suffix)
        self.tail: str | None = None  # the {name:path} that takes the rest
        self.regex = None  # set for a template of another shape
        for i, part in enumerate(parts):
            if "{" not in part and "}" not in part:
                self.literals.append((i, part))
                continue
            m = _SEGMENT_PARAM.fullmatch(part)
            if m and not any(c in m.group(1) + m.group(3) for c in "{}"):
                self.params.append((i, *m.groups()))
            elif i == len(parts) - 1 and part.endswith(":path}") and _PARAM.fullmatch(part):
                self.tail = _PARAM.fullmatch(part).group(1)
                self.width = i
            else:
                self.regex = _template_regex(path)
                return
        # "/v2.0/ports/{id}": "ports" tells routes apart, the leading "" and "v2.0" do not.
        self.literals.sort(key=lambda literal: (literal[0] < 2, literal[0]))

    def match(self, path: str, parts: list[str]) -> dict | None:
        if self.regex is not None:
            m = self.regex.match(path)
            return m.groupdict() if m else None
        for i, text in self.literals:
            if parts[i] != text:
                return None
        params = {}
        for i, prefix, name, suffix in self.params:
            got = parts[i]
            if (len(got) <= len(prefix) + len(suffix) or not got.startswith(prefix)
                    or not got.endswith(suffix)):
                return None
            params[name] = got[len(prefix):len(got) - len(suffix)]
        if self.tail is not None:
            rest = "/".join(parts[self.width:])
            if not rest:
                return None
            params[self.tail] = rest
        return params


def _template_regex(path: str):
    pattern = ""
    last = 0
    for m in _PARAM.finditer(path):
        pattern += re.escape(path[last:m.start()])
        name = m.group(1)
        pattern += f"(?P<{name}>.+)" if m.group(0).endswith(":path}") else f"(?P<{name}>[^/]+)"
        last = m.end()
    pattern += re.escape(path[last:])
    return re.compile(f"^{pattern}$")


class Router:
    """Matches the service-relative path against the route table and calls the handler."""

    def __init__(self, routes: dict[str, dict[str, Callable]], body_limit: Callable[[], int]):
        self.routes = [_Route(p, m) for p, m in routes.items()]
        self._widest = max((r.width for r in self.routes), default=0)
        self._by_width: dict[int, list[_Route]] = {}  # segments in a path -> its candidates
        self.body_limit = body_limit

    def _candidates(self, width: int) -> list[_Route]:
        """The routes, in table order, that a path of ``width`` segments could match (the
        first that does wins)."""
        found = self._by_width.get(width)
        if found is None:
            routes = self.routes
            capped = min(width, self._widest + 1)  # wider paths share one list
            found = self._by_width.get(capped)
            if found is None:
                found = [r for r in routes if r.regex is not None or r.width == capped
                         or (r.tail is not None and capped > r.width)]
                self._by_width[capped] = found
        return found

    def match(self, path: str):
        parts = path.split("/")
        for route in self._candidates(len(parts)):
            params = route.match(path, parts)
            if params is not None:
                return route, params
        return None, None

    async def __call__(self, scope, receive, send):
        path = scope["path"][len(scope.get("root_path", "")):] or "/"
        if "\x00" in path or b"%00" in scope.get("query_string", b""):
            # No id or filter holds one, and PostgreSQL refuses it in text.
            raise exceptions.BadRequest("The URL holds a NUL character (%00).")
        route, params = self.match(path)
        if route is None:
            raise exceptions.NotFound("The resource could not be found.")
        handler = route.methods.get(scope["method"])
        if handler is None:
            raise exceptions.MethodNotAllowed(
                f"The method {scope['method']} is not allowed for this resource.",
                headers={"Allow": ", ".join(sorted(route.methods))})
        scope["path_params"] = params
        raw = Request(scope, receive)
        context = scope.get(CONTEXT_KEY)
        if context is None:
            if not getattr(handler, "public", False):
                raise scope.get(AUTH_ERROR_KEY) or exceptions.Unauthorized(
                    "The request you have made requires authentication.")
            context = RequestContext(request_id=scope[REQUEST_ID_KEY])
        req = ApiRequest(raw, context)
        if not getattr(handler, "streaming", False):
            await req._read_body(self.body_limit())
        if inspect.iscoroutinefunction(handler):
            response = await handler(req)
        elif scope.get(INLINE_KEY):  # a call from this process, already on a worker thread
            response = handler(req)
        else:
            response = await run_in_threadpool(handler, req)
        await response(scope, receive, send)
