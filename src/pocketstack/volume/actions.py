"""POST /volumes/{id}/action: extend, reset status, bootable and read-only flags, retype,
force delete and upload to image (the attach actions live in attach.py)."""
from __future__ import annotations

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import api, encryption_keys, quotas, types, validation
from pocketstack.clients.image import ImageClient


def extend(ctx, volume_id: str, data, *, in_use: bool = False) -> None:
    """os-extend; ``in_use`` (3.42+): an attached volume too, whose servers are then told
    (nova's volume-extended event) so their guests see the new size."""
    if not isinstance(data, dict) or "new_size" not in data:
        raise validation.bad("Invalid input for field/attribute os-extend. 'new_size' is a "
                             "required property")
    new_size = validation.size(data["new_size"], "new_size")
    quotas.prepare(ctx.project_id)
    with db.transaction() as s:
        quotas.lock(s, ctx.project_id)
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:extend", api.target(volume))
        allowed = ("available", "in-use") if in_use else ("available",)
        if volume.status not in allowed:
            raise api.InvalidVolume(f"Volume status must be {' or '.join(allowed)} to "
                                    f"extend, but the current status is: {volume.status}.")
        if new_size <= volume.size:
            raise exceptions.BadRequest(f"Invalid input received: New size for extend must "
                                        f"be greater than current size. (current: "
                                        f"{volume.size}, extended: {new_size}).")
        quotas.check(s, volume.project_id, volume.volume_type.name,
                     gigabytes=new_size - volume.size)
        from pocketstack.volume import scheduler

        backend = scheduler.backend_of(volume.host)
        _, free = scheduler.free_space(s, backend)
        if free < new_size - volume.size:
            raise exceptions.BadRequest(f"Invalid input received: not enough free space on "
                                        f"backend {backend} ({free} GiB free).")
        volume.status, volume.updated_at = "extending", utcnow()
    api.manager().cast(ctx, "extend_volume", volume_id=volume_id, new_size=new_size)


MIGRATION_STATUSES = ("migrating", "error", "success", "completing", "none", "starting")


def reset_status(ctx, volume_id: str, data) -> None:
    if not isinstance(data, dict):
        data = {}
    validation.only(data, ("status", "attach_status", "migration_status"), "os-reset_status")
    # As cinder: null or "" sets nothing, and at least one of the three must be set.
    status = data.get("status") or None
    attach_status = data.get("attach_status") or None
    migration_status = data.get("migration_status") or None
    if status is None and attach_status is None and migration_status is None:
        raise validation.bad("Must specify 'status', 'attach_status' or 'migration_status' "
                             "for update.")
    if status is not None and status not in api.STATUSES:
        raise validation.bad(f"Invalid input received: Must specify a valid status. "
                             f"{status!r} is not one.")
    if attach_status is not None and attach_status not in ("attached", "detached"):
        raise validation.bad(f"Invalid input received: Must specify a valid attach status. "
                             f"{attach_status!r} is not one.")
    if migration_status is not None and migration_status not in MIGRATION_STATUSES:
        raise validation.bad(f"Invalid input received: Must specify a valid migration "
                             f"status. {migration_status!r} is not one.")
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume_extension:volume_admin_actions:reset_status",
                         api.target(volume))
        if status is not None:
            volume.status = status
        if attach_status is not None:
            volume.attach_status = attach_status
            if attach_status == "detached":
                volume.attachments.clear()
        if migration_status is not None:
            volume.migration_status = None if migration_status == "none" else migration_status
        volume.updated_at = utcnow()


def set_bootable(ctx, volume_id: str, data) -> None:
    if not isinstance(data, dict) or "bootable" not in data:
        raise validation.bad("Must specify bootable in request.")
    bootable = validation.boolean(data["bootable"], "bootable")
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume_extension:volume_actions:update_bootable",
                         api.target(volume))
        volume.bootable, volume.updated_at = bootable, utcnow()


def update_readonly(ctx, volume_id: str, data) -> None:
    if not isinstance(data, dict) or "readonly" not in data:
        raise validation.bad("Must specify readonly in request.")
    readonly = validation.boolean(data["readonly"], "readonly")
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume_extension:volume_actions:update_readonly",
                         api.target(volume))
        volume.readonly, volume.updated_at = readonly, utcnow()
        # cinder keeps it as admin metadata, which its views show in ``metadata``
        volume.admin_meta = dict(volume.admin_meta or {}, readonly=str(readonly))


def retype(ctx, volume_id: str, data) -> None:
    """Retype between types on the same backend (no data moves); else 400."""
    if not isinstance(data, dict) or not data.get("new_type"):
        raise validation.bad("Missing required element 'new_type' in request body.")
    from pocketstack.volume import scheduler

    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:retype", api.target(volume))
        new = types.find(s, ctx, str(data["new_type"]))
        if volume.status not in ("available", "in-use"):
            raise api.InvalidVolume(f"Volume status must be available or in-use to retype, "
                                    f"but is {volume.status}.")
        if new.id == volume.volume_type_id:
            raise validation.bad("Retype cannot change the volume type to its current type.")
        backend = scheduler.backend_of(volume.host)
        wanted = (new.extra_specs or {}).get("volume_backend_name")
        if wanted and wanted != backend:
            raise validation.bad(f"Retype needs a migration to backend {wanted}, which this "
                                 "cloud does not do.")
        if _encryption(s, volume.volume_type_id) != _encryption(s, new.id):
            # cinder moves the data to re-encrypt it (volume_types_encryption_changed)
            raise validation.bad("Retype changes the volume's encryption, which needs a "
                                 "migration this cloud does not do.")
        quotas.check(s, volume.project_id, new.name, volumes=1, gigabytes=volume.size)
        volume.volume_type_id, volume.updated_at = new.id, utcnow()


def _encryption(s, type_id: str) -> tuple | None:
    spec = encryption_keys.spec_of(s, type_id)
    return None if spec is None else (spec.provider, spec.cipher, spec.key_size,
                                      spec.control_location)


def force_delete(ctx, volume_id: str) -> None:
    with db.reader() as s:
        volume = api.load(s, ctx, volume_id)
    policy.authorize(ctx, "volume_extension:volume_admin_actions:force_delete",
                     api.target(volume))
    api.delete_volume(ctx, volume_id, force=True)


UPLOAD_FORMATS = ("raw", "qcow2", "vmdk", "vdi", "vhd", "vhdx")


def upload_image(ctx, volume_id: str, data) -> dict:
    """Create an image from the volume's bytes (cinder's os-volume_upload_image)."""
    if not isinstance(data, dict) or not data.get("image_name"):
        raise validation.bad("No image_name was specified in request.")
    disk_format = data.get("disk_format", "raw")
    if disk_format not in UPLOAD_FORMATS:
        raise validation.bad(f"Invalid disk-format '{disk_format}' specified. Allowed "
                             f"disk-formats are {', '.join(UPLOAD_FORMATS)}.")
    container_format = data.get("container_format", "bare")
    force = validation.boolean(data.get("force", False), "force")
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume_extension:volume_actions:upload_image",
                         api.target(volume))
        allowed = ("available", "in-use") if force else ("available",)
        if volume.status not in allowed:
            raise api.InvalidVolume(f"Volume status must be {' or '.join(allowed)}, but is "
                                    f"{volume.status}.")
        restore = volume.status
        volume.status, volume.updated_at = "uploading", utcnow()
        fields = {k: v for k, v in (volume.image_metadata or {}).items()
                  if k not in ("image_id", "image_name", "checksum", "size", "disk_format",
                               "container_format", "min_disk", "min_ram",
                               encryption_keys.IMAGE_KEY, encryption_keys.IMAGE_KEY_POLICY)}
        volume_key = volume.encryption_key_id
    fields.update(name=data["image_name"], disk_format=disk_format,
                  container_format=container_format, min_disk=volume.size)
    if data.get("visibility"):
        fields["visibility"] = data["visibility"]
    if "protected" in data:
        fields["protected"] = validation.boolean(data["protected"], "protected")
    image_key = None
    try:
        if volume_key is not None:
            # The image holds the volume's LUKS bytes: it carries its own copy of the key
            # (cinder's), which the image service deletes with the image.
            image_key = encryption_keys.for_new_volume(ctx, None, volume_key,
                                                       f"image-{data['image_name']}")
            fields.update({encryption_keys.IMAGE_KEY: image_key,
                           encryption_keys.IMAGE_KEY_POLICY: "on_image_deletion"})
        image = ImageClient(ctx, caller="volume").create(**fields)
    except Exception:
        encryption_keys.delete(image_key)
        with db.transaction() as s:
            s.get(type(volume), volume_id).status = restore
        raise
    api.manager().cast(ctx, "upload_to_image", volume_id=volume_id, image_id=image["id"],
                       disk_format=disk_format, restore_status=restore)
    return {"id": volume.id, "updated_at": None, "status": "uploading",
            "display_description": volume.description, "size": volume.size,
            "volume_type": {"id": volume.volume_type_id, "name": volume.volume_type.name},
            "image_id": image["id"], "container_format": container_format,
            "disk_format": disk_format, "image_name": data["image_name"],
            "protected": image.get("protected", False),
            "visibility": image.get("visibility", "shared")}


def reimage(ctx, volume_id: str, data) -> None:
    """os-reimage (cinder 3.68): write an image over the volume, as nova's rebuild of a
    volume-backed server asks (compute 2.93). The volume must be available or in error -
    or reserved with ``reimage_reserved``, which is how nova hands it over (its
    attachment kept, the guest disconnected). The volume service then sends nova the
    volume-reimaged event. Like cinder's, the action exists from microversion 3.68 on
    (the REST handler checks that)."""
    if not isinstance(data, dict) or "image_id" not in data:
        raise validation.bad("Invalid input for field/attribute os-reimage. 'image_id' is "
                             "a required property")
    validation.only(data, ("image_id", "reimage_reserved"), "os-reimage")
    reserved = validation.boolean(data.get("reimage_reserved", False), "reimage_reserved")
    image = api._find_image(ctx, data["image_id"])
    with db.transaction() as s:
        volume = api.load(s, ctx, volume_id, lock=True)
        policy.authorize(ctx, "volume:reimage", api.target(volume))
        allowed = ("available", "error") + (("reserved",) if reserved else ())
        if volume.status not in allowed:
            raise api.InvalidVolume(f"Volume status must be {', '.join(allowed)} to "
                                    f"reimage, but the current status is: {volume.status}.")
        min_disk = int(image.get("min_disk") or 0)
        size_gb = api._gib(image.get("size") or 0)
        if max(min_disk, size_gb) > volume.size:
            raise exceptions.BadRequest(f"Invalid input received: the image needs "
                                        f"{max(min_disk, size_gb)} GiB, the volume has "
                                        f"{volume.size}.")
        previous = volume.status
        volume.status, volume.updated_at = "downloading", utcnow()
    api.manager().cast(ctx, "reimage_volume", volume_id=volume_id,
                       image=api._image_summary(image), previous_status=previous)
