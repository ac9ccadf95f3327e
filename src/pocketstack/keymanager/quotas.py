"""barbican's quotas: per-project overrides of the configured defaults (-1 unlimited),
checked before a secret, container, order or consumer is made."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.keymanager import models
from pocketstack.keymanager.validation import check_schema, issue

RESOURCES = ("secrets", "orders", "containers", "consumers", "cas")
_COUNTED = {"secrets": models.Secret, "orders": models.Order,
            "containers": models.Container, "consumers": models.Consumer}
_SCHEMA = {
    "type": "object",
    "properties": {"project_quotas": {
        "type": "object",
        "properties": {name: {"type": "integer", "minimum": -1, "maximum": 2**31 - 1}
                       for name in RESOURCES},
        "additionalProperties": False}},
    "required": ["project_quotas"],
    "additionalProperties": False,
}


def defaults() -> dict:
    conf = config.CONF.keymanager
    return {name: getattr(conf, f"quota_{name}") for name in RESOURCES}


def effective(s, project_id: str) -> dict:
    row = s.get(models.ProjectQuota, project_id)
    return {**defaults(), **(row.quotas if row else {})}


def enforce(s, project_id: str, resource: str, operation: str) -> None:
    """QuotaReached (403) when the project holds its quota of ``resource`` already."""
    quota = effective(s, project_id)[resource]
    if quota < 0:
        return
    model = _COUNTED[resource]
    count = s.scalar(sa.select(sa.func.count()).select_from(model)
                     .where(model.project_id == project_id))
    if quota == 0 or count >= quota:
        raise issue(operation, "Creation not allowed because a quota has been reached",
                    exceptions.Forbidden)


def set_project(project_id: str, body) -> None:
    check_schema(body, _SCHEMA, "Project Quota")
    if len(project_id) > 64:  # keystone's ids are 32 characters (64 is the column's room)
        raise exceptions.BadRequest("Invalid project id.")
    with db.transaction() as s:
        row = s.get(models.ProjectQuota, project_id)
        if row is None:
            s.add(models.ProjectQuota(project_id=project_id, quotas=body["project_quotas"]))
        else:
            row.quotas = dict(body["project_quotas"])


def get_project(project_id: str) -> dict:
    with db.reader() as s:
        row = s.get(models.ProjectQuota, project_id)
        if row is None:
            raise exceptions.NotFound("Project quotas not found.")
        return dict(row.quotas)


def list_projects(offset: int, limit: int) -> tuple[list, int]:
    with db.reader() as s:
        rows = list(s.scalars(sa.select(models.ProjectQuota)
                              .order_by(models.ProjectQuota.project_id)))
    return ([{"project_id": r.project_id, "project_quotas": dict(r.quotas)}
             for r in rows[offset:offset + limit]], len(rows))


def delete_project(project_id: str) -> None:
    with db.transaction() as s:
        row = s.get(models.ProjectQuota, project_id)
        if row is None:
            raise exceptions.NotFound("Project quotas not found.")
        s.delete(row)
