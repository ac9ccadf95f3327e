"""Manage and unmanage, as cinder's (os-volume-manage, /manageable_volumes 3.8+, the
os-unmanage action): an admin adopts storage of a backend that no volume owns as a new
volume, or gives a volume's storage up without deleting it. Only the file backend can
(a plain file in its directory is a manageable volume; unmanage leaves the volume's file
``volume-<id>`` where it is, marked as no volume's, so that name manages it again); the
other backends answer 400.

The new volume is ``managing`` (shown as ``creating``, as cinder) until the volume
manager has checked the file, its size against the project's quota and renamed it.
"""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import api, backends, quotas, scheduler, types, validation
from pocketstack.volume.backends import BackendError
from pocketstack.volume.models import Snapshot, Volume

GiB = 1 << 30
MANAGE_KEYS = ("host", "cluster", "ref", "name", "description", "volume_type",
               "availability_zone", "metadata", "bootable")


def _backend_of_host(host) -> str:
    """The backend a cinder host string names (host@backend or host@backend#pool)."""
    if not isinstance(host, str) or not host:
        raise validation.bad("One and only one of cluster and host must be set.")
    name = scheduler.backend_of(host)
    if not host.startswith(f"{config.CONF.host}@") or name not in backends.enabled():
        raise exceptions.BadRequest(f"Service Host {host[:255]} could not be found.")
    if not backends.get(name).can_manage:
        raise exceptions.BadRequest(f"Invalid input received: the {name} backend cannot "
                                    "manage existing volumes.")
    return name


def _size_gb(size_bytes: int) -> int:
    return max(1, -(-size_bytes // GiB))


# --- manage ------------------------------------------------------------------------------


def source_name(ref, what: str) -> str:
    """The file a manage request's ``ref`` names (the file backend's only reference)."""
    if not isinstance(ref, dict) or not ref:
        raise validation.bad("Invalid input for field/attribute ref. 'ref' is a required "
                             "property of type 'object'")
    name = ref.get("source-name")
    if not isinstance(name, str) or not name or set(ref) - {"source-name"}:
        raise exceptions.BadRequest(f"Manage existing {what} failed due to invalid backend "
                                    f"reference {str(ref)[:200]}: the file backend needs "
                                    "{'source-name': '<file name>'}.")
    return name


def manage_volume(ctx, body) -> Volume:
    policy.authorize(ctx, "volume_extension:volume_manage")
    data = validation.obj(body, "volume")
    validation.only(data, MANAGE_KEYS, "volume")
    if data.get("cluster") is not None:
        raise validation.bad("Invalid input received: clusters are not supported here.")
    backend = _backend_of_host(data.get("host"))
    name = source_name(data.get("ref"), "volume")
    volume_name = validation.text(data.get("name"), "name")
    description = validation.text(data.get("description"), "description")
    meta = validation.metadata(data.get("metadata") or {})
    bootable = validation.boolean(data.get("bootable", False), "bootable")
    zone = data.get("availability_zone") or config.CONF.volume.storage_availability_zone
    if zone != config.CONF.volume.storage_availability_zone:
        raise exceptions.BadRequest(f"Invalid input received: Availability zone "
                                    f"'{str(zone)[:255]}' is invalid.")
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        quotas.lock(s, ctx.project_id)
        if data.get("volume_type") is not None:
            vtype = types.find(s, ctx, validation.text(data["volume_type"], "volume_type",
                                                       nullable=False))
        else:
            vtype = types.default_for(s, ctx)
        quotas.check(s, ctx.project_id, vtype.name, volumes=1)
        volume = Volume(id=str(uuid.uuid4()), project_id=ctx.project_id,
                        user_id=ctx.user_id, name=volume_name, description=description,
                        size=0, status="managing", attach_status="detached",
                        availability_zone=zone, volume_type_id=vtype.id,
                        host=scheduler.host_of(backend), bootable=bootable, meta=meta,
                        created_at=utcnow())
        s.add(volume)
    created = api.get_volume(ctx, volume.id)
    api.manager().cast(ctx, "manage_volume", volume_id=volume.id, source_name=name)
    return created


def _fail(volume_id: str, reason: str) -> None:
    with db.transaction() as s:
        volume = s.get(Volume, volume_id)
        if volume is not None and volume.status == "managing":
            volume.status, volume.error_reason = "error_managing", reason
            volume.updated_at = utcnow()


def finish_manage(volume_id: str, source_name: str) -> None:
    """The volume manager's part: size the file, check quota, adopt it."""
    with db.reader() as s:
        volume = s.get(Volume, volume_id)
        if volume is None or volume.status != "managing":
            return
        project_id, type_name = volume.project_id, volume.volume_type.name
    backend = backends.get(scheduler.backend_of(volume.host))
    try:
        size = _size_gb(backend.manageable_size(source_name))
        with db.transaction() as s:
            quotas.lock(s, project_id)
            quotas.check(s, project_id, type_name, gigabytes=size)
            row = s.get(Volume, volume_id)
            if row is None or row.status != "managing":
                return
            row.size = size
        backend.manage_existing(volume_id, source_name, size)
    except (BackendError, OSError, exceptions.PocketstackError) as error:
        _fail(volume_id, str(error)[:1000])
        return
    with db.transaction() as s:
        row = s.get(Volume, volume_id)
        if row is not None:
            row.status, row.launched_at, row.updated_at = "available", utcnow(), utcnow()


# --- unmanage ----------------------------------------------------------------------------


def unmanage(ctx, volume_id: str, data) -> None:
    """os-unmanage: as a delete (same states refused) that keeps the data."""
    if data not in (None, {}):
        raise validation.bad("Invalid input for field/attribute os-unmanage: it takes no "
                             "arguments.")
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume_extension:volume_unmanage", api.target(volume))
        if volume.attachments or volume.attach_status == "attached":
            raise api.InvalidVolume("Volume cannot be unmanaged while it is attached.")
        if volume.group_id:
            raise api.InvalidVolume(f"Volume {volume.id} cannot be unmanaged while it is "
                                    f"in group {volume.group_id}.")
        if volume.status not in api.DELETABLE:
            raise api.InvalidVolume(f"Volume status must be available or error or "
                                    f"error_restoring or error_extending or error_managing, "
                                    f"but current status is: {volume.status}.")
        count = s.scalar(sa.select(sa.func.count()).select_from(Snapshot)
                         .where(Snapshot.volume_id == volume.id))
        if count:
            raise api.InvalidVolume(f"Volume still has {count} dependent snapshots.")
        if volume.host is not None and not backends.get(
                scheduler.backend_of(volume.host)).can_manage:
            raise exceptions.BadRequest(f"Invalid input received: the "
                                        f"{scheduler.backend_of(volume.host)} backend "
                                        "cannot unmanage volumes.")
        volume.status, volume.updated_at = "unmanaging", utcnow()
        host = volume.host
    if host is None:  # never reached a backend: nothing is kept
        api.finish_delete(volume_id, keep_key=True)
        return
    api.manager().cast(ctx, "unmanage_volume", volume_id=volume_id)


def finish_unmanage(volume_id: str) -> None:
    with db.reader() as s:
        volume = s.get(Volume, volume_id)
        if volume is None or volume.status != "unmanaging":
            return
    try:
        backends.get(scheduler.backend_of(volume.host)).unmanage(volume_id)
    except (BackendError, OSError) as error:
        with db.transaction() as s:
            row = s.get(Volume, volume_id)
            if row is not None:
                row.status, row.error_reason = "error", str(error)[:1000]
        return
    api.finish_delete(volume_id, keep_key=True)


# --- manageable volumes ------------------------------------------------------------------


def list_manageable(ctx, query, detailed: bool) -> list[dict]:
    policy.authorize(ctx, "volume_extension:list_manageable")
    if query.get("cluster") is not None:
        raise validation.bad("Invalid input received: clusters are not supported here.")
    backend = _backend_of_host(query.get("host"))
    keys = api.sort_params({"sort_key": "reference", **{k: v for k, v in query.items()
                                                         if k in ("sort", "sort_key",
                                                                  "sort_dir")}},
                           ("reference", "size"))
    limit, marker, offset = api.limit_marker(query)
    found = api.manager().call(ctx, "list_manageable", backend=backend)
    items = []
    for name, size_bytes in found:
        item = {"reference": {"source-name": name}, "size": _size_gb(size_bytes),
                "safe_to_manage": True}
        if detailed:
            item.update(reason_not_safe=None, cinder_id=None, extra_info=None)
        items.append(item)
    items.sort(key=lambda i: tuple((i["reference"]["source-name"] if k == "reference"
                                    else i["size"]) for k, _ in keys),
               reverse=keys[0][1] == "desc")
    if marker:
        names = [i["reference"]["source-name"] for i in items]
        items = items[names.index(marker) + 1:] if marker in names else []
    return items[offset:offset + limit]
