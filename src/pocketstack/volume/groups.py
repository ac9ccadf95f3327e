"""Generic volume groups (cinder 3.13/3.14): a group holds volumes of the volume types it
names, is snapshotted as a whole (group_snapshots.py), and can be made from a group
snapshot or another group (create-from-src). A group is a record only - no backend here
keeps consistency groups - so it is ``available`` as soon as it is created. A volume
joins one with ``group_id`` at create or through the group's update (add_volumes /
remove_volumes); the group's delete with ``delete-volumes`` deletes its volumes.
"""
from __future__ import annotations

import threading
import time
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy, runtime
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.volume import api, group_types, quotas, types, validation, visible
from pocketstack.volume.models import GroupSnapshot, Snapshot, Volume, VolumeGroup

STATUSES = ("available", "creating", "deleting", "error", "error_deleting", "updating",
            "in-use")
SORT_KEYS = ("id", "name", "status", "created_at", "updated_at")





def target(group: VolumeGroup) -> dict:
    return {"project_id": group.project_id, "user_id": group.user_id}


def view(group: VolumeGroup, ctx, version: tuple[int, int], volume_ids=None) -> dict:
    out = {"id": group.id, "status": group.status,
           "availability_zone": group.availability_zone,
           "created_at": isotime_naive(group.created_at), "name": group.name,
           "description": group.description, "group_type": group.group_type_id,
           "volume_types": list(group.volume_type_ids or [])}
    if version >= (3, 14):
        out.update(group_snapshot_id=group.group_snapshot_id,
                   source_group_id=group.source_group_id)
    if version >= (3, 25) and volume_ids is not None:
        out["volumes"] = volume_ids
    if version >= (3, 38):
        out["replication_status"] = "disabled"
    if version >= (3, 58) and policy.check(ctx, "group:group_project_attribute"):
        out["project_id"] = group.project_id
    return out


def volume_ids(group_id: str) -> list[str]:
    with db.reader() as s:
        return list(s.scalars(sa.select(Volume.id).where(Volume.group_id == group_id)
                              .order_by(Volume.created_at)))


def _check_group_quota(s, project_id: str) -> None:
    quotas.lock(s, project_id)
    limit = quotas.limits(project_id)["groups"]
    used = s.scalar(sa.select(sa.func.count()).select_from(VolumeGroup)
                    .where(VolumeGroup.project_id == project_id))
    if 0 <= limit < used + 1:
        raise quotas.OverLimit(f"GroupLimitExceeded: Maximum number of groups allowed "
                               f"({limit}) exceeded")


def _text(data: dict, key: str) -> str | None:
    value = validation.text(data.get(key), key)
    return value.strip() if value else value


def _zone(value) -> str:
    zone = value or config.CONF.volume.storage_availability_zone
    if zone != config.CONF.volume.storage_availability_zone:
        raise exceptions.BadRequest(f"Invalid input received: Availability zone "
                                    f"'{str(zone)[:255]}' is invalid.")
    return zone


# --- create ------------------------------------------------------------------------------


def create(ctx, body) -> VolumeGroup:
    policy.authorize(ctx, "group:create")
    data = validation.obj(body, "group")
    validation.only(data, ("description", "group_type", "name", "volume_types",
                           "availability_zone"), "group")
    for key in ("group_type", "volume_types"):
        if key not in data:
            raise validation.bad(f"Invalid input for field/attribute group. '{key}' is a "
                                 "required property")
    wanted = data["volume_types"]
    if not isinstance(wanted, list) or not wanted or len(set(map(str, wanted))) != len(
            wanted) or not all(isinstance(v, str) and 0 < len(v) <= 255 for v in wanted):
        raise validation.bad("Invalid input for field/attribute volume_types: a non-empty "
                             "list of distinct volume type names or ids is required.")
    type_ref = validation.text(data["group_type"], "group_type", nullable=False)
    name, description = _text(data, "name"), _text(data, "description")
    zone = _zone(data.get("availability_zone"))
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        gtype = group_types.find(s, ctx, type_ref)
        type_ids = [types.find(s, ctx, ref).id for ref in wanted]
        _check_group_quota(s, ctx.project_id)
        group = VolumeGroup(id=str(uuid.uuid4()), project_id=ctx.project_id,
                            user_id=ctx.user_id, name=name, description=description,
                            status="available", availability_zone=zone,
                            group_type_id=gtype.id, volume_type_ids=type_ids,
                            created_at=utcnow())
        s.add(group)
        s.flush()
        s.expunge(group)
    return group


def create_from_src(ctx, body) -> VolumeGroup:
    """A new group with a volume for each snapshot of a group snapshot, or a clone of each
    volume of a group."""
    policy.authorize(ctx, "group:create")
    data = validation.obj(body, "create-from-src")
    validation.only(data, ("name", "description", "group_snapshot_id", "source_group_id"),
                    "create-from-src")
    # openstacksdk sends the source it does not use as null (cinder's schema refuses that)
    data = {k: v for k, v in data.items() if v is not None}
    if ("group_snapshot_id" in data) == ("source_group_id" in data):
        raise validation.bad("Invalid input for field/attribute create-from-src: exactly "
                             "one of group_snapshot_id and source_group_id is required.")
    name, description = _text(data, "name"), _text(data, "description")
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        if "group_snapshot_id" in data:
            source = visible.group_snapshot(s, ctx, data["group_snapshot_id"])
            if visible.group_snapshot_status(s, source) != "available":
                raise exceptions.BadRequest(f"Invalid GroupSnapshot: Group snapshot "
                                            f"{source.id} status must be available.")
            origin = s.get(VolumeGroup, source.group_id)
            members = [("snapshot_id", sn.id, s.get(Volume, sn.volume_id))
                       for sn in s.scalars(sa.select(Snapshot).where(
                           Snapshot.group_snapshot_id == source.id))]
        else:
            origin = visible.group(s, ctx, data["source_group_id"])
            if origin.status != "available":
                raise exceptions.BadRequest(f"Invalid Group: Source group {origin.id} "
                                            "status must be available.")
            members = [("source_volid", v.id, v) for v in s.scalars(
                sa.select(Volume).where(Volume.group_id == origin.id))]
        _check_group_quota(s, ctx.project_id)
        group = VolumeGroup(id=str(uuid.uuid4()), project_id=ctx.project_id,
                            user_id=ctx.user_id, name=name, description=description,
                            status="creating", availability_zone=origin.availability_zone,
                            group_type_id=origin.group_type_id,
                            volume_type_ids=list(origin.volume_type_ids or []),
                            group_snapshot_id=data.get("group_snapshot_id"),
                            source_group_id=data.get("source_group_id"),
                            created_at=utcnow())
        s.add(group)
        members = [(key, ident, vol.volume_type_id, vol.size) for key, ident, vol in members]
    made = []
    try:
        for key, ident, type_id, size in members:
            volume = api.create_volume(ctx, {"volume": {key: ident, "volume_type": type_id,
                                                        "size": size}})
            made.append(volume.id)
            with db.transaction() as s:
                s.get(Volume, volume.id).group_id = group.id
    except BaseException:
        _set_group_status(group.id, "error")
        raise
    # As cinder: the group is available once its volumes are (a client that waits for it
    # may then delete the snapshots they were made from), error if one of them failed.
    threading.Thread(target=runtime.bind(_settle), args=(group.id, made),
                     name=f"group-{group.id[:8]}", daemon=True).start()
    return get(ctx, group.id)


SETTLE_TIMEOUT = 3600.0  # s: a group's volumes still creating after this make it error


def _settle(group_id: str, volume_ids: list[str]) -> None:
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while True:
        with db.reader() as s:
            statuses = [getattr(s.get(Volume, v), "status", "deleted") for v in volume_ids]
        if "creating" not in statuses or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    _set_group_status(group_id, "available" if all(st == "available" for st in statuses)
                      else "error")


def _set_group_status(group_id: str, status: str) -> None:
    with db.transaction() as s:
        row = s.get(VolumeGroup, group_id)
        if row is not None and row.status == "creating":
            row.status, row.updated_at = status, utcnow()


# --- read --------------------------------------------------------------------------------


def get(ctx, group_id: str) -> VolumeGroup:
    with db.reader() as s:
        group = visible.group(s, ctx, group_id)
        policy.authorize(ctx, "group:get", target(group))
        return group


def list_groups(ctx, query) -> list[VolumeGroup]:
    policy.authorize(ctx, "group:get_all")
    keys = api.sort_params(query, SORT_KEYS)
    limit, marker, offset = api.limit_marker(query)
    stmt = sa.select(VolumeGroup)
    if not (ctx.is_admin and validation.boolean(query.get("all_tenants", "0") or "1",
                                                "all_tenants")):
        stmt = stmt.where(VolumeGroup.project_id == ctx.project_id)
    for key in ("name", "status", "group_type_id"):
        if query.get(key):
            stmt = stmt.where(getattr(VolumeGroup, key) == query[key])
    with db.reader() as s:
        found = list(s.scalars(stmt))
    return api.paginate(found, keys, marker, limit, offset, getattr, missing=visible.GroupNotFound)


# --- update ------------------------------------------------------------------------------


def _ids(value, key: str) -> list[str]:
    text = validation.text(value, key, max_length=65535) or ""
    return [v.strip() for v in text.split(",") if v.strip()]


def update(ctx, group_id: str, body) -> None:
    data = validation.obj(body, "group")
    validation.only(data, ("name", "description", "add_volumes", "remove_volumes"), "group")
    if not data:
        raise validation.bad("Name, description, add_volumes, and remove_volumes can not "
                             "be all empty in the request body.")
    add, remove = _ids(data.get("add_volumes"), "add_volumes"), _ids(
        data.get("remove_volumes"), "remove_volumes")
    with db.transaction() as s:
        group = visible.group(s, ctx, group_id, lock=True)
        policy.authorize(ctx, "group:update", target(group))
        if (add or remove) and group.status != "available":
            raise exceptions.BadRequest(f"Invalid Group: Group {group.id} status must be "
                                        f"available, but current status is: "
                                        f"{group.status}.")
        for volume_id in add:
            volume = s.get(Volume, volume_id)
            if volume is None or volume.project_id != group.project_id:
                raise api.InvalidVolume(f"Cannot add volume {volume_id} to group "
                                        f"{group.id} because volume cannot be found.")
            if volume.group_id and volume.group_id != group.id:
                raise api.InvalidVolume(f"Cannot add volume {volume_id} to group "
                                        f"{group.id} because it is already in group "
                                        f"{volume.group_id}.")
            if volume.volume_type_id not in (group.volume_type_ids or []):
                raise api.InvalidVolume(f"Cannot add volume {volume_id} to group "
                                        f"{group.id} because volume type "
                                        f"{volume.volume_type_id} is not supported by "
                                        "the group.")
            if volume.status not in ("available", "in-use"):
                raise api.InvalidVolume(f"Cannot add volume {volume_id} to group "
                                        f"{group.id} because volume is in an invalid "
                                        f"state: {volume.status}. Valid states are: "
                                        "('available', 'in-use').")
            volume.group_id = group.id
        for volume_id in remove:
            volume = s.get(Volume, volume_id)
            if volume is None or volume.group_id != group.id:
                raise api.InvalidVolume(f"Cannot remove volume {volume_id} from group "
                                        f"{group.id} because it is not in the group.")
            volume.group_id = None
        if "name" in data:
            group.name = _text(data, "name")
        if "description" in data:
            group.description = _text(data, "description")
        group.updated_at = utcnow()


# --- delete and the admin's reset ------------------------------------------------------


def delete(ctx, group_id: str, data) -> None:
    if not isinstance(data, dict):
        raise validation.bad("Invalid input for field/attribute delete: it must be an "
                             "object.")
    validation.only(data, ("delete-volumes",), "delete")
    with_volumes = validation.boolean(data.get("delete-volumes", False), "delete-volumes")
    with db.transaction() as s:
        group = visible.group(s, ctx, group_id, lock=True)
        policy.authorize(ctx, "group:delete", target(group))
        if group.status not in ("available", "error", "error_deleting"):
            raise exceptions.BadRequest(f"Invalid Group: Group status must be available or "
                                        f"error, but current status is: {group.status}.")
        if s.scalar(sa.select(sa.func.count()).select_from(GroupSnapshot)
                    .where(GroupSnapshot.group_id == group.id)):
            raise exceptions.BadRequest(f"Invalid Group: Group {group.id} still has "
                                        "dependent group snapshots.")
        volumes = list(s.scalars(sa.select(Volume).where(Volume.group_id == group.id)))
        if volumes and not with_volumes:
            raise exceptions.BadRequest(f"Invalid Group: Group {group.id} still contains "
                                        "volumes. The delete-volumes flag is required to "
                                        "delete it.")
        for volume in volumes:
            if volume.attachments or volume.status not in api.DELETABLE:
                raise api.InvalidVolume(f"Volume {volume.id} in group {group.id} is "
                                        f"attached or busy ({volume.status}): it cannot be "
                                        "deleted.")
            if s.scalar(sa.select(sa.func.count()).select_from(Snapshot)
                        .where(Snapshot.volume_id == volume.id)):
                raise api.InvalidVolume(f"Volume in group {group.id} still has dependent "
                                        "snapshots.")
        hosts = {}
        for volume in volumes:
            volume.status, volume.updated_at, volume.group_id = "deleting", utcnow(), None
            hosts[volume.id] = volume.host
        s.delete(group)
    for volume_id, host in hosts.items():
        if host is None:
            api.finish_delete(volume_id)
        else:
            api.manager().cast(ctx, "delete_volume", volume_id=volume_id)


def reset_status(ctx, group_id: str, data) -> None:
    if not isinstance(data, dict) or data.get("status") not in STATUSES or set(data) != {
            "status"}:
        raise validation.bad(f"Invalid input for field/attribute reset_status: 'status' "
                             f"must be one of {', '.join(STATUSES)}.")
    with db.transaction() as s:
        group = visible.group(s, ctx, group_id, lock=True)
        policy.authorize(ctx, "group:reset_status", target(group))
        group.status, group.updated_at = data["status"], utcnow()
