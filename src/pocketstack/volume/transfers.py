"""Volume transfers, as cinder's transfer API (cinder/transfer/api.py): the owner offers an
available volume, which waits in ``awaiting-transfer``; whoever accepts with the auth key
(shown once, at create) takes the volume - and its snapshots unless ``no_snapshots``
(3.55) - into their own project. Quota moves with it: usage is counted from the rows, so
moving them moves it, after the accepting project's limits are checked.

Only the source project (and admins) see an offer; accepting needs its id and key only.
Deleting an offer gives the volume back its ``available`` status.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.volume import api, quotas, validation
from pocketstack.volume.models import Snapshot, Volume, VolumeTransfer

SALT_LENGTH, KEY_LENGTH = 8, 16  # cinder's volume_transfer_salt/key_length
SORT_KEYS = ("id", "name", "created_at", "updated_at", "volume_id")


class TransferNotFound(exceptions.NotFound):
    def __init__(self, transfer_id):
        super().__init__(f"Transfer {transfer_id} could not be found.")


def _random_hex(length: int) -> str:
    return hashlib.sha224(os.urandom(255)).hexdigest()[:length]


def _crypt_hash(salt: str, auth_key) -> str:
    return hmac.new(salt.encode(), str(auth_key).encode(), hashlib.sha1).hexdigest()


def _visible(s, ctx, transfer_id: str) -> VolumeTransfer:
    row = s.get(VolumeTransfer, transfer_id) if isinstance(transfer_id, str) else None
    if row is None or (row.source_project_id != ctx.project_id and not ctx.is_admin):
        raise TransferNotFound(transfer_id)
    return row


# --- views (cinder/api/views/transfers.py) -----------------------------------------------


def _links(base: str, project_id: str, transfer_id: str) -> list[dict]:
    return [{"href": f"{base}/v3/{project_id}/os-volume-transfer/{transfer_id}",
             "rel": "self"},
            {"href": f"{base}/{project_id}/os-volume-transfer/{transfer_id}",
             "rel": "bookmark"}]


def summary_view(row: VolumeTransfer, ctx, base: str) -> dict:
    return {"id": row.id, "volume_id": row.volume_id, "name": row.name,
            "links": _links(base, ctx.project_id, row.id)}


def detail_view(row: VolumeTransfer, ctx, base: str, version: tuple[int, int],
                auth_key: str | None = None) -> dict:
    out = {"id": row.id, "created_at": isotime_naive(row.created_at), "name": row.name,
           "volume_id": row.volume_id}
    if auth_key is not None:  # only the create's answer carries the key
        out["auth_key"] = auth_key
    out["links"] = _links(base, ctx.project_id, row.id)
    if version >= (3, 55):
        out["no_snapshots"] = row.no_snapshots
    if version >= (3, 57):
        out.update(destination_project_id=row.destination_project_id,
                   source_project_id=row.source_project_id, accepted=row.accepted)
    return out


# --- create, read, delete ----------------------------------------------------------------


def create(ctx, body, *, with_no_snapshots: bool) -> tuple[VolumeTransfer, str]:
    """The new offer and its auth key. ``with_no_snapshots``: the request may say
    ``no_snapshots`` (/volume-transfers at 3.55+; os-volume-transfer never)."""
    data = validation.obj(body, "transfer")
    allowed = ("volume_id", "name") + (("no_snapshots",) if with_no_snapshots else ())
    validation.only(data, allowed, "transfer")
    if "volume_id" not in data:
        raise validation.bad("Invalid input for field/attribute transfer. 'volume_id' is a "
                             "required property")
    volume_id = validation.uuid_like(data["volume_id"], "volume_id")
    name = validation.text(data.get("name"), "name")
    name = name.strip() if name is not None else None
    no_snapshots = validation.boolean(data.get("no_snapshots", False), "no_snapshots")
    salt, auth_key = _random_hex(SALT_LENGTH), _random_hex(KEY_LENGTH)
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:create_transfer", api.target(volume))
        if volume.status != "available":
            raise api.InvalidVolume("status must be available")
        if volume.group_id:  # the group stays in its project (cinder: consistency groups)
            raise api.InvalidVolume(f"Volume {volume.id} must not be part of a group.")
        if not no_snapshots:
            for snap in s.scalars(sa.select(Snapshot).where(Snapshot.volume_id == volume.id)):
                if snap.status != "available":
                    raise exceptions.BadRequest(f"Invalid snapshot: snapshot: {snap.id} "
                                                "status must be available")
        row = VolumeTransfer(id=str(uuid.uuid4()), volume_id=volume.id, name=name,
                             salt=salt, crypt_hash=_crypt_hash(salt, auth_key),
                             no_snapshots=no_snapshots,
                             source_project_id=volume.project_id, accepted=False,
                             created_at=utcnow())
        s.add(row)
        volume.status, volume.updated_at = "awaiting-transfer", utcnow()
        s.flush()
        s.expunge(row)
    return row, auth_key


def get(ctx, transfer_id: str) -> VolumeTransfer:
    policy.authorize(ctx, "volume:get_transfer")
    with db.reader() as s:
        return _visible(s, ctx, transfer_id)


def list_transfers(ctx, query, *, paginated: bool) -> list[VolumeTransfer]:
    """The caller's project's offers (every project's for an admin with all_tenants);
    ``paginated`` (3.59 /volume-transfers): cinder's sort and marker parameters."""
    policy.authorize(ctx, "volume:get_all_transfers")
    stmt = sa.select(VolumeTransfer)
    all_projects = ctx.is_admin and validation.boolean(
        query.get("all_tenants", "0") or "1", "all_tenants")
    if not all_projects:
        stmt = stmt.where(VolumeTransfer.source_project_id == ctx.project_id)
    for key in ("name", "volume_id", "id"):
        if query.get(key) is not None:
            stmt = stmt.where(getattr(VolumeTransfer, key) == query[key])
    with db.reader() as s:
        found = list(s.scalars(stmt))
    limit, marker, offset = api.limit_marker(query)
    if paginated:
        keys = api.sort_params(query, SORT_KEYS)
    else:  # before 3.59: oldest first, and no marker
        keys, marker = [("created_at", "asc")], None
    return api.paginate(found, keys, marker, limit, offset, getattr,
                        missing=TransferNotFound)


def delete(ctx, transfer_id: str) -> None:
    with db.transaction() as s:
        row = _visible(s, ctx, transfer_id)
        volume = s.get(Volume, row.volume_id)
        policy.authorize(ctx, "volume:delete_transfer", api.target(volume))
        if volume.status == "awaiting-transfer":
            volume.status, volume.updated_at = "available", utcnow()
        s.delete(row)


# --- accept ------------------------------------------------------------------------------


def accept(ctx, transfer_id: str, body) -> tuple[VolumeTransfer, str]:
    """Move the volume (and its snapshots unless the offer says no_snapshots) into the
    caller's project; 400 for a wrong key, 413 when the caller's quota cannot take it."""
    policy.authorize(ctx, "volume:accept_transfer")
    data = validation.obj(body, "accept")
    validation.only(data, ("auth_key",), "accept")
    key = data.get("auth_key")
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        raise validation.bad(f"Invalid input for field/attribute auth_key. Value: {key!r}. "
                             f"{key!r} is not of type 'string', 'integer'")
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        quotas.lock(s, ctx.project_id)
        row = s.get(VolumeTransfer, transfer_id)
        if row is None:
            raise TransferNotFound(transfer_id)
        if not hmac.compare_digest(_crypt_hash(row.salt, key), row.crypt_hash):
            raise exceptions.BadRequest(f"Invalid auth key: Attempt to transfer "
                                        f"{transfer_id} with invalid auth key.")
        volume = s.scalar(sa.select(Volume).where(Volume.id == row.volume_id)
                          .with_for_update(of=Volume))
        if volume.status != "awaiting-transfer":
            raise api.InvalidVolume(f"Volume {volume.id} status must be awaiting-transfer, "
                                    f"but current status is: {volume.status}.")
        snaps = [] if row.no_snapshots else list(s.scalars(
            sa.select(Snapshot).where(Snapshot.volume_id == volume.id)))
        type_name = volume.volume_type.name
        if volume.project_id != ctx.project_id:
            quotas.check(s, ctx.project_id, type_name, volumes=1, gigabytes=volume.size)
            if snaps:
                quotas.check(s, ctx.project_id, type_name, snapshots=len(snaps),
                             gigabytes=volume.size + sum(sn.size for sn in snaps))
        now = utcnow()
        volume.project_id, volume.user_id = ctx.project_id, ctx.user_id
        volume.status, volume.updated_at = "available", now
        for snap in snaps:
            snap.project_id, snap.user_id, snap.updated_at = ctx.project_id, ctx.user_id, now
        row.accepted, row.destination_project_id = True, ctx.project_id
        s.flush()
        s.expunge(row)
        s.delete(s.get(VolumeTransfer, transfer_id))
    return row, volume.id
