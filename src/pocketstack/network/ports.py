"""Ports: MAC addresses, fixed IPs (through ipam), security groups, allowed address pairs,
DNS names, host binding and status, and the network's DHCP port.

A port is ACTIVE when it is bound to a host (binding:host_id set, as compute does when it
plugs the port) and administratively up; it is DOWN otherwise. A compute port (device_owner
compute:*) that becomes ACTIVE, goes DOWN or is deleted is reported to compute as
network-vif-plugged / -unplugged / -deleted.
"""
from __future__ import annotations

import functools
import random

import sqlalchemy as sa
from sqlalchemy import orm

from pocketstack.common import config, db
from pocketstack.network import (addresses, base, dhcp, fixed_ips, ipam, listing, networks, qos,
                                 quotas, security_groups, trunk_details)
from pocketstack.network import agent as host_agent
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import FloatingIP, Network, Port, PortSecurityGroup
from pocketstack.network.port_schema import ATTRS, COLLECTION, merge_dhcp_opts

DHCP_OWNER = "network:dhcp"
PROTECTED_OWNERS = ("network:router_interface", "network:router_gateway", "network:floatingip")
BINDING = ("binding:host_id", "binding:profile")


def visible(ctx):
    """A project sees its ports and every port on its own networks (as network owner)."""
    if base.sees_all(ctx):
        return sa.true()
    return sa.or_(Port.project_id == ctx.project_id, Port.network_id.in_(
        sa.select(Network.id).where(Network.project_id == ctx.project_id)))


def get_row(s, ctx, port_id: str) -> Port:
    port = s.scalar(sa.select(Port).where(Port.id == port_id, visible(ctx)))
    if port is None:
        raise exc.PortNotFound(port_id)
    return port


def show_binding(ctx) -> bool:
    return base.can(ctx, "get_port:binding", {"project_id": ctx.project_id})


def view(port: Port, tags, show_binding: bool) -> dict:
    fixed_ips = [{"subnet_id": a.subnet_id, "ip_address": a.ip_address}
                 for a in port.fixed_ips]
    out = {"id": port.id, "name": port.name, "network_id": port.network_id,
           **base.project_view(port.project_id), "mac_address": port.mac_address,
           "admin_state_up": port.admin_state_up, "status": port.status,
           "device_id": port.device_id, "device_owner": port.device_owner,
           "fixed_ips": fixed_ips,
           "allowed_address_pairs": [dict(p) for p in port.allowed_address_pairs or []],
           "security_groups": sorted(b.security_group_id
                                     for b in port.security_group_bindings),
           "port_security_enabled": port.port_security_enabled,
           "dns_name": port.dns_name, "dns_domain": port.dns_domain,
           "dns_assignment": [dhcp.dns_assignment(a.ip_address, port.dns_name)
                              for a in port.fixed_ips],
           "binding:vnic_type": port.vnic_type, "ip_allocation": "immediate",
           "qos_policy_id": port.qos_policy_id,
           # set on the port by whoever read its network (qos.network_policies)
           "qos_network_policy_id": getattr(port, "network_qos_policy_id", None),
           "extra_dhcp_opts": [dict(o) for o in port.extra_dhcp_opts or []],
           "trusted": port.trusted,
           **base.standard_view(port, tags)}
    if getattr(port, "trunk_details", None):  # set by trunk_details.attach on reads
        out["trunk_details"] = port.trunk_details
    if show_binding:
        out.update({"binding:host_id": port.host_id, "binding:vif_type": port.vif_type,
                    "binding:vif_details": dict(port.vif_details or {}),
                    "binding:profile": dict(port.profile or {})})
        if port.trusted is not None:  # port-trusted-vif: what nova reads for the VIF
            out["binding:profile"]["trusted"] = port.trusted
    return out


def load_options():
    return [orm.selectinload(Port.fixed_ips), orm.selectinload(Port.security_group_bindings)]


# --- MAC addresses, status, policy ---------------------------------------------------

def random_mac() -> str:
    base_octets = config.CONF.network.base_mac.split(":")
    octets = [base_octets[i] if i < 3 else f"{random.randint(0, 255):02x}" for i in range(6)]
    return ":".join(octets)


def _session_of(port):
    """The database session a port row belongs to (None for a row not inserted yet)."""
    try:
        return orm.object_session(port)
    except orm.exc.UnmappedInstanceError:
        return None


def binding_state(port: Port) -> None:
    """Status and VIF from the binding: bound to a host and up means ACTIVE."""
    session = _session_of(port)
    if port.host_id and host_agent.is_bridge_host(port.host_id, session):
        if is_compute(port) and not _host_reaches(port, session):
            # as ML2: no mechanism driver could bind it (nova fails the boot on it)
            port.vif_type, port.vif_details, port.status = "binding_failed", {}, "DOWN"
            return
        # a real host: the port is a tap on the network's Linux bridge (network/agent)
        port.vif_type, port.vif_details = "bridge", host_agent.vif_details(port.network_id)
    elif port.host_id:
        port.vif_type = config.CONF.network.vif_type
        port.vif_details = {"port_filter": True, "connectivity": "l2",
                            "bridge_name": "br-int", "datapath_type": "system"}
    else:
        port.vif_type, port.vif_details = "unbound", {}
    port.status = "ACTIVE" if port.host_id and port.admin_state_up else "DOWN"


def _host_reaches(port: Port, session) -> bool:
    """A flat or VLAN network reaches a host only through an interface its agent maps
    to the network's physical network ([network] physical_interface_mappings)."""
    if session is None:
        with db.reader() as s:
            return _host_reaches(port, s)
    network = session.get(Network, port.network_id)
    if network is None or network.network_type not in ("flat", "vlan") or \
            not network.physical_network:
        return True
    return host_agent.maps_physnet(port.host_id, network.physical_network, session)


def is_compute(port: Port) -> bool:
    return port.device_owner.startswith("compute:") and bool(port.device_id)


def authorize_attributes(ctx, action: str, values: dict, target: dict,
                         network: Network) -> None:
    if "mac_address" in values:
        base.authorize(ctx, f"{action}:mac_address", target)
    if any("ip_address" in item for item in values.get("fixed_ips") or []):
        base.authorize(ctx, f"{action}:fixed_ips:ip_address", target)
    if (values.get("device_owner") or "").startswith("network:"):
        base.authorize(ctx, f"{action}:device_owner", target)
    if values.get("port_security_enabled") is False and network.port_security_enabled:
        base.authorize(ctx, f"{action}:port_security_enabled", target)
    if any(k in values for k in BINDING):
        base.authorize(ctx, f"{action}:binding", target)
    if "trusted" in values:
        base.authorize(ctx, f"{action}:trusted", target)


def policy_target(project_id: str, network: Network) -> dict:
    return {"project_id": project_id, "network:project_id": network.project_id}


# --- security groups and address pairs --------------------------------------------

def check_security(s, ctx, port_security: bool, group_ids: list[str] | None,
                   pairs: list[dict], project_id: str) -> None:
    # As ML2: security groups need port security, not an IP address (a port without one
    # gets the default group and may be given others).
    if group_ids:
        if not port_security:
            raise exc.PortSecurityAndIPRequiredForSecurityGroups()
        security_groups.check_usable(s, ctx, group_ids, project_id)
    if pairs and not port_security:
        raise exc.AddressPairAndPortSecurityRequired()
    if len(pairs) > config.CONF.network.max_allowed_address_pair:
        raise exc.InvalidInput("Exceeded maximum amount of allowed address pairs")


def _normalize_pairs(pairs: list[dict], mac: str) -> list[dict]:
    out, seen = [], set()
    for pair in pairs:
        item = {"ip_address": pair["ip_address"], "mac_address": pair.get("mac_address", mac)}
        key = (item["mac_address"], item["ip_address"])
        if key in seen:
            raise exc.HTTPBadRequest(f"Request contains duplicate address pair: mac_address "
                                     f"{key[0]} ip_address {key[1]}.")
        seen.add(key)
        out.append(item)
    return out


def _set_security_groups(s, port: Port, group_ids: list[str]) -> None:
    port.security_group_bindings = [PortSecurityGroup(port_id=port.id, security_group_id=g)
                                    for g in dict.fromkeys(group_ids)]


# --- create ------------------------------------------------------------------------

@base.retry_on_deadlock
def create_port(ctx, body: dict) -> dict:
    if isinstance(body, dict) and "ports" in body:
        return {"ports": create_ports(ctx, body["ports"])}
    values = v.parse(v.resource_body(body, "port"), ATTRS, update=False)
    effects = base.AfterCommit()
    try:
        with db.transaction() as s:
            port = create_in(s, ctx, values, effects)
    except sa.exc.IntegrityError as error:
        _explain_vanished(error, values)
    _tell_other_hosts(plug_bridge_ports([port]))
    effects.run()
    # Rendered after the commit: on SQLite the write lock is held no longer than needed.
    return {"port": view(port, values.get("tags"), show_binding(ctx))}


@base.retry_on_deadlock
def create_ports(ctx, items) -> list[dict]:
    if not isinstance(items, list):
        raise exc.HTTPBadRequest("Unable to find 'ports' in request body")
    parsed = [v.parse(v.resource_body({"port": item}, "port"), ATTRS, update=False)
              for item in items]
    effects = base.AfterCommit()
    try:
        with db.transaction() as s:
            rows = [(create_in(s, ctx, values, effects), values) for values in parsed]
            show = show_binding(ctx)
            out = [view(port, values.get("tags"), show) for port, values in rows]
    except sa.exc.IntegrityError as error:
        for values in parsed:
            _explain_vanished(error, values)
    _tell_other_hosts(plug_bridge_ports([port for port, _ in rows]))
    effects.run()
    return out


def _explain_vanished(error: sa.exc.IntegrityError, values: dict) -> None:
    """A foreign key failed at insert: on PostgreSQL/MariaDB the network or a security
    group can be deleted by a concurrent request between our read and our insert. Say
    which one is gone (404), as if we had come a moment later."""
    from pocketstack.network.models import SecurityGroup

    if db.is_duplicate(error):
        raise error
    with db.reader() as s:
        if s.get(Network, values.get("network_id")) is None:
            raise exc.NetworkNotFound(values.get("network_id")) from None
        for group_id in values.get("security_groups") or []:
            if s.get(SecurityGroup, group_id) is None:
                raise exc.SecurityGroupNotFound(group_id) from None
    raise error


# Read with the network and its subnets, in one round trip: the project's port limit and
# usage, its default security group, and whether the first MAC tried is taken.
_limit, _used = quotas.LIMIT_AND_USAGE["port"].selected_columns
_NETWORK_AND_FACTS = networks.with_subnets_and(
    _limit.label("quota_limit"), _used.label("quota_used"),
    security_groups.DEFAULT_GROUP.scalar_subquery().label("default_group"),
    sa.exists().where(Port.network_id == sa.bindparam("id"),
                      Port.mac_address == sa.bindparam("mac")).label("mac_taken"))


def create_in(s, ctx, values: dict, effects: base.AfterCommit, trusted: bool = False) -> Port:
    """Create a port inside the caller's transaction. ``trusted`` skips attribute
    policies (ports pocketstack creates itself: DHCP, router, floating IP)."""
    if "network_id" not in values:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'network_id' "
                                 "not specified")
    # One flush at the end instead of one before every query (the hot path).
    with s.no_autoflush:
        return _create_in(s, ctx, values, effects, trusted)


def _create_in(s, ctx, values: dict, effects: base.AfterCommit, trusted: bool) -> Port:
    # Ports pocketstack makes for routers and floating IPs may belong to no project ('').
    try:
        project_id, no_project = (values["project_id"] if trusted and "project_id" in values
                                  else base.owner_project(ctx, values)), None
    except exc.HTTPBadRequest as error:  # said after the network is found, as before
        project_id, no_project = "", error
    first_mac = values.get("mac_address") or random_mac()
    network, subnets = networks.get_with_subnets(
        s, ctx, values["network_id"], _NETWORK_AND_FACTS,
        {"project_id": project_id, "resource": "port", "mac": first_mac})
    if no_project is not None:
        raise no_project
    facts = network.facts
    limit, used, default_group = (facts["quota_limit"], facts["quota_used"],
                                  facts["default_group"])
    target = policy_target(project_id, network)
    if not trusted:
        base.authorize(ctx, "create_port", target)
        authorize_attributes(ctx, "create_port", values, target, network)
    if not trusted:
        quotas.enforce("port", limit, used)
    device_owner = values.get("device_owner", "")
    port_security = values.get("port_security_enabled", network.port_security_enabled)
    # SQLite: rows are inserted together at the end (writes are serialized, so what was
    # read as free stays free); other engines claim each row in a savepoint as they go.
    deferred = base.writes_serialized(s)
    # A port a user asks for on SQLite is only inserted and then rendered: plain values
    # do (no ORM instance, no instrumented attribute events).
    plain = deferred and not trusted
    make_port = functools.partial(base.NewRow, Port.__table__) if plain else Port
    make_binding = (functools.partial(base.NewRow, PortSecurityGroup.__table__) if plain
                    else PortSecurityGroup)
    port = make_port(id=base.new_id(), project_id=project_id, network_id=network.id,
                name=values.get("name", ""), description=values.get("description", ""),
                admin_state_up=values.get("admin_state_up", True),
                device_id=values.get("device_id", ""), device_owner=device_owner,
                host_id=values.get("binding:host_id", ""),
                profile=values.get("binding:profile", {}),
                vnic_type=values.get("binding:vnic_type", "normal"),
                port_security_enabled=port_security, dns_name=values.get("dns_name", ""),
                dns_domain=values.get("dns_domain", ""),
                qos_policy_id=values.get("qos_policy_id"),
                extra_dhcp_opts=merge_dhcp_opts([], values.get("extra_dhcp_opts") or [])
                or None, trusted=values.get("trusted"))
    port.network_qos_policy_id = network.qos_policy_id
    if values.get("qos_policy_id"):
        qos.check_usable(s, ctx, values["qos_policy_id"], project_id)
    base.init_standard(port)
    binding_state(port)
    if "fixed_ips" in values:
        plan = fixed_ips.resolve(s, network, subnets, values["fixed_ips"], device_owner)
    else:
        plan = fixed_ips.defaults(network, subnets, device_owner)
    insert_with_mac(s, port, values.get("mac_address"), attach=not deferred,
                    first=(first_mac, bool(facts["mac_taken"])))
    port.allowed_address_pairs = _normalize_pairs(values.get("allowed_address_pairs") or [],
                                                  port.mac_address)
    allocations = fixed_ips.allocate(s, port, plan, attach=not deferred)
    group_ids = values.get("security_groups")
    check_security(s, ctx, port_security, group_ids, port.allowed_address_pairs, project_id)
    if group_ids is None:
        trusted_owner = device_owner.startswith("network:")
        group_ids = ([default_group or security_groups.ensure_default(s, project_id)]
                     if port_security and not trusted_owner else [])
    bindings = [make_binding(port_id=port.id, security_group_id=g)
                for g in dict.fromkeys(group_ids)]
    if deferred:
        # Callers outside pocketstack only read the new port: it need not join the session.
        base.insert_new(s, [port, *allocations, *bindings], attach=trusted)
    else:
        s.add_all(bindings)
    # A new port's collections are known: set them without reading them back.
    if plain:
        port.fixed_ips, port.security_group_bindings = allocations, bindings
    else:
        orm.attributes.set_committed_value(port, "fixed_ips", allocations)
        orm.attributes.set_committed_value(port, "security_group_bindings", bindings)
    if values.get("tags"):
        base.set_tags(s, port.id, values["tags"])
    s.flush()
    effects.dhcp(network.id)
    if port.status == "ACTIVE" and is_compute(port):
        effects.event("network-vif-plugged", port.device_id, port.id)
    return port


_MAC_USER = sa.select(Port.id).where(Port.network_id == sa.bindparam("network_id"),
                                     Port.mac_address == sa.bindparam("mac"))


def insert_with_mac(s, port: Port, requested: str | None, attach: bool = True,
                    first: tuple[str, bool] | None = None) -> None:
    """Give the port a MAC unique on its network (asked for, or random) and insert it
    (``attach=False``, SQLite only: the caller inserts it). ``first``: the MAC to try
    first and whether it was found taken in this transaction."""
    serialized = base.writes_serialized(s)
    for attempt in range(1 if requested else 16):
        known = first if attempt == 0 and first is not None else None
        port.mac_address = known[0] if known else requested or random_mac()
        if serialized:
            taken = known[1] if known else base.core(s, _MAC_USER, {
                "network_id": port.network_id, "mac": port.mac_address}).first()
            if taken:
                if requested:
                    raise exc.MacAddressInUse(port.network_id, requested)
                continue
            if attach:
                s.add(port)
            return
        try:
            with s.begin_nested():
                s.add(port)
                s.flush()
            return
        except sa.exc.IntegrityError as error:
            if not db.is_duplicate(error):
                raise
            if requested:
                raise exc.MacAddressInUse(port.network_id, requested) from None
    raise exc.NetworkMacAddressGenerationFailure(port.network_id)


# --- read ----------------------------------------------------------------------------

def get_port(ctx, port_id: str) -> dict:
    with db.reader() as s:
        port = get_row(s, ctx, port_id)
        qos.network_policies(s, [port])
        trunk_details.attach(s, [port])
        return view(port, base.tags_of(s, port.id), show_binding(ctx))


# Fields a listing can answer from the port rows alone, in the view's order.
_PLAIN_FIELDS = ("id", "name", "network_id", "mac_address", "admin_state_up", "status",
                 "device_id", "device_owner")


def list_ports(ctx, params: listing.Params) -> tuple[list[dict], listing.Page]:
    wanted = {f for value in params.get("fields", []) for f in value.split(",") if f}
    if wanted and wanted <= set(_PLAIN_FIELDS):
        # e.g. ?device_id=X&fields=id, compute's look-up of a deleted server's ports:
        # no addresses, groups, tags or QoS to read.
        with db.reader() as s:
            page = listing.select_page(s, COLLECTION, params, visible(ctx))
            items = [{f: getattr(p, f) for f in _PLAIN_FIELDS if f in wanted}
                     for p in page.rows]
        return items, page
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx),
                                   options=load_options())
        tags = listing.tags_by_id(s, [p.id for p in page.rows])
        show = show_binding(ctx)
        qos.network_policies(s, page.rows)
        trunk_details.attach(s, page.rows)
        items = [listing.select_fields(view(p, tags.get(p.id), show), params)
                 for p in page.rows]
    return items, page


# --- update: the locked read-modify-write (port_update has the entry point) ---------

def plug_bridge_ports(ports: list) -> set[str]:
    """Ports bound to a real host: their network's bridge and DHCP namespace exist
    before the ports' events go out (compute plugs the taps when it hears them).
    Returns the hosts so plumbed."""
    bound = sorted({(p.network_id, p.host_id) for p in ports if p.vif_type == "bridge"})
    for network_id, host_name in bound:
        host_agent.port_bound(network_id, host_name)
    return {host_name for _, host_name in bound}


def _tell_other_hosts(bound: set[str]) -> None:
    """New bound ports: the other hosts' agents learn them in the background (the
    overlay's forwarding entries, remote security group members)."""
    if bound:
        host_agent.changed(skip=bound)


def update_in(s, ctx, port_id: str, values: dict, effects: base.AfterCommit,
              trusted: bool = False, if_revision: int | None = None) -> Port:
    port = s.scalar(sa.select(Port).where(Port.id == port_id, visible(ctx))
                    .with_for_update())
    if port is None:
        raise exc.PortNotFound(port_id)
    network = s.get(Network, port.network_id)
    target = policy_target(port.project_id, network)
    if not trusted:
        base.authorize(ctx, "update_port", target)
        authorize_attributes(ctx, "update_port", values, target, network)
    base.check_revision(port, if_revision)
    was_active, old_mac = port.status == "ACTIVE", port.mac_address
    dhcp_relevant = False
    if "mac_address" in values and values["mac_address"] != port.mac_address:
        if port.host_id:
            raise exc.PortBound(port.id, port.vif_type, port.mac_address,
                                values["mac_address"])
        s.flush()
        try:
            with s.begin_nested():
                port.mac_address = values["mac_address"]
                s.flush()
        except sa.exc.IntegrityError:
            raise exc.MacAddressInUse(port.network_id, values["mac_address"]) from None
        for alloc in list(port.fixed_ips):  # EUI-64 addresses follow the MAC
            subnet = next(x for x in ipam.subnets_of(s, network.id) if x.id == alloc.subnet_id)
            if addresses.is_auto_address(subnet):
                position = alloc.position
                s.delete(alloc)
                s.flush()
                ipam.allocate_specific(s, port, subnet,
                                       addresses.eui64(subnet.cidr, port.mac_address), position)
        dhcp_relevant = True
    device_owner = values.get("device_owner", port.device_owner)
    if "fixed_ips" in values:
        subnets = ipam.subnets_of(s, network.id)
        requested = fixed_ips.resolve(s, network, subnets, values["fixed_ips"], device_owner)
        add, remove = fixed_ips.changed(port, requested)
        for alloc in remove:
            s.delete(alloc)
        s.flush()
        start = max([a.position for a in port.fixed_ips if a not in remove] + [-1]) + 1
        fixed_ips.allocate(s, port, add, start)
        dhcp_relevant = True
    for key, attr in (("name", "name"), ("description", "description"),
                      ("admin_state_up", "admin_state_up"), ("device_id", "device_id"),
                      ("device_owner", "device_owner"), ("dns_name", "dns_name"),
                      ("dns_domain", "dns_domain"),
                      ("binding:host_id", "host_id"), ("binding:profile", "profile"),
                      ("binding:vnic_type", "vnic_type"),
                      ("port_security_enabled", "port_security_enabled")):
        if key in values:
            setattr(port, attr, values[key])
    if values.get("qos_policy_id"):
        qos.check_usable(s, ctx, values["qos_policy_id"], port.project_id)
    if "qos_policy_id" in values:
        port.qos_policy_id = values["qos_policy_id"]
    if "trusted" in values:
        port.trusted = values["trusted"]
    if values.get("extra_dhcp_opts"):  # merged into the port's; none given changes none
        opts = merge_dhcp_opts(port.extra_dhcp_opts or [], values["extra_dhcp_opts"])
        dhcp_relevant |= opts != (port.extra_dhcp_opts or [])
        port.extra_dhcp_opts = opts or None
    dhcp_relevant |= "dns_name" in values
    if "dns_name" in values or "dns_domain" in values:  # its floating IPs' records follow
        from pocketstack.network import dns_publish

        for fip in s.scalars(sa.select(FloatingIP).where(FloatingIP.fixed_port_id == port.id)):
            dns_publish.sync(s, fip, effects, ctx)
    # Status, VIF and revision before the first flush: a binding update (every boot's)
    # then writes the row once. Nothing below changes what they depend on.
    binding_state(port)
    base.touch(port)
    s.flush()
    if "fixed_ips" in values or old_mac != port.mac_address:
        # IPAM wrote the allocations with Core statements: read them back.
        s.refresh(port, ["fixed_ips", "security_group_bindings"])
    else:
        # Nothing here changed them (a binding update, every boot's): load them as read
        # below, without refresh's extra select of the port row.
        s.expire(port, ["fixed_ips", "security_group_bindings"])
    group_ids = values.get("security_groups")
    current_groups = [b.security_group_id for b in port.security_group_bindings]
    if "allowed_address_pairs" in values:
        port.allowed_address_pairs = _normalize_pairs(values["allowed_address_pairs"],
                                                      port.mac_address)
    if not port.port_security_enabled and (group_ids is None and current_groups):
        raise exc.PortSecurityPortHasSecurityGroup()
    if not port.port_security_enabled and port.allowed_address_pairs:
        raise exc.AddressPairAndPortSecurityRequired()
    check_security(s, ctx, port.port_security_enabled, group_ids,
                   port.allowed_address_pairs, port.project_id)
    if group_ids is not None:
        _set_security_groups(s, port, group_ids)
    s.flush()
    # For the view: update_in holds the network row (qos.network_policies would read it
    # again, the session keeping no unchanged row once update_in lets go of it).
    port.network_qos_policy_id = network.qos_policy_id
    if dhcp_relevant or old_mac != port.mac_address:
        effects.dhcp(network.id)
    if is_compute(port) and port.status == "ACTIVE" and not was_active:
        effects.event("network-vif-plugged", port.device_id, port.id)
    elif is_compute(port) and was_active and port.status != "ACTIVE":
        effects.event("network-vif-unplugged", port.device_id, port.id)
    return port
