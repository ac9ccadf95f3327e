"""Volumes: create, list, show, update, delete, metadata — what the REST handlers, compute
and the CLI call. Functions take the caller's RequestContext and return model objects the
handlers render with ``views``.

A create writes the row (``creating``) after the quota check and the backend choice, in
one transaction, then casts the slow work to the volume manager on ``volume.<host>``
(manager.py), which sets ``available`` or ``error``. Deletes go ``deleting`` the same way.
"""
from __future__ import annotations

import ast
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, numbers, policy, rpc
from pocketstack.common.timeutils import parse_isotime, utcnow
from pocketstack.volume import encryption_keys, quotas, scheduler, types, validation, visible
from pocketstack.volume.models import Backup, Snapshot, Volume, VolumeType

STATUSES = ("creating", "available", "reserved", "attaching", "detaching", "in-use",
            "maintenance", "deleting", "awaiting-transfer", "error", "error_deleting",
            "backing-up", "restoring-backup", "error_backing-up", "error_restoring",
            "error_extending", "downloading", "uploading", "retyping", "extending")
DELETABLE = ("available", "error", "error_restoring", "error_extending", "error_managing")
SORT_KEYS = ("id", "name", "status", "size", "created_at", "updated_at",
             "availability_zone", "bootable", "volume_type")
CREATE_KEYS = ("size", "availability_zone", "source_volid", "description", "multiattach",
               "snapshot_id", "backup_id", "name", "imageRef", "volume_type", "metadata",
               "consistencygroup_id", "display_name", "display_description", "image_id",
               "group_id", "source_replica")


class VolumeNotFound(exceptions.NotFound):
    def __init__(self, volume_id: str):
        super().__init__(f"Volume {volume_id} could not be found.")


class InvalidVolume(exceptions.BadRequest):
    def __init__(self, reason: str):
        super().__init__(f"Invalid volume: {reason}")


def target(volume: Volume) -> dict:
    return {"project_id": volume.project_id, "user_id": volume.user_id}


def load(s, ctx, volume_id: str, *, lock: bool = False) -> Volume:
    """The volume if the caller may see it (admins see all), else 404."""
    stmt = sa.select(Volume).where(Volume.id == volume_id)
    if lock:  # of=Volume: PostgreSQL refuses FOR UPDATE across the type's outer join
        stmt = stmt.with_for_update(of=Volume)
    volume = s.scalar(stmt)
    if volume is None or (volume.project_id != ctx.project_id and not ctx.is_admin
                          and not ctx.is_service):
        raise VolumeNotFound(volume_id)
    return volume


def manager(host: str | None = None) -> rpc.RPCClient:
    return rpc.RPCClient("volume").prepare(server=host or config.CONF.host)


# --- create -----------------------------------------------------------------------------


def create_volume(ctx, body, version: tuple[int, int] = (3, 53)) -> Volume:
    policy.authorize(ctx, "volume:create")
    data = validation.obj(body, "volume")
    if version >= (3, 53):
        validation.only(data, CREATE_KEYS, "volume")
    else:  # cinder's schema before 3.53 lets other keys (e.g. bootable) through, unread
        data = {k: v for k, v in data.items() if k in CREATE_KEYS}
    name = validation.text(data.get("name", data.get("display_name")), "name")
    description = validation.text(data.get("description", data.get("display_description")),
                                  "description")
    meta = validation.metadata(data.get("metadata") or {})
    multiattach = validation.boolean(data.get("multiattach", False), "multiattach")
    image_id = data.get("imageRef") or data.get("image_id")
    sources = [k for k in ("snapshot_id", "source_volid", "backup_id") if data.get(k)] + (
        ["imageRef"] if image_id else [])
    for key in ("snapshot_id", "source_volid", "backup_id"):
        if data.get(key):
            validation.uuid_like(data[key], key)
    if data.get("volume_type") is not None:
        validation.text(data["volume_type"], "volume_type", nullable=False)
    if data.get("availability_zone") is not None:
        validation.text(data["availability_zone"], "availability_zone", nullable=False)
    if len(sources) > 1:
        raise exceptions.BadRequest(f"Only one of {', '.join(sources)} may be given.")
    size = validation.size(data["size"]) if data.get("size") is not None else None
    image = _find_image(ctx, image_id) if image_id else None
    key_id = _encryption_key(ctx, data, name, image)
    try:
        return _create_volume(ctx, data, name, description, meta, multiattach, size, image,
                              key_id)
    except BaseException:
        encryption_keys.delete(key_id)  # no volume holds it
        raise


def _group_to_join(s, ctx, group_id, volume_type_id: str) -> str:
    """The group a new volume joins (``group_id`` of a volume create, 3.13)."""
    group = visible.group(s, ctx, group_id)
    if group.status != "available":
        raise exceptions.BadRequest(f"Invalid Group: Group {group.id} status must be "
                                    f"available, but current status is: {group.status}.")
    if volume_type_id not in (group.volume_type_ids or []):
        raise exceptions.BadRequest(f"Invalid input received: Invalid volume_type "
                                    f"provided: {volume_type_id}. The group {group.id} "
                                    "does not support it.")
    return group.id


def _create_volume(ctx, data, name, description, meta, multiattach, size, image,
                   key_id) -> Volume:
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        quotas.lock(s, ctx.project_id)
        snapshot = source = None
        if data.get("snapshot_id"):
            snapshot = _load_snapshot(s, ctx, data["snapshot_id"])
            if snapshot.status != "available":
                raise exceptions.BadRequest("Invalid snapshot: Originating snapshot status "
                                            "must be one of 'available' values")
            size = size or snapshot.size
            if size < snapshot.size:
                raise exceptions.BadRequest(f"Invalid input received: Volume size '{size}'GB "
                                            f"cannot be smaller than the snapshot size "
                                            f"{snapshot.size}GB. They must be >= original "
                                            "snapshot size.")
        if data.get("source_volid"):
            source = load(s, ctx, data["source_volid"])
            if source.status not in ("available", "in-use"):
                raise InvalidVolume("Source volume status must be available or in-use.")
            size = size or source.size
            if size < source.size:
                raise exceptions.BadRequest(f"Invalid input received: Volume size '{size}'GB "
                                            f"cannot be smaller than the source volume size "
                                            f"{source.size}GB.")
        backup = None
        if data.get("backup_id"):
            backup = visible.backup(s, ctx, str(data["backup_id"]), lock=True)
            if backup.status != "available":
                raise exceptions.BadRequest(f"Invalid backup: Backup status must be "
                                            f"available, but is {backup.status}.")
            size = size or backup.size
            if size < backup.size:
                raise exceptions.BadRequest(f"Invalid input received: Volume size {size}GB "
                                            f"cannot be smaller than the backup size "
                                            f"{backup.size}GB.")
            backup.status = "restoring"
        if image is not None:
            needed = max(_gib(image.get("size") or 0), image.get("min_disk") or 0, 1)
            size = size or needed
            if size < needed:
                raise exceptions.BadRequest(f"Invalid input received: Image {image['id']} "
                                            f"needs a volume of at least {needed} GiB; "
                                            f"{size} GiB was requested.")
        if size is None:
            raise exceptions.BadRequest("Invalid input received: size is required unless a "
                                        "snapshot or source volume is given.")
        vtype = _volume_type(s, ctx, data.get("volume_type"), snapshot or source or backup)
        zone = data.get("availability_zone") or config.CONF.volume.storage_availability_zone
        if zone != config.CONF.volume.storage_availability_zone:
            raise exceptions.BadRequest(f"Invalid input received: Availability zone '{zone}' "
                                        "is invalid.")
        if source is not None or snapshot is not None:
            origin = source or s.get(Volume, snapshot.volume_id)
            backend = scheduler.backend_of(origin.host)
            why = None
        group_id = None
        group_ref = data.get("group_id") or data.get("consistencygroup_id")
        if group_ref is not None:  # 3.13 (a consistency group is a group too)
            group_id = _group_to_join(s, ctx, group_ref, vtype.id)
        quotas.check(s, ctx.project_id, vtype.name, volumes=1, gigabytes=size)
        if source is None and snapshot is None:
            backend, why = scheduler.choose(s, vtype.extra_specs, size)
        volume = Volume(id=str(uuid.uuid4()), project_id=ctx.project_id, user_id=ctx.user_id,
                        name=name, description=description, size=size,
                        status="creating" if backend else "error", attach_status="detached",
                        availability_zone=zone, volume_type_id=vtype.id,
                        host=scheduler.host_of(backend) if backend else None,
                        multiattach=multiattach or vtype.extra_specs.get("multiattach")
                        == "<is> True", meta=meta,
                        snapshot_id=snapshot.id if snapshot else None,
                        source_volid=source.id if source else None,
                        image_id=image["id"] if image else None, error_reason=why,
                        group_id=group_id, encryption_key_id=key_id,
                        created_at=utcnow())
        s.add(volume)
        if backup is not None and not backend:  # nothing will restore it: usable again
            backup.status = "available"
        s.flush()
        s.refresh(volume)
    # Read back before the cast: the answer shows the volume as created ('creating', as
    # cinder), not whatever state the in-process manager may already have reached.
    created = get_volume(ctx, volume.id)
    if backend:
        manager().cast(ctx, "create_volume", volume_id=volume.id,
                       image=_image_summary(image) if image else None,
                       backup_id=backup.id if backup else None)
    return created


def _encryption_key(ctx, data, name, image: dict | None = None) -> str | None:
    """A key from the key manager when the volume's type is encrypted or its origin has
    one, made before the volume's transaction (a call to another service)."""
    with db.reader() as s:
        origin = None
        if data.get("snapshot_id"):
            origin = s.get(Volume, _load_snapshot(s, ctx, data["snapshot_id"]).volume_id)
        elif data.get("source_volid"):
            origin = load(s, ctx, data["source_volid"])
        elif data.get("backup_id"):
            origin = visible.backup(s, ctx, str(data["backup_id"]))
        vtype = _volume_type(s, ctx, data.get("volume_type"), origin)
        spec = encryption_keys.spec_of(s, vtype.id)
        origin_key = origin.encryption_key_id if origin is not None else None
        if isinstance(origin, Backup):
            encryption_keys.check_restore(origin, spec is not None)
        if image is not None:
            origin_key = encryption_keys.image_key(image, spec is not None)
    return encryption_keys.for_new_volume(ctx, spec, origin_key, name)


def _gib(size_bytes: int) -> int:
    return -(-int(size_bytes) // (1 << 30))


def _find_image(ctx, image_id) -> dict:
    from pocketstack.clients.image import ImageClient

    validation.uuid_like(image_id, "imageRef")
    image = ImageClient(ctx, caller="volume").get(image_id)
    if image is None:
        raise exceptions.NotFound(f"Image {image_id} could not be found.")
    if image.get("status") != "active":
        raise exceptions.BadRequest(f"Invalid image identifier or unable to access "
                                    f"requested image: image {image_id} is "
                                    f"{image.get('status')}, not active.")
    return image


def _image_summary(image: dict) -> dict:
    # direct_url / locations: where a backend may clone the image from (rbd://...)
    return {k: image.get(k) for k in ("id", "name", "size", "disk_format", "container_format",
                                      "checksum", "min_disk", "min_ram", "direct_url",
                                      "locations")} | {
        "properties": {k: v for k, v in image.items() if isinstance(v, str) and k not in (
            "id", "name", "status", "file", "schema", "self", "owner", "visibility",
            "created_at", "updated_at", "os_hash_algo", "os_hash_value", "direct_url",
            "stores")}}


def _volume_type(s, ctx, requested, origin):
    if requested:
        return types.find(s, ctx, str(requested))
    if isinstance(origin, Backup):
        # An encrypted volume's backup opens only in a volume of an encrypted type: its
        # volume's, while that type exists.
        kept = s.get(VolumeType, origin.volume_type_id) \
            if origin.encryption_key_id and origin.volume_type_id else None
        return kept or types.default_for(s, ctx)
    if origin is not None:
        volume = origin if isinstance(origin, Volume) else s.get(Volume, origin.volume_id)
        return volume.volume_type
    return types.default_for(s, ctx)


def _load_snapshot(s, ctx, snapshot_id: str) -> Snapshot:
    snap = s.get(Snapshot, snapshot_id)
    if snap is None or (snap.project_id != ctx.project_id and not ctx.is_admin):
        raise exceptions.NotFound(f"Snapshot {snapshot_id} could not be found.")
    return snap


# --- read -------------------------------------------------------------------------------


def get_volume(ctx, volume_id: str) -> Volume:
    with db.reader() as s:
        volume = load(s, ctx, volume_id)
        policy.authorize(ctx, "volume:get", target(volume))
        return volume


def _parse_metadata_filter(value: str) -> dict:
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise exceptions.BadRequest(f"Invalid metadata filter {value!r}: expected a "
                                    "dictionary such as {'key': 'value'}.") from None
    if not isinstance(parsed, dict):
        raise exceptions.BadRequest(f"Invalid metadata filter {value!r}: expected a "
                                    "dictionary.")
    return {str(k): str(v) for k, v in parsed.items()}


def sort_params(query, allowed: tuple[str, ...]) -> list[tuple[str, str]]:
    keys: list[tuple[str, str]] = []
    if query.get("sort"):
        for item in query["sort"].split(","):
            key, _, direction = item.strip().partition(":")
            keys.append((key.strip(), (direction or "desc").strip().lower()))
    elif query.get("sort_key") or query.get("sort_dir"):
        key = query.get("sort_key", "created_at")
        keys.append((key, query.get("sort_dir", "desc").lower()))
    for key, direction in keys:
        if key not in allowed:
            raise exceptions.BadRequest(f"Invalid input received: Invalid sort key {key}.")
        if direction not in ("asc", "desc"):
            raise exceptions.BadRequest("Invalid input received: Unknown sort direction, "
                                        "must be 'desc' or 'asc'.")
    return keys or [("created_at", "desc")]


def limit_marker(query) -> tuple[int, str | None, int]:
    max_limit = config.CONF.volume.osapi_max_limit
    limit = max_limit
    raw = query.get("limit")
    if raw is not None:
        limit = numbers.parse_limit(raw, "limit", max_limit,
                                    message="limit param must be an integer")
    offset = query.get("offset", "0")
    if not numbers.is_int_text(offset):
        raise exceptions.BadRequest("offset param must be an integer")
    return limit, query.get("marker"), int(offset)


def paginate(items: list, keys: list[tuple[str, str]], marker, limit: int, offset: int,
             value, missing=None) -> list:
    """Sort in Python by ``keys`` (then id), start after ``marker``, take ``limit``. An
    unknown marker is a 400, or ``missing(marker)`` when given."""
    def sort_key(item, key):
        found = value(item, key)
        return (found is None, 0 if found is None else found)

    for key, direction in reversed(keys + [("id", keys[-1][1])]):  # stable: last key first
        items.sort(key=lambda it, k=key: sort_key(it, k), reverse=direction == "desc")
    if marker:
        ids = [it.id for it in items]
        if marker not in ids:
            if missing is not None:
                raise missing(marker)
            raise exceptions.BadRequest(f"Invalid input received: marker [{marker}] not "
                                        "found")
        items = items[ids.index(marker) + 1:]
    return items[offset:offset + limit]


def _sort_value(volume: Volume, key: str):
    if key == "volume_type":
        return volume.volume_type.name if volume.volume_type else None
    return getattr(volume, key)


TIME_OPERATORS = {"gt": lambda a, b: a > b, "gte": lambda a, b: a >= b,
                  "eq": lambda a, b: a == b, "neq": lambda a, b: a != b,
                  "lt": lambda a, b: a < b, "lte": lambda a, b: a <= b}


def time_filter(name: str, value: str):
    """cinder's 3.60 time comparison filter (``created_at=gt:2026-01-01T00:00:00,lt:...``)
    as a predicate on a datetime; 400 for an unknown operator or a time that is not ISO."""
    checks = []
    for unit in value.split(","):
        operator, sep, when = unit.partition(":")
        if not sep:
            raise exceptions.BadRequest(f"Invalid {name} value")
        if operator not in TIME_OPERATORS:
            raise exceptions.BadRequest(f"Invalid {operator[:40]} operator")
        try:
            moment = parse_isotime(when)
        except (ValueError, OverflowError):
            raise exceptions.BadRequest(f"Invalid {when[:60]} value") from None
        checks.append((TIME_OPERATORS[operator], moment))
    return lambda t: t is not None and all(op(t, moment) for op, moment in checks)


def list_volumes(ctx, query, version: tuple[int, int] = (3, 0)) -> tuple[list[Volume], int]:
    """Volumes the query asks for, and how many match before paging; filters newer than
    ``version`` are ignored, as cinder drops them."""
    policy.authorize(ctx, "volume:get_all")
    keys = sort_params(query, SORT_KEYS)
    limit, marker, offset = limit_marker(query)
    stmt = sa.select(Volume)
    all_projects = ctx.is_admin and validation.boolean(
        query.get("all_tenants", query.get("all_projects", "0")) or "1", "all_tenants")
    if not all_projects:
        stmt = stmt.where(Volume.project_id == ctx.project_id)
    elif query.get("project_id"):
        stmt = stmt.where(Volume.project_id == query["project_id"])
    if query.get("status"):  # an unknown status (tempest: 'null') matches none, as cinder
        stmt = stmt.where(Volume.status == query["status"])
    for key in ("name", "availability_zone", "group_id"):
        if query.get(key) is not None:
            stmt = stmt.where(getattr(Volume, key) == query[key])
    if query.get("bootable") is not None:
        stmt = stmt.where(Volume.bootable.is_(validation.boolean(query["bootable"],
                                                                 "bootable")))
    meta = _parse_metadata_filter(query["metadata"]) if query.get("metadata") else {}
    with db.reader() as s:
        found = list(s.scalars(stmt))
    if meta:
        found = [v for v in found if all((v.meta or {}).get(k) == val
                                         for k, val in meta.items())]
    if query.get("volume_type"):
        wanted = query["volume_type"]
        found = [v for v in found if wanted in (v.volume_type.name, v.volume_type_id)]
    if version >= (3, 60):
        for key in ("created_at", "updated_at"):
            if query.get(key):
                matches = time_filter(key, query[key])
                found = [v for v in found if matches(getattr(v, key))]
    if version >= (3, 65) and query.get("consumes_quota") is not None:
        # every volume here consumes quota (cinder's temporary ones do not)
        if not validation.boolean(query["consumes_quota"], "consumes_quota"):
            found = []
    return paginate(found, keys, marker, limit, offset, _sort_value), len(found)


def summary(ctx, query, version: tuple[int, int] = (3, 0)) -> dict:
    policy.authorize(ctx, "volume:get_all")
    volumes, _ = list_volumes(ctx, {k: v for k, v in query.items()
                                    if k not in ("limit", "marker", "offset")}, version)
    meta: dict[str, list] = {}
    for v in volumes:
        for key, value in (v.meta or {}).items():
            meta.setdefault(key, [])
            if value not in meta[key]:
                meta[key].append(value)
    return {"total_count": len(volumes), "total_size": sum(v.size for v in volumes),
            "metadata": meta}


# --- update and delete ---------------------------------------------------------------


def update_volume(ctx, volume_id: str, body) -> Volume:
    data = validation.obj(body, "volume")
    validation.only(data, ("name", "description", "metadata", "display_name",
                           "display_description"), "volume")
    with db.transaction() as s:
        volume = load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:update", target(volume))
        if "name" in data or "display_name" in data:
            volume.name = validation.text(data.get("name", data.get("display_name")), "name")
        if "description" in data or "display_description" in data:
            volume.description = validation.text(
                data.get("description", data.get("display_description")), "description")
        if "metadata" in data:
            volume.meta = validation.metadata(data["metadata"])
        volume.updated_at = utcnow()
    return get_volume(ctx, volume_id)


def delete_volume(ctx, volume_id: str, *, cascade: bool = False, force: bool = False) -> None:
    with db.transaction() as s:
        volume = load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:delete", target(volume))
        if force:
            policy.authorize(ctx, "volume_extension:volume_admin_actions:force_delete",
                             target(volume))
        if volume.attachments or volume.attach_status == "attached" or volume.group_id:
            raise InvalidVolume("Volume status must be available or error or "
                                "error_restoring or error_extending or error_managing and "
                                "must not be migrating, attached, belong to a group, have "
                                "snapshots or be disassociated from snapshots after volume "
                                "transfer.")
        if not force and volume.status not in DELETABLE:
            raise InvalidVolume(f"Volume status must be available or error or "
                                f"error_restoring or error_extending or error_managing, but "
                                f"current status is: {volume.status}.")
        snaps = s.scalars(sa.select(Snapshot).where(Snapshot.volume_id == volume.id)).all()
        if snaps and not cascade:
            raise InvalidVolume("Volume still has 1 dependent snapshots." if len(snaps) == 1
                                else f"Volume still has {len(snaps)} dependent snapshots.")
        if cascade and any(sn.status not in ("available", "error") for sn in snaps):
            raise InvalidVolume("Snapshot of the volume is busy: its status is not "
                                "available or error.")
        for sn in snaps:
            sn.status = "deleting"
        volume.status, volume.updated_at = "deleting", utcnow()
        host = volume.host
    if host is None:  # never reached a backend: nothing to remove there
        finish_delete(volume_id)
        return
    manager().cast(ctx, "delete_volume", volume_id=volume_id)


def finish_delete(volume_id: str, *, keep_key: bool = False) -> None:
    """Remove a deleted volume's rows, and its encryption key unless ``keep_key`` (an
    unmanaged volume lives on outside the cloud, still encrypted with it)."""
    key_id = None
    with db.transaction() as s:
        s.execute(sa.delete(Snapshot).where(Snapshot.volume_id == volume_id))
        volume = s.get(Volume, volume_id)
        if volume is not None:
            key_id = volume.encryption_key_id
            s.delete(volume)
    if not keep_key:
        encryption_keys.delete(key_id)


# --- metadata ---------------------------------------------------------------------------


def get_metadata(ctx, volume_id: str) -> dict:
    return dict(get_volume(ctx, volume_id).meta or {})


def set_metadata(ctx, volume_id: str, meta: dict, *, replace: bool) -> dict:
    meta = validation.metadata(meta)
    with db.transaction() as s:
        volume = load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:update_volume_metadata", target(volume))
        if volume.status == "maintenance":
            raise InvalidVolume("The volume metadata cannot be updated when the volume is "
                                "in maintenance mode.")
        volume.meta = meta if replace else dict(volume.meta or {}, **meta)
        volume.updated_at = utcnow()
        return dict(volume.meta)


def delete_metadata_key(ctx, volume_id: str, key: str) -> None:
    with db.transaction() as s:
        volume = load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:delete_volume_metadata", target(volume))
        meta = dict(volume.meta or {})
        if key not in meta:
            raise exceptions.NotFound(f"Volume {volume_id} has no metadata with key {key}.")
        del meta[key]
        volume.meta = meta
        volume.updated_at = utcnow()
