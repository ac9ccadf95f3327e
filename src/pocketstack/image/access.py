"""Who can see an image, and the policy target glance's rules are written against."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import exceptions, policy
from pocketstack.image.models import Image, ImageMember

# Image ids are UUIDs; anything longer is simply not found (glance's _check_image_id).
MAX_ID_LENGTH = 36


def is_member(s, ctx, image: Image) -> bool:
    if not ctx.project_id:
        return False
    return s.get(ImageMember, (image.id, ctx.project_id)) is not None


def can_see(s, ctx, image: Image) -> bool:
    """glance's is_image_visible: admin, ownerless, public, community, own, or shared with
    the caller's project (whatever the membership status, so it can be accepted)."""
    if ctx.is_admin or image.owner is None or image.visibility in ("public", "community"):
        return True
    if ctx.project_id and ctx.project_id == image.owner:
        return True
    return image.visibility == "shared" and is_member(s, ctx, image)


# Built once: every boot's image lookup comes here (Session.get builds its query anew).
_GET = sa.select(Image).where(Image.id == sa.bindparam("id"))


def load(s, ctx, image_id: str, *, lock: bool = False) -> Image:
    """The image if the caller can see it, else 404 (never 403: that would leak it exists)."""
    image = None
    if len(image_id) <= MAX_ID_LENGTH:
        if lock:
            image = s.scalar(sa.select(Image).where(Image.id == image_id).with_for_update())
        else:
            image = s.scalars(_GET, {"id": image_id}).first()
    if image is None or image.deleted or not can_see(s, ctx, image):
        raise exceptions.NotFound(f"No image found with ID {image_id}")
    return image


def target(ctx, image: Image, member_id: str | None = None) -> dict:
    return {"project_id": image.owner or "", "owner": image.owner or "",
            "visibility": image.visibility, "member_id": member_id or ""}


def authorize(ctx, action: str, image: Image, member_id: str | None = None,
              message: str | None = None) -> None:
    try:
        policy.authorize(ctx, f"image:{action}", target(ctx, image, member_id))
    except exceptions.Forbidden:
        if message:
            raise exceptions.Forbidden(message) from None
        raise


def allowed(ctx, action: str, image: Image, member_id: str | None = None) -> bool:
    return policy.check(ctx, f"image:{action}", target(ctx, image, member_id))
