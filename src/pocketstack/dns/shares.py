"""Shared zones (designate's /v2/zones/{id}/shares): the owner lets another project see
the zone and create recordsets in it; those recordsets are that project's."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db, policy
from pocketstack.common.timeutils import isotime_naive
from pocketstack.dns import api, errors
from pocketstack.dns.models import RecordSet, SharedZone, TransferRequest


def view(row: SharedZone) -> dict:
    return {"id": row.id, "zone_id": row.zone_id, "project_id": row.project_id,
            "target_project_id": row.target_project_id,
            "created_at": isotime_naive(row.created_at),
            "updated_at": isotime_naive(row.updated_at)}


def create(ctx, zone_id: str, body) -> SharedZone:
    if not isinstance(body, dict) or set(body) != {"target_project_id"} \
            or not isinstance(body["target_project_id"], str) \
            or not 0 < len(body["target_project_id"]) <= 64:
        raise errors.bad_request("Provided object does not match schema")
    target = body["target_project_id"]
    try:
        with db.transaction() as s:
            zone = api.find_zone(s, ctx, zone_id, action="share_zone", shared_ok=False)
            if target == zone.project_id:
                raise errors.bad_request("Cannot share the zone with the zone owner.",
                                         "bad_request")
            if s.query(TransferRequest.id).filter_by(zone_id=zone.id,
                                                     status="ACTIVE").first():
                # a transfer would carry the share to the new owner under the old one's name
                raise errors.bad_request("Zone has an active transfer request; delete it "
                                         "before sharing the zone", "bad_request")
            if s.query(SharedZone.id).filter_by(zone_id=zone.id,
                                                target_project_id=target).first():
                raise errors.duplicate("SharedZone", "duplicate_zone_share")
            row = SharedZone(id=str(uuid.uuid4()), zone_id=zone.id,
                             project_id=zone.project_id, target_project_id=target)
            s.add(row)
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            raise errors.duplicate("SharedZone", "duplicate_zone_share") from None
        raise
    return row


def listing(ctx, zone_id: str) -> list[SharedZone]:
    with db.reader() as s:
        zone = api.find_zone(s, ctx, zone_id, action="find_zone_shares")
        q = s.query(SharedZone).filter_by(zone_id=zone.id)
        if zone.project_id != ctx.project_id and not ctx.is_admin:
            q = q.filter_by(target_project_id=ctx.project_id)
        return q.order_by(SharedZone.created_at).all()


def _share(s, ctx, zone_id: str, share_id: str):
    zone = api.find_zone(s, ctx, zone_id, action="get_zone_share")
    row = s.get(SharedZone, share_id)
    if row is None or row.zone_id != zone.id or (
            zone.project_id != ctx.project_id and row.target_project_id != ctx.project_id):
        raise errors.not_found("SharedZone", "shared_zone_not_found")
    return zone, row


def get(ctx, zone_id: str, share_id: str) -> SharedZone:
    with db.reader() as s:
        return _share(s, ctx, zone_id, share_id)[1]


def delete(ctx, zone_id: str, share_id: str) -> None:
    with db.transaction() as s:
        zone, row = _share(s, ctx, zone_id, share_id)
        policy.authorize(ctx, "unshare_zone", {"project_id": zone.project_id})
        if zone.project_id != ctx.project_id and not ctx.is_admin:
            raise errors.forbidden()
        # designate refuses while the other project still has recordsets in the zone
        if s.query(RecordSet.id).filter_by(zone_id=zone.id,
                                           project_id=row.target_project_id).first():
            raise errors.bad_request("Cannot unshare a zone while the project still has "
                                     "recordsets in it", "zone_share_in_use")
        s.delete(row)
