"""The load balancer pages: the project's load balancers with their VIP, statuses and
listeners (create one on a subnet, add a listener, delete one with everything under it);
one load balancer's page with its status tree (listeners, pools, members and monitors
with their operating status); the create wizard, which makes the whole tree in Octavia's
single-call create. A client of the load-balancer API with the user's token, as every
page; the API's refusal (Octavia's faultstring) is shown on the page with its status."""
from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import LOADBALANCER, NETWORK, PREFIX

PROTOCOLS = ("HTTP", "HTTPS", "TCP", "UDP")
ALGORITHMS = ("ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT")
MONITOR_TYPES = ("HTTP", "HTTPS", "PING", "TCP", "TLS-HELLO", "UDP-CONNECT")
DELETABLE = ("ACTIVE", "ERROR")  # Octavia deletes a load balancer only in these
MEMBER_ROWS = 3  # member rows the wizard starts with (empty rows are ignored)
MAX_MEMBER_ROWS = 50


def _member_rows(form: dict) -> int:
    """How many member rows the wizard shows: what it showed, or enough for what was
    typed (a hand-made post), within bounds."""
    shown = form.get("member_rows", "")
    rows = int(shown) if shown.isascii() and shown.isdigit() else MEMBER_ROWS
    typed = [int(k[len("member_address_"):]) for k in form
             if k.startswith("member_address_") and k[len("member_address_"):].isdigit()]
    return max(MEMBER_ROWS, min(MAX_MEMBER_ROWS, max([rows, *(i + 1 for i in typed)])))


def _members(form: dict, rows: int) -> list[dict]:
    """The member rows with an address or a port (the others are left empty); what was
    typed goes to the API as typed, for it to judge."""
    members = []
    for i in range(rows):
        address = form.get(f"member_address_{i}", "").strip()
        port = form.get(f"member_port_{i}", "").strip()
        if address or port:
            members.append({"address": address, "protocol_port": web.number(port)})
    return members


def graph_body(form: dict) -> dict:
    """Octavia's single-call create from the wizard: the load balancer with one listener
    whose default pool holds the members and, when chosen, a health monitor."""
    protocol = form.get("protocol", "")
    pool = {"protocol": protocol, "lb_algorithm": form.get("lb_algorithm", ""),
            "members": _members(form, _member_rows(form))}
    monitor = form.get("monitor_type", "").strip()
    if monitor:
        pool["healthmonitor"] = {
            "type": monitor, **{key: web.number(form.get(key, ""))
                                for key in ("delay", "timeout", "max_retries")}}
        if monitor in ("HTTP", "HTTPS") and form.get("url_path", "").strip():
            pool["healthmonitor"]["url_path"] = form["url_path"].strip()
    lb = {"name": form.get("name", "").strip(),
          "listeners": [{"protocol": protocol,
                         "protocol_port": web.number(form.get("protocol_port", "")),
                         "default_pool": pool}]}
    if form.get("vip_subnet_id", "").strip():  # none: the API says what it needs
        lb["vip_subnet_id"] = form["vip_subnet_id"].strip()
    return {"loadbalancer": lb}


class LoadBalancerPages:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        both = ["GET", "POST"]
        return [Route(PREFIX + "/load-balancers", self.load_balancers, methods=both),
                Route(PREFIX + "/load-balancers/create", self.create, methods=both),
                Route(PREFIX + "/load-balancers/{lb_id}", self.load_balancer, methods=both)]

    def _lbaas(self, session) -> str:
        return self.pages._base(session, LOADBALANCER) + "/v2/lbaas"

    async def _subnets(self, session) -> list[dict]:
        subnets, _ = await self.pages._list(
            session, self.pages._base(session, NETWORK) + "/v2.0/subnets", "subnets")
        return subnets or []

    async def load_balancers(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            base = self._lbaas(session)
            items, error = await p._list(session, base + "/loadbalancers", "loadbalancers")
            if error:
                return error
            (listeners, _), subnets = await asyncio.gather(
                p._list(session, base + "/listeners", "listeners"), self._subnets(session))
            names = {s["id"]: f"{s.get('name') or s['id']} {s['cidr']}" for s in subnets}
            for lb in items:
                lb["subnet_label"] = names.get(lb.get("vip_subnet_id"), lb.get("vip_subnet_id"))
                lb["listener_rows"] = [li for li in listeners or []
                                       if {"id": lb["id"]} in li.get("loadbalancers", [])]
                lb["deletable"] = lb.get("provisioning_status") in DELETABLE
            return web.render("load_balancers.html", status, session=session,
                              load_balancers=items, subnets=subnets, protocols=PROTOCOLS,
                              message=message, form=form or {})

        async def act(session, form):
            base = self._lbaas(session)
            action = form.get("action", "")
            if action == "create":
                subnet = form.get("vip_subnet_id", "").strip()
                if not subnet:
                    return "Choose the subnet the VIP goes on.", 400
                return p._failed(await p._call(session, "POST", base + "/loadbalancers", {
                    "loadbalancer": {"name": form.get("name", "").strip(),
                                     "vip_subnet_id": subnet}}))
            if action == "add_listener":
                lb_id = form.get("loadbalancer_id", "").strip()
                try:
                    port = int(form.get("protocol_port", ""))
                except ValueError:
                    return "The port must be a number from 1 to 65535.", 400
                if not lb_id:
                    return "Choose a load balancer.", 400
                return p._failed(await p._call(session, "POST", base + "/listeners", {
                    "listener": {"loadbalancer_id": lb_id, "protocol_port": port,
                                 "protocol": form.get("protocol", "")}}))
            if action == "delete":
                url = web.item(base + "/loadbalancers", form.get("loadbalancer_id", ""))
                if url is None:
                    return "Choose what to delete.", 400
                return p._failed(await p._call(session, "DELETE", url, cascade="true"))
            return "Unknown form action.", 400

        return await p._page(request, show, act)

    async def load_balancer(self, request: Request) -> Response:
        """One load balancer: its VIP and statuses, and its status tree (Octavia's
        GET .../status) as a nested list; delete (cascade) when Octavia would."""
        p = self.pages
        lb_id = request.path_params["lb_id"]

        async def show(session, message=None, status=200, form=None):
            base = self._lbaas(session)
            url = web.item(base + "/loadbalancers", lb_id)
            r = await p._call(session, "GET", url)
            if r.status_code != 200:
                return p.dash._error(session, r)
            lb = r.json()["loadbalancer"]
            tree_r, (listeners, _), (pools, _), subnets = await asyncio.gather(
                p._call(session, "GET", url + "/status"),
                p._list(session, base + "/listeners", "listeners", loadbalancer_id=lb["id"]),
                p._list(session, base + "/pools", "pools", loadbalancer_id=lb["id"]),
                self._subnets(session))
            tree, tree_error = None, None
            if tree_r.status_code == 200:
                tree = tree_r.json()["statuses"]["loadbalancer"]
            else:
                tree_error = web.api_error(tree_r)
            names = {s["id"]: f"{s.get('name') or s['id']} {s['cidr']}" for s in subnets}
            return web.render(
                "load_balancer.html", status, session=session, lb=lb, tree=tree,
                tree_error=tree_error, message=message,
                subnet_label=names.get(lb.get("vip_subnet_id"), lb.get("vip_subnet_id")),
                listeners={li["id"]: li for li in listeners or []},
                pools={pl["id"]: pl for pl in pools or []},
                deletable=lb.get("provisioning_status") in DELETABLE)

        async def act(session, form):
            if form.get("action") != "delete":
                return "Unknown form action.", 400
            url = web.item(self._lbaas(session) + "/loadbalancers", lb_id)
            return p._failed(await p._call(session, "DELETE", url, cascade="true"))

        return await p._page(request, show, act, back=PREFIX + "/load-balancers")

    async def create(self, request: Request) -> Response:
        """The create wizard: one form in fieldsets (the load balancer, its listener, the
        pool, an optional health monitor, the members); one POST of the whole tree, then
        the new load balancer's page, or the form again (as typed) with the API's
        message."""
        p = self.pages
        session = p.dash._session(request)
        if session is None:
            return p.dash._to_login()
        if request.method == "GET":
            return await self._wizard(session, {})
        form, refused = await p._posted(request, session)
        if refused:
            return refused
        if form.get("action") == "add_row":  # one more member row, what was typed kept
            form["member_rows"] = str(min(MAX_MEMBER_ROWS, _member_rows(form) + 1))
            return await self._wizard(session, form)
        r = await p._call(session, "POST", self._lbaas(session) + "/loadbalancers",
                          graph_body(form))
        failure = p._failed(r)
        if failure is None:
            lb_id = r.json()["loadbalancer"]["id"]
            return RedirectResponse(f"{PREFIX}/load-balancers/{web.q(lb_id)}", 303)
        if failure[1] == 401:
            return p.dash._to_login()
        return await self._wizard(session, form, *failure)

    async def _wizard(self, session, form: dict, message: str | None = None,
                      status: int = 200) -> Response:
        return web.render("load_balancer_create.html", status, session=session, form=form,
                          message=message, subnets=await self._subnets(session),
                          protocols=PROTOCOLS, algorithms=ALGORITHMS,
                          monitor_types=MONITOR_TYPES, rows=_member_rows(form))
