"""Volume snapshot and backup pages of the dashboard: list, create from a volume, delete;
restore a backup to a new volume, or over an existing one once the user confirms it.

Clients of the block storage API with the user's token, like pages.py; the API's refusal
(a volume in use without force, a snapshot that has volumes) is shown on the page.
"""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import PREFIX

NO_VOLUME_SERVICE = "This cloud has no block storage service."

# page path -> (collection, the API's key for one item and for the list, template)
KINDS = {"snapshots": ("snapshots", "snapshot", "volume_snapshots.html"),
         "backups": ("backups", "backup", "volume_backups.html")}


class StoragePages:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        both = ["GET", "POST"]
        return [Route(PREFIX + "/volumes/snapshots", self.snapshots, methods=both),
                Route(PREFIX + "/volumes/backups", self.backups, methods=both)]

    async def snapshots(self, request: Request) -> Response:
        return await self._kind(request, "snapshots")

    async def backups(self, request: Request) -> Response:
        return await self._kind(request, "backups")

    async def _kind(self, request: Request, kind: str) -> Response:
        p = self.pages
        collection, one, template = KINDS[kind]

        async def show(session, message=None, status=200, form=None, confirm=None,
                       notice=None):
            base = p._volume_base(session)
            if base is None:
                return web.render("error.html", 404, session=session, message=NO_VOLUME_SERVICE)
            items, next_marker, error = await p._paged(request, session,
                                                       f"{base}/{collection}/detail",
                                                       collection)
            if error:
                return error
            # The detail: a restore goes only over an available volume.
            volumes, _ = await p._list(session, base + "/volumes/detail", "volumes")
            return web.render(template, status, session=session, items=items,
                           volumes=volumes or [],
                           volume_names={v["id"]: v["name"] or v["id"] for v in volumes or []},
                           message=message, form=form or {}, next_marker=next_marker,
                           confirm=confirm, notice=notice)

        async def act(session, form):
            base = p._volume_base(session)
            if base is None:
                return NO_VOLUME_SERVICE, 404
            url = f"{base}/{collection}"
            action = form.get("action", "")
            if action == "delete":
                return await p._delete(session, web.item(url, form.get("item_id", "")))
            if action == "restore" and kind == "backups":
                return await self._restore(session, url, form)
            if action != "create":
                return "Unknown form action.", 400
            volume = form.get("volume_id", "").strip()
            if not volume:
                return "Choose a volume.", 400
            body = {"volume_id": volume, "name": form.get("name", ""),
                    "description": form.get("description", "")}
            if form.get("force") == "yes":  # of a volume in use (attached to a server)
                body["force"] = True
            if kind == "backups" and form.get("incremental") == "yes":
                body["incremental"] = True
            return p._failed(await p._call(session, "POST", url, {one: body}))
        return await p._page(request, show, act)

    async def _restore(self, session, url: str, form: dict):
        """To a new volume at once; over an existing volume (which loses its data) only
        with ``confirm=yes``, else the page asks first."""
        p = self.pages
        backup = web.item(url, form.get("item_id", ""))
        if backup is None:
            return "Choose a backup to restore.", 400
        volume = form.get("volume_id", "").strip()
        if volume and form.get("confirm") != "yes":
            return {"confirm": {"item_id": form["item_id"], "volume_id": volume}}
        body = {"volume_id": volume} if volume else {
            "name": form.get("name", "").strip() or None}
        r = await p._call(session, "POST", backup + "/restore", {"restore": body})
        if (failure := p._failed(r)):
            return failure
        return {"notice": f"Restoring into volume {r.json()['restore']['volume_name']}."}
