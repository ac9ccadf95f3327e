"""Swift API v1 route table, mounted at /object-store: ``/info`` and
``/v1/{account}[/{container}[/{object}]]``. Handlers are public: a request without a
token may still be let in by a container ACL or a temporary URL (access.py decides)."""
from __future__ import annotations

import urllib.parse
from typing import Callable

from pocketstack.common import rgw
from pocketstack.objectstore.errors import SwiftError
from pocketstack.objectstore.rest import (accounts, common, containers, cors, formpost, info,
                                          object_reads, objects, staticweb)
from pocketstack.objectstore.threads import run_in_threadpool
from pocketstack.wsgi import faults, routing


def _post(handler: Callable) -> Callable:
    """A container's or object's POST: an HTML form upload (FormPOST) when the body is
    multipart/form-data, otherwise ``handler`` (metadata; the body is ignored, as swift)."""
    @routing.public
    @routing.streaming
    async def post(req):
        if formpost.is_form(req):
            account, container, obj = common.names(req)
            if container is None:
                raise SwiftError(412, "Bad URL")
            return await formpost.handle(req, account, container, obj or "", objects.record)
        async for _ in req.raw.stream():
            pass
        return await run_in_threadpool(handler, req)
    return post


ROUTES = {
    "/info": {"GET": info.show},
    "/v1/{account}": {"GET": accounts.show, "POST": accounts.update,
                      "PUT": accounts.not_allowed, "DELETE": accounts.not_allowed},
    "/v1/{account}/{container}": {"GET": containers.show, "PUT": containers.create,
                                  "POST": _post(containers.update), "DELETE": containers.delete},
    "/v1/{account}/{container}/{obj:path}": {"GET": object_reads.get, "PUT": objects.put,
                                             "POST": _post(objects.update),
                                             "DELETE": objects.delete,
                                             "COPY": objects.copy},
}

# swift names its transaction id X-Trans-Id and X-Openstack-Request-Id (the same value).
REQUEST_ID_HEADERS = ("x-trans-id",)
new_request_id = common.new_request_id


def body_limit_exempt(scope) -> bool:
    """Object bodies stream to disk, capped by [objectstore] max_file_size."""
    return True


def wrap(app):
    """Swift's 412 for a path that is not UTF-8 or holds a NUL, before the router's own
    (400) check; then CORS (cors.py) and static web sites (staticweb.py), which answer
    or decorate what the app answers, errors included."""
    app = cors.wrap(staticweb.wrap(_one_content_type(app)))

    async def checked(scope, receive, send):
        if scope["type"] == "http":
            raw = urllib.parse.unquote_to_bytes(scope.get("raw_path") or b"")
            try:
                bad = b"\x00" in raw or "\x00" in raw.decode("utf-8")
            except UnicodeDecodeError:
                bad = True
            if bad:
                return await _answer(scope, send, SwiftError(
                    412, "Invalid UTF8 or contains NULL"))
            if rgw.enabled() and "/v1/" in scope.get("path", ""):
                # Where the RADOS Gateway serves object storage, this store would keep
                # bytes nothing else sees (the catalog, glance and cinder use RGW).
                return await _answer(scope, send, SwiftError(
                    404, f"Object storage of this cloud is the RADOS Gateway: "
                         f"{rgw.catalog_url()} (the catalog's object-store endpoint)"))
        return await app(scope, receive, send)
    return checked


def _one_content_type(app):
    """An error that names its own Content-Type (a delete marker's 404) replaces the
    error page's, as swob's headers do."""
    async def single(scope, receive, send):
        if b"version-id" not in scope.get("query_string", b""):
            return await app(scope, receive, send)

        async def deduped(message):
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                types = [i for i, (k, _) in enumerate(headers) if k.lower() == b"content-type"]
                if len(types) > 1:
                    message["headers"] = [h for i, h in enumerate(headers)
                                          if i not in types[:-1]]
            await send(message)
        return await app(scope, receive, deduped)
    return single


async def _answer(scope, send, error: SwiftError):
    content_type, body = faults.swift_negotiated(error, None)
    await send({"type": "http.response.start", "status": error.code,
                "headers": [(b"content-type", content_type.encode()),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body",
                "body": b"" if scope["method"] == "HEAD" else body})
