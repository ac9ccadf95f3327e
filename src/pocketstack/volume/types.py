"""Volume types (admin-managed), their extra specs and access for private types.

``__DEFAULT__`` always exists (cinder since Train) and is what volumes get when neither the
request nor ``[volume] default_volume_type`` names another type. ``volume_backend_name`` in
a type's extra specs routes its volumes to that backend (scheduler.py).
"""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import validation
from pocketstack.volume.models import ProjectDefaultVolumeType, Volume, VolumeType, VolumeTypeAccess

DEFAULT_NAME = "__DEFAULT__"


class TypeNotFound(exceptions.NotFound):
    def __init__(self, ident: str):
        super().__init__(f"Volume type {ident} could not be found.")


def ensure_default() -> VolumeType:
    with db.transaction() as s:
        vt = s.scalar(sa.select(VolumeType).where(VolumeType.name == DEFAULT_NAME))
        if vt is None:
            vt = VolumeType(id=str(uuid.uuid4()), name=DEFAULT_NAME,
                            description="Default Volume Type", is_public=True, extra_specs={})
            try:
                with s.begin_nested():
                    s.add(vt)
            except sa.exc.IntegrityError:
                vt = s.scalar(sa.select(VolumeType).where(VolumeType.name == DEFAULT_NAME))
        return vt


def _visible(s, ctx, vt: VolumeType) -> bool:
    if vt.is_public or ctx.is_admin:
        return True
    return s.get(VolumeTypeAccess, (vt.id, ctx.project_id)) is not None


def find(s, ctx, ident: str) -> VolumeType:
    """A type the caller can use, by id or name; 404 otherwise."""
    vt = s.get(VolumeType, ident) or s.scalar(sa.select(VolumeType)
                                              .where(VolumeType.name == ident))
    if vt is None or not _visible(s, ctx, vt):
        raise TypeNotFound(ident)
    return vt


def default_for(s, ctx) -> VolumeType:
    own = _project_default(s, ctx.project_id)
    if own is not None:
        return own
    name = config.CONF.volume.default_volume_type or DEFAULT_NAME
    vt = s.scalar(sa.select(VolumeType).where(VolumeType.name == name))
    if vt is None:
        vt = ensure_default()
        vt = s.get(VolumeType, vt.id)
    return vt


def list_types(ctx, is_public: str | None = None) -> list[VolumeType]:
    ensure_default()
    with db.reader() as s:
        found = s.scalars(sa.select(VolumeType).order_by(VolumeType.name)).all()
        if ctx.is_admin and is_public is not None:
            if is_public.lower() == "none":
                return list(found)
            wanted = validation.boolean(is_public, "is_public")
            return [vt for vt in found if vt.is_public == wanted]
        return [vt for vt in found if _visible(s, ctx, vt)]


def get_type(ctx, ident: str) -> VolumeType:
    if ident == "default":
        with db.reader() as s:
            return default_for(s, ctx)
    with db.reader() as s:
        return find(s, ctx, ident)


def create_type(ctx, body) -> VolumeType:
    policy.authorize(ctx, "volume_extension:types_manage")
    data = validation.obj(body, "volume_type")
    validation.only(data, ("name", "description", "os-volume-type-access:is_public",
                           "extra_specs"), "volume_type")
    name = validation.text(data.get("name"), "name", nullable=False).strip()
    if not name:
        raise validation.bad("Volume type name can not be empty.")
    specs = data.get("extra_specs")  # an object or null (cinder); "" or 0 is a 400
    specs = {} if specs is None else validation.metadata(specs, "extra_specs")
    is_public = validation.boolean(data.get("os-volume-type-access:is_public", True),
                                   "os-volume-type-access:is_public")
    vt = VolumeType(id=str(uuid.uuid4()), name=name,
                    description=validation.text(data.get("description"), "description"),
                    is_public=is_public, extra_specs=specs)
    with db.transaction() as s:
        if s.scalar(sa.select(VolumeType.id).where(VolumeType.name == name)):
            raise exceptions.Conflict(f"Volume Type {name} already exists.")
        s.add(vt)
    return vt


def update_type(ctx, type_id: str, body) -> VolumeType:
    policy.authorize(ctx, "volume_extension:types_manage")
    data = validation.obj(body, "volume_type")
    validation.only(data, ("name", "description", "is_public"), "volume_type")
    with db.transaction() as s:
        vt = find(s, ctx, type_id)
        if "name" in data:
            name = validation.text(data["name"], "name", nullable=False).strip()
            if vt.name == DEFAULT_NAME and name != vt.name:
                raise validation.bad("The default volume type cannot be renamed.")
            clash = s.scalar(sa.select(VolumeType.id).where(VolumeType.name == name,
                                                            VolumeType.id != vt.id))
            if clash:
                raise exceptions.Conflict(f"Volume Type {name} already exists.")
            vt.name = name
        if "description" in data:
            vt.description = validation.text(data["description"], "description")
        if "is_public" in data:
            vt.is_public = validation.boolean(data["is_public"], "is_public")
        vt.updated_at = utcnow()
        return vt


def delete_type(ctx, type_id: str) -> None:
    policy.authorize(ctx, "volume_extension:types_manage")
    with db.transaction() as s:
        vt = find(s, ctx, type_id)
        if vt.name == DEFAULT_NAME:
            raise validation.bad("The __DEFAULT__ volume type cannot be deleted.")
        if s.scalar(sa.select(sa.func.count()).select_from(Volume)
                    .where(Volume.volume_type_id == vt.id)):
            raise validation.bad(f"Target volume type {vt.id} is still in use.")
        _check_not_default(s, vt.id)
        s.delete(vt)


def set_extra_specs(ctx, type_id: str, body) -> dict:
    policy.authorize(ctx, "volume_extension:types_manage")
    specs = validation.metadata(validation.obj(body, "extra_specs"), "extra_specs")
    with db.transaction() as s:
        vt = find(s, ctx, type_id)
        vt.extra_specs = dict(vt.extra_specs or {}, **specs)
        return dict(vt.extra_specs)


def get_extra_specs(ctx, type_id: str) -> dict:
    with db.reader() as s:
        vt = find(s, ctx, type_id)
        return dict(vt.extra_specs or {})


def update_extra_spec(ctx, type_id: str, key: str, body) -> dict:
    policy.authorize(ctx, "volume_extension:types_manage")
    if not isinstance(body, dict) or len(body) != 1 or key not in body:
        raise validation.bad("Request body and URI mismatch")
    spec = validation.metadata(body, "extra_specs")
    with db.transaction() as s:
        vt = find(s, ctx, type_id)
        vt.extra_specs = dict(vt.extra_specs or {}, **spec)
    return spec


def delete_extra_spec(ctx, type_id: str, key: str) -> None:
    policy.authorize(ctx, "volume_extension:types_manage")
    with db.transaction() as s:
        vt = find(s, ctx, type_id)
        specs = dict(vt.extra_specs or {})
        if key not in specs:
            raise exceptions.NotFound(f"Volume Type {type_id} has no extra specs with key "
                                      f"{key}.")
        del specs[key]
        vt.extra_specs = specs


def list_access(ctx, type_id: str) -> list[dict]:
    policy.authorize(ctx, "volume_extension:volume_type_access")
    with db.reader() as s:
        vt = find(s, ctx, type_id)
        if vt.is_public:
            raise exceptions.NotFound("Access list not available for public volume types.")
        rows = s.scalars(sa.select(VolumeTypeAccess.project_id)
                         .where(VolumeTypeAccess.volume_type_id == vt.id)).all()
        return [{"volume_type_id": vt.id, "project_id": p} for p in rows]


def change_access(ctx, type_id: str, project_id: str, add: bool) -> None:
    policy.authorize(ctx, "volume_extension:types_manage")
    with db.transaction() as s:
        vt = find(s, ctx, type_id)
        if vt.is_public:
            raise validation.bad("Invalid volume type: Type access modification is not "
                                 "applicable to public volume type.")
        row = s.get(VolumeTypeAccess, (vt.id, project_id))
        if add:
            if row is not None:
                raise exceptions.Conflict(f"Volume type access for {vt.id} / {project_id} "
                                          "combination already exists.")
            s.add(VolumeTypeAccess(volume_type_id=vt.id, project_id=project_id))
        else:
            if row is None:
                raise exceptions.NotFound(f"Volume type access not found for {vt.id} / "
                                          f"{project_id} combination.")
            s.delete(row)


# --- a project's own default type (default_types.py sets them) ----------------------------

def _project_default(s, project_id: str):
    """The project's own default type, or None."""
    row = s.get(ProjectDefaultVolumeType, project_id)
    return s.get(VolumeType, row.volume_type_id) if row is not None else None


def _check_not_default(s, type_id: str) -> None:
    if s.scalar(sa.select(sa.func.count()).select_from(ProjectDefaultVolumeType)
                .where(ProjectDefaultVolumeType.volume_type_id == type_id)):
        raise exceptions.BadRequest(f"The volume type {type_id} is a default volume type "
                                    "and cannot be deleted.")
