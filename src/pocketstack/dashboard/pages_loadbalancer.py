"""The load balancers page: the project's load balancers with their VIP, statuses and
listeners; create one on a subnet, add a listener, delete one (with everything under
it). A client of the load-balancer API with the user's token, as every page; the API's
refusal (Octavia's faultstring) is shown on the page with its status."""
from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import LOADBALANCER, NETWORK, PREFIX

PROTOCOLS = ("HTTP", "HTTPS", "TCP", "UDP")


class LoadBalancerPages:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        return [Route(PREFIX + "/load-balancers", self.load_balancers,
                      methods=["GET", "POST"])]

    def _lbaas(self, session) -> str:
        return self.pages._base(session, LOADBALANCER) + "/v2/lbaas"

    async def load_balancers(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            base = self._lbaas(session)
            items, error = await p._list(session, base + "/loadbalancers", "loadbalancers")
            if error:
                return error
            (listeners, _), (subnets, _) = await asyncio.gather(
                p._list(session, base + "/listeners", "listeners"),
                p._list(session, p._base(session, NETWORK) + "/v2.0/subnets", "subnets"))
            subnets = subnets or []
            names = {s["id"]: f"{s.get('name') or s['id']} {s['cidr']}" for s in subnets}
            for lb in items:
                lb["subnet_label"] = names.get(lb.get("vip_subnet_id"), lb.get("vip_subnet_id"))
                lb["listener_rows"] = [li for li in listeners or []
                                       if {"id": lb["id"]} in li.get("loadbalancers", [])]
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
