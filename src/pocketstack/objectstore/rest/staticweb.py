"""Static web sites from containers as swift's staticweb middleware, an ASGI layer around
the object store's app. It acts on anonymous GET and HEAD requests (or, with
``X-Web-Mode: true``, a token holder's) to containers whose metadata asks for it:

* ``X-Container-Meta-Web-Index: index.html``: ``…/c/`` and ``…/c/dir/`` serve that
  object of the path; ``…/c`` and ``…/c/dir`` are redirected (301) to the slash form.
* ``X-Container-Meta-Web-Listings: true``: a path without an index gets an HTML listing
  (the container's read ACL must allow listings: ``.r:*,.rlistings``), styled by
  ``X-Container-Meta-Web-Listings-CSS`` and titled by ``-Web-Listings-Label``.
* ``X-Container-Meta-Web-Error: error.html``: a 404 (or a 401 of the container) serves
  ``404error.html`` (``401error.html``) with the status kept.
* ``X-Container-Meta-Web-Directory-Type`` (default ``application/directory``): objects of
  that type and at most one byte are directory markers, served as the directory.

Everything goes through the app as sub-requests (so ACLs decide as for any request);
object bodies stream through. Temporary URLs are not staticweb requests here.
"""
from __future__ import annotations

import html
import json
import urllib.parse

from pocketstack.objectstore import api
from pocketstack.objectstore.errors import SwiftError
from pocketstack.objectstore.rest import cors
from pocketstack.objectstore.threads import run_in_threadpool
from pocketstack.wsgi.routing import TRAILING_SLASH_KEY


def info() -> dict:
    return {}


def _true(value) -> bool:
    return str(value or "").strip().lower() in ("true", "1", "yes", "on", "t", "y")


def _meta(meta: dict, name: str) -> str:
    return (meta.get("x-container-meta-" + name) or "").strip()


def human_readable(value: int) -> str:
    """swift.common.utils.human_readable: 1048576 -> "1Mi"."""
    value = float(value)
    index = -1
    suffixes = "KMGTPEZY"
    while value >= 1024 and index + 1 < len(suffixes):
        index += 1
        value = round(value / 1024)
    if index == -1:
        return "%d" % value
    return "%d%si" % (round(value), suffixes[index])


async def _no_body():
    return {"type": "http.request", "body": b"", "more_body": False}


class _Site:
    """One staticweb request: its scope, the container's web settings and sub-requests."""

    def __init__(self, app, scope, send, account, container, obj, meta):
        self.app, self.scope, self.send = app, scope, send
        self.account, self.container, self.obj = account, container, obj
        self.index = _meta(meta, "web-index")
        self.error = _meta(meta, "web-error")
        self.listings = _meta(meta, "web-listings")
        self.label = _meta(meta, "web-listings-label")
        self.css = _meta(meta, "web-listings-css")
        self.dir_type = _meta(meta, "web-directory-type") or "application/directory"
        self.head = scope["method"] == "HEAD"

    # --- sub-requests -------------------------------------------------------------------

    def _scope(self, method: str, path: str, query: str = "", all_headers: bool = True):
        """A request for ``path`` (/v1/…, decoded) through the app, as the client."""
        root = self.scope.get("root_path", "")
        headers = self.scope.get("headers", [])
        if not all_headers:  # swift's make_env: who asks, not what they asked for
            headers = [(k, v) for k, v in headers
                       if k in (b"x-auth-token", b"host", b"user-agent", b"x-web-mode")]
        # no zero-copy send (wsgi/http_protocol.py) in a sub-request: its answer may be
        # read here, and such a send's bytes go to the socket, never through ``send``
        extensions = {k: v for k, v in self.scope.get("extensions", {}).items()
                      if k != "http.response.zerocopysend"}
        return {**self.scope, "method": method, "path": root + path.rstrip("/"),
                "raw_path": (root + urllib.parse.quote(path)).encode(),
                "query_string": query.encode(), "headers": list(headers),
                TRAILING_SLASH_KEY: False, "extensions": extensions}

    async def fetch(self, method: str, path: str, query: str = "",
                    all_headers: bool = True) -> tuple[int, list, bytes]:
        """(status, headers, body) of a sub-request, read whole (small answers only)."""
        got = {"status": 500, "headers": [], "body": bytearray()}

        async def capture(message):
            if message["type"] == "http.response.start":
                got["status"], got["headers"] = message["status"], message.get("headers", [])
            elif message["type"] == "http.response.body":
                got["body"] += message.get("body", b"")

        await self.app(self._scope(method, path, query, all_headers), _no_body, capture)
        return got["status"], list(got["headers"]), bytes(got["body"])

    async def stream_if(self, method: str, path: str, accept) -> tuple | None:
        """A sub-request whose answer goes straight to the client when ``accept(status,
        headers)`` says so (None then); otherwise (status, headers, body) of it."""
        state = {"accepted": None, "status": 0, "headers": [], "body": bytearray()}

        async def decide(message):
            if message["type"] == "http.response.start":
                state["status"], state["headers"] = message["status"], message.get(
                    "headers", [])
                state["accepted"] = accept(message["status"], _headers(message))
                if state["accepted"]:
                    await self.send(message)
            elif state["accepted"]:
                await self.send(message)
            else:
                state["body"] += message.get("body", b"")

        await self.app(self._scope(method, path), _no_body, decide)
        if state["accepted"]:
            return None
        return state["status"], list(state["headers"]), bytes(state["body"])

    # --- answers ------------------------------------------------------------------------

    async def answer(self, status: int, headers: list, body: bytes) -> None:
        """``body`` (none to a HEAD); a HEAD answer's own Content-Length is kept."""
        if not (self.head and not body and any(k.lower() == b"content-length"
                                               for k, _ in headers)):
            headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
        await self.send({"type": "http.response.start", "status": status,
                         "headers": headers})
        await self.send({"type": "http.response.body",
                         "body": b"" if self.head else body})

    async def error_response(self, status: int, headers: list, body: bytes,
                             custom: bool = True) -> None:
        """The error as is, or the container's ``<status><web-error>`` object with the
        status kept."""
        if custom and self.error:
            page = await self.fetch("GET", f"/v1/{self.account}/{self.container}/"
                                           f"{status}{self.error}", all_headers=False)
            if 200 <= page[0] < 300:
                return await self.answer(status, page[1], page[2])
        await self.answer(status, headers, body)

    async def not_found(self, body: bytes | None = None) -> None:
        text = body if body is not None else (
            b"<html><h1>Not Found</h1><p>The resource could not be found.</p></html>")
        await self.error_response(404, [(b"content-type", b"text/html; charset=UTF-8")],
                                  text)

    async def redirect_with_slash(self) -> None:
        scope = self.scope
        host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1")
        path = scope.get("raw_path") or scope["path"].encode()
        location = f"{scope.get('scheme', 'http')}://{host}" + \
            path.split(b"?", 1)[0].decode("latin-1") + "/"
        body = (b"<html><h1>Moved Permanently</h1><p>The resource has moved "
                b"permanently.</p></html>")
        await self.answer(301, [(b"content-type", b"text/html; charset=UTF-8"),
                                (b"location", location.encode("latin-1"))], body)

    # --- the two kinds of request -------------------------------------------------------

    async def container_request(self, slash: bool) -> None:
        base = f"/v1/{self.account}/{self.container}"
        status, headers, body = await self.fetch("HEAD", base, all_headers=False)
        if not 200 <= status < 300:  # the listing ACL decides, as swift's authorize
            return await self.error_response(status, headers, body)
        if not slash:
            return await self.redirect_with_slash()
        if not self.index:
            return await self.listing("")
        found = await self.stream_if(self.scope["method"], base + "/" + self.index,
                                     lambda status, headers: 200 <= status < 400)
        if found is None:
            return
        if found[0] == 404:
            return await self.listing("")
        await self.error_response(*found)

    async def object_request(self, slash: bool) -> None:
        base = f"/v1/{self.account}/{self.container}"
        name = self.obj + ("/" if slash else "")

        def is_object(status, headers):
            if not 200 <= status < 400:
                return False
            length = int(headers.get("content-length") or 0)
            return not (headers.get("content-type") == self.dir_type and length <= 1)

        found = await self.stream_if(self.scope["method"], f"{base}/{name}", is_object)
        if found is None:
            return
        status = found[0] if not 200 <= found[0] < 400 else 404  # a directory marker
        if status != 404:
            return await self.error_response(*found, custom=False)
        if self.index:
            index = await self.stream_if(
                self.scope["method"], f"{base}/{self.obj}/{self.index}",
                lambda status, headers: slash and 200 <= status < 400)
            if index is None:
                return
            if 200 <= index[0] < 400:
                return await self.redirect_with_slash()
        if not slash:
            query = urllib.parse.urlencode({"limit": "1", "delimiter": "/",
                                            "prefix": self.obj + "/", "format": "json"})
            status, _, body = await self.fetch("GET", base, query, all_headers=False)
            if not 200 <= status < 300 or not body or not json.loads(body):
                return await self.not_found()
            return await self.redirect_with_slash()
        await self.listing(name)

    async def listing(self, prefix: str) -> None:
        """swift's staticweb listing page, byte for byte."""
        path = f"/v1/{self.account}/{self.container}/{prefix}"
        label = path
        if self.label:
            label = "{0}/{1}".format(self.label, "/".join(path.split("/")[4:]))
        if not _true(self.listings):
            body = ("<!DOCTYPE html>\n<html>\n<head>\n"
                    "<title>Listing of %s</title>\n" % html.escape(label))
            if self.css:
                body += ('  <link rel="stylesheet" type="text/css" href="%s" />\n'
                         % self._css_path(prefix))
            else:
                body += ("  <style type=\"text/css\">\n"
                         "   h1 {font-size: 1em; font-weight: bold;}\n"
                         "   p {font-size: 2}\n  </style>\n")
            body += ("</head>\n<body>  <h1>Web Listing Disabled</h1>"
                     "   <p>The owner of this web site has disabled web listing."
                     "   <p>If you are the owner of this web site, you can enable"
                     "   web listing by setting X-Container-Meta-Web-Listings.</p>")
            if self.index:
                body += ("<h1>Index File Not Found</h1> <p>The owner of this web site has "
                         "set  <b>X-Container-Meta-Web-Index: %s</b>.  However, this file "
                         "is not found.</p>" % self.index)
            body += " </body>\n</html>\n"
            return await self.not_found(body.encode())
        query = urllib.parse.urlencode({"delimiter": "/", "format": "json",
                                        **({"prefix": prefix} if prefix else {})})
        status, headers, raw = await self.fetch(
            "GET", f"/v1/{self.account}/{self.container}", query, all_headers=False)
        if not 200 <= status < 300:
            return await self.error_response(status, headers, raw)
        entries = json.loads(raw) if raw else []
        if prefix and not entries:
            return await self.not_found()
        body = ("<!DOCTYPE html>\n<html>\n <head>\n  <title>Listing of %s</title>\n"
                % html.escape(label))
        if self.css:
            body += ('  <link rel="stylesheet" type="text/css" href="%s" />\n'
                     % self._css_path(prefix))
        else:
            body += ("  <style type=\"text/css\">\n"
                     "   h1 {font-size: 1em; font-weight: bold;}\n"
                     "   th {text-align: left; padding: 0px 1em 0px 1em;}\n"
                     "   td {padding: 0px 1em 0px 1em;}\n"
                     "   a {text-decoration: none;}\n  </style>\n")
        body += (" </head>\n <body>\n  <h1 id=\"title\">Listing of %s</h1>\n"
                 "  <table id=\"listing\">\n   <tr id=\"heading\">\n"
                 "    <th class=\"colname\">Name</th>\n"
                 "    <th class=\"colsize\">Size</th>\n"
                 "    <th class=\"coldate\">Date</th>\n   </tr>\n" % html.escape(label))
        if prefix:
            body += ("   <tr id=\"parent\" class=\"item\">\n"
                     "    <td class=\"colname\"><a href=\"../\">../</a></td>\n"
                     "    <td class=\"colsize\">&nbsp;</td>\n"
                     "    <td class=\"coldate\">&nbsp;</td>\n   </tr>\n")
        for item in entries:
            if "subdir" in item:
                subdir = item["subdir"][len(prefix):]
                body += ("   <tr class=\"item subdir\">\n"
                         "    <td class=\"colname\"><a href=\"./%s\">%s</a></td>\n"
                         "    <td class=\"colsize\">&nbsp;</td>\n"
                         "    <td class=\"coldate\">&nbsp;</td>\n   </tr>\n"
                         % (urllib.parse.quote(subdir).replace(".", "%2E"),
                            html.escape(subdir)))
        for item in entries:
            if "name" in item:
                name = item["name"][len(prefix):]
                modified = html.escape(item["last_modified"]).split(".")[0].replace("T", " ")
                body += ("   <tr class=\"item %s\">\n"
                         "    <td class=\"colname\"><a href=\"./%s\">%s</a></td>\n"
                         "    <td class=\"colsize\">%s</td>\n"
                         "    <td class=\"coldate\">%s</td>\n   </tr>\n"
                         % (" ".join("type-" + html.escape(t.lower())
                                     for t in item["content_type"].split("/")),
                            urllib.parse.quote(name).replace(".", "%2E"),
                            html.escape(name), human_readable(item["bytes"]), modified))
        body += "  </table>\n </body>\n</html>\n"
        await self.answer(200, [(b"content-type", b"text/html; charset=UTF-8")],
                          body.encode())

    def _css_path(self, prefix: str) -> str:
        if self.css.startswith(("/", "http://", "https://")):
            return urllib.parse.quote(self.css, ":/")
        return "../" * prefix.count("/") + urllib.parse.quote(self.css)


def _headers(message) -> dict:
    return {k.decode("latin-1").lower(): v.decode("latin-1")
            for k, v in message.get("headers", [])}


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def wrap(app):
    async def staticweb(scope, receive, send):
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            return await app(scope, receive, send)
        web_mode = _true(_header(scope, b"x-web-mode"))
        query = scope.get("query_string", b"")
        if (_header(scope, b"x-auth-token") and not web_mode) or b"temp_url_sig" in query:
            return await app(scope, receive, send)
        account, container, obj = cors.split(scope)
        if account is None or container is None:
            return await app(scope, receive, send)
        try:
            found = await run_in_threadpool(api.find_container, account, container)
        except SwiftError:
            found = None
        if found is None:
            return await app(scope, receive, send)
        meta = found.meta
        site = _Site(app, scope, send, account, container, obj, meta)
        if not site.index and not site.listings:
            if obj is None and web_mode:
                return await site.not_found()
            return await app(scope, receive, send)
        slash = bool(scope.get(TRAILING_SLASH_KEY))
        if obj is None:
            return await site.container_request(slash)
        return await site.object_request(slash)
    return staticweb
