"""The JSON shapes glance returns for images and members."""
from __future__ import annotations

from pocketstack.common.timeutils import isotime
from pocketstack.image import stores
from pocketstack.image.models import Image, ImageMember

# Columns shown as top-level image attributes, in glance's order.
ATTRIBUTES = ("name", "disk_format", "container_format", "visibility", "size", "virtual_size",
              "status", "checksum", "protected", "min_ram", "min_disk", "owner", "os_hidden",
              "os_hash_algo", "os_hash_value")


def image(img: Image) -> dict:
    view = {p.name: p.value for p in img.properties}
    for key in ATTRIBUTES:
        view[key] = getattr(img, key)
    view["id"] = img.id
    view["created_at"] = isotime(img.created_at)
    view["updated_at"] = isotime(img.updated_at)
    view["tags"] = [t.value for t in img.tags]
    view["self"] = f"/v2/images/{img.id}"
    view["file"] = f"/v2/images/{img.id}/file"
    view["schema"] = "/v2/schemas/image"
    return stores.decorate(view, img)


def member(m: ImageMember) -> dict:
    return {"created_at": isotime(m.created_at), "image_id": m.image_id,
            "member_id": m.member, "schema": "/v2/schemas/member", "status": m.status,
            "updated_at": isotime(m.updated_at)}
