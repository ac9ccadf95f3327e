"""Floating IPs: an IPv4 address from an external network's subnet (held by a
network:floatingip port), associated with a fixed IP of a port that a router connects to
that external network.
"""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import (base, dns_publish, listing, networks, port_delete, ports,
                                 quotas, routers)
from pocketstack.network import agent as host_agent
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import (FloatingIP, IPAllocation, Port, PortForwarding, Router,
                                        Subnet, Tag)

OWNER = "network:floatingip"


def _nullable_ip(value, name):
    return None if value is None else v.ip_address(value, name, version=4)


ATTRS = {
    "floating_network_id": v.Attr(v.uuid_string, put=False),
    "floating_ip_address": v.Attr(lambda value, name: v.ip_address(value, name, 4),
                                  put=False),
    "subnet_id": v.Attr(v.nullable_uuid, put=False),
    "port_id": v.Attr(v.nullable_uuid),
    "fixed_ip_address": v.Attr(_nullable_ip),
    "description": v.Attr(v.string()),
    "dns_name": v.Attr(v.dns_name, put=False),
    "dns_domain": v.Attr(v.dns_domain, put=False),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "tags": v.Attr(v.tags, put=False),
}

COLLECTION = listing.Collection(
    name="floatingips", model=FloatingIP, not_found=exc.FloatingIPNotFound,
    columns={"id": FloatingIP.id, "floating_ip_address": FloatingIP.floating_ip_address,
             "floating_network_id": FloatingIP.floating_network_id,
             "router_id": FloatingIP.router_id, "port_id": FloatingIP.fixed_port_id,
             "fixed_ip_address": FloatingIP.fixed_ip_address, "status": FloatingIP.status,
             "description": FloatingIP.description, "project_id": FloatingIP.project_id,
             "tenant_id": FloatingIP.project_id, "dns_name": FloatingIP.dns_name,
             "dns_domain": FloatingIP.dns_domain, "revision_number": FloatingIP.revision_number,
             "created_at": FloatingIP.created_at, "updated_at": FloatingIP.updated_at},
)


def visible(ctx):
    return base.own_visible(FloatingIP, ctx)


def get_row(s, ctx, fip_id: str) -> FloatingIP:
    fip = s.scalar(sa.select(FloatingIP).where(FloatingIP.id == fip_id, visible(ctx)))
    if fip is None:
        raise exc.FloatingIPNotFound(fip_id)
    return fip


def _port_details(s, fip: FloatingIP) -> dict | None:
    """neutron's fip-port-details: the associated port, in brief."""
    port = s.get(Port, fip.fixed_port_id) if fip.fixed_port_id else None
    if port is None:
        return None
    return {"name": port.name, "network_id": port.network_id, "mac_address": port.mac_address,
            "admin_state_up": port.admin_state_up, "status": port.status,
            "device_id": port.device_id, "device_owner": port.device_owner}


def view(s, fip: FloatingIP, tags) -> dict:
    return {"id": fip.id, "floating_ip_address": fip.floating_ip_address,
            "floating_network_id": fip.floating_network_id, "router_id": fip.router_id,
            "port_id": fip.fixed_port_id, "fixed_ip_address": fip.fixed_ip_address,
            "status": fip.status, **base.project_view(fip.project_id),
            "dns_name": fip.dns_name, "dns_domain": fip.dns_domain,
            "port_details": _port_details(s, fip),
            **base.standard_view(fip, tags)}


def _router_for(s, floating_network_id: str, subnet_id: str) -> Router | None:
    """A router with a gateway on the floating network and an interface on the subnet."""
    interface_routers = sa.select(Port.device_id).join(
        IPAllocation, IPAllocation.port_id == Port.id).where(
        Port.device_owner == routers.INTERFACE, IPAllocation.subnet_id == subnet_id)
    # any of its gateways (external-gateway-multihoming), not only the first
    return s.scalar(sa.select(Router).join(Port, sa.and_(
        Port.device_id == Router.id, Port.device_owner == "network:router_gateway")).where(
        Port.network_id == floating_network_id, Router.id.in_(interface_routers)).limit(1))


def _tell_compute(s, effects, port_id: str | None) -> None:
    """A server's port gained or lost a floating IP: network-changed, so compute refreshes
    the server's addresses (neutron's nova notifier does the same)."""
    port = s.get(Port, port_id) if port_id else None
    if port is not None and port.device_id and (port.device_owner or "").startswith("compute:"):
        effects.event("network-changed", port.device_id, port.id)


def _associate(s, ctx, fip: FloatingIP, port_id: str | None, fixed_ip: str | None) -> None:
    if port_id is None:
        fip.fixed_port_id = fip.fixed_ip_address = fip.router_id = None
        fip.status = "DOWN"
        return
    if s.scalar(sa.select(PortForwarding.id).where(
            PortForwarding.floatingip_id == fip.id).limit(1)):
        raise exc.FipInUseByPortForwarding(
            f"Floating IP {fip.id} has port forwardings: a floating IP either forwards ports "
            "or is associated with a port")
    port = ports.get_row(s, ctx, port_id)
    if port.project_id != fip.project_id and not base.sees_all(ctx):
        raise exc.BadRequest("floatingip", f"Cannot create floating IP and bind it to Port "
                                           f"{port.id}, since that port is owned by a "
                                           "different project")
    v4 = [a for a in port.fixed_ips if ipaddress.ip_address(a.ip_address).version == 4]
    if fixed_ip:
        chosen = next((a for a in v4 if a.ip_address == fixed_ip), None)
        if chosen is None:
            raise exc.BadRequest("floatingip", f"Port {port.id} does not have fixed ip "
                                               f"{fixed_ip}")
    elif not v4:
        raise exc.BadRequest("floatingip", f"Port {port.id} does not have any IPv4 address; "
                                           "a floating IP needs one")
    elif len(v4) > 1:
        raise exc.BadRequest("floatingip", f"Port {port.id} has multiple fixed IPv4 "
                                           "addresses. Must provide a specific IPv4 address "
                                           "when assigning a floating IP")
    else:
        chosen = v4[0]
    router = _router_for(s, fip.floating_network_id, chosen.subnet_id)
    if router is None:
        raise exc.ExternalGatewayForFloatingIPNotFound(fip.floating_network_id,
                                                       chosen.subnet_id, port.id)
    s.flush()
    try:
        # Unique (fixed_port_id, fixed_ip_address): one floating IP per fixed IP, race-free.
        with s.begin_nested():
            fip.fixed_port_id, fip.fixed_ip_address = port.id, chosen.ip_address
            fip.router_id, fip.status = router.id, "ACTIVE"
            s.flush()
    except sa.exc.IntegrityError:
        other = s.scalar(sa.select(FloatingIP.floating_ip_address).where(
            FloatingIP.fixed_port_id == port.id,
            FloatingIP.fixed_ip_address == chosen.ip_address))
        raise exc.FloatingIPPortAlreadyAssociated(fip.id, other or fip.floating_ip_address,
                                                  chosen.ip_address, port.id,
                                                  fip.floating_network_id) from None


@base.retry_on_deadlock
def create_floatingip(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "floatingip"), ATTRS, update=False)
    if "floating_network_id" not in values:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute "
                                 "'floating_network_id' not specified")
    effects = base.AfterCommit()
    with db.transaction() as s:
        network = networks.get_row(s, ctx, values["floating_network_id"])
        project_id = base.owner_project(ctx, values)
        if not networks.is_external_for(s, network, project_id):
            raise exc.BadRequest("floatingip", f"Network {network.id} is not a valid external "
                                               "network")
        target = {"project_id": project_id}
        base.authorize(ctx, "create_floatingip", target)
        if "floating_ip_address" in values:
            base.authorize(ctx, "create_floatingip:floating_ip_address", target)
        quotas.check(s, ctx, project_id, "floatingip")
        v4_subnets = [x for x in s.scalars(sa.select(Subnet).where(
            Subnet.network_id == network.id, Subnet.ip_version == 4))]
        if not v4_subnets:
            raise exc.BadRequest("floatingip", f"Network {network.id} does not contain any "
                                               "IPv4 subnet")
        fixed = {}
        if values.get("subnet_id"):
            if values["subnet_id"] not in {x.id for x in v4_subnets}:
                raise exc.BadRequest("floatingip", f"Subnet {values['subnet_id']} is not an "
                                                   f"IPv4 subnet of network {network.id}")
            fixed["subnet_id"] = values["subnet_id"]
        if values.get("floating_ip_address"):
            fixed["ip_address"] = values["floating_ip_address"]
        fip = FloatingIP(id=base.new_id(), project_id=project_id,
                         floating_network_id=network.id,
                         description=values.get("description", ""),
                         dns_name=values.get("dns_name", ""),
                         dns_domain=values.get("dns_domain", ""), status="DOWN")
        base.init_standard(fip)
        port = ports.create_in(s, ctx, {
            "network_id": network.id, "project_id": "", "device_owner": OWNER,
            "device_id": fip.id,
            "fixed_ips": [fixed] if fixed else [{"subnet_id": x.id} for x in v4_subnets[:1]]},
            effects, trusted=True)
        port.status = "N/A"
        fip.floating_port_id = port.id
        fip.floating_ip_address = port.fixed_ips[0].ip_address
        s.add(fip)
        s.flush()
        if values.get("port_id"):
            _associate(s, ctx, fip, values["port_id"], values.get("fixed_ip_address"))
            _tell_compute(s, effects, fip.fixed_port_id)
        if values.get("tags"):
            base.set_tags(s, fip.id, values["tags"])
        dns_publish.sync(s, fip, effects, ctx)
        s.flush()
        out = view(s, fip, values.get("tags"))
    effects.run()
    host_agent.changed()  # this host's routers follow
    return out


def get_floatingip(ctx, fip_id: str) -> dict:
    with db.reader() as s:
        fip = get_row(s, ctx, fip_id)
        return view(s, fip, base.tags_of(s, fip.id))


def list_floatingips(ctx, params: listing.Params):
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        tags = listing.tags_by_id(s, [f.id for f in page.rows])
        items = [listing.select_fields(view(s, f, tags.get(f.id)), params) for f in page.rows]
    return items, page


@base.retry_on_deadlock
def update_floatingip(ctx, fip_id: str, body: dict, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "floatingip"), ATTRS, update=True)
    effects = base.AfterCommit()
    with db.transaction() as s:
        fip = get_row(s, ctx, fip_id)
        base.authorize(ctx, "update_floatingip", {"project_id": fip.project_id})
        base.check_revision(fip, if_revision)
        before = fip.fixed_port_id
        if "port_id" in values:
            _associate(s, ctx, fip, values["port_id"], values.get("fixed_ip_address"))
        elif "fixed_ip_address" in values and fip.fixed_port_id:
            _associate(s, ctx, fip, fip.fixed_port_id, values["fixed_ip_address"])
        if "description" in values:
            fip.description = values["description"]
        dns_publish.sync(s, fip, effects, ctx)
        base.touch(fip)
        s.flush()
        for port_id in {before, fip.fixed_port_id} - {None}:
            _tell_compute(s, effects, port_id)
        out = view(s, fip, base.tags_of(s, fip.id))
    effects.run()
    host_agent.changed()  # this host's routers follow
    return out


@base.retry_on_deadlock
def delete_floatingip(ctx, fip_id: str, if_revision: int | None = None) -> None:
    effects = base.AfterCommit()
    with db.transaction() as s:
        fip = get_row(s, ctx, fip_id)
        base.authorize(ctx, "delete_floatingip", {"project_id": fip.project_id})
        base.check_revision(fip, if_revision)
        port = s.get(Port, fip.floating_port_id)
        _tell_compute(s, effects, fip.fixed_port_id)
        if fip.published_dns_name:
            effects.dns_change(ctx, fip.floating_ip_address,
                               (fip.published_dns_name, fip.published_dns_domain), None)
        s.execute(sa.delete(Tag).where(Tag.resource_id == fip.id))
        s.delete(fip)
        s.flush()
        if port is not None:
            port_delete.delete_in(s, port, effects)
    effects.run()
    host_agent.changed()  # this host's routers follow
