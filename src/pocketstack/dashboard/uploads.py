"""Image upload from the browser, with a progress bar (static/upload.js).

Two steps, both JSON for the script: ``POST /images/new`` creates the image record in
glance with the form's fields, then the browser PUTs the file's bytes to
``/images/{id}/file`` with XMLHttpRequest (whose upload events drive the bar). That
request's body is passed on to glance chunk by chunk as it arrives, so a large image is
never held in this process's memory. A refused or broken upload deletes the image record
again while it is still queued: no image without data is left behind.
"""
from __future__ import annotations

import asyncio
import time
import urllib.parse

import httpx
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import API_TIMEOUT, IMAGE, PREFIX

CSRF_HEADER = "X-CSRF-Token"  # the upload is not a form: its token travels in a header
SETTLE_SECONDS = 10.0  # an upload that broke off: how long glance may take to notice


def _json(status: int, **body) -> JSONResponse:
    return JSONResponse(body, status, headers={"Cache-Control": "no-store"})


def _refused(r: httpx.Response) -> JSONResponse:
    return _json(r.status_code if 400 <= r.status_code < 500 else 502, error=web.api_error(r))


class Uploads:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        return [Route(PREFIX + "/images/new", self.create, methods=["POST"]),
                Route(PREFIX + "/images/{image_id}/file", self.upload, methods=["PUT"])]

    def _images_url(self, session) -> str:
        return self.pages._base(session, IMAGE) + "/v2/images"

    async def create(self, request: Request) -> Response:
        session = self.pages.dash._session(request)
        if session is None:
            return _json(401, error="Not logged in.")
        if "application/json" not in request.headers.get("accept", ""):
            # The form posted by a browser without JavaScript: it sent no file.
            return RedirectResponse(PREFIX + "/images?upload=needs-script", 303)
        form = await web.form(request)
        if not web.same(form.get("csrf_token"), session.csrf):
            return _json(403, error="The form expired; please reload the page and try again.")
        image = {key: form.get(key, "") for key in ("name", "disk_format",
                                                       "container_format", "visibility")}
        image = {k: v for k, v in image.items() if v != "" or k == "name"}
        r = await self.pages._call(session, "POST", self._images_url(session), image)
        if r.status_code != 201:
            return _refused(r)
        image_id = r.json()["id"]
        return _json(201, id=image_id, upload=f"{PREFIX}/images/{image_id}/file")

    async def upload(self, request: Request) -> Response:
        session = self.pages.dash._session(request)
        if session is None:
            return _json(401, error="Not logged in.")
        if not web.same(request.headers.get(CSRF_HEADER), session.csrf):
            return _json(403, error="The form expired; please reload the page and try again.")
        url = f"{self._images_url(session)}/{_quote(request.path_params['image_id'])}"
        headers = {"X-Auth-Token": session.token, "Content-Type": "application/octet-stream"}
        if request.headers.get("content-length"):  # else httpx sends it chunked
            headers["Content-Length"] = request.headers["content-length"]
        try:
            async with self.pages.dash._client() as client:  # no write timeout: a slow
                r = await client.put(url + "/file", content=request.stream(),  # browser
                                     headers=headers,
                                     timeout=httpx.Timeout(API_TIMEOUT, write=None))
        except (ClientDisconnect, httpx.HTTPError) as e:
            # Glance puts the image back to queued once it sees our side go: wait for it.
            await self._forget(session, url, settle=SETTLE_SECONDS)
            return _json(502, error=f"The upload broke off: {type(e).__name__}.")
        if r.status_code != 204:
            await self._forget(session, url)
            return _refused(r)
        return _json(200, id=request.path_params["image_id"], location=PREFIX + "/images")

    async def _forget(self, session, url: str, settle: float = 0.0) -> None:
        """Delete the image when it is still queued (no data): one this upload failed to
        fill. An image that has data (say, a second upload to it was refused) is kept.
        ``settle``: seconds to wait for an upload glance is still ending (saving)."""
        deadline = time.monotonic() + settle
        while True:
            r = await self.pages._call(session, "GET", url)
            status = r.json().get("status") if r.status_code == 200 else None
            if status != "saving" or time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.05)
        if status == "queued":
            await self.pages._call(session, "DELETE", url)


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")
