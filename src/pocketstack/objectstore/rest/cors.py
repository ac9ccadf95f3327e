"""CORS for containers as swift's proxy does it (``cors_validation`` and the controllers'
``OPTIONS``), an ASGI layer around the object store's app:

* ``OPTIONS`` on an account, container or object needs no token. Without ``Origin`` it
  answers 200 with ``Allow``. With one (a preflight) the container's
  ``X-Container-Meta-Access-Control-Allow-Origin`` (origins separated by spaces, or ``*``)
  must name it and ``Access-Control-Request-Method`` must be a method of the resource,
  else 401; then the ``Access-Control-Allow-*`` headers (the requested headers all
  allowed, ``X-Container-Meta-Access-Control-Max-Age`` as ``Access-Control-Max-Age``).
* Any other container or object request with an ``Origin`` the container allows gets
  ``Access-Control-Allow-Origin`` and ``Access-Control-Expose-Headers`` (swift's simple
  headers, its own ones, the response's metadata headers and the container's
  ``X-Container-Meta-Access-Control-Expose-Headers``), errors included (strict mode: an
  origin the container does not allow gets none).
"""
from __future__ import annotations

from pocketstack.objectstore import api
from pocketstack.objectstore.errors import SwiftError
from pocketstack.objectstore.threads import run_in_threadpool
from pocketstack.wsgi import faults

ALLOW_ORIGIN = "x-container-meta-access-control-allow-origin"
MAX_AGE = "x-container-meta-access-control-max-age"
EXPOSE = "x-container-meta-access-control-expose-headers"
METHODS = {"account": ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"],
           "container": ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"],
           "object": ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]}
SIMPLE = ("cache-control", "content-language", "content-type", "expires", "last-modified",
          "pragma", "etag", "x-timestamp", "x-trans-id", "x-openstack-request-id")


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def split(scope) -> tuple[str | None, str | None, str | None]:
    """(account, container, object) of a /v1 path (None where absent or not /v1)."""
    path = scope["path"][len(scope.get("root_path", "")):]
    parts = path.split("/", 4)
    if len(parts) < 3 or parts[1] not in ("v1", "v1.0") or not parts[2]:
        return None, None, None
    container = parts[3] if len(parts) > 3 and parts[3] else None
    obj = parts[4] if len(parts) > 4 and parts[4] else None
    return parts[2], container, obj


def allowed(meta: dict, origin: str) -> bool:
    origins = (meta.get(ALLOW_ORIGIN) or "").split()
    return origin in origins or "*" in origins


async def _container_meta(account: str, container: str) -> dict:
    try:
        info = await run_in_threadpool(api.find_container, account, container)
    except SwiftError:
        return {}
    return info.meta if info is not None else {}


def wrap(app):
    async def cors(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        method = scope["method"]
        origin = _header(scope, b"origin")
        if method != "OPTIONS" and not origin:
            return await app(scope, receive, send)
        account, container, obj = split(scope)
        if method == "OPTIONS":
            return await _options(scope, send, account, container, obj, origin)
        if container is None:
            return await app(scope, receive, send)
        meta = await _container_meta(account, container)
        if not allowed(meta, origin):
            return await app(scope, receive, send)

        async def send_with_cors(message):
            if message["type"] == "http.response.start":
                message["headers"] = _cors_headers(list(message.get("headers", [])),
                                                   meta, origin)
            await send(message)

        return await app(scope, receive, send_with_cors)
    return cors


def _cors_headers(headers: list, meta: dict, origin: str) -> list:
    names = {key.lower() for key, _ in headers}
    if b"access-control-expose-headers" not in names:
        expose = set(SIMPLE)
        expose.update(key.decode("latin-1") for key, _ in headers
                      if key.startswith((b"x-container-meta", b"x-object-meta")))
        expose.update(h.strip().lower() for h in (meta.get(EXPOSE) or "").split(" ")
                      if h.strip())
        headers.append((b"access-control-expose-headers",
                        ", ".join(sorted(expose)).encode("latin-1")))
    if b"access-control-allow-origin" not in names:
        if (meta.get(ALLOW_ORIGIN) or "").strip() == "*":
            headers.append((b"access-control-allow-origin", b"*"))
        else:
            headers.append((b"access-control-allow-origin", origin.encode("latin-1")))
            for i, (key, value) in enumerate(headers):
                if key.lower() == b"vary":
                    headers[i] = (key, value + b", Origin")
                    break
            else:
                headers.append((b"vary", b"Origin"))
    return headers


async def _options(scope, send, account, container, obj, origin):
    if account is None:  # /info and anything else outside /v1
        kind_methods = ["HEAD", "GET", "OPTIONS"]
    else:
        kind = "object" if obj else "container" if container else "account"
        kind_methods = METHODS[kind]
    allow = ", ".join(kind_methods) + (", COPY" if account and obj else "")
    headers = {"allow": allow}
    status = 200
    if origin and container is not None:
        meta = await _container_meta(account, container)
        wanted = _header(scope, b"access-control-request-method")
        if not allowed(meta, origin) or wanted not in kind_methods:
            status = 401
        else:
            if (meta.get(ALLOW_ORIGIN) or "").strip() == "*":
                headers["access-control-allow-origin"] = "*"
            else:
                headers["access-control-allow-origin"] = origin
                headers["vary"] = "Origin"
            if meta.get(MAX_AGE) is not None:
                headers["access-control-max-age"] = meta[MAX_AGE]
            headers["access-control-allow-methods"] = allow
            requested = [h.strip() for h in
                         (_header(scope, b"access-control-request-headers") or "").split(",")
                         if h.strip()]
            if requested:
                headers["access-control-allow-headers"] = ", ".join(dict.fromkeys(requested))
                headers["vary"] = (headers["vary"] + ", " if "vary" in headers
                                   else "") + "Access-Control-Request-Headers"
    if status == 200:
        content_type, body = "text/html; charset=UTF-8", b""
    else:
        content_type, body = faults.swift_negotiated(SwiftError(status), None)
    raw = [(k.encode(), v.encode("latin-1")) for k, v in headers.items()]
    raw += [(b"content-type", content_type.encode()),
            (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
