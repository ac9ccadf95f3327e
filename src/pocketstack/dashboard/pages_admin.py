"""Admin pages of the dashboard for keystone, quotas and placement: projects (create,
delete), users (create, delete) with their role assignments (assign, revoke), a project's
quotas across compute, block storage and network (edit), placement's resource
providers with their inventories and usage, and each volume backend's pool with its
capacity and free space (cinder's get_pools, as `openstack volume backend pool list
--long` shows it).

Only for a token with the admin role: a member gets a 403 page here (and the menu hides
the pages); the APIs refuse such a member too. Like pages.py, the forms post back to their
page and the API's message is shown on the page.
"""
from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pocketstack.common import config
from pocketstack.dashboard import web
from pocketstack.dashboard.web import COMPUTE, NETWORK, PREFIX

ADMIN_ONLY = "This page is for admins only."
MAX_PROVIDERS = 100  # resource providers shown (each costs two more API calls)

# (service, form field / API key, what it counts) for the quota form.
QUOTAS = (("compute", "instances", "Instances"), ("compute", "cores", "vCPUs"),
          ("compute", "ram", "RAM (MB)"), ("compute", "key_pairs", "Key pairs"),
          ("volume", "volumes", "Volumes"), ("volume", "gigabytes", "Volume GB"),
          ("volume", "snapshots", "Volume snapshots"), ("volume", "backups", "Backups"),
          ("network", "network", "Networks"), ("network", "port", "Ports"),
          ("network", "router", "Routers"), ("network", "floatingip", "Floating IPs"),
          ("network", "security_group", "Security groups"))


def _mark_service_users(by_user: dict[str, list[dict]], projects: list[dict]) -> None:
    """Mark what keystone refuses to delete or revoke (identity/immutable.py): a user with
    the service role on an immutable project is a service user ("protected"), and its
    admin and service roles there are too."""
    locked = {p["id"] for p in projects if (p.get("options") or {}).get("immutable")}
    for assignments in by_user.values():
        homes = {a["project_id"] for a in assignments
                 if a["role"] == "service" and a["project_id"] in locked}
        for a in assignments:
            a["protected"] = a["project_id"] in homes and a["role"] in ("admin", "service")


def service_user_ids(by_user: dict[str, list[dict]]) -> set[str]:
    return {user for user, assignments in by_user.items()
            if any(a["protected"] for a in assignments)}


class AdminPages:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        both = ["GET", "POST"]
        return [Route(PREFIX + "/admin/projects", self.projects, methods=both),
                Route(PREFIX + "/admin/users", self.users, methods=both),
                Route(PREFIX + "/admin/quotas", self.quotas, methods=both),
                Route(PREFIX + "/admin/resource-providers", self.resource_providers),
                Route(PREFIX + "/admin/volume-backends", self.volume_backends)]

    def _identity(self) -> str:
        return self.pages.dash._identity_url()

    async def _admin_page(self, request: Request, show, act):
        session = self.pages.dash._session(request)
        if session is not None and "admin" not in session.roles:
            return web.render("error.html", 403, session=session, message=ADMIN_ONLY)
        return await self.pages._page(request, show, act)

    # -- projects ---------------------------------------------------------------------

    async def projects(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            items, error = await p._list(session, self._identity() + "/projects", "projects")
            if error:
                return error
            return web.render("admin_projects.html", status, session=session,
                           projects=sorted(items, key=lambda x: x["name"]),
                           message=message, form=form or {})

        async def act(session, form):
            url = self._identity() + "/projects"
            if form.get("action") == "delete":
                if form.get("project_id") == session.project_id:
                    return "You cannot delete the project you are logged in to.", 409
                return await p._delete(session, web.item(url, form.get("project_id", "")))
            if form.get("action") != "create":
                return "Unknown form action.", 400
            project = {"name": form.get("name", "").strip(),
                       "description": form.get("description", ""),
                       "domain_id": form.get("domain_id", "").strip() or "default"}
            return p._failed(await p._call(session, "POST", url, {"project": project}))
        return await self._admin_page(request, show, act)

    # -- users and role assignments ---------------------------------------------------

    async def users(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            base = self._identity()
            users, error = await p._list(session, base + "/users", "users")
            if error:
                return error
            (projects, _), (roles, _), (assignments, _) = await asyncio.gather(
                p._list(session, base + "/projects", "projects"),
                p._list(session, base + "/roles", "roles"),
                p._list(session, base + "/role_assignments", "role_assignments",
                        include_names="true"))
            by_user: dict[str, list[dict]] = {}
            for a in assignments or []:
                if "user" in a and "project" in a.get("scope", {}):
                    by_user.setdefault(a["user"]["id"], []).append(
                        {"project_id": a["scope"]["project"]["id"],
                         "project": a["scope"]["project"].get("name", ""),
                         "role_id": a["role"]["id"], "role": a["role"].get("name", "")})
            _mark_service_users(by_user, projects or [])
            return web.render("admin_users.html", status, session=session,
                           users=sorted(users, key=lambda u: u["name"]),
                           projects=sorted(projects or [], key=lambda x: x["name"]),
                           roles=sorted(roles or [], key=lambda r: r["name"]),
                           assignments=by_user, service_users=service_user_ids(by_user),
                           message=message, form=form or {})

        async def act(session, form):
            base = self._identity()
            action = form.get("action", "")
            if action == "create":
                user = {"name": form.get("name", "").strip(),
                        "password": form.get("password", ""),
                        "domain_id": form.get("domain_id", "").strip() or "default"}
                if form.get("email", "").strip():
                    user["email"] = form["email"].strip()
                return p._failed(await p._call(session, "POST", base + "/users",
                                               {"user": user}))
            if action == "delete":
                return await p._delete(session, web.item(base + "/users",
                                                      form.get("user_id", "")))
            if action not in ("assign", "revoke"):
                return "Unknown form action.", 400
            ids = [form.get(k, "").strip() for k in ("project_id", "user_id", "role_id")]
            if not all(ids):
                return "Choose a project, a user and a role.", 400
            project, user, role = (web.q(i) for i in ids)
            url = f"{base}/projects/{project}/users/{user}/roles/{role}"
            return p._failed(await p._call(session, "PUT" if action == "assign" else
                                           "DELETE", url))
        return await self._admin_page(request, show, act)

    # -- quotas -----------------------------------------------------------------------

    def _quota_urls(self, session, project: str) -> dict[str, str | None]:
        p = self.pages
        volume = p._volume_base(session)
        target = web.q(project)
        return {"compute": f"{p._base(session, COMPUTE)}/os-quota-sets/{target}",
                "volume": f"{volume}/os-quota-sets/{target}" if volume else None,
                "network": f"{p._base(session, NETWORK)}/v2.0/quotas/{target}"}

    async def _read_quotas(self, session, project: str) -> tuple[dict, str | None]:
        """{service: {key: limit}} of the project, or the first API refusal's message."""
        urls = self._quota_urls(session, project)
        answers = await asyncio.gather(*(
            self.pages._call(session, "GET", url) for url in urls.values() if url))
        limits, failure = {}, None
        for service, r in zip([s for s, u in urls.items() if u], answers):
            if r.is_success:
                body = r.json()
                limits[service] = body.get("quota_set") or body.get("quota") or {}
            else:
                failure = failure or self.pages._failed(r)[0]
        return limits, failure

    async def quotas(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None, notice=None):
            projects, error = await p._list(session, self._identity() + "/projects",
                                            "projects")
            if error:
                return error
            projects = sorted(projects, key=lambda x: x["name"])
            chosen = (form or {}).get("project_id") or request.query_params.get(
                "project_id") or session.project_id
            limits, failure = await self._read_quotas(session, chosen)
            rows = [{"service": service, "key": key, "label": label,
                     "limit": limits.get(service, {}).get(key)}
                    for service, key, label in QUOTAS if service in limits]
            return web.render("admin_quotas.html", status, session=session, projects=projects,
                           chosen=chosen, rows=rows, message=message or failure,
                           notice=notice, form=form or {})

        async def act(session, form):
            project = form.get("project_id", "").strip()
            if not project:
                return "Choose a project.", 400
            before, failure = await self._read_quotas(session, project)
            if failure:
                return failure, 400
            urls = self._quota_urls(session, project)
            bodies = {"compute": ("quota_set", {}), "volume": ("quota_set", {}),
                      "network": ("quota", {})}
            for service, key, _ in QUOTAS:
                value = form.get(f"{service}.{key}", "").strip()
                if service in before and value != "" and value != str(
                        before[service].get(key)):
                    bodies[service][1][key] = web.number(value)
            done = []
            for service, (wrapper, changes) in bodies.items():
                if not changes:
                    continue
                r = await p._call(session, "PUT", urls[service], {wrapper: changes})
                if not r.is_success:
                    # Nothing half-made: the services already changed get their limits back.
                    for s in done:
                        w, c = bodies[s]
                        await p._call(session, "PUT", urls[s],
                                      {w: {k: before[s][k] for k in c}})
                    return p._failed(r)
                done.append(service)
            # The page again for the same project (a redirect would show the admin's own).
            return {"form": {"project_id": project}, "notice": "Quotas saved."}
        return await self._admin_page(request, show, act)

    # -- placement --------------------------------------------------------------------

    async def resource_providers(self, request: Request) -> Response:
        p = self.pages

        async def show(session, **extra):
            base = session.endpoint("placement") or config.public_url() + "/placement"
            items, error = await p._list(session, base + "/resource_providers",
                                         "resource_providers")
            if error:
                return error
            items = sorted(items, key=lambda r: r["name"])[:MAX_PROVIDERS]
            answers = await asyncio.gather(*(
                p._call(session, "GET", f"{base}/resource_providers/{web.q(r['uuid'])}/{part}")
                for r in items for part in ("inventories", "usages")))
            for i, provider in enumerate(items):
                inventories, usages = answers[2 * i], answers[2 * i + 1]
                inventory = (inventories.json().get("inventories", {})
                             if inventories.is_success else {})
                used = usages.json().get("usages", {}) if usages.is_success else {}
                provider["resources"] = [
                    {"name": name, "used": used.get(name, 0),
                     "capacity": int((inv["total"] - inv.get("reserved", 0))
                                     * inv.get("allocation_ratio", 1.0)),
                     "total": inv["total"], "reserved": inv.get("reserved", 0),
                     "ratio": inv.get("allocation_ratio", 1.0)}
                    for name, inv in sorted(inventory.items())]
            return web.render("admin_resource_providers.html", session=session,
                           providers=items)
        return await self._admin_page(request, show, None)

    # -- block storage ----------------------------------------------------------------

    async def volume_backends(self, request: Request) -> Response:
        p = self.pages

        async def show(session, **extra):
            base = p._volume_base(session)
            if base is None:
                return web.render("error.html", 404, session=session,
                                  message="This cloud has no block storage service.")
            items, error = await p._list(session, base + "/scheduler-stats/get_pools",
                                         "pools", detail="true")
            if error:
                return error
            pools = []
            for pool in sorted(items, key=lambda i: i["name"]):
                caps = pool.get("capabilities") or {}
                total, free = caps.get("total_capacity_gb"), caps.get("free_capacity_gb")
                known = all(isinstance(v, (int, float)) for v in (total, free))
                pools.append({"name": pool["name"], "caps": caps, "known": known,
                              "total": total, "free": free,
                              "used": round(total - free, 2) if known else None})
            return web.render("admin_volume_backends.html", session=session, pools=pools)
        return await self._admin_page(request, show, None)
