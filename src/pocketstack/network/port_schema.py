"""What a port request may carry (ATTRS, validated by network/validate.py) and how a port
listing is filtered (COLLECTION: columns, fixed_ips=, security_groups=)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.network import exceptions as exc
from pocketstack.network import listing
from pocketstack.network import validate as v
from pocketstack.network.models import IPAllocation, Port, PortSecurityGroup


def fixed_ip(value, name):
    item = v.dict_of({"subnet_id": v.uuid_string, "ip_address": v.ip_address})(value, name)
    if not item:
        raise v.invalid(name, f"'{value}' must have a subnet_id or an ip_address")
    return item


def _address_pair(value, name):
    pair = v.dict_of({"ip_address": v.ip_or_cidr, "mac_address": v.mac_address},
                     required=("ip_address",))(value, name)
    return pair


# neutron-lib's extra_dhcp_opt definition: these two may carry an empty value (sent to
# clients as "no router" / "no routes"); other options need a value.
BLANKABLE_DHCP_OPTS = ("router", "classless-static-route")
DHCP_OPT_NAME_MAX, DHCP_OPT_VALUE_MAX = 64, 255
_DHCP_OPT_KEYS = ("opt_name", "opt_value", "ip_version")


def _one_line(value, name: str, max_len: int, empty: bool) -> str:
    # Never a line break: the value is written into the DHCP files dnsmasq reads.
    if not isinstance(value, str):
        raise v.invalid(name, f"'{value}' is not a valid string")
    if not value and not empty:
        raise v.invalid(name, f"'{value}' Blank strings are not permitted")
    if "\n" in value or "\r" in value:
        raise v.invalid(name, f"'{value}' contains a line break")
    if len(value) > max_len:
        raise v.invalid(name, f"'{value}' exceeds maximum length of {max_len}")
    return value


def extra_dhcp_opt(value, name):
    """One of a port's ``extra_dhcp_opts``: opt_name, opt_value (None deletes it on
    update), ip_version (4 unless given)."""
    if not isinstance(value, dict):
        raise v.invalid(name, f"'{value}' is not a dictionary")
    missing = [k for k in _DHCP_OPT_KEYS[:2] if k not in value]
    if missing:
        raise v.invalid(name, f"Validation of dictionary's keys failed. Expected keys: "
                              f"{set(_DHCP_OPT_KEYS[:2])} Provided keys: {set(value)}")
    unexpected = [k for k in value if k not in _DHCP_OPT_KEYS]
    if unexpected:
        raise v.invalid(name, f"Unexpected keys supplied: {', '.join(unexpected)}")
    opt_name = _one_line(value["opt_name"], name, DHCP_OPT_NAME_MAX, empty=False)
    opt_value = value["opt_value"]
    if opt_value is not None:
        opt_value = _one_line(opt_value, name, DHCP_OPT_VALUE_MAX,
                              empty=opt_name in BLANKABLE_DHCP_OPTS)
    ip_version = v.integer()(value.get("ip_version", 4), name)
    if ip_version not in (4, 6):
        raise v.invalid(name, f"'{ip_version}' is not in [4, 6]")
    return {"opt_name": opt_name, "opt_value": opt_value, "ip_version": ip_version}


def merge_dhcp_opts(current: list[dict], requested: list[dict]) -> list[dict]:
    """neutron's update of a port's options: one per (opt_name, ip_version); a value
    replaces the one there, None removes it; a new option is kept only with a value
    (an empty one only for the blank-able options)."""
    merged = [dict(opt) for opt in current]
    for opt in requested:
        key = (opt["opt_name"], opt["ip_version"])
        found = next((o for o in merged if (o["opt_name"], o["ip_version"]) == key), None)
        if found is not None and opt["opt_value"] is None:
            merged.remove(found)
        elif found is not None:
            found["opt_value"] = opt["opt_value"]
        elif opt["opt_value"] is not None and (
                opt["opt_value"] or opt["opt_name"] in BLANKABLE_DHCP_OPTS):
            merged.append(dict(opt))
    return merged


ATTRS = {
    "name": v.Attr(v.string()),
    "description": v.Attr(v.string()),
    "network_id": v.Attr(v.uuid_string, put=False),
    "admin_state_up": v.Attr(v.boolean),
    "mac_address": v.Attr(v.mac_address),
    "fixed_ips": v.Attr(v.list_of(fixed_ip)),
    "device_id": v.Attr(v.string()),
    "device_owner": v.Attr(v.string()),
    "security_groups": v.Attr(v.list_of(v.uuid_string)),
    "port_security_enabled": v.Attr(v.boolean),
    "allowed_address_pairs": v.Attr(v.list_of(_address_pair)),
    "dns_name": v.Attr(v.dns_name),
    "dns_domain": v.Attr(v.dns_domain),
    "binding:host_id": v.Attr(v.string()),
    "binding:profile": v.Attr(v.any_dict),
    "binding:vnic_type": v.Attr(v.one_of("normal", "direct", "macvtap", "baremetal",
                                         "direct-physical", "virtio-forwarder", "smart-nic",
                                         "vdpa", "remote-managed")),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "tags": v.Attr(v.tags, put=False),
    "qos_policy_id": v.Attr(v.nullable_uuid),
    "extra_dhcp_opts": v.Attr(v.list_of(extra_dhcp_opt)),
    "trusted": v.Attr(v.boolean),
}


def _fixed_ips_filter(values: list[str]):
    conditions = {"ip_address": [], "subnet_id": [], "ip_address_substr": []}
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or key not in conditions:
            raise exc.HTTPBadRequest(f"Invalid fixed_ips filter '{value}': use ip_address=, "
                                     "subnet_id= or ip_address_substr=")
        conditions[key].append(wanted)
    query = sa.select(IPAllocation.port_id)
    if conditions["ip_address"]:
        query = query.where(IPAllocation.ip_address.in_(conditions["ip_address"]))
    if conditions["subnet_id"]:
        query = query.where(IPAllocation.subnet_id.in_(conditions["subnet_id"]))
    for substring in conditions["ip_address_substr"]:
        query = query.where(IPAllocation.ip_address.contains(substring, autoescape=True))
    return Port.id.in_(query)


COLLECTION = listing.Collection(
    name="ports", model=Port, not_found=exc.PortNotFound,
    columns={"id": Port.id, "name": Port.name, "description": Port.description,
             "project_id": Port.project_id, "tenant_id": Port.project_id,
             "network_id": Port.network_id, "mac_address": Port.mac_address,
             "admin_state_up": Port.admin_state_up, "status": Port.status,
             "device_id": Port.device_id, "device_owner": Port.device_owner,
             "port_security_enabled": Port.port_security_enabled, "dns_name": Port.dns_name,
             "dns_domain": Port.dns_domain,
             "binding:host_id": Port.host_id, "binding:vif_type": Port.vif_type,
             "binding:vnic_type": Port.vnic_type, "revision_number": Port.revision_number,
             "qos_policy_id": Port.qos_policy_id,
             "created_at": Port.created_at, "updated_at": Port.updated_at},
    special={"fixed_ips": _fixed_ips_filter,
             "security_groups": lambda ids: Port.id.in_(
                 sa.select(PortSecurityGroup.port_id).where(
                     PortSecurityGroup.security_group_id.in_(ids))),
             "ip_allocation": lambda values: sa.true() if "immediate" in values
             else sa.false()},
)
