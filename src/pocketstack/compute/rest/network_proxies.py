"""nova's proxy APIs to the network service, deprecated in 2.36 and still called by
clients that speak an older microversion (openstacksdk's create_server(auto_ip=True) reads
os-floating-ip-pools; older tools list security groups and floating IPs through compute):

os-security-groups, os-security-group-rules, os-floating-ips, os-floating-ip-pools and
os-networks (read-only). From 2.36 on each answers 404, as nova. Every call goes to the
network API with the user's token (clients/network.py), and neutron's answers are shown
in nova's format (nova/api/openstack/compute/security_groups.py, floating_ips.py,
floating_ip_pools.py, networks.py; nova/network/security_group_api.py).
"""
from __future__ import annotations

import ipaddress
import uuid as uuidlib

from pocketstack.clients.network import NetworkClient
from pocketstack.common import exceptions
from pocketstack.compute.rest.common import (NON_NEGATIVE_INT, at_least, authorize, body,
                                             respond, validate)
from pocketstack.compute.rest.server_security_groups import _group, _rule

DEFAULT_FLOATING_POOL = "nova"  # nova's [neutron] default_floating_pool


def _before_2_36(req) -> None:
    """nova's MAX_PROXY_API_SUPPORT_VERSION is 2.35."""
    if at_least(req, "2.36"):
        raise exceptions.NotFound("The resource could not be found.")


def _project(req) -> dict:
    return {"project_id": req.context.project_id}


def _neutron_error(resp) -> tuple[str, str]:
    """(type, message) of neutron's {"NeutronError": {...}}."""
    try:
        error = resp.json()["NeutronError"]
        return error.get("type") or "", error.get("message") or ""
    except (ValueError, KeyError, TypeError):
        return "", resp.text[:200]


def _is_uuid(value: str) -> bool:
    """oslo's uuidutils.is_uuid_like."""
    try:
        return str(uuidlib.UUID(value)).replace("-", "") == value.replace("-", "").lower()
    except (TypeError, ValueError, AttributeError):
        return False


# --- os-security-groups -------------------------------------------------------------------

_GROUP = {"type": "object",
          "properties": {"security_group": {
              "type": "object",
              "properties": {"name": {"type": "string", "minLength": 0, "maxLength": 255},
                             "description": {"type": "string", "minLength": 0,
                                             "maxLength": 255}},
              "required": ["name", "description"], "additionalProperties": True}},
          "required": ["security_group"], "additionalProperties": True}

_RULE = {"type": "object",
         "properties": {"security_group_rule": {
             "type": "object",
             "properties": {"group_id": {"type": ["string", "null"], "format": "uuid"},
                            "parent_group_id": {"type": "string", "format": "uuid"},
                            "to_port": {}, "from_port": {}, "ip_protocol": {}, "cidr": {}},
             "required": ["parent_group_id"], "additionalProperties": True}},
         "required": ["security_group_rule"], "additionalProperties": True}

_LIST_QUERY = {"type": "object",
               "properties": {"limit": NON_NEGATIVE_INT, "offset": NON_NEGATIVE_INT},
               "additionalProperties": True}


def _group_id(value: str) -> str:
    if not _is_uuid(value):
        raise exceptions.BadRequest("Security group id should be uuid")
    return value


def _get_group(client: NetworkClient, group_id: str) -> dict:
    group = client.get_security_group(group_id)
    if group is None:
        raise exceptions.NotFound(f"Security group {group_id} not found.")
    return group


def _names(client: NetworkClient, groups: list[dict]) -> dict[str, dict]:
    """The groups rules name as their remote group, by id (the listed ones and the rest)."""
    by_id = {g["id"]: g for g in groups}
    missing = {r["remote_group_id"] for g in groups for r in g.get("security_group_rules") or []
               if r.get("remote_group_id") and r["remote_group_id"] not in by_id}
    if missing:
        by_id.update({g["id"]: g for g in client.list_security_groups(id=sorted(missing))})
    return by_id


def _show_group(client: NetworkClient, group: dict) -> dict:
    return _group(group, _names(client, [group]))


def list_security_groups(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-security-groups:get", _project(req))
    query = dict(req.query)
    validate(_LIST_QUERY, query)
    client = NetworkClient(req.context)
    params = {}
    if not (req.context.is_admin and "all_tenants" in req.query):
        params["tenant_id"] = req.context.project_id
    groups = client.list_security_groups(**params)
    # nova's common.limited: offset, then at most limit (and at most 1000)
    offset = int(query.get("offset", 0))
    limit = min(int(query.get("limit", 1000)) or 1000, 1000)
    groups = groups[offset:offset + limit]
    names = _names(client, groups)
    out = [_group(g, names) for g in groups]
    out.sort(key=lambda g: (g["tenant_id"] or "", g["name"] or ""))
    return respond(req, {"security_groups": out})


def show_security_group(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-security-groups:show", _project(req))
    client = NetworkClient(req.context)
    group = _get_group(client, _group_id(req.params["group_id"]))
    return respond(req, {"security_group": _show_group(client, group)})


def create_security_group(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-security-groups:create", _project(req))
    data = body(req, _GROUP)["security_group"]
    client = NetworkClient(req.context)
    resp = client.create_security_group({"name": data["name"],
                                         "description": data["description"]})
    if resp.status_code == 409:  # neutron's quota
        raise exceptions.Forbidden(_neutron_error(resp)[1])
    if resp.status_code == 400:
        raise exceptions.BadRequest(_neutron_error(resp)[1])
    return respond(req, {"security_group": _show_group(client, resp.json()["security_group"])})


def update_security_group(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-security-groups:update", _project(req))
    client = NetworkClient(req.context)
    group_id = _group_id(req.params["group_id"])
    _get_group(client, group_id)
    data = body(req, _GROUP)["security_group"]
    resp = client.update_security_group(group_id, {"name": data["name"],
                                                   "description": data["description"]})
    if resp.status_code == 404:
        raise exceptions.NotFound(f"Security group {group_id} not found.")
    if resp.status_code in (400, 409):
        raise exceptions.BadRequest(_neutron_error(resp)[1])
    return respond(req, {"security_group": _show_group(client, resp.json()["security_group"])})


def delete_security_group(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-security-groups:delete", _project(req))
    client = NetworkClient(req.context)
    group_id = _group_id(req.params["group_id"])
    _get_group(client, group_id)
    resp = client.delete_security_group(group_id)
    if resp.status_code == 404:
        raise exceptions.NotFound(f"Security group {group_id} not found.")
    if resp.status_code == 409:  # in use: nova's exception.Invalid
        raise exceptions.BadRequest(_neutron_error(resp)[1])
    return respond(req, None, 202)


# --- os-security-group-rules ----------------------------------------------------------------

def _ingress_rule(protocol, from_port, to_port, group_id=None, cidr=None) -> dict | None:
    """nova's security_group_api._new_ingress_rule: the rule's values, None when a CIDR
    rule lacks its protocol and ports; 400 for what nova refuses."""
    values: dict = {}
    if group_id:
        values["group_id"] = group_id
        upper = protocol.upper() if isinstance(protocol, str) else ""
        if upper == "ICMP" and from_port is None and to_port is None:
            from_port = to_port = -1
        elif upper in ("TCP", "UDP") and from_port is None and to_port is None:
            from_port, to_port = 1, 65535
    elif cidr:
        values["cidr"] = cidr
    if protocol and from_port is not None and to_port is not None:
        protocol = str(protocol)
        upper = protocol.upper()
        try:
            from_port, to_port = int(from_port), int(to_port)
        except (TypeError, ValueError):
            reason = ("Type and Code must be integers for ICMP protocol type"
                      if upper == "ICMP" else "To and From ports must be integers")
            raise exceptions.BadRequest(f"Invalid input received: {reason}") from None
        if upper not in ("TCP", "UDP", "ICMP"):
            raise exceptions.BadRequest(f"Invalid IP protocol {protocol}.")

        def bad_range(msg):
            return exceptions.BadRequest(f"Invalid port range {from_port}:{to_port}. {msg}")

        if upper in ("TCP", "UDP") and from_port > to_port:
            raise bad_range("Former value cannot be greater than the later")
        if upper in ("TCP", "UDP") and (from_port < 1 or to_port > 65535):
            raise bad_range(f"Valid {upper} ports should be between 1-65535")
        if upper == "ICMP" and not (-1 <= from_port <= 255 and -1 <= to_port <= 255):
            raise bad_range("For ICMP, the type:code must be valid")
        values.update(protocol=protocol, from_port=from_port, to_port=to_port)
    elif cidr:
        return None
    return values


def _parse_cidr(cidr) -> str:
    if not cidr:
        return "0.0.0.0/0"
    from urllib.parse import unquote

    text = unquote(str(cidr))
    try:
        ipaddress.ip_network(text, strict=False)
        if "/" not in text:
            raise ValueError
    except ValueError:
        raise exceptions.BadRequest(f"{text} is not a valid IP network.") from None
    return text


def _nova_rule(rule: dict) -> dict:
    """A neutron rule as nova's security_group_api keeps it (for the duplicate check)."""
    shown = _rule(rule, {})
    return {"group_id": rule.get("remote_group_id"), "cidr": _parse_cidr(
        rule.get("remote_ip_prefix")), "protocol": rule.get("protocol"),
        "from_port": shown["from_port"], "to_port": shown["to_port"]}


def create_security_group_rule(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-security-groups:rule:create", _project(req))
    data = body(req, _RULE)["security_group_rule"]
    client = NetworkClient(req.context)
    parent = _get_group(client, data["parent_group_id"])
    group_id = data.get("group_id")
    source = _get_group(client, group_id) if group_id is not None else None
    if group_id is not None:
        new = _ingress_rule(data.get("ip_protocol"), data.get("from_port"),
                            data.get("to_port"), group_id=group_id)
    else:
        new = _ingress_rule(data.get("ip_protocol"), data.get("from_port"),
                            data.get("to_port"), cidr=_parse_cidr(data.get("cidr")))
    if new is None:
        raise exceptions.BadRequest("Not enough parameters to build a valid rule.")
    if "cidr" in new:
        net, _, prefixlen = new["cidr"].partition("/")  # as written (netutils)
        if net not in ("0.0.0.0", "::") and prefixlen == "0":
            raise exceptions.BadRequest(f"Bad prefix for network in cidr {new['cidr']}")
    keys = ("group_id", "cidr", "from_port", "to_port", "protocol")
    for existing in parent.get("security_group_rules") or []:
        if existing.get("direction") != "ingress":
            continue
        known = _nova_rule(existing)
        if all(known.get(k) == new.get(k) for k in keys):
            raise exceptions.BadRequest(f"This rule already exists in group {parent['id']}")
    cidr = new.get("cidr")
    sent = {"direction": "ingress", "protocol": new.get("protocol"),
            "ethertype": ("IPv6" if cidr and ipaddress.ip_network(cidr, strict=False).version
                          == 6 else "IPv4"),
            "remote_ip_prefix": cidr, "security_group_id": parent["id"],
            "remote_group_id": new.get("group_id")}
    if "from_port" in new and new["from_port"] != -1:
        sent["port_range_min"] = new["from_port"]
    if "to_port" in new and new["to_port"] != -1:
        sent["port_range_max"] = new["to_port"]
    resp = client.create_security_group_rule(sent)
    if resp.status_code == 404:
        raise exceptions.NotFound(_neutron_error(resp)[1])
    if resp.status_code == 409:  # neutron's quota (a duplicate was refused above)
        raise exceptions.Forbidden(_neutron_error(resp)[1])
    if resp.status_code == 400:
        raise exceptions.BadRequest(_neutron_error(resp)[1])
    rule = resp.json()["security_group_rule"]
    names = {source["id"]: dict(source, tenant_id=source.get("tenant_id")
                                or source.get("project_id"))} if source else {}
    return respond(req, {"security_group_rule": _rule(rule, names)})


def delete_security_group_rule(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-security-groups:rule:delete", _project(req))
    client = NetworkClient(req.context)
    rule_id = req.params["rule_id"]
    if not _is_uuid(rule_id):
        raise exceptions.BadRequest("Security group id should be uuid")
    rule = client.get_security_group_rule(rule_id)
    if rule is None:
        raise exceptions.NotFound(f"Security group rule {rule_id} not found.")
    resp = client.delete_security_group_rule(rule_id)
    if resp.status_code == 404:
        raise exceptions.NotFound(f"Security group rule {rule_id} not found.")
    if resp.status_code == 409:
        raise exceptions.Conflict(_neutron_error(resp)[1])
    return respond(req, None, 202)


# --- os-floating-ip-pools, os-floating-ips --------------------------------------------------

def list_floating_ip_pools(req):
    """The external networks (nova's get_floating_ip_pools)."""
    _before_2_36(req)
    authorize(req, "os_compute_api:os-floating-ip-pools", {})
    networks = NetworkClient(req.context).list_networks(**{"router:external": True})
    return respond(req, {"floating_ip_pools": [{"name": n.get("name") or n["id"]}
                                               for n in networks]})


_FIP_CREATE = {"type": ["object", "null"],
               "properties": {"pool": {"type": ["string", "null"]}}}


def _floating_ip(fip: dict, networks: dict[str, dict]) -> dict:
    network = networks.get(fip["floating_network_id"]) or {"id": fip["floating_network_id"]}
    details = fip.get("port_details")
    return {"fixed_ip": fip.get("fixed_ip_address"), "id": fip["id"],
            "instance_id": (details.get("device_id") or None) if details else None,
            "ip": fip["floating_ip_address"],
            "pool": network.get("name") or network["id"]}


def _networks(client: NetworkClient, fips: list[dict]) -> dict[str, dict]:
    ids = sorted({f["floating_network_id"] for f in fips})
    return {n["id"]: n for n in client.list_networks(id=ids)} if ids else {}


def _get_fip(client: NetworkClient, fip_id: str) -> dict:
    fip = client.get_floatingip(fip_id) if fip_id else None
    if fip is None:
        raise exceptions.NotFound(f"Floating IP not found for ID {fip_id}")
    return fip


def list_floating_ips(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-floating-ips:list", _project(req))
    client = NetworkClient(req.context)
    fips = client.list_floatingips(tenant_id=req.context.project_id)
    networks = _networks(client, fips)
    return respond(req, {"floating_ips": [_floating_ip(f, networks) for f in fips]})


def show_floating_ip(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-floating-ips:show", _project(req))
    client = NetworkClient(req.context)
    fip = _get_fip(client, req.params["fip_id"])
    return respond(req, {"floating_ip": _floating_ip(fip, _networks(client, [fip]))})


def create_floating_ip(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-floating-ips:create", _project(req))
    data = req.json(required=False)
    validate(_FIP_CREATE, data)
    pool = (data or {}).get("pool")
    client = NetworkClient(req.context)
    name = pool or DEFAULT_FLOATING_POOL
    search = {"router:external": True}
    search["id" if _is_uuid(name) else "name"] = name
    networks = client.list_networks(**search)
    if not networks:
        raise exceptions.NotFound("Floating IP pool not found.")
    if len(networks) > 1:
        raise exceptions.Conflict(f"Multiple floating IP pools matches found for name "
                                  f"'{name}'")
    resp = client.create_floatingip({"floating_network_id": networks[0]["id"]})
    if resp.status_code != 201:
        kind, message = _neutron_error(resp)
        if kind in ("IpAddressGenerationFailure", "ExternalIpAddressExhausted"):
            raise exceptions.NotFound(f"No more floating IPs in pool {pool}." if pool
                                      else "No more floating IPs available.")
        if kind == "OverQuota" or resp.status_code == 409:
            raise exceptions.Forbidden(f"IP allocation over quota in pool {pool}." if pool
                                       else "IP allocation over quota.")
        raise exceptions.BadRequest(message)
    fip = resp.json()["floatingip"]
    return respond(req, {"floating_ip": _floating_ip(fip, {networks[0]["id"]: networks[0]})})


def delete_floating_ip(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-floating-ips:delete", _project(req))
    client = NetworkClient(req.context)
    fip = _get_fip(client, req.params["fip_id"])
    resp = client.delete_floatingip(fip["id"])
    if resp.status_code == 404:
        raise exceptions.NotFound(f"Floating IP not found for ID {fip['id']}")
    if resp.status_code == 409:
        raise exceptions.Conflict(_neutron_error(resp)[1])
    return respond(req, None, 202)


# --- os-networks (read-only) -----------------------------------------------------------------

_NETWORK_FIELDS = ("id", "cidr", "netmask", "gateway", "broadcast", "dns1", "dns2", "cidr_v6",
                   "gateway_v6", "label", "netmask_v6")
_NETWORK_ADMIN_FIELDS = ("created_at", "updated_at", "deleted_at", "deleted", "injected",
                         "bridge", "vlan", "vpn_public_address", "vpn_public_port",
                         "vpn_private_address", "dhcp_start", "project_id", "host",
                         "bridge_interface", "multi_host", "priority", "rxtx_base", "mtu",
                         "dhcp_server", "enable_dhcp", "share_address")


def _network(req, network: dict) -> dict:
    """nova's network_dict: two fields of thirty are known since nova-network is gone."""
    fields = _NETWORK_FIELDS + (_NETWORK_ADMIN_FIELDS if req.context.is_admin else ())
    out = dict.fromkeys(fields)
    out["id"], out["label"] = network["id"], network.get("name")
    return out


def list_networks(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-networks:list", _project(req))
    networks = NetworkClient(req.context).list_networks()
    return respond(req, {"networks": [_network(req, n) for n in networks]})


def show_network(req):
    _before_2_36(req)
    authorize(req, "os_compute_api:os-networks:show", _project(req))
    network = NetworkClient(req.context).get_network(req.params["network_id"])
    if network is None:
        raise exceptions.NotFound("Network not found")
    return respond(req, {"network": _network(req, network)})
