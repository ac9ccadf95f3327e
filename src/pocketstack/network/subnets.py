"""Subnets: cidr, gateway, allocation pools, DNS servers, host routes, DHCP and IPv6
address modes, with neutron's validation and messages.

A new SLAAC/DHCPv6-stateless subnet gives every port on the network its EUI-64 address
(as neutron does); DHCP-enabled subnets get an address on the network's DHCP port.
"""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.network import (addresses, base, dhcp_port, fixed_ips, ipam, listing, networks,
                                 quotas, rbac, subnetpools)
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import IPAllocation, Network, Port, Subnet, Tag

IPV6_MODES = ("slaac", "dhcpv6-stateful", "dhcpv6-stateless")
IPV6_MIN_MTU = 1280


def _service_types(value, name) -> list[str]:
    """neutron-lib's validate_subnet_service_types: device owners by their prefix."""
    if not value:
        return []
    if not isinstance(value, list):
        raise exc.HTTPBadRequest("Subnet service types must be a list.")
    for service_type in value:
        if not isinstance(service_type, str):
            raise exc.InvalidInputSubnetServiceType(service_type)
        if not service_type.startswith(("network:", "neutron:", "compute:")):
            raise exc.InvalidSubnetServiceType(service_type)
    return list(dict.fromkeys(value))


def _unsupported(default):
    def convert(value, name):
        if value not in (default, None):
            raise exc.InvalidInput(f"{name} is not supported by this cloud (no subnet pools, "
                                   "segments or service types)")
        return default
    return convert


def _pool(value, name):
    pool = v.dict_of({"start": v.ip_address, "end": v.ip_address},
                     required=("start", "end"))(value, name)
    return pool


def _route(value, name):
    return v.dict_of({"destination": v.cidr, "nexthop": v.ip_address},
                     required=("destination", "nexthop"))(value, name)


def _nullable_ip(value, name):
    return None if value is None else v.ip_address(value, name)


def _ip_version(value, name):
    return v.one_of(4, 6)(v.integer()(value, name), name)


ATTRS = {
    "name": v.Attr(v.string()),
    "description": v.Attr(v.string()),
    "network_id": v.Attr(v.uuid_string, put=False),
    "ip_version": v.Attr(_ip_version, put=False),
    "cidr": v.Attr(v.cidr, put=False),
    "gateway_ip": v.Attr(_nullable_ip),
    "allocation_pools": v.Attr(v.list_of(_pool)),
    "dns_nameservers": v.Attr(v.list_of(v.ip_address)),
    "host_routes": v.Attr(v.list_of(_route)),
    "enable_dhcp": v.Attr(v.boolean),
    "ipv6_ra_mode": v.Attr(v.one_of(*IPV6_MODES, nullable=True), put=False),
    "ipv6_address_mode": v.Attr(v.one_of(*IPV6_MODES, nullable=True), put=False),
    "dns_publish_fixed_ip": v.Attr(v.boolean),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "tags": v.Attr(v.tags, put=False),
    "subnetpool_id": v.Attr(v.nullable_uuid, put=False),
    "use_default_subnetpool": v.Attr(v.boolean, put=False),  # default-subnetpools
    "prefixlen": v.Attr(v.integer(0, 128), put=False),
    "segment_id": v.Attr(_unsupported(None), put=False),
    "service_types": v.Attr(_service_types),
}

COLLECTION = listing.Collection(
    name="subnets", model=Subnet, not_found=exc.SubnetNotFound,
    columns={"id": Subnet.id, "name": Subnet.name, "description": Subnet.description,
             "project_id": Subnet.project_id, "tenant_id": Subnet.project_id,
             "network_id": Subnet.network_id, "ip_version": Subnet.ip_version,
             "cidr": Subnet.cidr, "gateway_ip": Subnet.gateway_ip,
             "enable_dhcp": Subnet.enable_dhcp, "ipv6_ra_mode": Subnet.ipv6_ra_mode,
             "ipv6_address_mode": Subnet.ipv6_address_mode,
             "dns_publish_fixed_ip": Subnet.dns_publish_fixed_ip,
             "revision_number": Subnet.revision_number, "created_at": Subnet.created_at,
             "updated_at": Subnet.updated_at},
    special={"subnetpool_id": lambda values: Subnet.subnetpool_id.in_(values)
             if set(values) - {"", "None"} else Subnet.subnetpool_id.is_(None),
             "segment_id": lambda values: sa.true() if set(values) <= {"", "None"}
             else sa.false()},
)


def visible(ctx):
    if base.sees_all(ctx):
        return sa.true()
    return sa.or_(Subnet.project_id == ctx.project_id, Subnet.network_id.in_(
        sa.select(Network.id).where(sa.or_(Network.shared.is_(True),
                                           Network.external.is_(True)))),
                  rbac.granted("network", Subnet.network_id, ctx.project_id))


def get_row(s, ctx, subnet_id: str) -> Subnet:
    subnet = s.scalar(sa.select(Subnet).where(Subnet.id == subnet_id, visible(ctx)))
    if subnet is None:
        raise exc.SubnetNotFound(subnet_id)
    return subnet


def view(subnet: Subnet, tags) -> dict:
    return {"id": subnet.id, "name": subnet.name, "network_id": subnet.network_id,
            **base.project_view(subnet.project_id), "ip_version": subnet.ip_version,
            "cidr": subnet.cidr, "gateway_ip": subnet.gateway_ip,
            "allocation_pools": list(subnet.allocation_pools or []),
            "dns_nameservers": list(subnet.dns_nameservers or []),
            "host_routes": list(subnet.host_routes or []),
            "enable_dhcp": subnet.enable_dhcp, "ipv6_ra_mode": subnet.ipv6_ra_mode,
            "ipv6_address_mode": subnet.ipv6_address_mode,
            "subnetpool_id": subnet.subnetpool_id,
            "dns_publish_fixed_ip": subnet.dns_publish_fixed_ip,
            "service_types": list(subnet.service_types or []), "segment_id": None,
            **base.standard_view(subnet, tags)}


# --- validation -----------------------------------------------------------------------

def _check_version(ip_version: int, address: str, name: str) -> None:
    if ipaddress.ip_network(address, strict=False).version != ip_version:
        raise exc.InvalidInput(f"{name} '{address}' does not match the ip_version "
                               f"'{ip_version}'")


def _validate(s, subnet: dict, current: Subnet | None = None) -> None:
    """neutron's _validate_subnet, on the merged (current + requested) attributes."""
    conf = config.CONF.network
    version, network = subnet["ip_version"], ipaddress.ip_network(subnet["cidr"])
    _check_version(version, subnet["cidr"], "cidr")
    if version == 6 and network.network_address == ipaddress.IPv6Address("::"):
        raise exc.InvalidInput("IPv6 subnet '::' is not supported")
    if subnet["enable_dhcp"] and not (current and current.enable_dhcp):
        if network.prefixlen > (30 if version == 4 else 126):
            raise exc.InvalidInput("Subnet has a prefix length that is incompatible with "
                                   "DHCP service enabled")
        if network.is_multicast:
            raise exc.InvalidInput("Multicast IP subnet is not supported if enable_dhcp is "
                                   "True")
        if network.is_loopback:
            raise exc.InvalidInput("Loopback IP subnet is not supported if enable_dhcp is "
                                   "True")
        if version == 4 and int(network.network_address) == 0:
            raise exc.InvalidInput("First IP '0.0.0.0' of network is not supported if "
                                   "enable_dhcp is True.")
    gateway = subnet.get("gateway_ip")
    if gateway:
        _check_version(version, gateway, "gateway_ip")
        ip = ipaddress.ip_address(gateway)
        if ip in network and version == 4 and ip in (network.network_address,
                                                     network.broadcast_address):
            raise exc.InvalidInput("Gateway is not valid on subnet")
    nameservers = subnet.get("dns_nameservers") or []
    if len(nameservers) > conf.max_dns_nameservers:
        raise exc.DNSNameServersExhausted(subnet.get("id") or "new subnet",
                                          conf.max_dns_nameservers)
    for server in nameservers:
        _check_version(version, server, "dns_nameserver")
    if len(set(nameservers)) != len(nameservers):
        raise exc.InvalidInput(f"Duplicate nameserver in {nameservers}")
    routes = subnet.get("host_routes") or []
    if len(routes) > conf.max_subnet_host_routes:
        raise exc.HostRoutesExhausted(subnet.get("id") or "new subnet",
                                      conf.max_subnet_host_routes)
    for route in routes:
        _check_version(version, route["destination"], "destination")
        _check_version(version, route["nexthop"], "nexthop")
    if len({(r["destination"], r["nexthop"]) for r in routes}) != len(routes):
        raise exc.InvalidInput("Duplicate hostroute in the host_routes")
    if version == 4:
        for mode in ("ipv6_ra_mode", "ipv6_address_mode"):
            if subnet.get(mode):
                raise exc.InvalidInput(f"{mode} is not valid when ip_version is 4")
    elif current is None:
        ra_mode, address_mode = subnet.get("ipv6_ra_mode"), subnet.get("ipv6_address_mode")
        if (ra_mode or address_mode) and not subnet["enable_dhcp"]:
            raise exc.InvalidInput("ipv6_ra_mode or ipv6_address_mode cannot be set when "
                                   "enable_dhcp is set to False")
        if ra_mode and address_mode and ra_mode != address_mode:
            raise exc.InvalidInput(
                f"ipv6_ra_mode set to '{ra_mode}' with ipv6_address_mode set to "
                f"'{address_mode}' is not valid. If both attributes are set, they must be "
                "the same value")
        if (address_mode in addresses.AUTO_ADDRESS_MODES or
                (address_mode is None and ra_mode in addresses.AUTO_ADDRESS_MODES)) and \
                network.prefixlen != 64:
            raise exc.InvalidInput(f"Invalid CIDR {subnet['cidr']} for IPv6 address mode. "
                                   "OpenStack uses the EUI-64 address format, which "
                                   "requires the prefix to be /64")
    elif not subnet["enable_dhcp"] and (current.ipv6_ra_mode or current.ipv6_address_mode):
        raise exc.InvalidInput("Cannot disable enable_dhcp with ipv6 attributes set")


def _check_overlap(s, network_id: str, cidr: str, subnet_id: str | None = None) -> None:
    new = ipaddress.ip_network(cidr)
    for other_id, other_cidr in s.execute(sa.select(Subnet.id, Subnet.cidr).where(
            Subnet.network_id == network_id)):
        other = ipaddress.ip_network(other_cidr)
        if other_id != subnet_id and other.version == new.version and new.overlaps(other):
            raise exc.InvalidInput(f"Requested subnet with cidr: {cidr} for network: "
                                   f"{network_id} overlaps with another subnet")


# --- API --------------------------------------------------------------------------------

@base.retry_on_deadlock
def create_subnet(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "subnet"), ATTRS, update=False)
    effects = base.AfterCommit()
    with db.transaction() as s:
        subnet = create_in(s, ctx, values, effects)
        out = view(subnet, values.get("tags"))
    effects.run()
    return out


def _from_pool(s, ctx, values: dict) -> None:
    """A subnet from a pool: its CIDR is allocated there (set into ``values``)."""
    pool_id = values.get("subnetpool_id")
    if values.get("use_default_subnetpool"):
        if pool_id:
            raise exc.BadRequest("subnets", "subnetpool_id and use_default_subnetpool cannot "
                                            "both be specified")
        version = (ipaddress.ip_network(values["cidr"]).version if values.get("cidr")
                   else values.get("ip_version"))
        if version is None:
            raise exc.BadRequest("subnets", "ip_version must be specified in the absence of "
                                            "cidr and subnetpool_id")
        pool_id = subnetpools.default_pool(s, ctx, version)
    if pool_id is None:
        if values.get("prefixlen") is not None:
            raise exc.BadRequest("subnets", "prefixlen requires a subnet pool")
        return
    values["subnetpool_id"] = pool_id
    values["cidr"] = subnetpools.allocate(s, ctx, pool_id, values.get("cidr"),
                                          values.get("prefixlen"), values.get("ip_version"))


def create_in(s, ctx, values: dict, effects: base.AfterCommit) -> Subnet:
    if "network_id" in values:
        _from_pool(s, ctx, values)
    for required in ("network_id", "cidr"):
        if required not in values:
            raise exc.HTTPBadRequest(f"Failed to parse request. Required attribute "
                                     f"'{required}' not specified")
    network = networks.get_row(s, ctx, values["network_id"], lock=True)
    project_id = base.owner_project(ctx, values)
    base.authorize(ctx, "create_subnet", {"project_id": network.project_id,
                                          "network:project_id": network.project_id})
    if project_id != network.project_id and not base.sees_all(ctx):
        raise exc.NotAuthorized("Only the network's project may add subnets to it.")
    cidr = values["cidr"]
    version = values.get("ip_version") or ipaddress.ip_network(cidr).version
    subnet = {"ip_version": version, "cidr": cidr, "enable_dhcp": values.get("enable_dhcp",
                                                                                True),
              **{k: values.get(k) for k in ("dns_nameservers", "host_routes", "ipv6_ra_mode",
                                            "ipv6_address_mode")}}
    if "gateway_ip" in values:
        subnet["gateway_ip"] = values["gateway_ip"]
    else:
        first = ipaddress.ip_network(cidr).network_address + 1
        subnet["gateway_ip"] = str(first) if first in ipaddress.ip_network(cidr) else None
    _validate(s, subnet)
    _check_overlap(s, network.id, cidr)
    if version == 6 and network.mtu < IPV6_MIN_MTU:
        raise exc.InvalidInput(f"IPv6 subnet can not be created on network {network.id} "
                               f"with MTU {network.mtu}, less than {IPV6_MIN_MTU}")
    if "allocation_pools" in values and values["allocation_pools"]:
        pools = ipam.validate_pools(values["allocation_pools"], cidr, subnet["gateway_ip"])
    else:
        pools = ipam.default_pools(cidr, subnet["gateway_ip"])
    quotas.check(s, ctx, project_id, "subnet")
    address_mode = subnet["ipv6_address_mode"]
    row = Subnet(id=base.new_id(), project_id=project_id, network_id=network.id,
                 name=values.get("name", ""), description=values.get("description", ""),
                 ip_version=version, cidr=cidr, gateway_ip=subnet["gateway_ip"],
                 enable_dhcp=subnet["enable_dhcp"], ipv6_ra_mode=subnet["ipv6_ra_mode"],
                 ipv6_address_mode=address_mode,
                 dns_nameservers=subnet["dns_nameservers"] or [],
                 host_routes=subnet["host_routes"] or [], allocation_pools=pools,
                 dns_publish_fixed_ip=values.get("dns_publish_fixed_ip", False),
                 subnetpool_id=values.get("subnetpool_id"),
                 service_types=values.get("service_types") or None)
    base.init_standard(row)
    s.add(row)
    s.flush()
    if values.get("tags"):
        base.set_tags(s, row.id, values["tags"])
    base.touch(network)
    if addresses.is_auto_address(row):
        fixed_ips.add_auto_addresses(s, network, row)
    dhcp_port.sync(s, network, effects)
    effects.dhcp(network.id)
    return row


def get_subnet(ctx, subnet_id: str) -> dict:
    with db.reader() as s:
        subnet = get_row(s, ctx, subnet_id)
        return view(subnet, base.tags_of(s, subnet.id))


def list_subnets(ctx, params: listing.Params) -> tuple[list[dict], listing.Page]:
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        tags = listing.tags_by_id(s, [x.id for x in page.rows])
        items = [listing.select_fields(view(x, tags.get(x.id)), params) for x in page.rows]
    return items, page


@base.retry_on_deadlock
def update_subnet(ctx, subnet_id: str, body: dict, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "subnet"), ATTRS, update=True)
    effects = base.AfterCommit()
    with db.transaction() as s:
        subnet = get_row(s, ctx, subnet_id)
        network = networks.get_row(s, ctx, subnet.network_id, lock=True)
        base.authorize(ctx, "update_subnet", {"project_id": subnet.project_id,
                                              "network:project_id": network.project_id})
        base.check_revision(subnet, if_revision)
        merged = {"id": subnet.id, "ip_version": subnet.ip_version, "cidr": subnet.cidr,
                  "enable_dhcp": values.get("enable_dhcp", subnet.enable_dhcp),
                  "gateway_ip": values.get("gateway_ip", subnet.gateway_ip),
                  "dns_nameservers": values.get("dns_nameservers", subnet.dns_nameservers),
                  "host_routes": values.get("host_routes", subnet.host_routes)}
        _validate(s, merged, current=subnet)
        if "gateway_ip" in values and values["gateway_ip"] != subnet.gateway_ip \
                and subnet.gateway_ip:
            holder = s.scalar(sa.select(Port.id).join(
                IPAllocation, IPAllocation.port_id == Port.id).where(
                IPAllocation.subnet_id == subnet.id,
                IPAllocation.ip_address == subnet.gateway_ip,
                Port.device_owner.in_(ipam.ROUTER_OWNERS)))
            if holder:
                raise exc.GatewayIpInUse(subnet.gateway_ip, holder)
        if "allocation_pools" in values:
            pools = values["allocation_pools"] or ipam.default_pools(subnet.cidr,
                                                                     merged["gateway_ip"])
            subnet.allocation_pools = ipam.validate_pools(pools, subnet.cidr,
                                                          merged["gateway_ip"])
        elif "gateway_ip" in values:
            ipam.validate_pools(subnet.allocation_pools, subnet.cidr, merged["gateway_ip"])
        if "service_types" in values:  # new ports follow; allocated addresses stay
            subnet.service_types = values["service_types"] or None
        for key in ("name", "description", "gateway_ip", "dns_nameservers", "host_routes",
                    "enable_dhcp", "dns_publish_fixed_ip"):
            if key in values:
                setattr(subnet, key, values[key])
        base.touch(subnet)
        s.flush()
        dhcp_port.sync(s, network, effects)
        effects.dhcp(network.id)
        out = view(subnet, base.tags_of(s, subnet.id))
    effects.run()
    return out


@base.retry_on_deadlock
def delete_subnet(ctx, subnet_id: str, if_revision: int | None = None) -> None:
    effects = base.AfterCommit()
    with db.transaction() as s:
        subnet = get_row(s, ctx, subnet_id)
        network = networks.get_row(s, ctx, subnet.network_id, lock=True)
        base.authorize(ctx, "delete_subnet", {"project_id": subnet.project_id,
                                              "network:project_id": network.project_id})
        base.check_revision(subnet, if_revision)
        auto = addresses.is_auto_address(subnet)
        users = s.execute(sa.select(Port.id, Port.device_owner).join(
            IPAllocation, IPAllocation.port_id == Port.id).where(
            IPAllocation.subnet_id == subnet.id)).all()
        for _port_id, owner in users:
            removable = owner == "network:dhcp" or (auto and owner not in ipam.ROUTER_OWNERS)
            if not removable:
                raise exc.SubnetInUse(subnet.id)
        s.execute(sa.delete(IPAllocation).where(IPAllocation.subnet_id == subnet.id))
        s.execute(sa.delete(Tag).where(Tag.resource_id == subnet.id))
        s.delete(subnet)
        s.flush()
        s.expire(network, ["subnets"])
        base.touch(network)
        dhcp_port.sync(s, network, effects)
        effects.dhcp(network.id)
    effects.run()


@base.retry_on_deadlock
def create_subnets(ctx, items) -> list[dict]:
    """Bulk create ({"subnets": [...]}): all or nothing."""
    if not isinstance(items, list):
        raise exc.HTTPBadRequest("Unable to find 'subnets' in request body")
    parsed = [v.parse(v.resource_body({"subnet": i}, "subnet"), ATTRS, update=False)
              for i in items]
    effects = base.AfterCommit()
    with db.transaction() as s:
        out = [view(create_in(s, ctx, values, effects), values.get("tags"))
               for values in parsed]
    effects.run()
    return out
