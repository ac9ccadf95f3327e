"""The image service's logic: what the REST handlers, other services and the CLI call.

Every function takes the caller's RequestContext and returns plain dicts in glance's
shapes (``views``). Rules follow glance's domain layer (glance/domain/__init__.py):
images start ``queued`` with visibility ``shared``; only an admin makes an image public;
``disk_format``/``container_format`` change only while queued; protected images cannot be
deleted; deactivated images keep their data but only an admin can download it.

Data transfer lives in ``data.py``, memberships in ``members.py``, listing in ``query.py``.
``register_image`` is the in-process shortcut (create + upload) for tools such as
``pocketstack demo``.
"""
from __future__ import annotations

import logging

import uuid
from typing import Any, Iterable

from pocketstack.common import config, db, exceptions
from pocketstack.common.context import RequestContext
from pocketstack.common.timeutils import utcnow
from pocketstack.image import access, cache, patch, query, schemas, store, stores, views
from pocketstack.image.models import Image, ImageMember, ImageProperty, ImageTag

LOG = logging.getLogger(__name__)

# Attributes a create request may set directly (glance's _base_properties).
BASE_CREATE = ("checksum", "created_at", "container_format", "disk_format", "id", "min_disk",
               "min_ram", "name", "size", "virtual_size", "status", "tags", "owner",
               "updated_at", "visibility", "protected", "os_hidden")
CREATE_READONLY = ("checksum", "created_at", "size", "virtual_size", "status", "updated_at",
                   "os_hash_algo", "os_hash_value")
# Attributes a PATCH changes on the image itself rather than as an extra property.
SETTABLE = ("name", "visibility", "os_hidden", "min_disk", "min_ram", "protected", "owner",
            "disk_format", "container_format", "tags")

LOCATIONS_HIDDEN = "It's not allowed to update locations if locations are invisible."

list_images = query.list_images


def _quota(name: str) -> int:
    return getattr(config.CONF.image, name)


def _check_counts(properties: int, tags: int) -> None:
    for count, option, what in ((properties, "image_property_quota", "properties"),
                                (tags, "image_tag_quota", "tags")):
        limit = _quota(option)
        if limit >= 0 and count > limit:
            raise exceptions.PayloadTooLarge(
                f"Maximum number of {what} exceeded. Attempted: {count}, Maximum: {limit}")


INT_MAX = 2**31 - 1  # min_disk and min_ram are 32-bit columns


def _check_non_negative(name: str, value: Any) -> None:
    if value is not None and value < 0:
        raise exceptions.BadRequest(
            f"Invalid value '{value}' for parameter '{name}': Cannot be a negative value.")
    if value is not None and value > INT_MAX:
        raise exceptions.BadRequest(
            f"Invalid value '{value}' for parameter '{name}': Cannot be more than {INT_MAX}.")


def _authorize_visibility(ctx, image: Image, visibility: str) -> None:
    if visibility == "public":
        access.authorize(ctx, "publicize_image", image,
                         message="You are not authorized to complete publicize_image action.")
    elif visibility == "community":
        access.authorize(ctx, "communitize_image", image,
                         message="You are not authorized to complete communitize_image action.")


def _set_tags(image: Image, tags: Iterable[str]) -> None:
    wanted = list(dict.fromkeys(tags))
    current = {t.value: t for t in image.tags}
    image.tags = [current.get(t) or ImageTag(value=t) for t in wanted]


def _set_property(image: Image, name: str, value: str) -> None:
    for prop in image.properties:
        if prop.name == name:
            prop.value = value
            return
    image.properties.append(ImageProperty(name=name, value=value))


# --- images ---------------------------------------------------------------------------


def create_image(ctx, body: Any) -> dict:
    if not isinstance(body, dict):
        raise exceptions.BadRequest("The request body must be a JSON object of image "
                                    "attributes.")
    body = dict(body)
    for key in patch.DISALLOWED:
        if key in body:
            raise exceptions.Forbidden(f"Attribute '{key}' is read-only.")
    schemas.validate_image(body)
    if "locations" in body:
        raise exceptions.Forbidden(LOCATIONS_HIDDEN)
    for key in CREATE_READONLY:
        if key in body:
            raise exceptions.Forbidden(f"Attribute '{key}' is read-only.")
    tags = body.pop("tags", [])
    base = {key: body.pop(key) for key in BASE_CREATE if key in body}
    extra = body
    for key in extra:
        if len(key) > 255:
            raise exceptions.BadRequest("Custom property should not be greater than 255 "
                                        "characters.")
        patch.check_reserved(key)
    _check_non_negative("min_disk", base.get("min_disk"))
    _check_non_negative("min_ram", base.get("min_ram"))
    owner = base["owner"] if "owner" in base else ctx.project_id
    now = utcnow()
    image = Image(id=base.get("id") or str(uuid.uuid4()), name=base.get("name"),
                  disk_format=base.get("disk_format"),
                  container_format=base.get("container_format"), status="queued",
                  visibility=base.get("visibility", "shared"),
                  min_disk=base.get("min_disk") or 0, min_ram=base.get("min_ram") or 0,
                  protected=base.get("protected", False), os_hidden=base.get("os_hidden", False),
                  owner=owner, created_at=now, updated_at=now, deleted=False)
    access.authorize(ctx, "add_image", image)
    _authorize_visibility(ctx, image, image.visibility)
    _check_counts(len(extra), len(set(tags)))
    image.properties = [ImageProperty(name=k, value=v) for k, v in extra.items()]
    _set_tags(image, tags)
    with db.transaction() as s:
        if s.get(Image, image.id) is not None:
            raise exceptions.Conflict(f"Image with identifier {image.id} already exists!")
        s.add(image)
        s.flush()
        return views.image(image)


def get_image(ctx, image_id: str) -> dict:
    with db.reader() as s:
        image = access.load(s, ctx, image_id)
        access.authorize(ctx, "get_image", image)
        return views.image(image)


def update_image(ctx, image_id: str, changes: list[patch.Change]) -> dict:
    """Apply parsed JSON-patch changes (see patch.parse) in one transaction."""
    with db.transaction() as s:
        image = access.load(s, ctx, image_id, lock=True)
        access.authorize(ctx, "modify_image", image)
        for change in changes:
            _apply(ctx, image, change)
        _check_counts(len(image.properties), len(image.tags))
        if changes:
            image.updated_at = utcnow()
        s.flush()
        return views.image(image)


def _apply(ctx, image: Image, change: patch.Change) -> None:
    root, value = change.root, change.value
    if root == "locations":
        raise exceptions.Forbidden(LOCATIONS_HIDDEN)
    if change.op == "remove":
        if root in SETTABLE:
            raise exceptions.Forbidden(f"Property {root} may not be removed.")
        for prop in image.properties:
            if prop.name == root:
                image.properties.remove(prop)
                return
        raise exceptions.Conflict(f"Property {root} does not exist.")
    if root in SETTABLE:
        if change.op == "add" and change.draft == 4:
            raise exceptions.Conflict(f"Property {root} already present.")
        _set_attribute(ctx, image, root, value)
        return
    exists = any(p.name == root for p in image.properties)
    if change.op == "replace" and not exists:
        raise exceptions.Conflict(f"Property {root} does not exist.")
    if change.op == "add" and change.draft == 4 and exists:
        raise exceptions.Conflict(f"Property {root} already present.")
    _set_property(image, root, value)


def _set_attribute(ctx, image: Image, name: str, value: Any) -> None:
    if name == "owner" and not ctx.is_admin:
        raise exceptions.Forbidden("Owner can't be updated by non admin.")
    if name in ("disk_format", "container_format") and image.status not in ("queued",
                                                                             "importing"):
        raise exceptions.Forbidden(f"Attribute {name} can be only replaced for a queued image.")
    if name in ("min_disk", "min_ram"):
        _check_non_negative(name, value)
    if name == "visibility":
        _authorize_visibility(ctx, image, value)
    if name == "tags":
        _set_tags(image, value)
    else:
        setattr(image, name, value)


def delete_image(ctx, image_id: str) -> None:
    with db.transaction() as s:
        image = access.load(s, ctx, image_id, lock=True)
        access.authorize(ctx, "delete_image", image)
        if image.protected:
            raise exceptions.Forbidden(f"Image {image_id} is protected and cannot be deleted.")
        stores.delete_before_commit(image)  # 409 while clones of an rbd image exist
        delete_later = stores.delete_after_commit(image)
        key_id = _key_to_delete(image)
        now = utcnow()
        image.status, image.deleted, image.deleted_at, image.updated_at = \
            "deleted", True, now, now
        image.staged = None
        image.properties, image.tags = [], []
        s.query(ImageMember).filter_by(image_id=image_id).delete()
    # After the commit: a reader that opened the file before keeps reading it.
    store.delete(image_id)
    for remove in delete_later:
        remove()
    cache.forget(image_id)
    if key_id is not None:
        _delete_encryption_key(ctx, key_id)


def _key_to_delete(image) -> str | None:
    """The key of an encrypted volume's upload that goes with the image (glance's
    ``cinder_encryption_key_deletion_policy`` = ``on_image_deletion``), else None."""
    props = {p.name: p.value for p in image.properties}
    if props.get("cinder_encryption_key_deletion_policy") != "on_image_deletion":
        return None
    return props.get("cinder_encryption_key_id")


def _delete_encryption_key(ctx, key_id: str) -> None:
    """As glance, with the user's token; a key it may not delete (or gone) is logged."""
    from pocketstack.clients.keymanager import KeyManagerClient

    try:
        KeyManagerClient(ctx, caller="image").delete_key(key_id)
    except exceptions.PocketstackError as error:
        LOG.warning("Could not delete encryption key %s of a deleted image: %s", key_id,
                    error)


def delete_from_store(ctx, store_name: str, image_id: str) -> None:
    """DELETE /v2/stores/{store}/{image} (2.10): the data one store holds (not the last)."""
    if not stores.multiple():
        raise exceptions.NotFound("The resource could not be found.")
    if store_name not in stores.enabled():
        raise exceptions.Conflict(f"The selected store {store_name} is not available on "
                                  "this node.")
    with db.transaction() as s:
        try:
            image = access.load(s, ctx, image_id, lock=True)
        except exceptions.NotFound:
            raise exceptions.NotFound(f"Failed to find image {image_id}") from None
        access.authorize(ctx, "delete_image_location", image)
        stores.remove_copy(image, store_name)
        image.updated_at = utcnow()
    if store_name == stores.FILE:  # after the commit, as delete_image
        store.delete(image_id, staged=False)


def _change_activation(ctx, image_id: str, action: str, source: str, result: str) -> None:
    with db.transaction() as s:
        image = access.load(s, ctx, image_id, lock=True)
        access.authorize(ctx, action, image)
        if image.status == result:
            return
        if image.status != source:
            raise exceptions.Forbidden(f"Not allowed to {action} image in status "
                                       f"'{image.status}'")
        image.status, image.updated_at = result, utcnow()


def deactivate_image(ctx, image_id: str) -> None:
    _change_activation(ctx, image_id, "deactivate", "active", "deactivated")


def reactivate_image(ctx, image_id: str) -> None:
    _change_activation(ctx, image_id, "reactivate", "deactivated", "active")


# --- tags -----------------------------------------------------------------------------


def add_tag(ctx, image_id: str, tag: str) -> None:
    schemas.validate_image({"tags": [tag]})
    with db.transaction() as s:
        image = access.load(s, ctx, image_id, lock=True)
        access.authorize(ctx, "modify_image", image)
        if any(t.value == tag for t in image.tags):
            return
        _check_counts(0, len(image.tags) + 1)
        image.tags.append(ImageTag(value=tag))
        image.updated_at = utcnow()


def delete_tag(ctx, image_id: str, tag: str) -> None:
    with db.transaction() as s:
        image = access.load(s, ctx, image_id, lock=True)
        access.authorize(ctx, "modify_image", image)
        for existing in image.tags:
            if existing.value == tag:
                image.tags.remove(existing)
                image.updated_at = utcnow()
                return
        raise exceptions.NotFound(f"Tag {tag} not found on image {image_id}.")


# --- in-process registration ----------------------------------------------------------


def register_image(ctx, name: str, data: Iterable[bytes], *, disk_format: str = "raw",
                   container_format: str = "bare", **attributes: Any) -> dict:
    """Create an image and upload ``data`` (an iterable of bytes chunks) into it.

    ``attributes`` are image attributes (visibility, min_disk, …) and string properties.
    Returns the active image. On any failure the image is deleted again. Outside a started
    cloud, call ``store.configure(data_dir)`` first.
    """
    from pocketstack.image import data as image_data

    created = create_image(ctx, dict(attributes, name=name, disk_format=disk_format,
                                     container_format=container_format))
    try:
        image_data.upload_iterable(ctx, created["id"], data)
    except BaseException:
        with db.transaction() as s:
            s.get(Image, created["id"]).protected = False
        delete_image(RequestContext.admin(ctx.request_id), created["id"])
        raise
    return get_image(ctx, created["id"])
