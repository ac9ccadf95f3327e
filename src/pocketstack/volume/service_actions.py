"""Volume and snapshot actions that cinder keeps in extensions: the volume's image metadata
(os-set/unset/show_image_metadata, cinder's volume_image_metadata.py) and a snapshot's
status as a service reports it (os-update_snapshot_status, snapshot_actions.py). Kept out
of actions.py/snapshots.py so the core volume code stays as it is."""
from __future__ import annotations

import re

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import api, snapshots, validation

# cinder's parameter_types.image_metadata: key pattern, string values
_IMAGE_KEY = re.compile(r"^[a-zA-Z0-9-_:. /]{1,255}$")
# cinder refuses metadata changes while the volume's data is in flux
_FROZEN = ("maintenance", "uploading")


class GlanceMetadataNotFound(exceptions.NotFound):
    def __init__(self, volume_id: str):
        super().__init__(f"Glance metadata for volume/snapshot {volume_id} cannot be found.")


def _image_metadata_body(data) -> dict:
    where = "os-set_image_metadata"
    if not isinstance(data, dict) or "metadata" not in data:
        raise validation.bad(f"Invalid input for field/attribute {where}. Value: {data!r}. "
                             "'metadata' is a required property")
    validation.only(data, ("metadata",), where)
    meta = data["metadata"]
    if not isinstance(meta, dict):
        raise validation.bad(f"Invalid input for field/attribute metadata. Value: {meta!r}. "
                             f"{meta!r} is not of type 'object'")
    for key, value in meta.items():
        if not _IMAGE_KEY.match(key):
            raise validation.bad(f"Invalid input for field/attribute metadata. Value: "
                                 f"{meta!r}. Additional properties are not allowed "
                                 f"({key!r} was unexpected)")
        if not isinstance(value, str):
            raise validation.bad(f"Invalid input for field/attribute {key}. Value: "
                                 f"{value!r}. {value!r} is not of type 'string'")
        if len(value) > 65535:  # mysql_text
            raise validation.bad(f"Invalid input for field/attribute {key}. Value is "
                                 "longer than 65535 characters.")
    return dict(meta)


def show_image_metadata(ctx, volume_id: str) -> dict:
    with db.reader() as s:
        volume = api.load(s, ctx, volume_id)
        policy.authorize(ctx, "volume:get_volume_metadata", api.target(volume))
        return dict(volume.image_metadata or {})


def set_image_metadata(ctx, volume_id: str, data) -> dict:
    """Merge keys into the image metadata; answers all of it, as cinder's db call does."""
    meta = _image_metadata_body(data)
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume_extension:volume_image_metadata:set",
                         api.target(volume))
        policy.authorize(ctx, "volume:update_volume_metadata", api.target(volume))
        if volume.status in _FROZEN:
            raise api.InvalidVolume(f"Updating volume metadata is not allowed for volumes "
                                    f"in {volume.status} status.")
        merged = dict(volume.image_metadata or {}, **meta)
        volume.image_metadata, volume.updated_at = merged, utcnow()
        return dict(merged)


def unset_image_metadata(ctx, volume_id: str, data) -> None:
    where = "os-unset_image_metadata"
    if not isinstance(data, dict) or "key" not in data:
        raise validation.bad(f"Invalid input for field/attribute {where}. Value: {data!r}. "
                             "'key' is a required property")
    validation.only(data, ("key",), where)
    key = data["key"]
    if not isinstance(key, str) or not 1 <= len(key) <= 255:
        raise validation.bad(f"Invalid input for field/attribute key. Value: {key!r}. "
                             "Expected a string of 1 to 255 characters.")
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume_extension:volume_image_metadata:remove",
                         api.target(volume))
        meta = dict(volume.image_metadata or {})
        if key not in meta:
            raise GlanceMetadataNotFound(volume_id)
        policy.authorize(ctx, "volume:delete_volume_metadata", api.target(volume))
        if volume.status in _FROZEN:
            raise api.InvalidVolume(f"Deleting volume metadata is not allowed for volumes "
                                    f"in {volume.status} status.")
        del meta[key]
        volume.image_metadata, volume.updated_at = meta, utcnow()


# cinder's allowed transitions: a service finishing a create, or a delete
_SNAPSHOT_TRANSITIONS = {"creating": ("creating", "available", "error"),
                         "deleting": ("deleting", "error_deleting")}


def _progress(value) -> str | None:
    """cinder's 'progress' format: an integer percentage between 0 and 100."""
    if not value:
        return None
    if not isinstance(value, str):
        raise validation.bad(f"Invalid input for field/attribute progress. Value: {value!r}."
                             " progress must be an integer percentage")
    try:
        number = int(value[:-1])
    except ValueError:
        raise validation.bad("Invalid input received: progress must be an integer "
                             "percentage") from None
    if not 0 <= number <= 100 or not value.endswith("%"):
        raise validation.bad("Invalid input received: progress must be an integer "
                             "percentage between 0 and 100")
    return value


def update_snapshot_status(ctx, snapshot_id: str, data) -> None:
    where = "os-update_snapshot_status"
    if not isinstance(data, dict) or "status" not in data:
        raise validation.bad(f"Invalid input for field/attribute {where}. Value: {data!r}. "
                             "'status' is a required property")
    validation.only(data, ("status", "progress"), where)
    status = data["status"]
    if not isinstance(status, str):
        raise validation.bad(f"Invalid input for field/attribute status. Value: {status!r}."
                             f" {status!r} is not of type 'string'")
    progress = _progress(data.get("progress"))
    with db.transaction() as s:
        snap = snapshots.load(s, ctx, snapshot_id, lock=True)
        policy.authorize(ctx, "snapshot_extension:snapshot_actions:update_snapshot_status",
                         snapshots.target(snap))
        if snap.status not in _SNAPSHOT_TRANSITIONS:
            raise exceptions.BadRequest(f"Snapshot status {snap.status} not allowed for "
                                        "update_snapshot_status")
        if status not in _SNAPSHOT_TRANSITIONS[snap.status]:
            raise exceptions.BadRequest(f"Provided snapshot status {status} not allowed for "
                                        f"snapshot with status {snap.status}.")
        snap.status, snap.updated_at = status, utcnow()
        if progress:
            snap.progress = progress


def extend_volume_completion(ctx, volume_id: str, data) -> None:
    """os-extend_volume_completion (3.71): nova tells cinder whether the guest took an
    in-use extend. Only an extend of an attached volume waits for it, and that (3.42) is
    not built here: a volume is never waiting, so a valid call is cinder's 400."""
    where = "os-extend_volume_completion"
    if not isinstance(data, dict):
        raise validation.bad(f"Invalid input for field/attribute {where}. Value: {data!r}. "
                             f"{data!r} is not of type 'object'")
    validation.only(data, ("error",), where)
    error = data.get("error")
    if error is not None and not isinstance(error, (str, bool)):
        raise validation.bad(f"Invalid input for field/attribute error. Value: {error!r}. "
                             f"{error!r} is not of type 'string', 'null', 'boolean'")
    with db.reader() as s:
        volume = api.load(s, ctx, volume_id)
        policy.authorize(ctx, "volume_extension:volume_admin_actions:extend_volume_completion",
                         api.target(volume))
        if volume.status != "extending":
            raise api.InvalidVolume("Volume is not being extended.")
        if "extend_new_size" not in (volume.admin_meta or {}):
            raise api.InvalidVolume("Required volume admin metadata is malformed or missing.")
