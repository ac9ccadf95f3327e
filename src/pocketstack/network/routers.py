"""Routers as API resources: an external gateway on a router:external network (a
network:router_gateway port with an address from the external subnet), interfaces on
subnets (network:router_interface ports holding the subnet's gateway IP) and extra routes.
Where host networking runs, the agent makes them real (network/agent/l3.py).
"""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.network import (base, l3_hosting, listing, port_delete, ports, quotas,
                                 router_gateways, subnets)
from pocketstack.network import agent as host_agent
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import FloatingIP, IPAllocation, Port, Router, Subnet, Tag

INTERFACE = "network:router_interface"
GATEWAY = router_gateways.GATEWAY


def _route(value, name):
    return v.dict_of({"destination": v.cidr, "nexthop": v.ip_address},
                     required=("destination", "nexthop"))(value, name)


def _not_supported(value, name):
    if v.boolean(value, name):
        raise v.invalid(name, f"{name} routers are not supported by this cloud")
    return False


def _zone_hints(value, name):
    hints = v.list_of(v.string())(value, name)
    unknown = [h for h in hints if h != "nova"]
    if unknown:
        raise v.invalid(name, f"availability zone {unknown[0]} does not exist")
    return hints


ATTRS = {
    "name": v.Attr(v.string()),
    "ha": v.Attr(_not_supported),
    "distributed": v.Attr(_not_supported),
    "availability_zone_hints": v.Attr(_zone_hints, put=False),
    "description": v.Attr(v.string()),
    "admin_state_up": v.Attr(v.boolean),
    "external_gateway_info": v.Attr(router_gateways.gateway_info),
    "routes": v.Attr(v.list_of(_route), post=False),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "tags": v.Attr(v.tags, put=False),
}

COLLECTION = listing.Collection(
    name="routers", model=Router, not_found=exc.RouterNotFound,
    columns={"id": Router.id, "name": Router.name, "description": Router.description,
             "project_id": Router.project_id, "tenant_id": Router.project_id,
             "admin_state_up": Router.admin_state_up, "status": Router.status,
             "revision_number": Router.revision_number, "created_at": Router.created_at,
             "updated_at": Router.updated_at},
    ignored=frozenset({"external_gateway_info", "routes"}),
)


def visible(ctx):
    return base.own_visible(Router, ctx)


def get_row(s, ctx, router_id: str, lock: bool = False) -> Router:
    query = sa.select(Router).where(Router.id == router_id, visible(ctx))
    router = s.scalar(query.with_for_update() if lock else query)
    if router is None:
        raise exc.RouterNotFound(router_id)
    return router


def view(s, router: Router, tags) -> dict:
    info, gateways = router_gateways.views(s, router)
    return {"id": router.id, "name": router.name, **base.project_view(router.project_id),
            "admin_state_up": router.admin_state_up, "status": router.status,
            "external_gateway_info": info, "external_gateways": gateways,
            "routes": list(router.routes or []),
            # ha and distributed as neutron shows them (the SDK reads them) although
            # l3-ha and dvr are not offered; router_availability_zone's zone fields.
            "ha": False, "distributed": False, "availability_zone_hints": [],
            "availability_zones": ["nova"],
            **base.standard_view(router, tags)}


def _interfaces(s, router_id: str) -> list[Port]:
    return list(s.scalars(sa.select(Port).where(Port.device_id == router_id,
                                                Port.device_owner == INTERFACE)))


def _check_routes(s, router: Router, routes: list[dict]) -> None:
    # neutron's max_routes, checked first as there; a router left above it by a lowered
    # limit may still shed routes
    limit = config.CONF.network.max_routes
    if len(routes) > limit and len(routes) >= len(router.routes or []):
        raise exc.RoutesExhausted(router.id, limit)
    connected, own = [], set()
    ports_of_router = _interfaces(s, router.id) + router_gateways.ports_of(s, router)
    for port in ports_of_router:
        for alloc in port.fixed_ips:
            own.add(alloc.ip_address)
            connected.append(ipaddress.ip_network(s.get(Subnet, alloc.subnet_id).cidr))
    for route in routes:
        nexthop = ipaddress.ip_address(route["nexthop"])
        if route["nexthop"] in own:
            raise exc.InvalidInput(f"Invalid format for routes: {routes}, the nexthop is used "
                                   "by router")
        if not any(nexthop in network for network in connected):
            raise exc.InvalidInput(f"Invalid format for routes: {routes}, the nexthop is not "
                                   "connected with router")


# --- API -----------------------------------------------------------------------------

@base.retry_on_deadlock
def create_router(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "router"), ATTRS, update=False)
    effects = base.AfterCommit()
    with db.transaction() as s:
        project_id = base.owner_project(ctx, values)
        base.authorize(ctx, "create_router", {"project_id": project_id})
        quotas.check(s, ctx, project_id, "router")
        router = Router(id=base.new_id(), project_id=project_id, name=values.get("name", ""),
                        description=values.get("description", ""),
                        admin_state_up=values.get("admin_state_up", True), status="ACTIVE",
                        routes=[])
        base.init_standard(router)
        s.add(router)
        s.flush()
        if values.get("external_gateway_info"):
            router_gateways.set_gateway(s, ctx, router, values["external_gateway_info"],
                                        effects, "create_router")
        if values.get("tags"):
            base.set_tags(s, router.id, values["tags"])
        s.flush()
        out = view(s, router, values.get("tags"))
    effects.run()
    host_agent.changed()  # this host's routers follow
    return out


def get_router(ctx, router_id: str) -> dict:
    with db.reader() as s:
        router = get_row(s, ctx, router_id)
        return view(s, router, base.tags_of(s, router.id))


def list_routers(ctx, params: listing.Params):
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        tags = listing.tags_by_id(s, [r.id for r in page.rows])
        items = [listing.select_fields(view(s, r, tags.get(r.id)), params) for r in page.rows]
    return items, page


@base.retry_on_deadlock
def update_router(ctx, router_id: str, body: dict, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "router"), ATTRS, update=True)
    effects = base.AfterCommit()
    with db.transaction() as s:
        router = get_row(s, ctx, router_id, lock=True)
        base.authorize(ctx, "update_router", {"project_id": router.project_id})
        base.check_revision(router, if_revision)
        if "external_gateway_info" in values:
            router_gateways.set_gateway(s, ctx, router, values["external_gateway_info"],
                                        effects, "update_router")
        if "routes" in values:
            _check_routes(s, router, values["routes"])
            router.routes = values["routes"]
        for key in ("name", "description", "admin_state_up"):
            if key in values:
                setattr(router, key, values[key])
        base.touch(router)
        l3_hosting.schedule_if_unhosted(s, router.id)
        s.flush()
        out = view(s, router, base.tags_of(s, router.id))
    effects.run()
    host_agent.changed()  # this host's routers follow
    return out


_ROUTES_BODY = {"routes": v.Attr(v.list_of(_route))}


def _with_routes(old: list[dict], add: list[dict]) -> list[dict]:
    """neutron's _add_extra_routes: every (destination, nexthop) once, in order."""
    out = []
    for route in [*old, *add]:
        if route not in out:
            out.append(route)
    return out


@base.retry_on_deadlock
def change_extraroutes(ctx, router_id: str, body: dict, add: bool,
                       if_revision: int | None = None) -> dict:
    """PUT /routers/{id}/add_extraroutes and remove_extraroutes (extraroute-atomic): the
    given routes added to, or taken from, the router's in one transaction, so concurrent
    callers do not overwrite each other's routes. Removing a route the router does not
    have is no error; the resulting set is checked as an update of ``routes`` is."""
    values = v.parse(v.resource_body(body, "router"), _ROUTES_BODY, update=True)
    if "routes" not in values:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'routes' not "
                                 "specified")
    action = "add_extraroutes" if add else "remove_extraroutes"
    with db.transaction() as s:
        router = get_row(s, ctx, router_id, lock=True)
        base.authorize(ctx, action, {"project_id": router.project_id})
        base.check_revision(router, if_revision)
        old = list(router.routes or [])
        routes = (_with_routes(old, values["routes"]) if add
                  else [r for r in old if r not in values["routes"]])
        _check_routes(s, router, routes)
        if routes != old:
            router.routes = routes
            base.touch(router)
        s.flush()
        out = view(s, router, base.tags_of(s, router.id))
    host_agent.changed()
    return out


@base.retry_on_deadlock
def delete_router(ctx, router_id: str, if_revision: int | None = None) -> None:
    effects = base.AfterCommit()
    with db.transaction() as s:
        router = get_row(s, ctx, router_id, lock=True)
        base.authorize(ctx, "delete_router", {"project_id": router.project_id})
        base.check_revision(router, if_revision)
        if _interfaces(s, router.id):
            raise exc.RouterInUse(router.id)
        router_gateways.remove_all(s, router, effects)
        s.execute(sa.delete(Tag).where(Tag.resource_id == router.id))
        s.delete(router)
    effects.run()
    host_agent.changed()  # this host's routers follow


def _interface_info(router: Router, port: Port) -> dict:
    subnet_ids = [a.subnet_id for a in port.fixed_ips]
    return {"id": router.id, **base.project_view(router.project_id), "port_id": port.id,
            "network_id": port.network_id, "subnet_id": subnet_ids[0] if subnet_ids else None,
            "subnet_ids": subnet_ids}


def _interface_body(body) -> dict:
    if not isinstance(body, dict):
        raise exc.BadRequest("router", "Either subnet_id or port_id must be specified")
    unknown = set(body) - {"subnet_id", "port_id"}
    if unknown:
        raise exc.BadRequest("router", f"Unrecognized attribute(s) {sorted(unknown)}")
    for key in ("subnet_id", "port_id"):
        if key in body:
            v.uuid_string(body[key], key)
    return body


def _check_overlap(s, router: Router, new_subnets: list[Subnet]) -> None:
    existing = [(a.subnet_id, s.get(Subnet, a.subnet_id).cidr)
                for port in _interfaces(s, router.id) for a in port.fixed_ips]
    for subnet in new_subnets:
        for other_id, other_cidr in existing:
            if other_id == subnet.id:
                raise exc.BadRequest("router", f"Router already has a port on subnet "
                                               f"{subnet.id}")
            if ipaddress.ip_network(other_cidr).overlaps(ipaddress.ip_network(subnet.cidr)):
                raise exc.BadRequest("router", f"Cidr {subnet.cidr} of subnet {subnet.id} "
                                               f"overlaps with cidr {other_cidr} of subnet "
                                               f"{other_id}")


@base.retry_on_deadlock
def add_router_interface(ctx, router_id: str, body) -> dict:
    body = _interface_body(body)
    effects = base.AfterCommit()
    with db.transaction() as s:
        router = get_row(s, ctx, router_id, lock=True)
        base.authorize(ctx, "add_router_interface", {"project_id": router.project_id})
        if "subnet_id" in body and "port_id" in body:
            raise exc.BadRequest("router", "Cannot specify both subnet-id and port-id")
        if "port_id" in body:
            port = ports.get_row(s, ctx, body["port_id"])
            if port.device_id or port.device_owner:
                raise exc.PortInUse(port.id, port.network_id, port.device_id)
            if not port.fixed_ips:
                raise exc.BadRequest("router", "Router port must have at least one fixed IP")
            port_subnets = [s.get(Subnet, a.subnet_id) for a in port.fixed_ips]
            if len([x for x in port_subnets if x.ip_version == 4]) > 1:
                raise exc.BadRequest("router", "Cannot have multiple IPv4 subnets on router "
                                               "port")
            _check_overlap(s, router, port_subnets)
            ports.update_in(s, ctx, port.id, {"device_owner": INTERFACE, "device_id": router.id,
                                             "binding:host_id": config.CONF.host},
                            effects, trusted=True)
        elif "subnet_id" in body:
            subnet = subnets.get_row(s, ctx, body["subnet_id"])
            if not subnet.gateway_ip:
                raise exc.BadRequest("router", "Subnet for router interface must have a "
                                               "gateway IP")
            _check_overlap(s, router, [subnet])
            port = ports.create_in(s, ctx, {
                "network_id": subnet.network_id, "project_id": router.project_id,
                "fixed_ips": [{"subnet_id": subnet.id, "ip_address": subnet.gateway_ip}],
                "device_owner": INTERFACE, "device_id": router.id,
                "binding:host_id": config.CONF.host}, effects, trusted=True)
        else:
            raise exc.BadRequest("router", "Either subnet_id or port_id must be specified")
        base.touch(router)
        l3_hosting.schedule_if_unhosted(s, router.id)
        s.flush()
        s.refresh(port, ["fixed_ips"])
        out = _interface_info(router, port)
    effects.run()
    host_agent.changed()  # this host's routers follow
    return out


@base.retry_on_deadlock
def remove_router_interface(ctx, router_id: str, body) -> dict:
    body = _interface_body(body)
    effects = base.AfterCommit()
    with db.transaction() as s:
        router = get_row(s, ctx, router_id, lock=True)
        base.authorize(ctx, "remove_router_interface", {"project_id": router.project_id})
        interfaces = _interfaces(s, router.id)
        if "port_id" in body:
            port = next((p for p in interfaces if p.id == body["port_id"]), None)
            if port is None:
                raise exc.RouterInterfaceNotFound(router.id, body["port_id"])
        elif "subnet_id" in body:
            port = next((p for p in interfaces
                         if any(a.subnet_id == body["subnet_id"] for a in p.fixed_ips)), None)
            if port is None:
                raise exc.RouterInterfaceNotFoundForSubnet(router.id, body["subnet_id"])
        else:
            raise exc.BadRequest("router", "Either subnet_id or port_id must be specified")
        info = _interface_info(router, port)
        for subnet_id in info["subnet_ids"]:
            if s.scalar(sa.select(FloatingIP.id).join(
                    IPAllocation, IPAllocation.port_id == FloatingIP.fixed_port_id).where(
                    FloatingIP.router_id == router.id,
                    IPAllocation.subnet_id == subnet_id).limit(1)):
                raise exc.RouterInterfaceInUseByFloatingIP(router.id, subnet_id)
            cidr = ipaddress.ip_network(s.get(Subnet, subnet_id).cidr)
            if any(ipaddress.ip_address(r["nexthop"]) in cidr for r in router.routes or []):
                raise exc.InUse(f"Router interface for subnet {subnet_id} on router "
                                f"{router.id} cannot be deleted, as it is required by one or "
                                "more routes.")
        port_delete.delete_in(s, port, effects)
        base.touch(router)
        l3_hosting.schedule_if_unhosted(s, router.id)
    effects.run()
    host_agent.changed()  # this host's routers follow
    return info


@base.retry_on_deadlock
def change_gateways(ctx, router_id: str, body, action: str,
                    if_revision: int | None = None) -> dict:
    """PUT /routers/{id}/{add,update,remove}_external_gateways (external-gateway-
    multihoming): the whole router back, as an update answers."""
    infos = router_gateways.gateway_list(body)
    effects = base.AfterCommit()
    with db.transaction() as s:
        router = get_row(s, ctx, router_id, lock=True)
        base.check_revision(router, if_revision)
        if infos is not None:
            getattr(router_gateways, {"add": "add", "update": "update",
                                      "remove": "remove_listed"}[action])(
                s, ctx, router, infos, effects)
            base.touch(router)
            l3_hosting.schedule_if_unhosted(s, router.id)
        s.flush()
        out = view(s, router, base.tags_of(s, router.id))
    effects.run()
    host_agent.changed()  # this host's routers follow
    return out
