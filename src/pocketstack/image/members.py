"""Image members: sharing a ``shared`` image with other projects (glance's image_members).

The owner adds a project as a member (status ``pending``); the member project accepts or
rejects it, and an accepted image shows in that project's image list. A pending or
rejected image can still be fetched by id by the member, so it can change its mind.
"""
from __future__ import annotations

from typing import Any

from pocketstack.common import config, db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.image import access, schemas, views
from pocketstack.image.models import Image, ImageMember


def _shared_image(s, ctx, image_id: str) -> Image:
    image = access.load(s, ctx, image_id, lock=True)
    if image.visibility != "shared":
        raise exceptions.Forbidden("Only shared images have members.")
    return image


def _caller_membership(s, ctx, image: Image) -> str | None:
    return ctx.project_id if access.is_member(s, ctx, image) else None


def _find(s, image: Image, member_id: str) -> ImageMember:
    member = s.get(ImageMember, (image.id, member_id))
    if member is None:
        raise exceptions.NotFound(
            f"{member_id} not found in the member list of the image {image.id}.")
    return member


def add_member(ctx, image_id: str, body: Any) -> dict:
    if not isinstance(body, dict) or "member" not in body:
        raise exceptions.BadRequest("Member to be added not specified")
    member_id = body["member"]
    if not isinstance(member_id, str) or not member_id.strip() or len(member_id) > 255:
        raise exceptions.BadRequest("Member must be a project id of at most 255 characters.")
    with db.transaction() as s:
        image = _shared_image(s, ctx, image_id)
        access.authorize(ctx, "add_member", image,
                         message=f"Not allowed to create members for image {image_id}.")
        if s.get(ImageMember, (image_id, member_id)) is not None:
            raise exceptions.Conflict(
                f"Member {member_id} is duplicated for image {image_id}")
        limit = config.CONF.image.image_member_quota
        count = s.query(ImageMember).filter_by(image_id=image_id).count()
        if 0 <= limit <= count:
            raise exceptions.PayloadTooLarge(
                f"Image member limit exceeded for image {image_id}: the maximum is {limit}.")
        now = utcnow()
        member = ImageMember(image_id=image_id, member=member_id, status="pending",
                             created_at=now, updated_at=now)
        s.add(member)
        s.flush()
        return views.member(member)


def update_member(ctx, image_id: str, member_id: str, body: Any) -> dict:
    status = body.get("status") if isinstance(body, dict) else None
    if status is None:
        raise exceptions.BadRequest("Status not specified")
    if status not in schemas.MEMBER_STATUSES:
        raise exceptions.BadRequest(f"Incorrect request: Invalid status: {status}")
    with db.transaction() as s:
        image = _shared_image(s, ctx, image_id)
        member = _find(s, image, member_id)
        access.authorize(ctx, "modify_member", image, member_id=member_id,
                         message=f"Not allowed to update members for image {image_id}.")
        if member.status != status:
            member.status, member.updated_at = status, utcnow()
        return views.member(member)


def list_members(ctx, image_id: str) -> list[dict]:
    with db.reader() as s:
        image = _shared_image(s, ctx, image_id)
        caller = _caller_membership(s, ctx, image)
        access.authorize(ctx, "get_members", image, member_id=caller)
        members = s.query(ImageMember).filter_by(image_id=image_id).order_by(
            ImageMember.created_at, ImageMember.member).all()
        # A member project sees its own membership only.
        return [views.member(m) for m in members
                if access.allowed(ctx, "get_member", image, member_id=m.member)]


def get_member(ctx, image_id: str, member_id: str) -> dict:
    with db.reader() as s:
        try:
            image = _shared_image(s, ctx, image_id)
            member = _find(s, image, member_id)
            access.authorize(ctx, "get_member", image, member_id=member.member)
        except exceptions.Forbidden as error:
            # glance answers 404 here so as not to reveal who else an image is shared with.
            raise exceptions.NotFound(error.message) from None
        return views.member(member)


def delete_member(ctx, image_id: str, member_id: str) -> None:
    with db.transaction() as s:
        image = _shared_image(s, ctx, image_id)
        access.authorize(ctx, "delete_member", image,
                         message=f"Not allowed to delete members for image {image_id}.")
        s.delete(_find(s, image, member_id))
