"""JSON for the pages' live progress (static/live.js polls it): a server's status, task and
fault while a long action runs (boot, resize, reboot ...), and the statuses of the volumes,
snapshots or backups on a page while one is being created, attached or deleted. So a long
action ends in its result, or its fault, on the page without a reload.

Like the pages, a client of the APIs with the user's token: what the API refuses is the
JSON's ``error`` with the API's status.
"""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import COMPUTE, PAGE, PREFIX

# page path -> the block storage collection whose statuses it shows
VOLUME_KINDS = {"volumes": "volumes", "volumes/snapshots": "snapshots",
                "volumes/backups": "backups"}


def _json(body: dict, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status, headers={"Cache-Control": "no-store"})


class Progress:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        return [Route(PREFIX + "/servers/{server_id}/progress", self.server),
                *(Route(f"{PREFIX}/{path}/status", self._statuses(kind))
                  for path, kind in VOLUME_KINDS.items())]

    async def server(self, request: Request) -> Response:
        session = self.pages.dash._session(request)
        if session is None:
            return _json({"error": "Not logged in."}, 401)
        url = (self.pages._base(session, COMPUTE) + "/servers/" +
               web.q(request.path_params["server_id"]))
        r = await self.pages._call(session, "GET", url)
        if r.status_code != 200:
            return _json({"error": web.api_error(r)}, r.status_code)
        server = r.json()["server"]
        return _json({"status": server["status"],
                      "task_state": server.get("OS-EXT-STS:task_state"),
                      "progress": server.get("progress"),
                      "fault": (server.get("fault") or {}).get("message")})

    def _statuses(self, kind: str):
        async def statuses(request: Request) -> Response:
            """{id: status} of the page's items: the same page (marker) as the list."""
            session = self.pages.dash._session(request)
            if session is None:
                return _json({"error": "Not logged in."}, 401)
            base = self.pages._volume_base(session)
            if base is None:
                return _json({"error": "This cloud has no block storage service."}, 404)
            marker = request.query_params.get("marker")
            r = await self.pages._call(session, "GET", f"{base}/{kind}/detail", limit=PAGE,
                                       **({"marker": marker} if marker else {}))
            if r.status_code != 200:
                return _json({"error": web.api_error(r)}, r.status_code)
            return _json({item["id"]: item["status"] for item in r.json().get(kind, [])})
        return statuses
