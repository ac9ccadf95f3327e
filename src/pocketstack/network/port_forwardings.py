"""Floating IP port forwardings (/v2.0/floatingips/{id}/port_forwardings): one floating
IP shared by several servers, each reached on its own external port. As in neutron, a
floating IP either forwards ports or is associated with one port, never both; the
forwarding's internal port must sit behind a router with a gateway on the floating IP's
network. Where host networking runs, the L3 agent forwards them (network/agent/l3.py).
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, numbers
from pocketstack.network import agent as host_agent
from pocketstack.network import base, floatingips, ports
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import FloatingIP, PortForwarding

PROTOCOLS = ("tcp", "udp", "dccp", "sctp")
_port_number = v.integer(1, 65535)


def _port_range(value, name) -> tuple[int, int] | None:
    """neutron-lib's type:port_range: "N" or "first:last" (an integer is taken too)."""
    if value is None:
        return None
    parts = str(value).split(":")
    if len(parts) > 2 or any(not p for p in parts):
        raise v.invalid(name, "Port range must be two integers separated by a colon")
    for part in parts:
        if not numbers.is_int_text(part) or not 1 <= int(part) <= 65535:  # ASCII digits
            raise v.invalid(name, f"Invalid port: {part}, the port must be in the range "
                                  "[1, 65535]")
    first, last = int(parts[0]), int(parts[-1])
    if first > last:
        raise v.invalid(name, "First port in a port range must be lower than the second "
                              "port")
    return first, last


ATTRS = {
    "internal_port_id": v.Attr(v.uuid_string),
    "internal_ip_address": v.Attr(v.ip_address),
    "internal_port": v.Attr(v.integer(1, 65535, nullable=True)),
    "external_port": v.Attr(v.integer(1, 65535, nullable=True)),
    "internal_port_range": v.Attr(_port_range),
    "external_port_range": v.Attr(_port_range),
    "protocol": v.Attr(v.one_of(*PROTOCOLS)),
    "description": v.Attr(v.string()),
}
REQUIRED = ("internal_port_id", "internal_ip_address", "protocol")


def _ranges(values: dict, pf: PortForwarding | None = None) -> dict:
    """The ports asked for as (first, last) per side: a single port is a range of one,
    as neutron stores both forms alike. A side not given keeps ``pf``'s."""
    out = {}
    for side in ("internal", "external"):
        single, ranged = values.get(f"{side}_port"), values.get(f"{side}_port_range")
        if single is not None and ranged is not None and ranged != (single, single):
            raise exc.BadRequest("port_forwarding", f"{side}_port and {side}_port_range "
                                                    "must not both be given")
        if ranged is None and single is not None:
            ranged = (single, single)
        if ranged is None and pf is not None:
            ranged = (getattr(pf, f"{side}_port"),
                      getattr(pf, f"{side}_port_end") or getattr(pf, f"{side}_port"))
        if ranged is None:
            raise exc.HTTPBadRequest(f"Failed to parse request. Required attribute "
                                     f"'{side}_port' not specified")
        out[side] = ranged
    inner, outer = out["internal"], out["external"]
    if inner[1] > inner[0] and inner[1] - inner[0] != outer[1] - outer[0]:
        raise exc.BadRequest("port_forwarding", "Invalid ranges of internal and/or external "
                                                "ports. The relation between internal and "
                                                "external ports must be N-N or 1-N")
    return out


def _range_text(first: int, last: int | None) -> str:
    return f"{first}:{last or first}"


def view(pf: PortForwarding) -> dict:
    internal_end = pf.internal_port_end or pf.internal_port
    external_end = pf.external_port_end or pf.external_port
    return {"id": pf.id, "internal_port_id": pf.internal_port_id,
            "internal_ip_address": pf.internal_ip_address,
            # a range has no single port (neutron shows None then)
            "internal_port": pf.internal_port if internal_end == pf.internal_port else None,
            "external_port": pf.external_port if external_end == pf.external_port else None,
            "protocol": pf.protocol,
            "internal_port_range": _range_text(pf.internal_port, internal_end),
            "external_port_range": _range_text(pf.external_port, external_end),
            "description": pf.description}


def _check_collisions(s, fip: FloatingIP, pf: PortForwarding) -> None:
    """neutron's _check_port_collisions: no two forwardings of a floating IP share an
    external port, none two an internal socket, per protocol (a 400 there)."""
    others = s.scalars(sa.select(PortForwarding).where(
        PortForwarding.protocol == pf.protocol, PortForwarding.id != pf.id,
        sa.or_(PortForwarding.floatingip_id == fip.id,
               sa.and_(PortForwarding.internal_port_id == pf.internal_port_id,
                       PortForwarding.internal_ip_address == pf.internal_ip_address))))
    for other in others:
        for side, same in (("external", other.floatingip_id == fip.id),
                           ("internal", other.internal_port_id == pf.internal_port_id and
                            other.internal_ip_address == pf.internal_ip_address)):
            mine = (getattr(pf, f"{side}_port"),
                    getattr(pf, f"{side}_port_end") or getattr(pf, f"{side}_port"))
            theirs = (getattr(other, f"{side}_port"),
                      getattr(other, f"{side}_port_end") or getattr(other, f"{side}_port"))
            if same and max(mine[0], theirs[0]) <= min(mine[1], theirs[1]):
                raise exc.BadRequest(
                    "port_forwarding", f"There is a port collision with the "
                    f"{side}_port_range. The following ranges collide: "
                    f"{_range_text(*theirs)} and {_range_text(*mine)}")


def _set_ports(pf: PortForwarding, ranges: dict) -> None:
    for side in ("internal", "external"):
        first, last = ranges[side]
        setattr(pf, f"{side}_port", first)
        setattr(pf, f"{side}_port_end", last if last != first else None)


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
    ranges = _ranges(values)
    with db.transaction() as s:
        fip = _fip(s, ctx, fip_id, "update_floatingip")
        _check_internal(s, ctx, fip, values)
        pf = PortForwarding(id=base.new_id(), floatingip_id=fip.id,
                            description=values.get("description", ""),
                            **{k: values[k] for k in REQUIRED})
        _set_ports(pf, ranges)
        _check_collisions(s, fip, pf)
        _save(s, pf)
        fip.status = "ACTIVE"
        base.touch(fip)
        out = view(pf)
    host_agent.changed()  # this host's routers follow
    return out


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
        ranges = _ranges(values, pf)
        for key in (*REQUIRED, "description"):
            if key in values:
                setattr(pf, key, values[key])
        _set_ports(pf, ranges)
        _check_collisions(s, fip, pf)
        _save(s, pf)
        base.touch(fip)
        out = view(pf)
    host_agent.changed()  # this host's routers follow
    return out


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
    host_agent.changed()
