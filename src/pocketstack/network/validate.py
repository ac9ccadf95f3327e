"""Request bodies as neutron checks them: known attributes only, each converted and
validated, with neutron's messages ("Invalid input for X. Reason: ...").

A resource declares its attributes as ``{name: Attr(convert, post=..., put=...)}``;
``parse`` returns the converted values the request gave (defaults are the caller's job).
"""
from __future__ import annotations

import dataclasses
import ipaddress
import re
import uuid
from typing import Any, Callable

from pocketstack.network.exceptions.common import HTTPBadRequest

NAME_MAX = 255


def invalid(name: str, reason: str) -> HTTPBadRequest:
    return HTTPBadRequest(f"Invalid input for {name}. Reason: {reason}.")


@dataclasses.dataclass(frozen=True)
class Attr:
    convert: Callable[[Any, str], Any]
    post: bool = True
    put: bool = True


def resource_body(body: Any, resource: str) -> dict:
    """``body[resource]`` as a dict, with neutron's message when absent."""
    if not isinstance(body, dict) or resource not in body:
        raise HTTPBadRequest(f"Unable to find '{resource}' in request body")
    value = body[resource]
    if not isinstance(value, dict):
        raise HTTPBadRequest(f"Unable to find '{resource}' in request body")
    return value


def parse(values: dict, attrs: dict[str, Attr], *, update: bool) -> dict:
    unknown = sorted(k for k in values if k not in attrs)
    if unknown:
        raise HTTPBadRequest(f"Unrecognized attribute(s) '{', '.join(unknown)}'")
    out = {}
    for name, value in values.items():
        attr = attrs[name]
        if update and not attr.put:
            raise HTTPBadRequest(f"Cannot update read-only attribute {name}")
        if not update and not attr.post:
            raise HTTPBadRequest(f"Attribute '{name}' not allowed in POST")
        out[name] = attr.convert(value, name)
    if "tenant_id" in out or "project_id" in out:
        project, tenant = out.pop("project_id", None), out.pop("tenant_id", None)
        if project and tenant and project != tenant:
            raise HTTPBadRequest("'project_id' and 'tenant_id' do not match")
        out["project_id"] = project or tenant
    return out


# --- converters: (value, attribute name) -> value, or HTTPBadRequest ---------------------

def string(max_len: int = NAME_MAX, nullable: bool = False) -> Callable:
    def convert(value, name):
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise invalid(name, f"'{value}' is not a valid string")
        if len(value) > max_len:
            raise invalid(name, f"'{value}' exceeds maximum length of {max_len}")
        return value
    return convert


def project_id(value, name):
    return string(255)(value, name)


def boolean(value, name):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "false", "0"):
        return value.lower() in ("true", "1")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise invalid(name, f"'{value}' cannot be converted to boolean")


def integer(minimum: int | None = None, maximum: int | None = None,
            nullable: bool = False) -> Callable:
    def convert(value, name):
        if value is None and nullable:
            return None
        if isinstance(value, bool):
            raise invalid(name, f"'{value}' is not an integer")
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise invalid(name, f"'{value}' is not an integer") from None
        if isinstance(value, float) and value != number:
            raise invalid(name, f"'{value}' is not an integer")
        if minimum is not None and number < minimum:
            raise invalid(name, f"'{number}' is too small - must be at least '{minimum}'")
        if maximum is not None and number > maximum:
            raise invalid(name, f"'{number}' is too large - must be no larger than "
                                f"'{maximum}'")
        return number
    return convert


def uuid_string(value, name):
    try:
        if isinstance(value, str) and str(uuid.UUID(value)) == value.lower():
            return value
    except ValueError:
        pass
    raise invalid(name, f"'{value}' is not a valid UUID")


def nullable_uuid(value, name):
    return None if value is None else uuid_string(value, name)


def one_of(*choices, nullable: bool = False) -> Callable:
    def convert(value, name):
        if value is None and nullable:
            return None
        if value not in choices:
            raise invalid(name, f"'{value}' is not in {list(choices)}")
        return value
    return convert


def _parse_address(value):
    if not isinstance(value, str) or "%" in value:
        raise ValueError(value)
    return ipaddress.ip_address(value)


def ip_address(value, name, version: int | None = None) -> str:
    try:
        address = _parse_address(value)
    except ValueError:
        raise invalid(name, f"'{value}' is not a valid IP address") from None
    if version and address.version != version:
        raise invalid(name, f"'{value}' is not a valid IPv{version} address")
    return str(address)


def cidr(value, name) -> str:
    """A network in CIDR form. Host bits are masked, as neutron stores a subnet's
    ``10.99.99.0/16`` as ``10.99.0.0/16``."""
    try:
        if not isinstance(value, str) or "/" not in value or "%" in value:
            raise ValueError(value)
        interface = ipaddress.ip_interface(value)
    except ValueError:
        raise invalid(name, f"'{value}' is not a valid IP subnet") from None
    return str(interface.network)


def ip_or_cidr(value, name) -> str:
    """An address or a network (allowed address pairs, remote prefixes)."""
    if not isinstance(value, str):
        raise invalid(name, f"'{value}' is neither a valid IP address, nor is it a valid IP "
                            "subnet")
    try:
        if "/" in value:
            return cidr(value, name)
        return str(_parse_address(value))
    except (ValueError, HTTPBadRequest):
        raise invalid(name, f"'{value}' is neither a valid IP address, nor is it a valid IP "
                            "subnet") from None


_MAC_SEPARATED = re.compile(r"^([0-9a-fA-F]{1,2})([:-])([0-9a-fA-F]{1,2})(\2[0-9a-fA-F]{1,2}){4}$")


def mac_address(value, name) -> str:
    """A MAC, normalised to lower-case colon form. As neutron, only the all-zero and
    broadcast addresses are refused (its own tests set 11:22:33:44:55:66, a multicast)."""
    if isinstance(value, str) and _MAC_SEPARATED.match(value):
        octets = [int(part, 16) for part in re.split("[:-]", value)]
    elif isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{12}", value):
        octets = [int(value[i:i + 2], 16) for i in range(0, 12, 2)]
    else:
        raise invalid(name, f"'{value}' is not a valid MAC address")
    if octets in ([0] * 6, [255] * 6):
        raise invalid(name, f"'{value}' is not a valid MAC address")
    return ":".join(f"{o:02x}" for o in octets)


_DNS_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


def dns_name(value, name) -> str:
    """A host name or FQDN as neutron's dns-integration accepts it ('' clears it)."""
    value = string(255)(value, name)
    if value == "":
        return value
    labels = value[:-1].split(".") if value.endswith(".") else value.split(".")
    if not all(_DNS_LABEL.match(label) for label in labels) or labels[-1].isdigit():
        raise invalid(name, f"'{value}' not a valid PQDN or FQDN")
    return value.lower()


def dns_domain(value, name) -> str:
    """A dns_domain, which may hold neutron's domain keywords (<project_id>,
    <project_name>, <user_id>, <user_name>: dns-integration-domain-keywords)."""
    checked = string(255)(value, name)
    for keyword in ("<project_id>", "<project_name>", "<user_id>", "<user_name>"):
        checked = checked.replace(keyword, "k")
    dns_name(checked, name)
    return value.lower() if "<" not in value else value


def list_of(item: Callable, max_items: int | None = None) -> Callable:
    def convert(value, name):
        if value is None:
            return []
        if not isinstance(value, list):
            raise invalid(name, f"'{value}' is not a list")
        if max_items is not None and len(value) > max_items:
            raise invalid(name, f"list has more than {max_items} items")
        return [item(v, name) for v in value]
    return convert


def dict_of(keys: dict[str, Callable], required: tuple = ()) -> Callable:
    def convert(value, name):
        if not isinstance(value, dict):
            raise invalid(name, f"'{value}' is not a dictionary")
        extra = set(value) - set(keys)
        if extra:
            raise invalid(name, f"Unrecognized keys {sorted(extra)}")
        missing = [k for k in required if k not in value]
        if missing:
            raise invalid(name, f"Key(s) {missing} missing in {value}")
        return {k: keys[k](v, name) for k, v in value.items()}
    return convert


def any_dict(value, name):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid(name, f"'{value}' is not a dictionary")
    return value


def tags(value, name):
    return list_of(string(255))(value, name)
