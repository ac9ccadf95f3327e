"""External DNS for floating IPs (neutron's dns-integration with its designate driver):
a floating IP with its own dns_name and dns_domain, or on a port with a dns_name whose
port or network has a dns_domain, gets an A record ``<dns_name>.<dns_domain>`` in the DNS
service's zone of that domain; it goes when that no longer holds.

What was published is kept on the floating IP (published_dns_*). The DNS API is called
after the network transaction commits (base.AfterCommit), for the user when there is
one (the zone must be theirs, as in neutron), and a failure is logged, never the
network operation's (neutron logs a missing zone the same way).
"""
from __future__ import annotations

import ipaddress
import logging

from pocketstack.common import config
from pocketstack.network.models import FloatingIP, Network, Port

LOG = logging.getLogger(__name__)
KEYWORDS = ("<project_id>", "<project_name>", "<user_id>", "<user_name>")


def _domain(domain: str, project_id: str, ctx) -> str:
    """dns-integration-domain-keywords: <project_id> and the like filled in."""
    if "<" in domain:
        values = {"<project_id>": project_id,
                  "<project_name>": getattr(ctx, "project_name", None) or project_id,
                  "<user_id>": getattr(ctx, "user_id", None) or "",
                  "<user_name>": getattr(ctx, "user_name", None) or ""}
        for keyword, value in values.items():
            domain = domain.replace(keyword, value)
    return domain if domain.endswith(".") else domain + "."


def desired(s, fip: FloatingIP, ctx) -> tuple[str, str] | None:
    if fip.dns_name and fip.dns_domain:
        return fip.dns_name, _domain(fip.dns_domain, fip.project_id, ctx)
    port = s.get(Port, fip.fixed_port_id) if fip.fixed_port_id else None
    if port is None or not port.dns_name:
        return None
    domain = port.dns_domain or (s.get(Network, port.network_id).dns_domain or "")
    if not domain or domain.rstrip(".") == "openstacklocal":
        return None
    return port.dns_name.rstrip("."), _domain(domain, fip.project_id, ctx)


def sync(s, fip: FloatingIP, effects, ctx) -> None:
    """Note the change of the floating IP's record, if any, for after the commit."""
    want = desired(s, fip, ctx)
    have = (fip.published_dns_name, fip.published_dns_domain) \
        if fip.published_dns_name else None
    if want == have:
        return
    effects.dns_change(ctx, fip.floating_ip_address, have, want)
    fip.published_dns_name, fip.published_dns_domain = want or ("", "")


def apply(ctx, address: str, old, new) -> None:
    from pocketstack.clients.dns import DNSClient

    rtype = "A" if ipaddress.ip_address(address).version == 4 else "AAAA"
    reverse = config.CONF.network.allow_reverse_dns_lookup and rtype == "A"
    if old is not None:
        try:
            _remove(DNSClient(caller="network", all_projects=True), old, address, rtype)
            if reverse:
                _remove_ptr(address)
        except Exception as error:  # noqa: BLE001 - logged, as neutron does
            LOG.warning("Removing the DNS record %s.%s of %s failed: %s", *old, address,
                        error)
    if new is not None:
        client = DNSClient(ctx, caller="network") if getattr(ctx, "auth_token", None) \
            else DNSClient(caller="network", all_projects=True)
        try:
            _add(client, new, address, rtype)
            if reverse:
                _add_ptr(address, f"{new[0]}.{new[1]}")
        except Exception as error:  # noqa: BLE001 - no such zone, quota: logged
            LOG.warning("Publishing the DNS record %s.%s of %s failed: %s", *new, address,
                        error)


def _add(client, name_domain, address, rtype) -> None:
    name, domain = name_domain
    zone = client.find_zone(domain)
    if zone is None:
        raise LookupError(f"no zone {domain} for the caller")
    fqdn = f"{name}.{domain}"
    rs = client.find_recordset(zone["id"], fqdn, rtype)
    if rs is None:
        client.create_recordset(zone["id"], {"name": fqdn, "type": rtype,
                                             "records": [address]})
    elif address not in rs["records"]:
        client.set_records(zone["id"], rs["id"], rs["records"] + [address])


# The DNS service's managed project (designate's managed_resource_tenant_id), which owns
# the reverse zones, as its own reverse API makes them
MANAGED_PROJECT = "00000000-0000-0000-0000-000000000000"


def _ptr_names(address: str) -> tuple[str, str]:
    """(the PTR's name, its /24 reverse zone) of an IPv4 address."""
    octets = address.split(".")
    zone = ".".join(reversed(octets[:3])) + ".in-addr.arpa."
    return f"{octets[3]}.{zone}", zone


def _add_ptr(address: str, fqdn: str) -> None:
    from pocketstack.clients.dns import DNSClient

    client = DNSClient(caller="network", project_id=MANAGED_PROJECT)
    name, zone_name = _ptr_names(address)
    zone = client.find_zone(zone_name)
    if zone is None:
        zone = client.create_zone({"name": zone_name, "email": f"admin@{zone_name[:-1]}"})
    rs = client.find_recordset(zone["id"], name, "PTR")
    if rs is None:
        client.create_recordset(zone["id"], {"name": name, "type": "PTR", "records": [fqdn]})
    else:
        client.set_records(zone["id"], rs["id"], [fqdn])


def _remove_ptr(address: str) -> None:
    from pocketstack.clients.dns import DNSClient

    client = DNSClient(caller="network", all_projects=True)
    name, zone_name = _ptr_names(address)
    zone = client.find_zone(zone_name)
    rs = client.find_recordset(zone["id"], name, "PTR") if zone else None
    if rs is not None:
        client.delete_recordset(zone["id"], rs["id"])


def _remove(client, name_domain, address, rtype) -> None:
    name, domain = name_domain
    zone = client.find_zone(domain)
    if zone is None:
        return
    rs = client.find_recordset(zone["id"], f"{name}.{domain}", rtype)
    if rs is None or address not in rs["records"]:
        return
    rest = [r for r in rs["records"] if r != address]
    if rest:
        client.set_records(zone["id"], rs["id"], rest)
    else:
        client.delete_recordset(zone["id"], rs["id"])
