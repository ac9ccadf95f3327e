"""The dashboard's ASGI app: login/logout, servers list, server detail with the waterfall.

Every page is rendered from public API answers fetched with the user's token, over HTTP to
this cloud's own public URL, so what a user sees is exactly what the API lets them see.
"""
from __future__ import annotations

import asyncio
import contextlib
import datetime
import http.cookiejar
import os
import secrets
import urllib.parse

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from pocketstack.common import config, timeutils
from pocketstack.dashboard import pages, sessions, waterfall, web
from pocketstack.dashboard.web import API_TIMEOUT, PREFIX

SERVERS_PAGE = 50  # servers a page of the list; the next page goes on from a marker

def _volume_mapping(form: dict) -> list[dict] | None:
    """The launch form's volume choice as nova's block_device_mapping_v2 (None: no
    volume). The size goes as typed unless it is a whole number, for the API to judge."""
    choice = form.get("volume", "none")
    if choice in ("", "none"):
        return None
    size = form.get("volume_size", "").strip()
    size = int(size) if size.isascii() and size.isdigit() else size  # "²" is a digit too
    image = form.get("image", "")
    if choice == "boot":
        return [{"boot_index": 0, "uuid": image, "source_type": "image",
                 "destination_type": "volume", "volume_size": size,
                 "delete_on_termination": True}]
    # "attach" (or anything else, which the API then refuses by its source type)
    return [{"boot_index": 0, "uuid": image, "source_type": "image",
             "destination_type": "local"},
            {"boot_index": -1, "source_type": "blank" if choice == "attach" else choice,
             "destination_type": "volume", "volume_size": size,
             "delete_on_termination": True}]


async def _nothing() -> None:
    return None


def _session_store() -> sessions.SessionStore:
    """In memory, unless the cloud's API runs in several processes (`up --workers`)."""
    from pocketstack.common import config, rpc

    if rpc.is_unix(config.CONF.transport_url):
        return sessions.SharedSessionStore(
            os.path.join(config.data_dir(), "dashboard", "sessions"))
    return sessions.SessionStore()


class Dashboard:
    def __init__(self):
        self.store = _session_store()
        self._http: tuple[asyncio.AbstractEventLoop, httpx.AsyncClient] | None = None
        self.app = Starlette(routes=[*pages.Pages(self).routes(),
            Route(PREFIX, self.home), Route(PREFIX + "/", self.home),
            Route(PREFIX + "/login", self.login, methods=["GET", "POST"]),
            Route(PREFIX + "/logout", self.logout, methods=["POST"]),
            Route(PREFIX + "/project", self.switch_project, methods=["POST"]),
            Route(PREFIX + "/overview", self.overview),
            Route(PREFIX + "/servers", self.servers),
            Route(PREFIX + "/servers/launch", self.launch, methods=["GET", "POST"]),
            Route(PREFIX + "/servers/status", self.server_statuses),
            Route(PREFIX + "/static/{name}", self.static),
            Route(PREFIX + "/servers/{server_id}", self.server),
            Route(PREFIX + "/servers/{server_id}/action", self.server_action, methods=["POST"]),
        ], exception_handlers={404: self.not_found, 405: self.not_allowed,
                               httpx.HTTPError: self.api_unreachable})

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)

    # -- plumbing ---------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _client(self):
        """The dashboard's one pooled HTTP client (per event loop), not one per call: a new
        httpx client loads its TLS trust store (10-100 ms here), more than a page's budget,
        and a pooled keep-alive connection saves a TCP handshake per API call."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._http[0] is not loop:
            # No cookie jar: one user's answer must never add to another's request.
            jar = http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(
                allowed_domains=[]))
            self._http = (loop, httpx.AsyncClient(timeout=API_TIMEOUT, cookies=jar))
        yield self._http[1]

    @staticmethod
    def _identity_url() -> str:
        return config.public_url() + "/identity/v3"

    def _session(self, request: Request) -> sessions.Session | None:
        return self.store.get(request.cookies.get(sessions.COOKIE))

    def _to_login(self) -> Response:
        return RedirectResponse(PREFIX + "/login", 303)

    async def _get(self, session: sessions.Session, url: str, headers: dict | None = None,
                   **params) -> httpx.Response:
        async with self._client() as client:
            return await client.get(url, params=params or None,
                                    headers={"X-Auth-Token": session.token,
                                             "Accept": "application/json", **(headers or {})})

    @staticmethod
    def _url(session: sessions.Session, service_type: str, default_path: str) -> str:
        return session.endpoint(service_type) or config.public_url() + default_path

    async def not_found(self, request: Request, exc) -> Response:
        return web.render("error.html", 404, session=self._session(request),
                       message="No such page.")

    async def not_allowed(self, request: Request, exc) -> Response:
        return web.render("error.html", 405, session=self._session(request),
                       message="That method is not allowed here.")

    async def api_unreachable(self, request: Request, exc) -> Response:
        return web.render("error.html", 502, session=self._session(request),
                       message=f"The cloud's API did not answer: {type(exc).__name__}.")

    def _error(self, session, r: httpx.Response) -> Response:
        if r.status_code == 401:  # the token expired or was revoked elsewhere
            return self._to_login()
        status = r.status_code if 400 <= r.status_code < 500 else 502
        return web.render("error.html", status, session=session, message=web.api_error(r))

    # -- pages ------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        if self._session(request) is None:
            return self._to_login()
        return RedirectResponse(PREFIX + "/servers", 303)

    async def login(self, request: Request) -> Response:
        if request.method == "GET":
            return self._login_page()
        form = await web.form(request)
        # Login CSRF: the form's token must match the cookie set with the form.
        if not web.same(form.get("csrf_token"), request.cookies.get(sessions.LOGIN_CSRF_COOKIE)):
            return self._login_page("The form expired; please try again.", 403)
        domain = form.get("domain", "").strip() or "Default"
        user = form.get("username", "").strip()
        password = form.get("password", "")
        project = form.get("project", "").strip()
        if not user or not password:
            return self._login_page("User name and password are required.", 400, form)
        try:
            session = await self._authenticate(domain, user, password, project)
        except LoginFailed as failure:
            return self._login_page(str(failure), failure.status, form)
        sid = self.store.create(session)
        response = RedirectResponse(PREFIX + "/servers", 303)
        response.set_cookie(sessions.COOKIE, sid, path=PREFIX, httponly=True,
                            samesite="strict", secure=request.url.scheme == "https")
        response.delete_cookie(sessions.LOGIN_CSRF_COOKIE, path=PREFIX + "/login")
        return response

    def _login_page(self, message: str | None = None, status: int = 200,
                    form: dict | None = None) -> Response:
        csrf = secrets.token_urlsafe(32)
        response = web.render("login.html", status, session=None, message=message,
                           form=form or {}, csrf_token=csrf)
        response.set_cookie(sessions.LOGIN_CSRF_COOKIE, csrf, path=PREFIX + "/login",
                            httponly=True, samesite="strict")
        return response

    async def _authenticate(self, domain, user, password, project) -> sessions.Session:
        """A project-scoped token: for the named project, else the user's first project."""
        identity = {"methods": ["password"], "password": {"user": {
            "name": user, "password": password, "domain": {"name": domain}}}}
        async with self._client() as client:
            r = await client.post(self._identity_url() + "/auth/tokens",
                                  json={"auth": {"identity": identity}})
            if r.status_code != 201:
                raise LoginFailed(r)
            unscoped = r.headers["X-Subject-Token"]
            r = await client.get(self._identity_url() + "/auth/projects",
                                 headers={"X-Auth-Token": unscoped})
            projects = sorted(({"id": p["id"], "name": p["name"]}
                               for p in (r.json().get("projects", [])
                                         if r.status_code == 200 else [])),
                              key=lambda p: p["name"])
            if project:
                scope = {"project": {"name": project, "domain": {"name": domain}}}
            elif projects:
                scope = {"project": {"id": projects[0]["id"]}}
            else:
                raise LoginFailed(message="You have no role on any project.", status=403)
            scoped = await self._scoped_token(client, unscoped, scope)
        # The unscoped token stays server-side for the project switcher (so the previous
        # project's token can be revoked without its successor); logout revokes both.
        scoped.projects, scoped.unscoped = projects, unscoped
        return scoped

    async def _revoke(self, client, *tokens: str) -> None:
        for token in tokens:
            if token:
                await client.delete(self._identity_url() + "/auth/tokens",
                                    headers={"X-Auth-Token": token, "X-Subject-Token": token})

    async def _scoped_token(self, client, token: str, scope: dict) -> sessions.Session:
        r = await client.post(self._identity_url() + "/auth/tokens", json={"auth": {
            "identity": {"methods": ["token"], "token": {"id": token}}, "scope": scope}})
        if r.status_code != 201:
            raise LoginFailed(r)
        body = r.json()["token"]
        expires = timeutils.parse_isotime(body["expires_at"]).replace(
            tzinfo=datetime.timezone.utc).timestamp()
        return sessions.Session(token=r.headers["X-Subject-Token"], user=body["user"]["name"],
                                project=body["project"]["name"],
                                project_id=body["project"]["id"],
                                catalog=body.get("catalog", []), expires=expires,
                                roles=[r["name"] for r in body.get("roles", [])])

    async def switch_project(self, request: Request) -> Response:
        """Rescope to another of the user's projects; the old token is revoked."""
        sid = request.cookies.get(sessions.COOKIE)
        session = self.store.get(sid)
        if session is None:
            return self._to_login()
        form = await web.form(request)
        if not web.same(form.get("csrf_token"), session.csrf):
            return web.render("error.html", 403, session=session,
                           message="The form expired; please reload the page and try again.")
        project_id = form.get("project_id", "")
        if project_id not in {p["id"] for p in session.projects}:
            return web.render("error.html", 400, session=session,
                           message="You have no role on that project.")
        async with self._client() as client:
            try:
                new = await self._scoped_token(client, session.unscoped,
                                               {"project": {"id": project_id}})
            except LoginFailed as failure:
                return web.render("error.html", failure.status, session=session,
                               message=str(failure))
            await self._revoke(client, session.token)
        new.projects, new.csrf, new.unscoped = session.projects, session.csrf, session.unscoped
        self.store.replace(sid, new)
        return RedirectResponse(PREFIX + "/servers", 303)

    async def logout(self, request: Request) -> Response:
        sid = request.cookies.get(sessions.COOKIE)
        session = self.store.get(sid)
        if session is None:
            return self._to_login()
        form = await web.form(request)
        if not web.same(form.get("csrf_token"), session.csrf):
            return web.render("error.html", 403, session=session,
                           message="The form expired; please reload the page and try again.")
        self.store.pop(sid)
        async with self._client() as client:
            await self._revoke(client, session.token, session.unscoped)
        response = self._to_login()
        response.delete_cookie(sessions.COOKIE, path=PREFIX)
        return response

    async def servers(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return self._to_login()
        compute = session.endpoint("compute") or config.public_url() + "/compute/v2.1"
        marker = request.query_params.get("marker")
        params = {"limit": SERVERS_PAGE, **({"marker": marker} if marker else {})}
        r = await self._get(session, compute + "/servers/detail", **params)
        if r.status_code != 200:
            return self._error(session, r)
        servers = r.json().get("servers", [])
        next_marker = servers[-1]["id"] if len(servers) == params["limit"] else None
        return web.render("servers.html", session=session, servers=servers,
                       next_marker=next_marker)

    async def server_statuses(self, request: Request) -> Response:
        """{server id: status} of the project's servers, for live.js (JSON, not a page)."""
        session = self._session(request)
        if session is None:
            return JSONResponse({"error": "Not logged in."}, 401)
        # The same page of servers the list shows (its marker), not every server.
        marker = request.query_params.get("marker")
        r = await self._get(session, self._url(session, "compute", "/compute/v2.1") +
                            "/servers/detail", limit=SERVERS_PAGE,
                            **({"marker": marker} if marker else {}))
        if r.status_code != 200:
            return JSONResponse({"error": web.api_error(r)}, r.status_code)
        return JSONResponse({s["id"]: s["status"] for s in r.json().get("servers", [])},
                            headers={"Cache-Control": "no-store"})

    async def static(self, request: Request) -> Response:
        body = web.STATIC.get(request.path_params["name"])
        if body is None:
            return await self.not_found(request, None)
        return Response(body, media_type="text/javascript",
                        headers={"Cache-Control": "max-age=300"})

    async def server(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return self._to_login()
        server_id = request.path_params["server_id"]
        compute = session.endpoint("compute") or config.public_url() + "/compute/v2.1"
        r = await self._get(session,
                            f"{compute}/servers/{urllib.parse.quote(server_id, safe='')}")
        if r.status_code != 200:
            return self._error(session, r)
        server = r.json()["server"]
        server_url = f"{compute}/servers/{server['id']}"
        t, console, actions, attachments, flavors = await asyncio.gather(
            self._get(session, config.public_url() +
                      f"/pocketstack/v1/servers/{server['id']}/trace"),
            self._console(session, server_url),
            self._instance_actions(session, server_url),
            self._volumes(session, server_url),
            self._get(session, compute + "/flavors"))
        trace = t.json() if t.status_code == 200 else {"events": [], "actions": []}
        trace_error = None if t.status_code == 200 else web.api_error(t)
        fault = server.get("fault") or {}
        return web.render("server.html", session=session, server=server,
                       waterfalls=waterfall.requests(trace), actions=actions,
                       flavors=flavors.json().get("flavors", []) if flavors.is_success else [],
                       console=console, volumes=attachments,
                       boot_path=waterfall.boot_path(trace),
                       trace_error=trace_error, fault=fault,
                       no_valid_host=waterfall.no_valid_host(fault.get("message")))

    async def _volumes(self, session, server_url: str) -> list[dict]:
        """The server's volume attachments, each with its volume's name when the volume
        service tells it."""
        r = await self._get(session, server_url + "/os-volume_attachments")
        attachments = r.json().get("volumeAttachments", []) if r.status_code == 200 else []
        volume_url = session.endpoint("block-storage")
        if attachments and volume_url:
            volumes = await asyncio.gather(*(
                self._get(session, f"{volume_url}/volumes/{a['volumeId']}")
                for a in attachments))
            for a, v in zip(attachments, volumes):
                a["name"] = v.json()["volume"].get("name") if v.status_code == 200 else None
        return attachments

    CONSOLE_LINES = 100  # the console log's tail on the server page

    async def _console(self, session, server_url: str) -> dict:
        """{"output": text} or {"error": the API's message} (e.g. while it builds: 409)."""
        async with self._client() as client:
            r = await client.post(server_url + "/action", json={
                "os-getConsoleOutput": {"length": self.CONSOLE_LINES}},
                headers={"X-Auth-Token": session.token})
        return {"output": r.json().get("output", "")} if r.status_code == 200 else \
            {"error": web.api_error(r)}

    ACTIONS_SHOWN = 10  # the newest instance actions shown with their events

    async def _instance_actions(self, session, server_url: str) -> list[dict]:
        """The server's newest instance actions, each with its events (microversion 2.51
        shows a project member the events, without tracebacks)."""
        r = await self._get(session, server_url + "/os-instance-actions")
        if r.status_code != 200:
            return []
        listed = r.json().get("instanceActions", [])[:self.ACTIONS_SHOWN]
        details = await asyncio.gather(*(
            self._get(session, f"{server_url}/os-instance-actions/{a['request_id']}",
                      headers={"OpenStack-API-Version": "compute 2.51"}) for a in listed))
        return [d.json()["instanceAction"] if d.status_code == 200 else a
                for a, d in zip(listed, details)]

    async def launch(self, request: Request) -> Response:
        """The launch form; the API validates, and its message is shown on bad input."""
        session = self._session(request)
        if session is None:
            return self._to_login()
        if request.method == "GET":
            return await self._launch_page(session, {})
        form = await web.form(request)
        if not web.same(form.get("csrf_token"), session.csrf):
            return await self._launch_page(session, form, "The form expired; please try "
                                           "again.", 403)
        server = {"name": form.get("name", ""), "imageRef": form.get("image", ""),
                  "flavorRef": form.get("flavor", "")}
        network = form.get("network", "")
        server["networks"] = [{"uuid": network}] if network not in ("", "none", "auto") \
            else (network or "none")
        if form.get("key_name"):
            server["key_name"] = form["key_name"]
        groups = await web.form_values(request, "security_groups")
        if groups:
            server["security_groups"] = [{"name": g} for g in groups]
        volume = _volume_mapping(form)
        if volume is not None:
            if form.get("volume") == "boot":  # the image is copied into the root volume
                del server["imageRef"]
            server["block_device_mapping_v2"] = volume
        async with self._client() as client:
            r = await client.post(self._url(session, "compute", "/compute/v2.1") + "/servers",
                                  json={"server": server},
                                  headers={"X-Auth-Token": session.token,
                                           "OpenStack-API-Version": "compute 2.79"})
        if r.status_code == 401:
            return self._to_login()
        if r.status_code != 202:
            status = r.status_code if 400 <= r.status_code < 500 else 502
            form["security_groups_chosen"] = groups  # the form keeps what was chosen
            return await self._launch_page(session, form, web.api_error(r), status)
        return RedirectResponse(f"{PREFIX}/servers/{r.json()['server']['id']}", 303)

    async def _launch_page(self, session, form: dict, message: str | None = None,
                           status: int = 200) -> Response:
        images, flavors, networks, keypairs, groups = await asyncio.gather(
            self._get(session, self._url(session, "image", "/image") + "/v2/images",
                      status="active"),
            self._get(session, self._url(session, "compute", "/compute/v2.1") + "/flavors"),
            self._get(session, self._url(session, "network", "/network") + "/v2.0/networks"),
            self._get(session, self._url(session, "compute", "/compute/v2.1") + "/os-keypairs"),
            self._get(session, self._url(session, "network", "/network") +
                      "/v2.0/security-groups", project_id=session.project_id))
        chosen = set(form.get("security_groups_chosen", ()))
        return web.render("launch.html", status, session=session, form=form, message=message,
                       images=images.json().get("images", []) if images.is_success else [],
                       flavors=flavors.json().get("flavors", []) if flavors.is_success else [],
                       networks=(networks.json().get("networks", [])
                                 if networks.is_success else []),
                       keypairs=([k["keypair"] for k in keypairs.json().get("keypairs", [])]
                                 if keypairs.is_success else []),
                       security_groups=(groups.json().get("security_groups", [])
                                        if groups.is_success else []),
                       chosen_groups=chosen)


    async def overview(self, request: Request) -> Response:
        """The project's quota usage as bars, from each service's own limits API."""
        session = self._session(request)
        if session is None:
            return self._to_login()
        volume_url = session.endpoint("block-storage")
        compute, volume, network = await asyncio.gather(
            self._get(session, self._url(session, "compute", "/compute/v2.1") + "/limits"),
            self._get(session, volume_url + "/limits") if volume_url else _nothing(),
            self._get(session, self._url(session, "network", "/network") +
                      f"/v2.0/quotas/{session.project_id}/details"))
        if compute.status_code != 200:
            return self._error(session, compute)
        absolute = compute.json()["limits"]["absolute"]
        usage = [("Instances", absolute["totalInstancesUsed"], absolute["maxTotalInstances"]),
                 ("vCPUs", absolute["totalCoresUsed"], absolute["maxTotalCores"]),
                 ("RAM (MB)", absolute["totalRAMUsed"], absolute["maxTotalRAMSize"])]
        if volume is not None and volume.status_code == 200:
            v = volume.json()["limits"]["absolute"]
            usage.append(("Volumes", v["totalVolumesUsed"], v["maxTotalVolumes"]))
            usage.append(("Volume gigabytes", v["totalGigabytesUsed"],
                          v["maxTotalVolumeGigabytes"]))
        quota = network.json().get("quota", {}) if network.status_code == 200 else {}
        for key, name in (("port", "Ports"), ("floatingip", "Floating IPs"),
                          ("security_group", "Security groups")):
            if key in quota:
                usage.append((name, quota[key]["used"], quota[key]["limit"]))
        bars = [{"name": name, "used": used, "limit": limit,
                 "percent": min(100, round(used / limit * 100)) if limit and limit > 0 else None}
                for name, used, limit in usage]
        return web.render("overview.html", session=session, bars=bars)


    # The form's action -> the compute API's server action body (None: DELETE the server).
    # The form's action -> the compute API's action body from the form (None: DELETE the
    # server); what the form sends goes as typed, for the API to validate.
    SERVER_ACTIONS = {
        "stop": lambda form: {"os-stop": None}, "start": lambda form: {"os-start": None},
        "reboot": lambda form: {"reboot": {"type": "SOFT"}}, "delete": None,
        "resize": lambda form: {"resize": {"flavorRef": form.get("flavor", "")}},
        "confirm_resize": lambda form: {"confirmResize": None},
        "revert_resize": lambda form: {"revertResize": None},
        "snapshot": lambda form: {"createImage": {"name": form.get("snapshot_name", "")}},
    }

    async def server_action(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return self._to_login()
        form = await web.form(request)
        if not web.same(form.get("csrf_token"), session.csrf):
            return web.render("error.html", 403, session=session,
                           message="The form expired; please reload the page and try again.")
        action = form.get("action", "")
        if action not in self.SERVER_ACTIONS:
            return web.render("error.html", 400, session=session,
                           message=f"Unknown server action {action!r}.")
        url = (self._url(session, "compute", "/compute/v2.1") + "/servers/" +
               urllib.parse.quote(request.path_params["server_id"], safe=""))
        headers = {"X-Auth-Token": session.token}
        async with self._client() as client:
            if self.SERVER_ACTIONS[action] is None:
                r = await client.delete(url, headers=headers)
            else:
                r = await client.post(url + "/action", json=self.SERVER_ACTIONS[action](form),
                                      headers=headers)
        if r.status_code not in (202, 204):
            return self._error(session, r)
        if action == "snapshot":  # the new image is on the images page
            return RedirectResponse(PREFIX + "/images", 303)
        target = PREFIX + "/servers" if action == "delete" else url_of(request)
        return RedirectResponse(target, 303)


def url_of(request: Request) -> str:
    """The server page a server action form was posted from."""
    return request.url.path.rsplit("/", 1)[0]


class LoginFailed(Exception):
    def __init__(self, r: httpx.Response | None = None, message: str | None = None,
                 status: int = 401):
        if r is not None:
            status = r.status_code if r.status_code in (400, 401, 403, 404) else 502
            message = ("The user name or password is wrong, or you have no role on that "
                       "project." if r.status_code in (401, 404) else web.api_error(r))
        super().__init__(message)
        self.status = status
