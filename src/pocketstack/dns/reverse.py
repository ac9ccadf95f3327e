"""PTR records of floating IPs (/v2/reverse/floatingips): the caller's floating IPs come
from the network API (as the caller, never from the network tables); their PTR records
live in reverse zones (``c.b.a.in-addr.arpa.``, IPv6 per /64 nibbles) the service owns
(designate's managed resource project), made on first use."""
from __future__ import annotations

import ipaddress
import json

import dns.reversename

from pocketstack.clients.network import NetworkClient
from pocketstack.common import config, db, policy
from pocketstack.common.context import RequestContext
from pocketstack.dns import api, errors, publisher, records
from pocketstack.dns.quotas import MANAGED_PROJECT
from pocketstack.dns.models import RecordSet, Zone

REGION = "RegionOne"


def _service_ctx() -> RequestContext:
    return RequestContext(project_id=MANAGED_PROJECT, roles=["admin"], is_service=True)


def _zone_name(address: str) -> str:
    ip = ipaddress.ip_address(address)
    name = dns.reversename.from_address(address).to_text()
    labels = name.split(".")
    # IPv4: the /24 (drop the host label); IPv6: the /64 (drop 16 nibbles)
    return ".".join(labels[1:] if ip.version == 4 else labels[16:])


def _fips(ctx, fip_id: str | None = None) -> list[dict]:
    client = NetworkClient(ctx, caller="dns")
    if fip_id is not None:
        fip = client.get_floatingip(fip_id)
        if fip is None:
            raise errors.not_found("FloatingIP", "not_found")
        return [fip]
    return client.list_floatingips(project_id=ctx.project_id)


def _ptr_of(s, address: str) -> RecordSet | None:
    """The floating IP's PTR record in the service's own reverse zone. A PTR of the same
    name in a zone a project made is that project's, never read or replaced from here."""
    name = dns.reversename.from_address(address).to_text()
    return s.query(RecordSet).join(Zone, Zone.id == RecordSet.zone_id).filter(
        RecordSet.name == name, RecordSet.type == "PTR",
        Zone.project_id == MANAGED_PROJECT).first()


def view(fip: dict, ptr: RecordSet | None) -> dict:
    return {"id": f"{REGION}:{fip['id']}", "address": fip["floating_ip_address"],
            "ptrdname": json.loads(ptr.records)[0] if ptr else None,
            "ttl": ptr.ttl if ptr else None,
            "description": ptr.description if ptr else None,
            "status": ptr.status if ptr else None, "action": ptr.action if ptr else None}


def listing(ctx) -> list[dict]:
    policy.authorize(ctx, "designate:find_floatingips", {"project_id": ctx.project_id})
    fips = _fips(ctx)
    with db.reader() as s:
        return [view(f, _ptr_of(s, f["floating_ip_address"])) for f in fips]


def _split(key: str) -> str:
    region, sep, fip_id = key.partition(":")
    if not sep or region != REGION or not fip_id:
        raise errors.not_found("FloatingIP", "not_found")
    return fip_id


def get(ctx, key: str) -> dict:
    policy.authorize(ctx, "designate:get_floatingip", {"project_id": ctx.project_id})
    fip = _fips(ctx, _split(key))[0]
    with db.reader() as s:
        return view(fip, _ptr_of(s, fip["floating_ip_address"]))


def update(ctx, key: str, body) -> dict:
    """Set (or with ptrdname null, unset) the floating IP's PTR record."""
    if not isinstance(body, dict) or "ptrdname" not in body \
            or set(body) - {"ptrdname", "ttl", "description"}:
        raise errors.bad_request("Provided object does not match schema")
    fip = _fips(ctx, _split(key))[0]
    policy.authorize(ctx, "designate:update_floatingip", {"project_id": fip["project_id"]})
    address = fip["floating_ip_address"]
    ptrdname = body["ptrdname"]
    if ptrdname is not None:
        records.zone_name(ptrdname)
    service = _service_ctx()
    zone_name = _zone_name(address)
    with db.transaction() as s:
        existing = _ptr_of(s, address)
        if existing is not None:
            api.delete_recordset(service, existing.zone_id, existing.id, all_projects=True,
                                 managed=True)
        ptr = None
        if ptrdname is not None:
            zone = s.query(Zone).filter_by(name=zone_name).first()
            if zone is None:
                zone = api.create_zone(service, {
                    "name": zone_name, "email": config.CONF.dns.managed_resource_email})
            elif zone.project_id != MANAGED_PROJECT:
                raise errors.bad_request(f"The reverse zone {zone_name} belongs to a "
                                         f"project", "bad_request")
            ptr, _ = api.create_recordset(service, zone.id, {
                "name": dns.reversename.from_address(address).to_text(), "type": "PTR",
                "records": [ptrdname], "ttl": body.get("ttl"),
                "description": body.get("description")}, all_projects=True)
    publisher.notify()  # again: the calls above woke it before this transaction ended
    return view(fip, ptr)
