"""Zones and recordsets: designate central's rules (names inside their zone, a CNAME alone
at its name, no duplicates, TLDs, blacklists, quotas) and its status lifecycle.

Every change leaves the zone PENDING with a larger serial; the publisher (publisher.py)
hands the zone to the DNS server and then marks it and its recordsets ACTIVE. A deleted
zone keeps its row (action DELETE) until the server has dropped it.
"""
from __future__ import annotations

import json
import re
import time
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.dns import errors, publisher, quotas, records
from pocketstack.dns.models import Blacklist, RecordSet, SharedZone, Tld, Zone

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def conf():
    return config.CONF.dns


# --- views --------------------------------------------------------------------------

def zone_view(zone: Zone, ctx=None, shared: bool | None = None) -> dict:
    return {"id": zone.id, "pool_id": POOL_ID, "project_id": zone.project_id,
            "name": zone.name, "email": zone.email, "ttl": zone.ttl, "serial": zone.serial,
            "status": zone.status, "action": zone.action, "version": zone.version,
            "attributes": json.loads(zone.attributes), "type": zone.type,
            "masters": json.loads(zone.masters), "description": zone.description,
            "shared": bool(shared), "created_at": isotime_naive(zone.created_at),
            "updated_at": isotime_naive(zone.updated_at),
            "transferred_at": isotime_naive(zone.transferred_at)}


def recordset_view(rs: RecordSet, zone_name: str) -> dict:
    return {"id": rs.id, "zone_id": rs.zone_id, "project_id": rs.project_id,
            "name": rs.name, "zone_name": zone_name, "type": rs.type,
            "records": json.loads(rs.records), "ttl": rs.ttl,
            "description": rs.description, "status": rs.status, "action": rs.action,
            "version": rs.version, "created_at": isotime_naive(rs.created_at),
            "updated_at": isotime_naive(rs.updated_at)}


POOL_ID = "794ccc2c-d751-44fe-b57f-8894c9f5c842"  # designate's default pool's id


# --- access ---------------------------------------------------------------------------

def _shared_with(s, zone_id: str, project_id: str | None) -> bool:
    return s.query(SharedZone.id).filter_by(zone_id=zone_id,
                                            target_project_id=project_id).first() is not None


def find_zone(s, ctx, zone_id: str, all_projects: bool = False, action: str = "get_zone",
              shared_ok: bool = True) -> Zone:
    """The zone if the caller's project owns it (or it is shared with it, or the caller
    is an admin asking for all projects); 404 otherwise, as designate hides others'."""
    zone = s.get(Zone, zone_id)
    if zone is None:
        raise errors.not_found("Zone", "zone_not_found")
    mine = zone.project_id == ctx.project_id
    if not (mine or (all_projects and ctx.is_admin)
            or (shared_ok and _shared_with(s, zone.id, ctx.project_id))):
        raise errors.not_found("Zone", "zone_not_found")
    target = zone.project_id if mine or all_projects else ctx.project_id
    policy.authorize(ctx, action, {"project_id": target})
    return zone


def touch(zone: Zone) -> None:
    """A change to the zone: a larger serial, and PENDING until the server serves it."""
    zone.serial = max(zone.serial + 1, int(time.time()))
    zone.status = "PENDING"
    zone.action = "CREATE" if zone.action == "CREATE" else "UPDATE"
    zone.version += 1
    zone.updated_at = utcnow()


def soa_text(zone: Zone) -> str:
    local, _, domain = zone.email.partition("@")
    rname = local.replace(".", "\\.") + "." + domain.rstrip(".") + "."
    return (f"{conf().ns_records[0]} {rname} {zone.serial} {zone.refresh} {zone.retry} "
            f"{zone.expire} {zone.minimum}")


def _sync_soa(s, zone: Zone) -> None:
    s.query(RecordSet).filter_by(zone_id=zone.id, type="SOA").update(
        {"records": json.dumps([soa_text(zone)])})


# --- zones ----------------------------------------------------------------------------

def _check_zone_name(s, ctx, name: str) -> None:
    tlds = [t for (t,) in s.query(Tld.name)]
    if tlds:
        if name.rstrip(".") in tlds:
            raise errors.bad_request("Zone name cannot be the same as a TLD",
                                     "invalid_zone_name")
        if not any(name.endswith("." + t + ".") for t in tlds):
            raise errors.bad_request("Invalid TLD", "invalid_zone_name")
    if not ctx.is_admin:
        for (pattern,) in s.query(Blacklist.pattern):
            try:
                if re.search(pattern, name):
                    raise errors.bad_request("Blacklisted zone name", "invalid_zone_name")
            except re.error:
                continue
    # A zone inside another project's zone (or around one) is not allowed.
    labels = name.split(".")
    parents = [".".join(labels[i:]) for i in range(1, len(labels) - 1)]
    others = s.query(Zone.id).filter(Zone.project_id != ctx.project_id)
    if parents and others.filter(Zone.name.in_(parents)).first() is not None:
        raise exceptions.Forbidden("Unable to create subzone in another tenants zone",
                                   type_name="illegal_child")
    if others.filter(Zone.name.like("%." + _escape_like(name), escape="\\")).first():
        raise exceptions.Forbidden("Unable to create zone because another tenant owns a "
                                   "subzone of the zone", type_name="illegal_parent")


def create_zone(ctx, body: dict, project_id: str | None = None) -> Zone:
    if not isinstance(body, dict):
        raise errors.bad_request("Provided object does not match schema")
    allowed = {"name", "email", "ttl", "description", "type", "masters", "attributes"}
    if set(body) - allowed:
        raise errors.bad_request("Provided object does not match schema")
    owner = project_id or ctx.project_id
    policy.authorize(ctx, "create_zone", {"project_id": owner})
    name = records.zone_name(body.get("name"))
    kind = body.get("type", "PRIMARY")
    if kind not in ("PRIMARY", "SECONDARY"):
        raise errors.bad_request("Provided object does not match schema")
    masters = body.get("masters", [])
    if kind == "SECONDARY":
        masters = _masters(masters)
        email = body.get("email") or f"hostmaster@{name.rstrip('.')}"
    else:
        if masters:
            raise errors.bad_request("Provided object does not match schema")
        email = body.get("email")
    if not isinstance(email, str) or not EMAIL.match(email) or len(email) > 255:
        raise errors.bad_request("Provided object does not match schema")
    ttl = records.ttl(body.get("ttl", conf().default_ttl), conf().min_ttl, nullable=False)
    description = _description(body.get("description"))
    attributes = body.get("attributes", {})
    if not isinstance(attributes, dict):
        raise errors.bad_request("Provided object does not match schema")
    with db.transaction() as s:
        _check_zone_name(s, ctx, name)
        quotas.check(s, owner, "zones", s.query(Zone).filter_by(project_id=owner).count() + 1)
        if s.query(Zone.id).filter_by(name=name).first() is not None:
            raise errors.duplicate("Zone", "duplicate_zone")
        zone = Zone(id=str(uuid.uuid4()), project_id=owner, name=name, email=email, ttl=ttl,
                    serial=int(time.time()), type=kind, masters=json.dumps(masters),
                    attributes=json.dumps(attributes), description=description)
        s.add(zone)
        s.flush()
        if kind == "PRIMARY":
            s.add(RecordSet(id=str(uuid.uuid4()), zone_id=zone.id, project_id=owner,
                            name=name, type="SOA", records=json.dumps([soa_text(zone)]),
                            managed=True))
            s.add(RecordSet(id=str(uuid.uuid4()), zone_id=zone.id, project_id=owner,
                            name=name, type="NS", managed=True,
                            records=json.dumps(list(conf().ns_records))))
        try:
            s.flush()
        except sa.exc.IntegrityError as error:
            if db.is_duplicate(error):
                raise errors.duplicate("Zone", "duplicate_zone") from None
            raise
    publisher.notify()
    return zone


def _masters(value) -> list[str]:
    if not isinstance(value, list) or not value:
        raise errors.bad_request("Provided object does not match schema")
    out = []
    for item in value:
        host, sep, port = str(item).rpartition(":")
        if not sep:
            host, port = str(item), "53"
        if not host or not port.isdigit() or not 0 < int(port) < 65536 \
                or not isinstance(item, str):
            raise errors.bad_request("Provided object does not match schema")
        out.append(f"{host}:{port}" if sep else host)
    return out


def _description(value):
    if value is not None and (not isinstance(value, str) or len(value) > 160):
        raise errors.bad_request("Provided object does not match schema")
    return value


def list_zones(ctx, filters: dict, all_projects: bool = False) -> list[tuple[Zone, bool]]:
    policy.authorize(ctx, "get_zones", {"project_id": ctx.project_id})
    with db.reader() as s:
        q = s.query(Zone)
        shared_ids = {z for (z,) in s.query(SharedZone.zone_id).filter_by(
            target_project_id=ctx.project_id)}
        if not (all_projects and ctx.is_admin):
            q = q.filter(sa.or_(Zone.project_id == ctx.project_id,
                                Zone.id.in_(shared_ids) if shared_ids else sa.false()))
        for key in ("name", "email", "status", "type", "description"):
            if filters.get(key) is not None:
                q = q.filter(_like(getattr(Zone, key), filters[key]))
        if filters.get("ttl") is not None:
            q = q.filter(Zone.ttl == _int(filters["ttl"]))
        all_shared = {z for (z,) in s.query(SharedZone.zone_id).distinct()}
        return [(z, z.id in all_shared) for z in q.order_by(Zone.created_at, Zone.id)]


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")


def _like(column, value: str):
    """Designate's filters: exact, or * as a wildcard."""
    if "*" in value:
        return column.like(value.replace("%", r"\%").replace("_", r"\_").replace("*", "%"),
                           escape="\\")
    return column == value


def _int(value) -> int:
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f"Invalid value {value!r}", "bad_request") from None


def get_zone(ctx, zone_id: str, all_projects: bool = False) -> tuple[Zone, bool]:
    with db.reader() as s:
        zone = find_zone(s, ctx, zone_id, all_projects)
        return zone, s.query(SharedZone.id).filter_by(zone_id=zone.id).first() is not None


def update_zone(ctx, zone_id: str, body: dict, all_projects: bool = False) -> Zone:
    if not isinstance(body, dict) or set(body) - {"email", "ttl", "description", "masters",
                                                  "attributes"}:
        raise errors.bad_request("Provided object does not match schema")  # name, type...
    with db.transaction() as s:
        zone = find_zone(s, ctx, zone_id, all_projects, "update_zone", shared_ok=False)
        _not_deleting(zone)
        if "email" in body:
            if not isinstance(body["email"], str) or not EMAIL.match(body["email"]):
                raise errors.bad_request("Provided object does not match schema")
            zone.email = body["email"]
        if "ttl" in body:
            zone.ttl = records.ttl(body["ttl"], conf().min_ttl, nullable=False)
        if "description" in body:
            zone.description = _description(body["description"])
        if "masters" in body:
            if zone.type != "SECONDARY":
                raise errors.bad_request("Provided object does not match schema")
            zone.masters = json.dumps(_masters(body["masters"]))
        if "attributes" in body:
            if not isinstance(body["attributes"], dict):
                raise errors.bad_request("Provided object does not match schema")
            zone.attributes = json.dumps(body["attributes"])
        touch(zone)
        _sync_soa(s, zone)
    publisher.notify()
    return zone


def _not_deleting(zone: Zone) -> None:
    if zone.action == "DELETE":
        raise errors.bad_request("Zone is being deleted", "bad_request")


def delete_zone(ctx, zone_id: str, all_projects: bool = False,
                delete_shares: bool = False) -> Zone:
    with db.transaction() as s:
        zone = find_zone(s, ctx, zone_id, all_projects, "delete_zone", shared_ok=False)
        if s.query(Zone.id).filter(Zone.name.like("%." + _escape_like(zone.name),
                                                  escape="\\")).first() is not None:
            raise errors.bad_request("Please delete any subzones before deleting this "
                                     "zone", "zone_has_sub_zone")
        if zone.action != "DELETE":
            shared = s.query(SharedZone).filter_by(zone_id=zone.id)
            if shared.first() is not None:
                if not delete_shares:
                    raise errors.bad_request("Zone is shared with other projects; delete "
                                             "the shares first or use the "
                                             "x-designate-delete-shares header",
                                             "zone_is_shared")
                shared.delete()
            zone.action, zone.status = "DELETE", "PENDING"
            zone.version += 1
            zone.updated_at = utcnow()
    publisher.notify()
    return zone


def transfer_now(ctx, zone_id: str, all_projects: bool = False) -> None:
    """POST /v2/zones/{id}/tasks/xfr: a SECONDARY zone is pulled from its masters again."""
    with db.transaction() as s:
        zone = find_zone(s, ctx, zone_id, all_projects, "xfr_zone", shared_ok=False)
        if zone.type != "SECONDARY":
            raise errors.bad_request("Only SECONDARY zones are transferred",
                                     "bad_request")
        _not_deleting(zone)
        zone.status, zone.version = "PENDING", zone.version + 1
        zone.action = "CREATE" if zone.action == "CREATE" else "UPDATE"
    publisher.notify()


def nameservers(ctx, zone_id: str) -> list[dict]:
    with db.reader() as s:
        find_zone(s, ctx, zone_id, action="get_zone_ns_records")
    return [{"hostname": ns, "priority": i + 1} for i, ns in enumerate(conf().ns_records)]


# --- recordsets -------------------------------------------------------------------------

def _check_placement(s, zone: Zone, name: str, rtype: str, exclude: str | None = None):
    if name != zone.name and not name.endswith("." + zone.name):
        raise errors.bad_request("RecordSet is not contained within it's parent zone",
                                 "invalid_recordset_location")
    for (child,) in s.query(Zone.name).filter(
            Zone.name.like("%." + _escape_like(zone.name), escape="\\")):
        if name == child or name.endswith("." + child):
            raise errors.bad_request("RecordSet belongs in a child zone",
                                     "invalid_recordset_location")
    others = s.query(RecordSet.type).filter(RecordSet.zone_id == zone.id,
                                            RecordSet.name == name)
    if exclude:
        others = others.filter(RecordSet.id != exclude)
    types = {t for (t,) in others}
    if rtype == "CNAME":
        if name == zone.name:
            raise errors.bad_request("CNAME recordsets may not be created at the zone apex.",
                                     "invalid_recordset_location")
        if types - {"CNAME"}:
            raise errors.bad_request("CNAME recordsets may not share a name with any other "
                                     "records", "invalid_recordset_location")
    elif "CNAME" in types:
        raise errors.bad_request("CNAME recordsets may not share a name with any other "
                                 "records", "invalid_recordset_location")
    if rtype in types:
        raise errors.duplicate("RecordSet", "duplicate_recordset")


def create_recordset(ctx, zone_id: str, body: dict, all_projects: bool = False,
                     managed: bool = False) -> tuple[RecordSet, str]:
    if not isinstance(body, dict) or set(body) - {"name", "type", "records", "ttl",
                                                  "description"}:
        raise errors.bad_request("Provided object does not match schema")
    name = records.recordset_name(body.get("name"))
    rtype = body.get("type")
    if not isinstance(rtype, str) or rtype.upper() not in records.TYPES:
        raise errors.bad_request("Provided object does not match schema")
    rtype = rtype.upper()
    if rtype == "SOA":
        raise errors.bad_request("Creating a SOA recordset is not allowed", "bad_request")
    values = records.check_records(rtype, name, body.get("records"))
    ttl = records.ttl(body.get("ttl"), conf().min_ttl)
    description = _description(body.get("description"))
    with db.transaction() as s:
        zone = find_zone(s, ctx, zone_id, all_projects, "create_recordset")
        _not_deleting(zone)
        if zone.type == "SECONDARY" and not managed:
            raise errors.bad_request("Recordsets of a SECONDARY zone come from its masters",
                                     "bad_request")
        if rtype == "NS" and name == zone.name:
            raise errors.bad_request("The zone apex's NS records are the service's",
                                     "bad_request")
        _check_placement(s, zone, name, rtype)
        q = s.query(RecordSet).filter_by(zone_id=zone.id)
        quotas.check(s, zone.project_id, "recordset_records", len(values))
        quotas.check(s, zone.project_id, "zone_recordsets", q.count() + 1)
        total = sum(len(json.loads(r)) for (r,) in q.with_entities(RecordSet.records))
        quotas.check(s, zone.project_id, "zone_records", total + len(values))
        owner = zone.project_id if zone.project_id == ctx.project_id or all_projects \
            else ctx.project_id
        rs = RecordSet(id=str(uuid.uuid4()), zone_id=zone.id, project_id=owner, name=name,
                       type=rtype, ttl=ttl, records=json.dumps(values),
                       description=description, managed=managed)
        s.add(rs)
        touch(zone)
        _sync_soa(s, zone)
        zone_name = zone.name
    publisher.notify()
    return rs, zone_name


def _find_recordset(s, ctx, zone_id: str, rs_id: str, all_projects: bool,
                    action: str) -> tuple[Zone, RecordSet]:
    zone = find_zone(s, ctx, zone_id, all_projects, action)
    rs = s.get(RecordSet, rs_id)
    if rs is None or rs.zone_id != zone.id:
        raise errors.not_found("RecordSet", "recordset_not_found")
    return zone, rs


def get_recordset(ctx, zone_id: str, rs_id: str, all_projects: bool = False):
    with db.reader() as s:
        zone, rs = _find_recordset(s, ctx, zone_id, rs_id, all_projects, "get_recordset")
        return rs, zone.name


def list_recordsets(ctx, zone_id: str | None, filters: dict, all_projects: bool = False):
    with db.reader() as s:
        q = s.query(RecordSet, Zone.name).join(Zone, Zone.id == RecordSet.zone_id)
        if zone_id is not None:
            zone = find_zone(s, ctx, zone_id, all_projects, "get_recordsets")
            q = q.filter(RecordSet.zone_id == zone.id)
        else:
            policy.authorize(ctx, "get_recordsets", {"project_id": ctx.project_id})
            if not (all_projects and ctx.is_admin):
                shared_ids = [z for (z,) in s.query(SharedZone.zone_id).filter_by(
                    target_project_id=ctx.project_id)]
                q = q.filter(sa.or_(Zone.project_id == ctx.project_id,
                                    Zone.id.in_(shared_ids) if shared_ids else sa.false()))
        for key in ("name", "type", "status", "description"):
            if filters.get(key) is not None:
                value = filters[key].upper() if key == "type" else filters[key]
                q = q.filter(_like(getattr(RecordSet, key), value))
        if filters.get("ttl") is not None:
            q = q.filter(RecordSet.ttl == _int(filters["ttl"]))
        out = q.order_by(RecordSet.created_at, RecordSet.id).all()
        if filters.get("data") is not None:
            out = [(rs, zn) for rs, zn in out
                   if any(_matches(v, filters["data"]) for v in json.loads(rs.records))]
        return out


def _matches(value: str, pattern: str) -> bool:
    if "*" not in pattern:
        return value == pattern
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), value) is not None


def update_recordset(ctx, zone_id: str, rs_id: str, body: dict, all_projects: bool = False):
    if not isinstance(body, dict) or set(body) - {"records", "ttl", "description"}:
        raise errors.bad_request("Provided object does not match schema")
    with db.transaction() as s:
        zone, rs = _find_recordset(s, ctx, zone_id, rs_id, all_projects, "update_recordset")
        _not_deleting(zone)
        if rs.managed and not ctx.is_service:
            raise errors.bad_request("Managed records may not be updated", "bad_request")
        if rs.project_id != ctx.project_id and zone.project_id != ctx.project_id \
                and not all_projects:
            raise errors.forbidden()
        if "records" in body:
            values = records.check_records(rs.type, rs.name, body["records"])
            quotas.check(s, zone.project_id, "recordset_records", len(values))
            q = s.query(RecordSet.records).filter(RecordSet.zone_id == zone.id,
                                                  RecordSet.id != rs.id)
            total = sum(len(json.loads(r)) for (r,) in q)
            quotas.check(s, zone.project_id, "zone_records", total + len(values))
            rs.records = json.dumps(values)
        if "ttl" in body:
            rs.ttl = records.ttl(body["ttl"], conf().min_ttl)
        if "description" in body:
            rs.description = _description(body["description"])
        rs.status, rs.action = "PENDING", "CREATE" if rs.action == "CREATE" else "UPDATE"
        rs.version += 1
        rs.updated_at = utcnow()
        touch(zone)
        _sync_soa(s, zone)
        zone_name = zone.name
    publisher.notify()
    return rs, zone_name


def delete_recordset(ctx, zone_id: str, rs_id: str, all_projects: bool = False,
                     managed: bool = False):
    with db.transaction() as s:
        zone, rs = _find_recordset(s, ctx, zone_id, rs_id, all_projects, "delete_recordset")
        _not_deleting(zone)
        if rs.managed and not managed:
            raise errors.bad_request("Managed records may not be deleted", "bad_request")
        if rs.project_id != ctx.project_id and zone.project_id != ctx.project_id \
                and not all_projects:
            raise errors.forbidden()
        s.delete(rs)
        rs.status, rs.action = "PENDING", "DELETE"
        rs.version += 1
        rs.updated_at = utcnow()
        touch(zone)
        _sync_soa(s, zone)
        zone_name = zone.name
    publisher.notify()
    return rs, zone_name
