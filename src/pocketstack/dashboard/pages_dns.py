"""DNS pages: the project's zones (name, status, serial) with create and delete, and a
zone's recordsets (name, type, records, TTL, status) with create and delete.

A client of the Designate API with the user's token, like every page; designate's refusal
(its message) is shown with its status. A recordset's name may be typed relative to the
zone ("www", or "@" for the zone itself): it goes to the API as the full name.
"""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import DNS, PREFIX

NO_SERVICE = "This cloud has no DNS service."
NO_ZONE = "No such zone."
TYPES = ("A", "AAAA", "CNAME", "MX", "TXT", "SRV", "NS", "PTR", "CAA", "SSHFP", "SPF")


def full_name(typed: str, zone: str) -> str:
    """``www`` -> ``www.<zone>``; ``@`` or nothing -> the zone; a name ending in "." as is."""
    typed = typed.strip()
    if typed in ("", "@"):
        return zone
    return typed if typed.endswith(".") else f"{typed}.{zone}"


class DnsPages:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        both = ["GET", "POST"]
        return [Route(PREFIX + "/zones", self.zones, methods=both),
                Route(PREFIX + "/zones/{zone_id}", self.recordsets, methods=both)]

    def _zones_url(self, session) -> str | None:
        base = session.endpoint(DNS[0])
        return base and base + "/v2/zones"

    async def zones(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            url = self._zones_url(session)
            if url is None:
                return web.render("error.html", 404, session=session, message=NO_SERVICE)
            items, next_marker, error = await p._paged(request, session, url, "zones")
            if error:
                return error
            return web.render("zones.html", status, session=session, zones=items,
                              message=message, form=form or {}, next_marker=next_marker)

        async def act(session, form):
            url = self._zones_url(session)
            if url is None:
                return NO_SERVICE, 404
            action = form.get("action", "")
            if action == "delete":
                return await p._delete(session, web.item(url, form.get("zone_id", "")))
            if action != "create":
                return "Unknown form action.", 400
            zone = {"name": form.get("name", "").strip(), "email": form.get("email", "").strip()}
            if form.get("ttl", "").strip():
                zone["ttl"] = web.number(form["ttl"])
            if form.get("description", "").strip():
                zone["description"] = form["description"].strip()
            return p._failed(await p._call(session, "POST", url, zone))
        return await p._page(request, show, act)

    async def recordsets(self, request: Request) -> Response:
        p = self.pages
        zone_id = request.path_params["zone_id"]

        async def show(session, message=None, status=200, form=None):
            url = self._zones_url(session)
            if url is None:
                return web.render("error.html", 404, session=session, message=NO_SERVICE)
            if web.item(url, zone_id) is None:  # a blank id: not a zone's
                return web.render("error.html", 404, session=session, message=NO_ZONE)
            zone = await p._call(session, "GET", web.item(url, zone_id))
            if zone.status_code != 200:
                return p.dash._error(session, zone)
            zone = zone.json()
            items, next_marker, error = await p._paged(
                request, session, f"{web.item(url, zone_id)}/recordsets", "recordsets")
            if error:
                return error
            for rs in items:  # designate keeps the zone's own SOA and NS records itself
                rs["managed"] = rs["type"] == "SOA" or (
                    rs["type"] == "NS" and rs["name"] == zone["name"])
            return web.render("recordsets.html", status, session=session, zone=zone,
                              recordsets=items, types=TYPES, message=message,
                              form=form or {}, next_marker=next_marker)

        async def act(session, form):
            url = self._zones_url(session)
            if url is None:
                return NO_SERVICE, 404
            zone_url = web.item(url, zone_id)
            if zone_url is None:
                return NO_ZONE, 404
            action = form.get("action", "")
            if action == "delete":
                return await p._delete(session, web.item(zone_url + "/recordsets",
                                                         form.get("recordset_id", "")))
            if action != "create":
                return "Unknown form action.", 400
            zone = await p._call(session, "GET", zone_url)
            if zone.status_code != 200:
                return p._failed(zone)
            records = [line.strip() for line in form.get("records", "").splitlines()
                       if line.strip()]
            recordset = {"name": full_name(form.get("name", ""), zone.json()["name"]),
                         "type": form.get("type", ""), "records": records}
            if form.get("ttl", "").strip():
                recordset["ttl"] = web.number(form["ttl"])
            return p._failed(await p._call(session, "POST", zone_url + "/recordsets",
                                           recordset))
        return await p._page(request, show, act)
