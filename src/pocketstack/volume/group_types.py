"""Group types (cinder 3.11): admin-managed kinds of generic volume groups and their
group_specs. Users see the public ones (without specs); ``/group_types/default`` names
the configured default, which pocketstack does not set (404, as cinder without one)."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import validation
from pocketstack.volume.models import GroupType, VolumeGroup


class GroupTypeNotFound(exceptions.NotFound):
    def __init__(self, ident):
        super().__init__(f"Group type {ident} could not be found.")


def view(gt: GroupType, ctx) -> dict:
    out = {"id": gt.id, "name": gt.name, "description": gt.description,
           "is_public": gt.is_public}
    if policy.check(ctx, "group:access_group_types_specs"):
        out["group_specs"] = dict(gt.group_specs or {})
    return out


def find(s, ctx, ident: str) -> GroupType:
    """By id or name, if the caller may see it."""
    gt = s.get(GroupType, ident) or s.scalar(sa.select(GroupType)
                                             .where(GroupType.name == ident))
    if gt is None or (not gt.is_public and not ctx.is_admin):
        raise GroupTypeNotFound(ident)
    return gt


def get(ctx, ident: str) -> GroupType:
    if ident == "default":
        raise exceptions.NotFound("Default group type could not be found.")
    with db.reader() as s:
        return find(s, ctx, ident)


def list_types(ctx, query) -> list[GroupType]:
    with db.reader() as s:
        found = list(s.scalars(sa.select(GroupType).order_by(GroupType.created_at)))
    if ctx.is_admin and query.get("is_public") is not None:
        if str(query["is_public"]).lower() != "none":
            wanted = validation.boolean(query["is_public"], "is_public")
            found = [gt for gt in found if gt.is_public == wanted]
        return found
    return [gt for gt in found if gt.is_public or ctx.is_admin]


def _name(value, required: bool) -> str | None:
    name = validation.text(value, "name", nullable=not required)
    if name is not None:
        name = name.strip()
        if not name:
            raise validation.bad("Invalid input for field/attribute name. Name must not be "
                                 "empty.")
    return name


def _specs(value) -> dict:
    return validation.metadata(value if value is not None else {}, "group_specs")


def create(ctx, body) -> GroupType:
    policy.authorize(ctx, "group:group_types:create")
    data = validation.obj(body, "group_type")
    validation.only(data, ("name", "description", "is_public", "group_specs"), "group_type")
    if "name" not in data:
        raise validation.bad("Invalid input for field/attribute group_type. 'name' is a "
                             "required property")
    gt = GroupType(id=str(uuid.uuid4()), name=_name(data["name"], True),
                   description=validation.text(data.get("description"), "description"),
                   is_public=validation.boolean(data.get("is_public", True), "is_public"),
                   group_specs=_specs(data.get("group_specs")), created_at=utcnow())
    with db.transaction() as s:
        if s.scalar(sa.select(GroupType.id).where(GroupType.name == gt.name)):
            raise exceptions.Conflict(f"Group Type {gt.name} already exists.")
        s.add(gt)
        s.flush()
        s.expunge(gt)
    return gt


def update(ctx, type_id: str, body) -> GroupType:
    policy.authorize(ctx, "group:group_types:update")
    data = validation.obj(body, "group_type")
    # group_specs: openstacksdk's update_group_type sends them back (cinder refuses them);
    # they are set as the specs API would
    validation.only(data, ("name", "description", "is_public", "group_specs"), "group_type")
    specs = _specs(data.pop("group_specs", None))
    if specs:
        set_specs(ctx, type_id, specs, "update")
    if not data and not specs:
        raise validation.bad("Specify group type name, description or a combination "
                             "thereof.")
    with db.transaction() as s:
        gt = find(s, ctx, type_id)
        if "name" in data:
            name = _name(data["name"], True)
            other = s.scalar(sa.select(GroupType.id).where(GroupType.name == name))
            if other and other != gt.id:
                raise exceptions.Conflict(f"Group Type {name} already exists.")
            gt.name = name
        if "description" in data:
            gt.description = validation.text(data["description"], "description")
        if "is_public" in data:
            gt.is_public = validation.boolean(data["is_public"], "is_public")
        gt.updated_at = utcnow()
        s.flush()
        s.expunge(gt)
    return gt


def delete(ctx, type_id: str) -> None:
    policy.authorize(ctx, "group:group_types:delete")
    with db.transaction() as s:
        gt = find(s, ctx, type_id)
        if s.scalar(sa.select(sa.func.count()).select_from(VolumeGroup)
                    .where(VolumeGroup.group_type_id == gt.id)):
            raise exceptions.BadRequest(f"Target group type {gt.id} is still in use.")
        s.delete(gt)


# --- group_specs -------------------------------------------------------------------------


def get_specs(ctx, type_id: str) -> dict:
    policy.authorize(ctx, "group:group_types_specs:get_all")
    with db.reader() as s:
        return dict(find(s, ctx, type_id).group_specs or {})


def set_specs(ctx, type_id: str, specs: dict, action: str) -> dict:
    policy.authorize(ctx, f"group:group_types_specs:{action}")
    specs = _specs(specs)
    with db.transaction() as s:
        gt = find(s, ctx, type_id)
        gt.group_specs = dict(gt.group_specs or {}, **specs)
        gt.updated_at = utcnow()
        return dict(gt.group_specs)


def delete_spec(ctx, type_id: str, key: str) -> None:
    policy.authorize(ctx, "group:group_types_specs:delete")
    with db.transaction() as s:
        gt = find(s, ctx, type_id)
        specs = dict(gt.group_specs or {})
        if key not in specs:
            raise exceptions.NotFound(f"Group Type {type_id} has no specs with key {key}.")
        del specs[key]
        gt.group_specs = specs
