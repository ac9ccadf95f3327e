"""Per-project default volume types (cinder's default-types API, microversion 3.62): an
admin sets, shows, lists and unsets the type a project's volumes get when a create names
none; it overrides ``[volume] default_volume_type`` for that project. A type that is some
project's default cannot be deleted (as cinder)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import types, validation
from pocketstack.volume.models import ProjectDefaultVolumeType


class DefaultNotFound(exceptions.NotFound):
    def __init__(self, project_id: str):
        super().__init__(f"Default type for project {project_id} not found.")


def view(row: ProjectDefaultVolumeType) -> dict:
    return {"project_id": row.project_id, "volume_type_id": row.volume_type_id}


def _project(project_id: str) -> str:
    return validation.text(project_id, "project_id", nullable=False)


def set_default(ctx, project_id: str, body) -> dict:
    policy.authorize(ctx, "volume_extension:default_set_or_update",
                     {"project_id": project_id})
    data = validation.obj(body, "default_type")
    validation.only(data, ("volume_type",), "default_type")
    wanted = validation.text(data.get("volume_type"), "volume_type", nullable=False)
    project_id = _project(project_id)
    with db.transaction() as s:
        try:
            vt = types.find(s, ctx, wanted)
        except types.TypeNotFound as error:  # cinder: a 400 with the not-found message
            raise exceptions.BadRequest(str(error)) from None
        row = s.get(ProjectDefaultVolumeType, project_id)
        if row is None:
            row = ProjectDefaultVolumeType(project_id=project_id, volume_type_id=vt.id)
            s.add(row)
        else:
            row.volume_type_id, row.updated_at = vt.id, utcnow()
        return view(row)


def get_default(ctx, project_id: str) -> dict:
    policy.authorize(ctx, "volume_extension:default_get", {"project_id": project_id})
    with db.reader() as s:
        row = s.get(ProjectDefaultVolumeType, _project(project_id))
        if row is None:
            raise DefaultNotFound(project_id)
        return view(row)


def list_defaults(ctx) -> list[dict]:
    policy.authorize(ctx, "volume_extension:default_get_all")
    with db.reader() as s:
        return [view(r) for r in s.scalars(sa.select(ProjectDefaultVolumeType)
                                           .order_by(ProjectDefaultVolumeType.project_id))]


def unset_default(ctx, project_id: str) -> None:
    policy.authorize(ctx, "volume_extension:default_unset", {"project_id": project_id})
    with db.transaction() as s:
        s.execute(sa.delete(ProjectDefaultVolumeType)
                  .where(ProjectDefaultVolumeType.project_id == _project(project_id)))

