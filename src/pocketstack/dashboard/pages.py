"""Resource pages of the dashboard: admin (hypervisors, services, all servers, flavors,
fault rules), volumes, keypairs, images and networks.

Like app.py, every page is a client of the public APIs with the user's token: what a member
may not see, the API refuses, and its message is shown with its status. Each resource has
one page; its forms post back to that page with an ``action`` field, and an API error
re-renders the page with the API's message (never a 500).
"""
from __future__ import annotations

import asyncio

import httpx
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pocketstack.control import faults  # only its names of operations and actions
from pocketstack.dashboard import (pages_admin, pages_dns, pages_keymanager,
                                   pages_loadbalancer, pages_network, pages_objectstore,
                                   pages_storage, progress, topology, uploads, web)
from pocketstack.dashboard.web import (COMPUTE, CONTROL, IMAGE, NETWORK, PAGE, PREFIX,
                                         SERVER_CHOICES)

async def _no_list():
    return [], None


# Cinder deletes a volume only in these statuses, unattached, in no group, without
# snapshots; nova detaches no volume on the root device (the boot volume).
DELETABLE_VOLUME = ("available", "error", "error_restoring", "error_extending",
                    "error_managing")
ROOT_DEVICES = ("/dev/vda", "/dev/sda", "/dev/xvda", "/dev/hda")


def _volume_actions(volumes: list[dict], snapshots: list[dict]) -> None:
    """Mark on each volume what the APIs would accept: ``deletable``, and per attachment
    ``detachable``."""
    with_snapshots = {s.get("volume_id") for s in snapshots}
    for v in volumes:
        v["deletable"] = (v.get("status") in DELETABLE_VOLUME and not v.get("attachments")
                          and not v.get("group_id") and v["id"] not in with_snapshots)
        for a in v.get("attachments") or []:
            a["detachable"] = a.get("device") not in ROOT_DEVICES


def _percent(used, total) -> int | None:
    return min(100, round(used / total * 100)) if total and total > 0 else None


class Pages:
    def __init__(self, dashboard):
        self.dash = dashboard

    def routes(self) -> list[Route]:
        both = ["GET", "POST"]
        return [
            Route(PREFIX + "/admin/hypervisors", self.hypervisors),
            Route(PREFIX + "/admin/services", self.services),
            Route(PREFIX + "/admin/servers", self.all_servers),
            Route(PREFIX + "/admin/flavors", self.flavors, methods=both),
            Route(PREFIX + "/admin/faults", self.faults, methods=both),
            Route(PREFIX + "/volumes", self.volumes, methods=both),
            Route(PREFIX + "/keypairs", self.keypairs, methods=both),
            Route(PREFIX + "/images", self.images, methods=both),
            *uploads.Uploads(self).routes(),
            Route(PREFIX + "/networks", self.networks, methods=both),
            Route(PREFIX + "/networks/topology", self.topology),
            *pages_network.NetworkPages(self).routes(),
            *pages_loadbalancer.LoadBalancerPages(self).routes(),
            *pages_objectstore.ObjectStorePages(self).routes(),
            *pages_keymanager.KeyManagerPages(self).routes(),
            *pages_dns.DnsPages(self).routes(),
            *pages_storage.StoragePages(self).routes(),
            *pages_admin.AdminPages(self).routes(),
            *progress.Progress(self).routes(),
        ]

    # -- plumbing ---------------------------------------------------------------------

    def _base(self, session, service: tuple[str, str]) -> str:
        if service == CONTROL:  # not in the catalog: pocketstack's own API on this cloud
            from pocketstack.common import config
            return config.public_url() + "/pocketstack"
        return self.dash._url(session, *service)

    def _volume_base(self, session) -> str | None:
        return session.endpoint("block-storage") or session.endpoint("volumev3")

    async def _call(self, session, method: str, url: str, body: dict | None = None,
                    **params) -> httpx.Response:
        headers = {"X-Auth-Token": session.token, "Accept": "application/json"}
        async with self.dash._client() as client:
            return await client.request(method, url, json=body, params=params or None,
                                        headers=headers)

    async def _paged(self, request: Request, session, url: str, key: str, **params):
        """(items, next marker or None, None) or (None, None, error response)."""
        marker = request.query_params.get("marker")
        items, error = await self._list(session, url, key, limit=PAGE, **params,
                                        **({"marker": marker} if marker else {}))
        if error:
            return None, None, error
        return items, items[-1]["id"] if len(items) == PAGE else None, None

    async def _list(self, session, url: str, key: str, **params):
        """(items, None) or (None, error response) for a GET of a collection."""
        r = await self._call(session, "GET", url, **params)
        if r.status_code != 200:
            return None, self.dash._error(session, r)
        return r.json().get(key, []), None

    async def _posted(self, request: Request, session):
        """The posted form, or an error page when its CSRF token is missing or wrong."""
        form = await web.form(request)
        if not web.same(form.get("csrf_token"), session.csrf):
            return form, web.render("error.html", 403, session=session,
                                 message="The form expired; please reload the page and try "
                                         "again.")
        return form, None

    async def _delete(self, session, url: str | None):
        if url is None:
            return "Choose what to delete.", 400
        return self._failed(await self._call(session, "DELETE", url))

    def _failed(self, r: httpx.Response) -> tuple[str, int] | None:
        """The API's message and status for a failed write, None when it worked."""
        if r.is_success:
            return None
        return web.api_error(r), r.status_code if 400 <= r.status_code < 500 else 502

    async def _page(self, request: Request, show, act, back: str | None = None):
        """GET: ``show(session)``; POST: ``act(session, form)`` then back to the page (or
        to ``back``), or the page again with the API's error message and status."""
        session = self.dash._session(request)
        if session is None:
            return self.dash._to_login()
        if request.method == "GET":
            return await show(session)
        form, refused = await self._posted(request, session)
        if refused:
            return refused
        failure = await act(session, form)
        if failure is None:
            return RedirectResponse(back or request.url.path, 303)
        if isinstance(failure, dict):  # it worked, and the answer is shown once (a new key)
            return await show(session, **failure)
        if failure[1] == 401:
            return self.dash._to_login()
        return await show(session, message=failure[0], status=failure[1], form=form)

    # -- admin ------------------------------------------------------------------------

    async def hypervisors(self, request: Request) -> Response:
        async def show(session, **extra):
            items, error = await self._list(session, self._base(session, COMPUTE) +
                                            "/os-hypervisors/detail", "hypervisors")
            if error:
                return error
            for h in items:
                h["bars"] = [
                    (label, h.get(used, 0), h.get(total, 0), _percent(h.get(used, 0),
                                                                      h.get(total, 0)))
                    for label, used, total in (("vCPUs", "vcpus_used", "vcpus"),
                                               ("RAM (MB)", "memory_mb_used", "memory_mb"),
                                               ("Disk (GB)", "local_gb_used", "local_gb"))]
            return web.render("hypervisors.html", session=session, hypervisors=items)
        return await self._page(request, show, None)

    async def services(self, request: Request) -> Response:
        async def show(session, **extra):
            items, error = await self._list(session, self._base(session, COMPUTE) +
                                            "/os-services", "services")
            return error or web.render("services.html", session=session, services=items)
        return await self._page(request, show, None)

    async def all_servers(self, request: Request) -> Response:
        async def show(session, **extra):
            marker = request.query_params.get("marker")
            params = {"all_tenants": "1", "limit": 50, **({"marker": marker} if marker else {})}
            items, error = await self._list(session, self._base(session, COMPUTE) +
                                            "/servers/detail", "servers", **params)
            if error:
                return error
            next_marker = items[-1]["id"] if len(items) == params["limit"] else None
            # Project names from keystone (the admin may list projects); ids where not.
            projects, _ = await self._list(session, self.dash._identity_url() +
                                           "/projects", "projects")
            return web.render("admin_servers.html", session=session, servers=items,
                           next_marker=next_marker,
                           project_names={p["id"]: p["name"] for p in projects or []})
        return await self._page(request, show, None)

    async def flavors(self, request: Request) -> Response:
        url = "/flavors"

        async def show(session, message=None, status=200, form=None):
            items, error = await self._list(session, self._base(session, COMPUTE) + url +
                                            "/detail", "flavors", is_public="None")
            return error or web.render("flavors.html", status, session=session, flavors=items,
                                    message=message, form=form or {})

        async def act(session, form):
            base = self._base(session, COMPUTE) + url
            if form.get("action") == "delete":
                return await self._delete(session, web.item(base, form.get("flavor_id", "")))
            if form.get("action") != "create":
                return "Unknown form action.", 400
            flavor = {"name": form.get("name", ""), "os-flavor-access:is_public":
                      form.get("is_public", "") == "yes"}
            if form.get("id", "").strip():
                flavor["id"] = form["id"].strip()
            for field in ("vcpus", "ram", "disk"):
                flavor[field] = web.number(form.get(field, ""))
            return self._failed(await self._call(session, "POST", base, {"flavor": flavor}))
        return await self._page(request, show, act)

    FAULT_FIELDS = ("host", "operation", "action", "times", "hang_seconds", "message")

    async def faults(self, request: Request) -> Response:
        async def show(session, message=None, status=200, form=None):
            items, error = await self._list(session, self._base(session, CONTROL) +
                                            "/v1/faults", "faults")
            if error:
                return error
            return web.render("faults.html", status, session=session, faults=items,
                           message=message, form=form or {}, operations=faults.OPERATIONS,
                           actions=faults.ACTIONS)

        async def act(session, form):
            url = self._base(session, CONTROL) + "/v1/faults"
            if form.get("action_kind") == "delete":
                return await self._delete(session, web.item(url, form.get("fault_id", "")))
            if form.get("action_kind") != "create":
                return "Unknown form action.", 400
            rule = {"host": form.get("host", "").strip() or None,
                    "operation": form.get("operation", ""), "action": form.get("action", ""),
                    "message": form.get("message", "")}
            try:  # numbers as numbers, so the API (not this form) judges their range
                times = form.get("times", "").strip()
                rule["times"] = None if times in ("", "always") else int(times)
                rule["hang_seconds"] = float(form.get("hang_seconds", "").strip() or 0)
            except ValueError:
                return "times and hang seconds must be numbers.", 400
            return self._failed(await self._call(session, "POST", url, {"fault": rule}))
        return await self._page(request, show, act)

    # -- volumes and keypairs ---------------------------------------------------------

    async def volumes(self, request: Request) -> Response:
        async def show(session, message=None, status=200, form=None):
            base = self._volume_base(session)
            if base is None:
                return web.render("error.html", 404, session=session,
                               message="This cloud has no block storage service.")
            items, next_marker, error = await self._paged(request, session,
                                                          base + "/volumes/detail", "volumes")
            if error:
                return error
            # Names for the attach menu and the attachments: the summary list (id and
            # name), not every server's detail.
            (servers, _), (images, _), (snapshots, _) = await asyncio.gather(
                self._list(session, self._base(session, COMPUTE) + "/servers", "servers",
                           limit=SERVER_CHOICES),
                self._list(session, self._base(session, IMAGE) + "/v2/images", "images",
                           status="active"),
                self._list(session, base + "/snapshots", "snapshots"))
            _volume_actions(items, snapshots or [])
            names = {s["id"]: s["name"] for s in servers or []}
            return web.render("volumes.html", status, session=session, volumes=items,
                           servers=servers or [], server_names=names, images=images or [],
                           message=message, form=form or {}, next_marker=next_marker)

        async def act(session, form):
            base, compute = self._volume_base(session), self._base(session, COMPUTE)
            action, volume = form.get("action", ""), form.get("volume_id", "")
            if base is None:
                return "This cloud has no block storage service.", 404
            if action == "create":
                body = {"volume": {"name": form.get("name", ""),
                                   "size": web.number(form.get("size", ""))}}
                if form.get("image_id", "").strip():  # the image's bytes, copied in
                    body["volume"]["imageRef"] = form["image_id"].strip()
                return self._failed(await self._call(session, "POST", base + "/volumes", body))
            if action == "delete":
                return await self._delete(session, web.item(base + "/volumes", volume))
            server = form.get("server_id", "")
            if not server.strip() or not volume.strip():
                return "Choose a volume and a server.", 400
            attachments = f"{compute}/servers/{web.q(server)}/os-volume_attachments"
            if action == "attach":
                return self._failed(await self._call(
                    session, "POST", attachments, {"volumeAttachment": {"volumeId": volume}}))
            if action == "detach":
                return await self._delete(session, web.item(attachments, volume))
            return "Unknown form action.", 400
        return await self._page(request, show, act)

    async def keypairs(self, request: Request) -> Response:
        session = self.dash._session(request)
        url = self._base(session, COMPUTE) + "/os-keypairs" if session else ""

        async def show(session, message=None, status=200, form=None, private_key=None):
            items, error = await self._list(session, url, "keypairs")
            if error:
                return error
            return web.render("keypairs.html", status, session=session,
                           keypairs=[k["keypair"] for k in items], message=message,
                           form=form or {}, private_key=private_key)

        async def act(session, form):
            action, name = form.get("action", ""), form.get("name", "")
            if action == "delete":
                return await self._delete(session, web.item(url, name))
            if action != "create":
                return "Unknown form action.", 400
            keypair = {"name": name}
            if form.get("public_key", "").strip():
                keypair["public_key"] = form["public_key"].strip()
            r = await self._call(session, "POST", url, {"keypair": keypair})
            failure = self._failed(r)
            if failure is None and r.json()["keypair"].get("private_key"):
                # A generated key is shown once, on this answer, and never stored here.
                return {"private_key": r.json()["keypair"]["private_key"]}
            return failure
        return await self._page(request, show, act)

    # -- images and networks ----------------------------------------------------------

    async def images(self, request: Request) -> Response:
        async def show(session, message=None, status=200, form=None):
            items, next_marker, error = await self._paged(
                request, session, self._base(session, IMAGE) + "/v2/images", "images")
            if error:
                return error
            if request.query_params.get("upload") == "needs-script":
                message = "Uploading a file needs JavaScript: it sends the file with a " \
                          "progress bar."
            return web.render("images.html", status, session=session, images=items,
                           message=message, next_marker=next_marker)

        async def act(session, form):
            if form.get("action") != "delete":
                return "Unknown form action.", 400
            return await self._delete(session, web.item(self._base(session, IMAGE) + "/v2/images",
                                                      form.get("image_id", "")))
        return await self._page(request, show, act)

    async def topology(self, request: Request) -> Response:
        """Networks, routers, servers and the ports between them, as one SVG picture."""
        async def show(session, **extra):
            base = self._base(session, NETWORK) + "/v2.0"
            networks, error = await self._list(session, base + "/networks", "networks",
                                               limit=topology.MAX_NETWORKS)
            if error:
                return error
            volume_base = self._volume_base(session)
            routers, ports, servers, subnets, floating_ips, volumes = await asyncio.gather(
                self._list(session, base + "/routers", "routers",
                           limit=topology.MAX_DEVICES),
                self._list(session, base + "/ports", "ports", limit=topology.MAX_PORTS),
                self._list(session, self._base(session, COMPUTE) + "/servers", "servers",
                           limit=topology.MAX_DEVICES),
                self._list(session, base + "/subnets", "subnets", limit=topology.MAX_PORTS),
                self._list(session, base + "/floatingips", "floatingips",
                           limit=topology.MAX_PORTS),
                # The detail: each volume's attachments say which server it is on.
                self._list(session, volume_base + "/volumes/detail", "volumes",
                           limit=topology.MAX_PORTS) if volume_base else _no_list())
            picture = topology.draw(networks, routers[0] or [], ports[0] or [],
                                    servers[0] or [], subnets[0] or [],
                                    floating_ips[0] or [], volumes[0] or [])
            return web.render("topology.html", session=session, picture=picture)
        return await self._page(request, show, None)

    async def networks(self, request: Request) -> Response:
        async def show(session, message=None, status=200, form=None):
            base = self._base(session, NETWORK) + "/v2.0"
            items, next_marker, error = await self._paged(request, session,
                                                          base + "/networks", "networks")
            if error:
                return error
            subnets, _ = await self._list(session, base + "/subnets", "subnets")
            cidrs = {s["id"]: s["cidr"] for s in subnets or []}
            return web.render("networks.html", status, session=session, networks=items,
                           cidrs=cidrs, message=message, form=form or {},
                           next_marker=next_marker)

        async def act(session, form):
            base = self._base(session, NETWORK) + "/v2.0"
            if form.get("action") == "delete":
                return await self._delete(session, web.item(base + "/networks",
                                                         form.get("network_id", "")))
            if form.get("action") != "create":
                return "Unknown form action.", 400
            cidr = form.get("cidr", "").strip()
            r = await self._call(session, "POST", base + "/networks",
                                 {"network": {"name": form.get("name", "")}})
            if not cidr or not r.is_success:  # a network alone, or the API's refusal
                return self._failed(r)
            network_id = r.json()["network"]["id"]
            subnet = {"network_id": network_id, "cidr": cidr, "ip_version": 4,
                      "name": form.get("subnet_name", "").strip() or form.get("name", "")}
            s = await self._call(session, "POST", base + "/subnets", {"subnet": subnet})
            if (failure := self._failed(s)):
                # No half-made network: the one without its subnet goes again.
                await self._delete(session, web.item(base + "/networks", network_id))
            return failure
        return await self._page(request, show, act)

