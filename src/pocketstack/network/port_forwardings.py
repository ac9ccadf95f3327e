"""Floating IP port forwardings (/v2.0/floatingips/{id}/port_forwardings): one floating
IP shared by several servers, each reached on its own external port. As in neutron, a
floating IP either forwards ports or is associated with one port, never both; the
forwarding's internal port must sit behind a router with a gateway on the floating IP's
network. No packets are forwarded; the records and checks are neutron's.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, numbers
from pocketstack.network import base, floatingips, ports
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import FloatingIP, PortForwarding

PROTOCOLS = ("tcp", "udp", "dccp", "sctp")
_port_number = v.integer(1, 65535)

ATTRS = {
    "internal_port_id": v.Attr(v.uuid_string),
    "internal_ip_address": v.Attr(v.ip_address),
    "internal_port": v.Attr(_port_number),
    "external_port": v.Attr(_port_number),
    "protocol": v.Attr(v.one_of(*PROTOCOLS)),
    "description": v.Attr(v.string()),
}
REQUIRED = ("internal_port_id", "internal_ip_address", "internal_port", "external_port",
            "protocol")


def view(pf: PortForwarding) -> dict:
    return {"id": pf.id, "internal_port_id": pf.internal_port_id,
            "internal_ip_address": pf.internal_ip_address, "internal_port": pf.internal_port,
            "external_port": pf.external_port, "protocol": pf.protocol,
            "internal_port_range": f"{pf.internal_port}:{pf.internal_port}",
            "external_port_range": f"{pf.external_port}:{pf.external_port}",
            "description": pf.description}


def _fip(s, ctx, fip_id: str, action: str) -> FloatingIP:
    fip = floatingips.get_row(s, ctx, fip_id)
    base.authorize(ctx, action, {"project_id": fip.project_id})
    return fip


def _get(s, fip: FloatingIP, pf_id: str) -> PortForwarding:
    pf = s.scalar(sa.select(PortForwarding).where(PortForwarding.id == pf_id,
                                                  PortForwarding.floatingip_id == fip.id))
    if pf is None:
        raise exc.PortForwardingNotFound(pf_id)
    return pf


def _check_internal(s, ctx, fip: FloatingIP, values: dict) -> None:
    """The internal port owns the address, and a router links it to the floating IP."""
    if fip.fixed_port_id:
        raise exc.FipInUseByPortForwarding(
            f"Floating IP {fip.id} is associated with port {fip.fixed_port_id}: a floating "
            "IP either forwards ports or is associated with a port")
    port = ports.get_row(s, ctx, values["internal_port_id"])
    allocation = next((a for a in port.fixed_ips
                       if a.ip_address == values["internal_ip_address"]), None)
    if allocation is None:
        raise exc.BadRequest("port_forwarding", f"The internal IP "
                             f"{values['internal_ip_address']} is not an address of port "
                             f"{port.id}")
    router = floatingips._router_for(s, fip.floating_network_id, allocation.subnet_id)
    if router is None:
        raise exc.ExternalGatewayForFloatingIPNotFound(fip.floating_network_id,
                                                       allocation.subnet_id, port.id)
    fip.router_id = router.id


def _save(s, pf: PortForwarding) -> None:
    """Add or flush ``pf`` in a savepoint: the unique constraints turn a clash into 409."""
    try:
        with s.begin_nested():
            s.add(pf)
            s.flush()
    except sa.exc.IntegrityError:
        raise exc.PortForwardingConflict(
            f"A port forwarding of floating IP {pf.floatingip_id} already uses external "
            f"port {pf.external_port}/{pf.protocol}, or one already forwards to "
            f"{pf.internal_ip_address}:{pf.internal_port}/{pf.protocol}") from None


@base.retry_on_deadlock
def create(ctx, fip_id: str, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "port_forwarding"), ATTRS, update=False)
    missing = [k for k in REQUIRED if k not in values]
    if missing:
        raise exc.HTTPBadRequest(f"Failed to parse request. Required attribute '{missing[0]}' "
                                 "not specified")
    with db.transaction() as s:
        fip = _fip(s, ctx, fip_id, "update_floatingip")
        _check_internal(s, ctx, fip, values)
        pf = PortForwarding(id=base.new_id(), floatingip_id=fip.id,
                            description=values.get("description", ""),
                            **{k: values[k] for k in REQUIRED})
        _save(s, pf)
        fip.status = "ACTIVE"
        base.touch(fip)
        return view(pf)


def list_for(ctx, fip_id: str, params: dict[str, list[str]]) -> list[dict]:
    with db.reader() as s:
        fip = _fip(s, ctx, fip_id, "get_floatingip")
        q = sa.select(PortForwarding).where(PortForwarding.floatingip_id == fip.id)
        for key in ("internal_port_id", "protocol", "external_port", "id"):
            if params.get(key):
                column = getattr(PortForwarding, key)
                wanted = params[key]
                if key == "external_port":
                    wanted = [int(w) for w in wanted if numbers.is_int_text(w)]
                q = q.where(column.in_(wanted))
        return [view(pf) for pf in s.scalars(q.order_by(PortForwarding.external_port))]


def get(ctx, fip_id: str, pf_id: str) -> dict:
    with db.reader() as s:
        return view(_get(s, _fip(s, ctx, fip_id, "get_floatingip"), pf_id))


@base.retry_on_deadlock
def update(ctx, fip_id: str, pf_id: str, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "port_forwarding"), ATTRS, update=True)
    with db.transaction() as s:
        fip = _fip(s, ctx, fip_id, "update_floatingip")
        pf = _get(s, fip, pf_id)
        merged = {k: values.get(k, getattr(pf, k)) for k in REQUIRED}
        if {"internal_port_id", "internal_ip_address"} & set(values):
            _check_internal(s, ctx, fip, merged)
        for key in (*REQUIRED, "description"):
            if key in values:
                setattr(pf, key, values[key])
        _save(s, pf)
        base.touch(fip)
        return view(pf)


@base.retry_on_deadlock
def delete(ctx, fip_id: str, pf_id: str) -> None:
    with db.transaction() as s:
        fip = _fip(s, ctx, fip_id, "update_floatingip")
        s.delete(_get(s, fip, pf_id))
        s.flush()
        if not s.scalar(sa.select(PortForwarding.id).where(
                PortForwarding.floatingip_id == fip.id).limit(1)):
            fip.router_id, fip.status = None, "DOWN"
        base.touch(fip)
