"""Object storage pages: the project's containers (objects, bytes), create, delete (an
empty one); a container's page says whether it is public and makes it public or private,
and lists its objects with pseudo-folders (prefix and "/" delimiter): upload with a
progress bar, download, delete.

A client of the Swift API with the user's token, like every page. An upload and a download
are streamed through chunk by chunk (as the image upload is), never held here whole. The
API's refusal (swift's plain-text reason, or its HTML page's sentence) is shown with its
status.
"""
from __future__ import annotations

import asyncio
import posixpath

import httpx
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import API_TIMEOUT, PAGE, PREFIX

NO_SERVICE = "This cloud has no object storage service."
PUBLIC_READ = ".r:*,.rlistings"  # anyone may read the objects and list the container
CSRF_HEADER = "X-CSRF-Token"  # the upload is not a form: its token travels in a header


def _json(status: int, **body) -> JSONResponse:
    return JSONResponse(body, status, headers={"Cache-Control": "no-store"})


def _at(account: str, container: str) -> str | None:
    """A container's URL; None for no name (the account's own). Swift allows a name of
    spaces, so unlike web.item a blank one is a name."""
    return f"{account}/{web.q(container)}" if container else None


def _status(r: httpx.Response) -> int:
    return r.status_code if 400 <= r.status_code < 500 else 502


async def _passed_on(upstream: httpx.Response):
    """The object's bytes as swift sends them; the connection is let go however the
    download ends (done, or the browser gone half-way)."""
    try:
        async for chunk in upstream.aiter_raw():
            yield chunk
    finally:
        await upstream.aclose()


class ObjectStorePages:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        both = ["GET", "POST"]
        return [Route(PREFIX + "/containers", self.containers, methods=both),
                Route(PREFIX + "/containers/{container}", self.objects, methods=both),
                Route(PREFIX + "/containers/{container}/object", self.object,
                      methods=["GET", "PUT"])]

    async def _swift(self, session, method: str, url: str, headers: dict | None = None,
                     **params) -> httpx.Response:
        async with self.pages.dash._client() as client:
            return await client.request(method, url, params=params or None, headers={
                "X-Auth-Token": session.token, **(headers or {})})

    @staticmethod
    def _failed(r: httpx.Response):
        return None if r.is_success else (web.api_error(r), _status(r))

    # -- containers -----------------------------------------------------------------

    async def containers(self, request: Request) -> Response:
        async def show(session, message=None, status=200, form=None):
            account = session.endpoint("object-store")
            if account is None:
                return web.render("error.html", 404, session=session, message=NO_SERVICE)
            marker = request.query_params.get("marker")
            r = await self._swift(session, "GET", account, format="json", limit=PAGE,
                                  **({"marker": marker} if marker else {}))
            if r.status_code not in (200, 204):
                return self.pages.dash._error(session, r)
            # Whether one is public is in its own headers, not in the listing: its page
            # says (a HEAD for each of 50 containers would cost the list ~15 times more).
            items = r.json() if r.status_code == 200 else []
            next_marker = items[-1]["name"] if len(items) == PAGE else None
            return web.render("containers.html", status, session=session, containers=items,
                              message=message, form=form or {}, next_marker=next_marker)

        async def act(session, form):
            account = session.endpoint("object-store")
            if account is None:
                return NO_SERVICE, 404
            action, name = form.get("action", ""), form.get("container", "")
            url = _at(account, name)
            if url is None:
                return "Name the container.", 400
            if "/" in name:  # would name an object in another container
                return "A container name may not contain '/'.", 400
            if action == "create":
                r = await self._swift(session, "PUT", url)
                if r.status_code == 202:  # swift's answer when it already exists
                    return f"The container {name} already exists.", 409
                return self._failed(r)
            if action == "delete":
                return self._failed(await self._swift(session, "DELETE", url))
            return "Unknown form action.", 400
        return await self.pages._page(request, show, act)

    # -- objects --------------------------------------------------------------------

    async def objects(self, request: Request) -> Response:
        container = request.path_params["container"]
        prefix = request.query_params.get("prefix", "")
        here = f"{PREFIX}/containers/{web.q(container)}"
        back = here + (f"?prefix={web.q(prefix)}" if prefix else "")

        async def show(session, message=None, status=200, form=None):
            account = session.endpoint("object-store")
            if account is None:
                return web.render("error.html", 404, session=session, message=NO_SERVICE)
            marker = request.query_params.get("marker")
            url = _at(account, container)
            r, head = await asyncio.gather(
                self._swift(session, "GET", url, format="json", limit=PAGE, delimiter="/",
                            prefix=prefix, **({"marker": marker} if marker else {})),
                self._swift(session, "HEAD", url))
            if r.status_code not in (200, 204):
                return self.pages.dash._error(session, r)
            public = ".r:*" in head.headers.get("X-Container-Read", "")
            items = r.json() if r.status_code == 200 else []
            folders = [i["subdir"] for i in items if "subdir" in i]
            files = [i for i in items if "name" in i]
            last = items[-1] if len(items) == PAGE else None
            parent = posixpath.dirname(prefix.rstrip("/"))
            return web.render("objects.html", status, session=session, container=container,
                              here=here, folder=prefix, folders=folders, objects=files,
                              parent=parent + "/" if parent else "", message=message,
                              public=public,
                              next_marker=last and (last.get("name") or last.get("subdir")),
                              form=form or {})

        async def act(session, form):
            account = session.endpoint("object-store")
            if account is None:
                return NO_SERVICE, 404
            url = _at(account, container)
            action = form.get("action", "")
            if action == "public":
                return self._failed(await self._swift(session, "POST", url, {
                    "X-Container-Read": PUBLIC_READ}))
            if action == "private":
                return self._failed(await self._swift(session, "POST", url, {
                    "X-Remove-Container-Read": "x"}))
            if action != "delete":
                return "Unknown form action.", 400
            name = form.get("object", "")
            if not name:
                return "Choose what to delete.", 400
            return self._failed(await self._swift(
                session, "DELETE", f"{url}/{web.q(name)}"))
        return await self.pages._page(request, show, act, back=back)

    def _object_url(self, session, request: Request) -> str | None:
        account = session.endpoint("object-store")
        name = request.query_params.get("name", "")
        if account is None or not name:
            return None
        return f"{_at(account, request.path_params['container'])}/{web.q(name)}"

    async def object(self, request: Request) -> Response:
        """GET: the object's bytes as a download; PUT: the request's body as the object
        (from upload.js, whose progress events move the bar)."""
        session = self.pages.dash._session(request)
        if request.method == "PUT":
            return await self._upload(request, session)
        if session is None:
            return self.pages.dash._to_login()
        url = self._object_url(session, request)
        if url is None:
            return web.render("error.html", 400, session=session,
                              message="Name the object to download.")
        return await self._download(session, url, request.query_params["name"])

    async def _download(self, session, url: str, name: str) -> Response:
        async with self.pages.dash._client() as client:
            upstream = await client.send(client.build_request(
                "GET", url, headers={"X-Auth-Token": session.token}), stream=True)
        if upstream.status_code != 200:
            await upstream.aread()
            await upstream.aclose()
            return self.pages.dash._error(session, upstream)
        filename = posixpath.basename(name) or "object"
        headers = {
            # Served from the dashboard's origin: always a download, never a page that
            # could run a script with the user's session.
            "Content-Disposition": f"attachment; filename*=UTF-8''{web.q(filename)}",
            "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
            "Content-Security-Policy": "sandbox"}
        if upstream.headers.get("content-length"):
            headers["Content-Length"] = upstream.headers["content-length"]
        return StreamingResponse(_passed_on(upstream), 200, headers=headers,
                                 media_type="application/octet-stream")

    async def _upload(self, request: Request, session) -> Response:
        if session is None:
            return _json(401, error="Not logged in.")
        if not web.same(request.headers.get(CSRF_HEADER), session.csrf):
            return _json(403, error="The form expired; please reload the page and try again.")
        url = self._object_url(session, request)
        if url is None:
            return _json(400, error="Name the object.")
        headers = {"X-Auth-Token": session.token,
                   "Content-Type": request.headers.get("content-type") or
                   "application/octet-stream"}
        if request.headers.get("content-length"):  # else httpx sends it chunked
            headers["Content-Length"] = request.headers["content-length"]
        try:
            async with self.pages.dash._client() as client:  # no write timeout: a slow
                r = await client.put(url, content=request.stream(),  # browser
                                     headers=headers,
                                     timeout=httpx.Timeout(API_TIMEOUT, write=None))
        except (ClientDisconnect, httpx.HTTPError) as e:
            # Swift stores an object only once its whole body arrived: nothing half-made.
            return _json(502, error=f"The upload broke off: {type(e).__name__}.")
        if r.status_code != 201:
            return _json(_status(r), error=web.api_error(r))
        container = request.path_params["container"]
        prefix = posixpath.dirname(request.query_params["name"])
        location = f"{PREFIX}/containers/{web.q(container)}" + (
            f"?prefix={web.q(prefix + '/')}" if prefix else "")
        return _json(200, location=location)
