"""The key manager page: the project's secrets (metadata only: name, type, algorithm, bit
length, expiration, created; the payload is never fetched) with delete, and the secret
containers with the secrets they hold.

A client of the Barbican API with the user's token, like every page; Barbican's refusal
(its description) is shown with its status.
"""
from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import KEYMANAGER, PAGE, PREFIX

NO_SERVICE = "This cloud has no key manager service."


def _id(ref: str) -> str:
    """A secret's or container's id: the last part of its ref."""
    return (ref or "").rstrip("/").rsplit("/", 1)[-1]


def _offset(text: str | None) -> int:
    return int(text) if text and text.isascii() and text.isdigit() else 0


class KeyManagerPages:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        return [Route(PREFIX + "/secrets", self.secrets, methods=["GET", "POST"])]

    def _base(self, session) -> str | None:
        base = session.endpoint(KEYMANAGER[0])
        return base and base + "/v1"

    async def secrets(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            base = self._base(session)
            if base is None:
                return web.render("error.html", 404, session=session, message=NO_SERVICE)
            offset = _offset(request.query_params.get("offset"))
            listed, containers = await asyncio.gather(
                p._call(session, "GET", base + "/secrets", limit=PAGE, offset=offset),
                p._call(session, "GET", base + "/containers", limit=PAGE))
            for r in (listed, containers):
                if r.status_code != 200:
                    return p.dash._error(session, r)
            body = listed.json()
            secrets = body.get("secrets", [])
            for s in secrets:
                s["id"] = _id(s.get("secret_ref", ""))
            return web.render("secrets.html", status, session=session, secrets=secrets,
                              containers=containers.json().get("containers", []),
                              names={s["secret_ref"]: s.get("name") for s in secrets},
                              next_offset=offset + PAGE if body.get("next") else None,
                              message=message, form=form or {})

        async def act(session, form):
            base = self._base(session)
            if base is None:
                return NO_SERVICE, 404
            if form.get("action") != "delete":
                return "Unknown form action.", 400
            return await p._delete(session, web.item(base + "/secrets",
                                                     form.get("secret_id", "")))
        return await p._page(request, show, act)
