"""The dashboard's ASGI app: login/logout, servers list, server detail with the waterfall.

Every page is rendered from public API answers fetched with the user's token, over HTTP to
this cloud's own public URL, so what a user sees is exactly what the API lets them see.
"""
from __future__ import annotations

import datetime
import hmac
import importlib.resources
import os
import secrets
import urllib.parse

import httpx
import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from pocketstack.common import config, timeutils
from pocketstack.dashboard import sessions, waterfall

PREFIX = "/dashboard"
API_TIMEOUT = 30.0  # seconds; a stuck API call ends as an error page, not a hang

_templates = jinja2.Environment(
    loader=jinja2.PackageLoader("pocketstack.dashboard", "templates"),
    autoescape=jinja2.select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)


_LIVE_JS = (importlib.resources.files("pocketstack.dashboard") / "static" / "live.js").read_bytes()


def _render(name: str, status: int = 200, **context) -> HTMLResponse:
    body = _templates.get_template(name).render(prefix=PREFIX, **context)
    return HTMLResponse(body, status, headers={
        "Cache-Control": "no-store",
        # Everything is served from here: no CDN, no inline script, no framing.
        "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                                   "frame-ancestors 'none'; form-action 'self'",
        "X-Content-Type-Options": "nosniff"})


def _api_error(r: httpx.Response) -> str:
    """The message inside any service's OpenStack error body, else the status line."""
    try:
        body = r.json()
    except ValueError:
        return f"{r.status_code} {r.reason_phrase}"
    if isinstance(body, dict):
        for value in body.values():
            if isinstance(value, dict) and value.get("message"):
                return str(value["message"])
        if body.get("message"):
            return str(body["message"])
    return f"{r.status_code} {r.reason_phrase}"


async def _form(request: Request) -> dict[str, str]:
    """An urlencoded form (what our forms post); anything else reads as an empty form."""
    if not request.headers.get("content-type", "").startswith(
            "application/x-www-form-urlencoded"):
        return {}
    body = await request.body()
    if len(body) > 64 * 1024:
        return {}
    pairs = urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    return dict(pairs)


def _same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(a, b)


def _session_store() -> sessions.SessionStore:
    """In memory, unless the cloud's API runs in several processes (`up --workers`)."""
    from pocketstack.common import config, rpc

    if rpc.is_unix(config.CONF.transport_url):
        return sessions.SharedSessionStore(
            os.path.join(config.data_dir(), "dashboard", "sessions"))
    return sessions.SessionStore()


class Dashboard:
    def __init__(self):
        from pocketstack.dashboard import pages  # it imports this module's helpers
        self.store = _session_store()
        self.app = Starlette(routes=[*pages.Pages(self).routes(),
            Route(PREFIX, self.home), Route(PREFIX + "/", self.home),
            Route(PREFIX + "/login", self.login, methods=["GET", "POST"]),
            Route(PREFIX + "/logout", self.logout, methods=["POST"]),
            Route(PREFIX + "/project", self.switch_project, methods=["POST"]),
            Route(PREFIX + "/overview", self.overview),
            Route(PREFIX + "/servers", self.servers),
            Route(PREFIX + "/servers/launch", self.launch, methods=["GET", "POST"]),
            Route(PREFIX + "/servers/status", self.server_statuses),
            Route(PREFIX + "/static/live.js", self.live_js),
            Route(PREFIX + "/servers/{server_id}", self.server),
            Route(PREFIX + "/servers/{server_id}/action", self.server_action, methods=["POST"]),
        ], exception_handlers={404: self.not_found, 405: self.not_allowed,
                               httpx.HTTPError: self.api_unreachable})

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)

    # -- plumbing ---------------------------------------------------------------------

    @staticmethod
    def _identity_url() -> str:
        return config.public_url() + "/identity/v3"

    def _session(self, request: Request) -> sessions.Session | None:
        return self.store.get(request.cookies.get(sessions.COOKIE))

    def _to_login(self) -> Response:
        return RedirectResponse(PREFIX + "/login", 303)

    async def _get(self, session: sessions.Session, url: str, **params) -> httpx.Response:
        async with httpx.AsyncClient(timeout=API_TIMEOUT) as client:
            return await client.get(url, params=params or None,
                                    headers={"X-Auth-Token": session.token,
                                             "Accept": "application/json"})

    @staticmethod
    def _url(session: sessions.Session, service_type: str, default_path: str) -> str:
        return session.endpoint(service_type) or config.public_url() + default_path

    async def not_found(self, request: Request, exc) -> Response:
        return _render("error.html", 404, session=self._session(request),
                       message="No such page.")

    async def not_allowed(self, request: Request, exc) -> Response:
        return _render("error.html", 405, session=self._session(request),
                       message="That method is not allowed here.")

    async def api_unreachable(self, request: Request, exc) -> Response:
        return _render("error.html", 502, session=self._session(request),
                       message=f"The cloud's API did not answer: {type(exc).__name__}.")

    def _error(self, session, r: httpx.Response) -> Response:
        if r.status_code == 401:  # the token expired or was revoked elsewhere
            return self._to_login()
        status = r.status_code if 400 <= r.status_code < 500 else 502
        return _render("error.html", status, session=session, message=_api_error(r))

    # -- pages ------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        if self._session(request) is None:
            return self._to_login()
        return RedirectResponse(PREFIX + "/servers", 303)

    async def login(self, request: Request) -> Response:
        if request.method == "GET":
            return self._login_page()
        form = await _form(request)
        # Login CSRF: the form's token must match the cookie set with the form.
        if not _same(form.get("csrf_token"), request.cookies.get(sessions.LOGIN_CSRF_COOKIE)):
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
        response = _render("login.html", status, session=None, message=message,
                           form=form or {}, csrf_token=csrf)
        response.set_cookie(sessions.LOGIN_CSRF_COOKIE, csrf, path=PREFIX + "/login",
                            httponly=True, samesite="strict")
        return response

    async def _authenticate(self, domain, user, password, project) -> sessions.Session:
        """A project-scoped token: for the named project, else the user's first project."""
        identity = {"methods": ["password"], "password": {"user": {
            "name": user, "password": password, "domain": {"name": domain}}}}
        async with httpx.AsyncClient(timeout=API_TIMEOUT) as client:
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
        form = await _form(request)
        if not _same(form.get("csrf_token"), session.csrf):
            return _render("error.html", 403, session=session,
                           message="The form expired; please reload the page and try again.")
        project_id = form.get("project_id", "")
        if project_id not in {p["id"] for p in session.projects}:
            return _render("error.html", 400, session=session,
                           message="You have no role on that project.")
        async with httpx.AsyncClient(timeout=API_TIMEOUT) as client:
            try:
                new = await self._scoped_token(client, session.unscoped,
                                               {"project": {"id": project_id}})
            except LoginFailed as failure:
                return _render("error.html", failure.status, session=session,
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
        form = await _form(request)
        if not _same(form.get("csrf_token"), session.csrf):
            return _render("error.html", 403, session=session,
                           message="The form expired; please reload the page and try again.")
        self.store.pop(sid)
        async with httpx.AsyncClient(timeout=API_TIMEOUT) as client:
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
        params = {"limit": 50, **({"marker": marker} if marker else {})}
        r = await self._get(session, compute + "/servers/detail", **params)
        if r.status_code != 200:
            return self._error(session, r)
        servers = r.json().get("servers", [])
        next_marker = servers[-1]["id"] if len(servers) == params["limit"] else None
        return _render("servers.html", session=session, servers=servers,
                       next_marker=next_marker)

    async def server_statuses(self, request: Request) -> Response:
        """{server id: status} of the project's servers, for live.js (JSON, not a page)."""
        session = self._session(request)
        if session is None:
            return JSONResponse({"error": "Not logged in."}, 401)
        r = await self._get(session, self._url(session, "compute", "/compute/v2.1") +
                            "/servers/detail", limit=1000)
        if r.status_code != 200:
            return JSONResponse({"error": _api_error(r)}, r.status_code)
        return JSONResponse({s["id"]: s["status"] for s in r.json().get("servers", [])},
                            headers={"Cache-Control": "no-store"})

    async def live_js(self, request: Request) -> Response:
        return Response(_LIVE_JS, media_type="text/javascript",
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
        t = await self._get(session, config.public_url() +
                            f"/pocketstack/v1/servers/{server['id']}/trace")
        trace = t.json() if t.status_code == 200 else {"events": [], "actions": []}
        trace_error = None if t.status_code == 200 else _api_error(t)
        lanes, total = waterfall.lanes(trace)
        fault = server.get("fault") or {}
        return _render("server.html", session=session, server=server, lanes=lanes,
                       total_ms=total, actions=trace.get("actions", []),
                       boot_path=waterfall.boot_path(trace),
                       trace_error=trace_error, fault=fault,
                       no_valid_host=waterfall.no_valid_host(fault.get("message")))


    async def launch(self, request: Request) -> Response:
        """The launch form; the API validates, and its message is shown on bad input."""
        session = self._session(request)
        if session is None:
            return self._to_login()
        if request.method == "GET":
            return await self._launch_page(session, {})
        form = await _form(request)
        if not _same(form.get("csrf_token"), session.csrf):
            return await self._launch_page(session, form, "The form expired; please try "
                                           "again.", 403)
        server = {"name": form.get("name", ""), "imageRef": form.get("image", ""),
                  "flavorRef": form.get("flavor", "")}
        network = form.get("network", "")
        server["networks"] = [{"uuid": network}] if network not in ("", "none", "auto") \
            else (network or "none")
        async with httpx.AsyncClient(timeout=API_TIMEOUT) as client:
            r = await client.post(self._url(session, "compute", "/compute/v2.1") + "/servers",
                                  json={"server": server},
                                  headers={"X-Auth-Token": session.token,
                                           "OpenStack-API-Version": "compute 2.79"})
        if r.status_code == 401:
            return self._to_login()
        if r.status_code != 202:
            status = r.status_code if 400 <= r.status_code < 500 else 502
            return await self._launch_page(session, form, _api_error(r), status)
        return RedirectResponse(f"{PREFIX}/servers/{r.json()['server']['id']}", 303)

    async def _launch_page(self, session, form: dict, message: str | None = None,
                           status: int = 200) -> Response:
        images = await self._get(session, self._url(session, "image", "/image") + "/v2/images",
                                 status="active")
        flavors = await self._get(session, self._url(session, "compute", "/compute/v2.1") +
                                  "/flavors")
        networks = await self._get(session, self._url(session, "network", "/network") +
                                   "/v2.0/networks")
        return _render("launch.html", status, session=session, form=form, message=message,
                       images=images.json().get("images", []) if images.is_success else [],
                       flavors=flavors.json().get("flavors", []) if flavors.is_success else [],
                       networks=(networks.json().get("networks", [])
                                 if networks.is_success else []))


    async def overview(self, request: Request) -> Response:
        """The project's quota usage as bars, from each service's own limits API."""
        session = self._session(request)
        if session is None:
            return self._to_login()
        compute = await self._get(session, self._url(session, "compute", "/compute/v2.1") +
                                  "/limits")
        if compute.status_code != 200:
            return self._error(session, compute)
        absolute = compute.json()["limits"]["absolute"]
        usage = [("Instances", absolute["totalInstancesUsed"], absolute["maxTotalInstances"]),
                 ("vCPUs", absolute["totalCoresUsed"], absolute["maxTotalCores"]),
                 ("RAM (MB)", absolute["totalRAMUsed"], absolute["maxTotalRAMSize"])]
        volume_url = session.endpoint("block-storage")
        if volume_url:
            r = await self._get(session, volume_url + "/limits")
            if r.status_code == 200:
                v = r.json()["limits"]["absolute"]
                usage.append(("Volumes", v["totalVolumesUsed"], v["maxTotalVolumes"]))
        r = await self._get(session, self._url(session, "network", "/network") +
                            f"/v2.0/quotas/{session.project_id}/details")
        if r.status_code == 200 and "port" in r.json().get("quota", {}):
            port = r.json()["quota"]["port"]
            usage.append(("Ports", port["used"], port["limit"]))
        bars = [{"name": name, "used": used, "limit": limit,
                 "percent": min(100, round(used / limit * 100)) if limit and limit > 0 else None}
                for name, used, limit in usage]
        return _render("overview.html", session=session, bars=bars)


    # The form's action -> the compute API's server action body (None: DELETE the server).
    SERVER_ACTIONS = {"stop": {"os-stop": None}, "start": {"os-start": None},
                      "reboot": {"reboot": {"type": "SOFT"}}, "delete": None}

    async def server_action(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return self._to_login()
        form = await _form(request)
        if not _same(form.get("csrf_token"), session.csrf):
            return _render("error.html", 403, session=session,
                           message="The form expired; please reload the page and try again.")
        action = form.get("action", "")
        if action not in self.SERVER_ACTIONS:
            return _render("error.html", 400, session=session,
                           message=f"Unknown server action {action!r}.")
        url = (self._url(session, "compute", "/compute/v2.1") + "/servers/" +
               urllib.parse.quote(request.path_params["server_id"], safe=""))
        headers = {"X-Auth-Token": session.token}
        async with httpx.AsyncClient(timeout=API_TIMEOUT) as client:
            if self.SERVER_ACTIONS[action] is None:
                r = await client.delete(url, headers=headers)
            else:
                r = await client.post(url + "/action", json=self.SERVER_ACTIONS[action],
                                      headers=headers)
        if r.status_code not in (202, 204):
            return self._error(session, r)
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
                       "project." if r.status_code in (401, 404) else _api_error(r))
        super().__init__(message)
        self.status = status
