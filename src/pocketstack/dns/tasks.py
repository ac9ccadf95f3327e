"""Zone exports and imports (designate's zone tasks). Both finish within the request:
an export's zone file is rendered when fetched (designate's ``designate://`` location),
an import parses the zone file (dnspython) and creates the zone and its recordsets in one
transaction, or nothing (status ERROR, with the reason in ``message``)."""
from __future__ import annotations

import json
import uuid

import dns.exception
import dns.name
import dns.rdatatype
import dns.zone

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.dns import api, errors, publisher, quotas
from pocketstack.dns.models import RecordSet, Zone, ZoneTask


def view(row: ZoneTask) -> dict:
    out = {"id": row.id, "zone_id": row.zone_id, "project_id": row.project_id,
           "status": row.status, "message": row.message, "version": row.version,
           "created_at": isotime_naive(row.created_at),
           "updated_at": isotime_naive(row.updated_at)}
    if row.kind == "export":
        out["location"] = f"designate://v2/zones/tasks/exports/{row.id}/export"
    return out


def create_export(ctx, zone_id: str) -> ZoneTask:
    with db.transaction() as s:
        zone = api.find_zone(s, ctx, zone_id, action="create_zone_export")
        count = s.query(RecordSet).filter_by(zone_id=zone.id).count()
        limit = quotas.limits(s, zone.project_id)["api_export_size"]
        ok = limit < 0 or count <= limit
        row = ZoneTask(id=str(uuid.uuid4()), kind="export", project_id=ctx.project_id,
                       zone_id=zone.id, status="COMPLETE" if ok else "ERROR",
                       message=None if ok else f"Zone is too large to export "
                                              f"({count} recordsets, at most {limit})",
                       updated_at=utcnow())
        s.add(row)
        return row


def _task(s, ctx, kind: str, task_id: str) -> ZoneTask:
    row = s.get(ZoneTask, task_id)
    if row is None or row.kind != kind or (row.project_id != ctx.project_id
                                           and not ctx.is_admin):
        raise errors.not_found(f"Zone{kind.title()}", f"zone_{kind}_not_found")
    return row


def listing(ctx, kind: str) -> list[ZoneTask]:
    policy.authorize(ctx, f"get_zone_{kind}s", {"project_id": ctx.project_id})
    with db.reader() as s:
        return s.query(ZoneTask).filter_by(kind=kind, project_id=ctx.project_id).order_by(
            ZoneTask.created_at).all()


def get(ctx, kind: str, task_id: str) -> ZoneTask:
    with db.reader() as s:
        row = _task(s, ctx, kind, task_id)
        policy.authorize(ctx, f"get_zone_{kind}", {"project_id": row.project_id})
        return row


def delete(ctx, kind: str, task_id: str) -> None:
    with db.transaction() as s:
        row = _task(s, ctx, kind, task_id)
        policy.authorize(ctx, f"delete_zone_{kind}", {"project_id": row.project_id})
        s.delete(row)


def zone_file(ctx, task_id: str) -> str:
    """The exported zone, in designate's export format."""
    with db.reader() as s:
        row = _task(s, ctx, "export", task_id)
        if row.status != "COMPLETE":
            raise errors.not_found("ZoneExport", "zone_export_not_found")
        zone = s.get(Zone, row.zone_id)
        if zone is None:
            raise errors.not_found("Zone", "zone_not_found")
        lines = [f"$ORIGIN {zone.name}", f"$TTL {zone.ttl}", ""]
        order = {"SOA": 0, "NS": 1}
        rows = sorted(s.query(RecordSet).filter_by(zone_id=zone.id),
                      key=lambda r: (order.get(r.type, 2), r.name, r.type))
        for rs in rows:
            ttl = f"{rs.ttl} " if rs.ttl is not None else ""
            for text in json.loads(rs.records):
                lines.append(f"{rs.name} {ttl}IN {rs.type} {text}")
        return "\n".join(lines) + "\n"


def create_import(ctx, content_type: str, body: bytes) -> ZoneTask:
    policy.authorize(ctx, "create_zone_import", {"project_id": ctx.project_id})
    if (content_type or "").split(";")[0].strip().lower() != "text/dns":
        raise exceptions.UnsupportedMediaType("Zone imports need Content-Type text/dns",
                                              type_name="unsupported_content_type")
    row = ZoneTask(id=str(uuid.uuid4()), kind="import", project_id=ctx.project_id)
    try:
        zone_id, name = _import(ctx, body)
        row.zone_id, row.status, row.message = zone_id, "COMPLETE", f"{name} imported"
    except exceptions.PocketstackError as error:
        row.status, row.message = "ERROR", error.message
    except (dns.exception.DNSException, UnicodeDecodeError, ValueError, TypeError) as error:
        # TypeError: dnspython's transaction on what it cannot add; the import fails as
        # designate's does, never as a 500
        row.status, row.message = "ERROR", f"An undefined error occurred. {error}"
    row.updated_at = utcnow()
    with db.transaction() as s:
        s.add(row)
    publisher.notify()
    return row


def _import(ctx, body: bytes) -> tuple[str, str]:
    # $GENERATE would let a few bytes make millions of records, $INCLUDE read a file of
    # this machine: designate's importer takes neither
    parsed = dns.zone.from_text(body.decode(), relativize=False, check_origin=True,
                                allow_directives={"$ORIGIN", "$TTL"})
    origin = parsed.origin.to_text()
    soa = parsed.get_rdataset(parsed.origin, dns.rdatatype.SOA)[0]
    local, _, domain = soa.rname.to_text().partition(".")
    with db.transaction():  # the zone and every recordset, or nothing
        zone = api.create_zone(ctx, {"name": origin, "email": f"{local}@{domain.rstrip('.')}",
                                     "ttl": parsed.get_rdataset(parsed.origin,
                                                                dns.rdatatype.SOA).ttl})
        for name, rdataset in parsed.iterate_rdatasets():
            rtype = dns.rdatatype.to_text(rdataset.rdtype)
            if rtype == "SOA" or (rtype == "NS" and name == parsed.origin):
                continue
            api.create_recordset(ctx, zone.id, {
                "name": name.to_text(), "type": rtype, "ttl": rdataset.ttl,
                "records": [rd.to_text() for rd in rdataset]})
    return zone.id, origin
