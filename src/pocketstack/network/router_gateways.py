"""A router's external gateways: network:router_gateway ports with the router as device.
The one in ``router.gw_port_id`` is ``external_gateway_info`` (with SNAT and the gateway
QoS policy, qos-gateway-ip); more may be added, matched, changed and removed through
add/update/remove_external_gateways (neutron's external-gateway-multihoming), and all
are listed in ``external_gateways``, the compatibility one first.
"""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from pocketstack.common import config
from pocketstack.network import base, networks, port_delete, port_schema, ports, qos
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import FloatingIP, Port, Router

GATEWAY = "network:router_gateway"
_INFO_KEYS = {"network_id": v.uuid_string, "enable_snat": v.boolean,
              "external_fixed_ips": v.list_of(port_schema.fixed_ip)}


def gateway_info(value, name):
    """external_gateway_info: as ext-gw-mode, plus qos_policy_id (qos-gateway-ip)."""
    if value is None or value == {}:
        return None
    info = v.dict_of({**_INFO_KEYS, "qos_policy_id": v.nullable_uuid})(value, name)
    if "network_id" not in info:
        raise v.invalid(name, "network_id is required in external_gateway_info")
    return info


def gateway_list(body) -> list[dict] | None:
    """{"router": {"external_gateways": [...]}} of the multihoming actions; None when
    the list is not given (neutron then answers with the router unchanged)."""
    values = v.resource_body(body, "router")
    if "external_gateways" not in values:
        return None
    items = values["external_gateways"]
    if not items:  # openstackclient's "router unset --external-gateway" sends {}
        return []
    if not isinstance(items, list):
        raise v.invalid("external_gateways", f"'{items}' is not a list")
    # openstackclient passes its --qos-policy along in each item
    keys = {**_INFO_KEYS, "qos_policy_id": v.nullable_uuid}
    return [v.dict_of(keys, required=("network_id",))(item, "external_gateways")
            for item in items]


def ports_of(s, router: Router) -> list[Port]:
    """Every gateway port of the router, the compatibility one first."""
    found = list(s.scalars(sa.select(Port).where(Port.device_id == router.id,
                                                 Port.device_owner == GATEWAY)
                           .order_by(Port.created_at, Port.id)))
    return sorted(found, key=lambda p: p.id != router.gw_port_id)


def _format(port: Port) -> dict:
    return {"network_id": port.network_id,
            "external_fixed_ips": [{"subnet_id": a.subnet_id, "ip_address": a.ip_address}
                                   for a in port.fixed_ips]}


def views(s, router: Router) -> tuple[dict | None, list[dict]]:
    """(external_gateway_info, external_gateways) as neutron shows them."""
    gateways = ports_of(s, router)
    listed = [{**_format(p), "enable_snat": router.enable_snat} for p in gateways]
    info = None
    if router.gw_port_id and gateways:
        info = {**_format(gateways[0]), "enable_snat": router.enable_snat,
                "qos_policy_id": router.qos_policy_id}
    return info, listed


# --- the compatibility gateway (external_gateway_info) ------------------------------------

def _authorize_info(ctx, router: Router, info: dict, action: str, changing_snat: bool):
    target = {"project_id": router.project_id}
    if changing_snat:
        base.authorize(ctx, f"{action}:external_gateway_info:enable_snat", target)
    if info.get("external_fixed_ips"):
        base.authorize(ctx, f"{action}:external_gateway_info:external_fixed_ips", target)


def _external_network(s, ctx, router: Router, network_id: str):
    network = networks.get_row(s, ctx, network_id)
    if not networks.is_external_for(s, network, router.project_id):
        raise exc.BadRequest("router", f"Network {network.id} is not an external network")
    return network


def _check_not_subnet_gateways(network, fixed_ips: list[dict]) -> None:
    """neutron's _validate_gw_info: no external address may be a subnet's gateway."""
    gateways = {x.gateway_ip for x in network.subnets if x.gateway_ip}
    for item in fixed_ips:
        if item.get("ip_address") in gateways:
            raise exc.BadRequest("router", f"External IP {item['ip_address']} is the same as "
                                           "the gateway IP")


def _addresses_changed(port: Port, fixed_ips: list[dict] | None) -> bool:
    """neutron's _check_for_external_ip_change: the request changes the gateway only if
    its set of subnets or its set of explicit addresses differs from the port's (a
    subnet named again without an address is no request for another address)."""
    if not fixed_ips:
        return False
    subnets = {a.subnet_id for a in port.fixed_ips}
    if {f["subnet_id"] for f in fixed_ips if f.get("subnet_id")} != subnets:
        return True
    addresses = {ipaddress.ip_address(a.ip_address) for a in port.fixed_ips}
    return {ipaddress.ip_address(f["ip_address"])
            for f in fixed_ips if f.get("ip_address")} != addresses


def set_gateway(s, ctx, router: Router, info: dict | None, effects, action: str) -> None:
    current = s.get(Port, router.gw_port_id) if router.gw_port_id else None
    if info is None:
        if current is not None:
            remove(s, router, current, effects)
        return
    _authorize_info(ctx, router, info, action,
                    "enable_snat" in info and info["enable_snat"] != router.enable_snat)
    network = _external_network(s, ctx, router, info["network_id"])
    if info.get("qos_policy_id"):
        qos.check_usable(s, ctx, info["qos_policy_id"], router.project_id)
    if "qos_policy_id" in info:
        router.qos_policy_id = info["qos_policy_id"]
    router.enable_snat = info.get("enable_snat", router.enable_snat
                                  if current is not None else True)
    _check_not_subnet_gateways(network, info.get("external_fixed_ips") or [])
    if current is not None and current.network_id == network.id:
        # Same network: the port stays (floating IPs keep their gateway), only its
        # addresses change, as neutron's _update_current_gw_port.
        if _addresses_changed(current, info.get("external_fixed_ips")):
            ports.update_in(s, ctx, current.id, {"fixed_ips": info["external_fixed_ips"]},
                            effects, trusted=True)
        return
    if current is not None:
        remove(s, router, current, effects)
    router.gw_port_id = _new_port(s, ctx, router, network.id,
                                  info.get("external_fixed_ips"), effects).id


def _new_port(s, ctx, router: Router, network_id: str, fixed_ips, effects) -> Port:
    values = {"network_id": network_id, "project_id": "", "device_owner": GATEWAY,
              "device_id": router.id, "binding:host_id": config.CONF.host}
    if fixed_ips:
        values["fixed_ips"] = fixed_ips
    # An external network without a subnet is accepted, as in neutron: the gateway port
    # then has no address.
    return ports.create_in(s, ctx, values, effects, trusted=True)


def _fips_need(s, router: Router, gw: Port) -> bool:
    """Floating IPs of the router on the port's network, and no other gateway there."""
    if not s.scalar(sa.select(FloatingIP.id).where(
            FloatingIP.router_id == router.id,
            FloatingIP.floating_network_id == gw.network_id).limit(1)):
        return False
    return not any(p.id != gw.id and p.network_id == gw.network_id
                   for p in ports_of(s, router))


def remove(s, router: Router, gw: Port, effects) -> None:
    """Remove one gateway port; if it was the compatibility one, the next takes its
    place (neutron's _update_router_gw_info under multihoming)."""
    if _fips_need(s, router, gw):
        raise exc.RouterExternalGatewayInUseByFloatingIp(router.id, gw.network_id)
    if router.gw_port_id == gw.id:
        rest = [p for p in ports_of(s, router) if p.id != gw.id]
        router.gw_port_id = rest[0].id if rest else None
        if not rest:
            router.qos_policy_id = None
    s.flush()
    port_delete.delete_in(s, gw, effects)


def remove_all(s, router: Router, effects) -> None:
    for gw in reversed(ports_of(s, router)):
        remove(s, router, gw, effects)


# --- external-gateway-multihoming ----------------------------------------------------------

def _match(s, router: Router, infos: list[dict], fatal: bool = True):
    """neutron's _match_requested_gateway_ports: {port id: info} for ports that share an
    address with the info (or are the only one on its network when it names none), and
    the infos that match no port."""
    matched, missing = {}, []
    gateways = ports_of(s, router)
    for info in infos:
        on_net = [p for p in gateways if p.network_id == info["network_id"]]
        if not on_net:
            missing.append(info)
            continue
        wanted = {ipaddress.ip_address(f["ip_address"])
                  for f in info.get("external_fixed_ips") or [] if "ip_address" in f}
        if not info.get("external_fixed_ips"):
            if len(on_net) > 1:
                raise exc.UnableToMatchGateways(
                    router.id, f"multiple gateway ports are attached to the same network "
                               f"{info['network_id']} but external_fixed_ips parameter is "
                               f"not specified in the request")
            matched[on_net[0].id] = info
            continue
        port = next((p for p in on_net if wanted & {ipaddress.ip_address(a.ip_address)
                                                     for a in p.fixed_ips}), None)
        if port is not None:
            matched[port.id] = info
        elif fatal:
            raise exc.UnableToMatchGateways(
                router.id, f"could not match a gateway port attached to network "
                           f"{info['network_id']} based on the specified fixed IPs "
                           f"{info['external_fixed_ips']}")
        else:
            missing.append(info)
    return matched, missing


def _authorize_list(ctx, router: Router, infos: list[dict], action: str) -> None:
    target = {"project_id": router.project_id}
    base.authorize(ctx, action, target)
    if action == "remove_external_gateways":  # addresses only name what goes
        return
    for info in infos:
        for key in ("enable_snat", "external_fixed_ips"):
            if key in info:
                base.authorize(ctx, f"{action}:external_gateways:{key}", target)


def _add_extra(s, ctx, router: Router, infos: list[dict], effects) -> None:
    for info in infos:
        network = _external_network(s, ctx, router, info["network_id"])
        _check_not_subnet_gateways(network, info.get("external_fixed_ips") or [])
        _new_port(s, ctx, router, network.id, info.get("external_fixed_ips"), effects)


def add(s, ctx, router: Router, infos: list[dict], effects) -> None:
    _authorize_list(ctx, router, infos, "add_external_gateways")
    if infos and not ports_of(s, router):
        # the first becomes the compatibility gateway
        set_gateway(s, ctx, router, infos[0], effects, "update_router")
        infos = infos[1:]
    _add_extra(s, ctx, router, infos, effects)


def remove_listed(s, ctx, router: Router, infos: list[dict], effects) -> None:
    _authorize_list(ctx, router, infos, "remove_external_gateways")
    if not infos:
        return
    if not ports_of(s, router):
        raise exc.UnableToRemoveGateways(router.id,
                                         "the router does not have any external gateways")
    for info in infos:
        _external_network(s, ctx, router, info["network_id"])
    matched, missing = _match(s, router, infos)
    if missing:
        raise exc.UnableToMatchGateways(
            router.id, "could not match gateway port IDs for gateway info with networks "
                       + ", ".join(i["network_id"] for i in missing))
    # extra gateways first, the compatibility one last (its successor is then chosen)
    for port_id in sorted(matched, key=lambda p: p == router.gw_port_id):
        remove(s, router, s.get(Port, port_id), effects)


def update(s, ctx, router: Router, infos: list[dict], effects) -> None:
    """The router's gateways become the list: the first is the compatibility one,
    matched ports get the listed addresses, unlisted extra ports go, new ones come."""
    _authorize_list(ctx, router, infos, "update_external_gateways")
    if not infos:
        remove_all(s, router, effects)
        return
    for info in infos:
        network = _external_network(s, ctx, router, info["network_id"])
        _check_not_subnet_gateways(network, info.get("external_fixed_ips") or [])
    first, _ = _match(s, router, infos[:1], fatal=False)
    if first:
        router.gw_port_id = next(iter(first))
    set_gateway(s, ctx, router, infos[0], effects, "update_router")
    matched, missing = _match(s, router, infos[1:], fatal=False)
    for port_id, info in matched.items():
        if info.get("external_fixed_ips"):
            ports.update_in(s, ctx, port_id, {"fixed_ips": info["external_fixed_ips"]},
                            effects, trusted=True)
    for port in ports_of(s, router):
        if port.id != router.gw_port_id and port.id not in matched:
            remove(s, router, port, effects)
    _add_extra(s, ctx, router, missing, effects)
