"""Zone transfers between projects (designate's transfer_requests and transfer_accepts):
the owner offers a zone, to one project or to whoever has the key; accepting it moves
the zone and its recordsets to the accepting project."""
from __future__ import annotations

import secrets
import string
import uuid

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.dns import api, errors, publisher, quotas
from pocketstack.dns.models import RecordSet, SharedZone, TransferAccept, TransferRequest, Zone

KEY_ALPHABET = string.ascii_uppercase + string.digits


def request_view(row: TransferRequest, zone_name: str, show_key: bool) -> dict:
    return {"id": row.id, "zone_id": row.zone_id, "zone_name": zone_name,
            "project_id": row.project_id, "target_project_id": row.target_project_id,
            "key": row.key if show_key else None, "description": row.description,
            "status": row.status, "created_at": isotime_naive(row.created_at),
            "updated_at": isotime_naive(row.updated_at)}


def accept_view(row: TransferAccept) -> dict:
    return {"id": row.id, "zone_transfer_request_id": row.transfer_request_id,
            "zone_id": row.zone_id, "project_id": row.project_id, "status": row.status,
            "key": None, "created_at": isotime_naive(row.created_at),
            "updated_at": isotime_naive(row.updated_at)}


def _target(body) -> tuple[str | None, str | None]:
    if body is None:
        body = {}
    if not isinstance(body, dict) or set(body) - {"target_project_id", "description"}:
        raise errors.bad_request("Provided object does not match schema")
    target, description = body.get("target_project_id"), body.get("description")
    for value in (target, description):
        if value is not None and (not isinstance(value, str) or len(value) > 160):
            raise errors.bad_request("Provided object does not match schema")
    return target, description


def create_request(ctx, zone_id: str, body) -> tuple[TransferRequest, str]:
    target, description = _target(body)
    with db.transaction() as s:
        zone = api.find_zone(s, ctx, zone_id, action="create_zone_transfer_request",
                             shared_ok=False)
        if zone.action == "DELETE":
            raise errors.bad_request("Zone is being deleted", "bad_request")
        if s.query(SharedZone.id).filter_by(zone_id=zone.id).first() is not None:
            raise errors.bad_request("Zone is shared; delete its shares before transferring "
                                     "it", "zone_is_shared")
        row = TransferRequest(id=str(uuid.uuid4()), zone_id=zone.id,
                              project_id=zone.project_id, target_project_id=target,
                              key="".join(secrets.choice(KEY_ALPHABET) for _ in range(8)),
                              description=description)
        s.add(row)
        return row, zone.name


def _visible(ctx, row: TransferRequest) -> bool:
    return (row.project_id == ctx.project_id or ctx.is_admin
            or row.target_project_id in (None, ctx.project_id))


def _request(s, ctx, request_id: str) -> TransferRequest:
    row = s.get(TransferRequest, request_id)
    if row is None or not _visible(ctx, row):
        raise errors.not_found("ZoneTransferRequest", "zone_transfer_request_not_found")
    return row


def list_requests(ctx) -> list[tuple[TransferRequest, str]]:
    policy.authorize(ctx, "find_zone_transfer_requests", {})
    with db.reader() as s:
        rows = s.query(TransferRequest, Zone.name).join(Zone, Zone.id == TransferRequest.zone_id)
        return [(r, n) for r, n in rows.order_by(TransferRequest.created_at)
                if r.status == "ACTIVE" and (r.project_id == ctx.project_id
                                             or r.target_project_id == ctx.project_id)]


def get_request(ctx, request_id: str) -> tuple[TransferRequest, str]:
    policy.authorize(ctx, "get_zone_transfer_request", {})
    with db.reader() as s:
        row = _request(s, ctx, request_id)
        return row, s.get(Zone, row.zone_id).name


def update_request(ctx, request_id: str, body) -> tuple[TransferRequest, str]:
    target, description = _target(body)
    with db.transaction() as s:
        row = _request(s, ctx, request_id)
        policy.authorize(ctx, "update_zone_transfer_request", {"project_id": row.project_id})
        if "target_project_id" in body:
            row.target_project_id = target
        if "description" in body:
            row.description = description
        row.updated_at = utcnow()
        return row, s.get(Zone, row.zone_id).name


def delete_request(ctx, request_id: str) -> None:
    with db.transaction() as s:
        row = _request(s, ctx, request_id)
        policy.authorize(ctx, "delete_zone_transfer_request", {"project_id": row.project_id})
        s.delete(row)


def accept(ctx, body) -> TransferAccept:
    if not isinstance(body, dict) or set(body) - {"key", "zone_transfer_request_id"} \
            or not all(isinstance(body.get(k), str) for k in ("key",
                                                              "zone_transfer_request_id")):
        raise errors.bad_request("Provided object does not match schema")
    policy.authorize(ctx, "create_zone_transfer_accept", {"project_id": ctx.project_id})
    with db.transaction() as s:
        request = _request(s, ctx, body["zone_transfer_request_id"])
        if request.status != "ACTIVE":
            raise errors.bad_request("Zone transfer request is no longer active",
                                     "bad_request")
        if not secrets.compare_digest(request.key, body["key"]):
            raise exceptions.Forbidden("Incorrect key", type_name="invalid_key")
        zone = s.get(Zone, request.zone_id)
        if zone is None or zone.project_id != request.project_id:
            # offered by an earlier owner: the zone has moved since
            raise errors.bad_request("Zone transfer request is no longer active",
                                     "bad_request")
        quotas.check(s, ctx.project_id, "zones",
                     s.query(Zone).filter_by(project_id=ctx.project_id).count() + 1)
        zone.project_id = ctx.project_id
        zone.transferred_at = utcnow()
        api.touch(zone)
        s.query(RecordSet).filter_by(zone_id=zone.id).update({"project_id": ctx.project_id})
        request.status, request.updated_at = "COMPLETE", utcnow()
        # the previous owner's other offers of this zone go with its ownership
        s.query(TransferRequest).filter(TransferRequest.zone_id == zone.id,
                                        TransferRequest.id != request.id,
                                        TransferRequest.status == "ACTIVE").delete()
        row = TransferAccept(id=str(uuid.uuid4()), project_id=ctx.project_id,
                             transfer_request_id=request.id, zone_id=zone.id)
        s.add(row)
    publisher.notify()
    return row


def list_accepts(ctx) -> list[TransferAccept]:
    policy.authorize(ctx, "find_zone_transfer_accepts", {"project_id": ctx.project_id})
    with db.reader() as s:
        q = s.query(TransferAccept)
        if not ctx.is_admin:
            q = q.filter_by(project_id=ctx.project_id)
        return q.order_by(TransferAccept.created_at).all()


def get_accept(ctx, accept_id: str) -> TransferAccept:
    with db.reader() as s:
        row = s.get(TransferAccept, accept_id)
        if row is None or (row.project_id != ctx.project_id and not ctx.is_admin):
            raise errors.not_found("ZoneTransferAccept", "zone_transfer_accept_not_found")
        policy.authorize(ctx, "get_zone_transfer_accept", {"project_id": row.project_id})
        return row
