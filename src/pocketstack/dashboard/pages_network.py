"""Network pages of the dashboard: floating IPs (allocate, associate, release), routers
(create, delete, interfaces, gateway, static routes) and security groups with their rules.

As in pages.py, every page is a client of the network API with the user's token; a form
posts back to its page with an ``action`` field, and the API's refusal is shown on the page
with its status. Choices the API needs (an id) are checked here only for being there, so
an empty menu gives a message instead of a request to the collection's URL.
"""
from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pocketstack.dashboard import web
from pocketstack.dashboard.web import COMPUTE, NETWORK, PREFIX, SERVER_CHOICES


def _or_none(text: str):
    """An empty field means "not given" (null to the API); anything else goes as typed."""
    text = text.strip()
    return text or None


class NetworkPages:
    def __init__(self, pages):
        self.pages = pages

    def routes(self) -> list[Route]:
        both = ["GET", "POST"]
        return [Route(PREFIX + "/floating-ips", self.floating_ips, methods=both),
                Route(PREFIX + "/routers", self.routers, methods=both),
                Route(PREFIX + "/security-groups", self.security_groups, methods=both)]

    def _v2(self, session) -> str:
        return self.pages._base(session, NETWORK) + "/v2.0"

    async def _put(self, session, url: str | None, body: dict, what: str):
        if url is None:
            return f"Choose {what}.", 400
        return self.pages._failed(await self.pages._call(session, "PUT", url, body))

    # -- floating IPs -----------------------------------------------------------------

    async def floating_ips(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            base = self._v2(session)
            items, error = await p._list(session, base + "/floatingips", "floatingips")
            if error:
                return error
            (networks, _), (ports, _), (servers, _) = await asyncio.gather(
                p._list(session, base + "/networks", "networks"),
                p._list(session, base + "/ports", "ports", project_id=session.project_id),
                p._list(session, p._base(session, COMPUTE) + "/servers", "servers",
                        limit=SERVER_CHOICES))
            names = {s["id"]: s["name"] for s in servers or []}
            # A server's ports are what a floating IP can be associated with.
            targets = [{"id": port["id"], "label": " ".join(
                [names.get(port["device_id"], port["device_id"])] +
                [ip["ip_address"] for ip in port.get("fixed_ips", [])])}
                for port in ports or [] if port.get("device_owner", "").startswith("compute:")]
            port_labels = {t["id"]: t["label"] for t in targets}
            networks = networks or []
            return web.render("floating_ips.html", status, session=session, floating_ips=items,
                           external=[n for n in networks if n.get("router:external")],
                           network_names={n["id"]: n["name"] for n in networks},
                           targets=targets, port_labels=port_labels, message=message,
                           form=form or {})

        async def act(session, form):
            url = self._v2(session) + "/floatingips"
            action, fip = form.get("action", ""), form.get("floatingip_id", "")
            if action == "allocate":
                network = form.get("network_id", "").strip()
                if not network:
                    return "Choose an external network to allocate from.", 400
                return p._failed(await p._call(session, "POST", url, {"floatingip": {
                    "floating_network_id": network}}))
            if action == "release":
                return await p._delete(session, web.item(url, fip))
            if action == "associate":
                port = form.get("port_id", "").strip()
                if not port:
                    return "Choose a server's port to associate the floating IP with.", 400
                return await self._put(session, web.item(url, fip),
                                       {"floatingip": {"port_id": port}}, "a floating IP")
            if action == "disassociate":
                return await self._put(session, web.item(url, fip),
                                       {"floatingip": {"port_id": None}}, "a floating IP")
            return "Unknown form action.", 400
        return await p._page(request, show, act)

    # -- routers ----------------------------------------------------------------------

    async def routers(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            base = self._v2(session)
            items, error = await p._list(session, base + "/routers", "routers")
            if error:
                return error
            (networks, _), (subnets, _), (ports, _) = await asyncio.gather(
                p._list(session, base + "/networks", "networks"),
                p._list(session, base + "/subnets", "subnets"),
                p._list(session, base + "/ports", "ports",
                        device_owner="network:router_interface"))
            subnets = subnets or []
            by_subnet = {s["id"]: s for s in subnets}
            for router in items:
                router["interfaces"] = [
                    {"port_id": port["id"], "subnet_id": ip["subnet_id"],
                     "ip_address": ip["ip_address"],
                     "cidr": by_subnet.get(ip["subnet_id"], {}).get("cidr", ""),
                     "subnet": by_subnet.get(ip["subnet_id"], {}).get("name", "")}
                    for port in ports or [] if port["device_id"] == router["id"]
                    and port.get("device_owner") == "network:router_interface"
                    for ip in port.get("fixed_ips", [])]
            networks = networks or []
            return web.render("routers.html", status, session=session, routers=items,
                           external=[n for n in networks if n.get("router:external")],
                           network_names={n["id"]: n["name"] for n in networks},
                           subnets=[s for s in subnets
                                    if s.get("project_id", s.get("tenant_id"))
                                    == session.project_id] or subnets,
                           message=message, form=form or {})

        async def act(session, form):
            url = self._v2(session) + "/routers"
            action = form.get("action", "")
            router = web.item(url, form.get("router_id", ""))
            if action == "create":
                body = {"name": form.get("name", "")}
                if form.get("gateway_network_id", "").strip():
                    body["external_gateway_info"] = {
                        "network_id": form["gateway_network_id"].strip()}
                # One request: the router is made with its gateway, or not at all.
                return p._failed(await p._call(session, "POST", url, {"router": body}))
            if action == "delete":
                return await p._delete(session, router)
            if router is None:
                return "Choose a router.", 400
            subnet = form.get("subnet_id", "").strip()
            if action in ("add_interface", "remove_interface"):
                if not subnet:
                    return "Choose a subnet.", 400
                verb = "add" if action == "add_interface" else "remove"
                return await self._put(session, f"{router}/{verb}_router_interface",
                                       {"subnet_id": subnet}, "a router")
            if action == "set_gateway":
                network = form.get("gateway_network_id", "").strip()
                if not network:
                    return "Choose an external network for the gateway.", 400
                return await self._put(session, router, {"router": {
                    "external_gateway_info": {"network_id": network}}}, "a router")
            if action == "clear_gateway":
                return await self._put(session, router,
                                       {"router": {"external_gateway_info": {}}}, "a router")
            if action in ("add_route", "remove_route"):
                route = {"destination": form.get("destination", "").strip(),
                         "nexthop": form.get("nexthop", "").strip()}
                verb = "add" if action == "add_route" else "remove"
                return await self._put(session, f"{router}/{verb}_extraroutes",
                                       {"router": {"routes": [route]}}, "a router")
            return "Unknown form action.", 400
        return await p._page(request, show, act)

    # -- security groups --------------------------------------------------------------

    async def security_groups(self, request: Request) -> Response:
        p = self.pages

        async def show(session, message=None, status=200, form=None):
            items, error = await p._list(session, self._v2(session) + "/security-groups",
                                         "security_groups", project_id=session.project_id)
            if error:
                return error
            return web.render("security_groups.html", status, session=session, groups=items,
                           group_names={g["id"]: g["name"] for g in items},
                           message=message, form=form or {})

        async def act(session, form):
            base = self._v2(session)
            action = form.get("action", "")
            if action == "create":
                return p._failed(await p._call(session, "POST", base + "/security-groups", {
                    "security_group": {"name": form.get("name", ""),
                                       "description": form.get("description", "")}}))
            if action == "delete":
                return await p._delete(session, web.item(base + "/security-groups",
                                                      form.get("group_id", "")))
            if action == "delete_rule":
                return await p._delete(session, web.item(base + "/security-group-rules",
                                                      form.get("rule_id", "")))
            if action != "add_rule":
                return "Unknown form action.", 400
            if not form.get("group_id", "").strip():
                return "Choose a security group.", 400
            protocol = form.get("protocol", "").strip()
            rule = {"security_group_id": form["group_id"].strip(),
                    "direction": form.get("direction", ""),
                    "ethertype": form.get("ethertype", "") or "IPv4",
                    "protocol": None if protocol in ("", "any") else protocol,
                    "remote_ip_prefix": _or_none(form.get("remote_ip_prefix", ""))}
            for field in ("port_range_min", "port_range_max"):
                value = form.get(field, "").strip()
                rule[field] = web.number(value) if value else None
            return p._failed(await p._call(session, "POST", base + "/security-group-rules",
                                           {"security_group_rule": rule}))
        return await p._page(request, show, act)
