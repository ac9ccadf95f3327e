"""Tasks (/v2/tasks, /v2/images/{id}/tasks): the record glance keeps of each import.

Every import (glance-direct, web-download, copy-image) is an ``api_image_import`` task:
pending when the request is accepted, processing while data moves, then success or failure
with a message. A task expires ``[image] task_time_to_live`` hours after it ends, as in
glance; expired tasks are no longer listed. Listing and showing /v2/tasks is admin-only
(glance's tasks_api_access); an image's own tasks are shown to whoever may see the image.
"""
from __future__ import annotations

import datetime as dt
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy
from pocketstack.common.timeutils import isotime, isotime_naive, utcnow
from pocketstack.image import access
from pocketstack.image.models import Task

STATUSES = ("pending", "processing", "success", "failure")
TYPES = ("import", "api_image_import", "location_import")
SORT_KEYS = ("created_at", "updated_at", "id", "status", "type", "owner", "expires_at")


def create(ctx, image_id: str, task_input: dict, status: str = "pending") -> str:
    """A new import task in its own transaction; its id."""
    now = utcnow()
    task = Task(id=str(uuid.uuid4()), type="api_image_import", status=status,
                owner=ctx.project_id, image_id=image_id, request_id=ctx.request_id,
                user_id=ctx.user_id, input=task_input, result=None, message="",
                created_at=now, updated_at=now)
    with db.transaction() as s:
        s.add(task)
    return task.id


def add(s, ctx, image_id: str, task_input: dict) -> str:
    """The same inside the caller's transaction (the import claims the image there)."""
    now = utcnow()
    task_id = str(uuid.uuid4())
    s.add(Task(id=task_id, type="api_image_import", status="pending", owner=ctx.project_id,
               image_id=image_id, request_id=ctx.request_id, user_id=ctx.user_id,
               input=task_input, result=None, message="", created_at=now, updated_at=now))
    return task_id


def update(task_id: str, status: str, message: str | None = None,
           result: dict | None = None) -> None:
    with db.transaction() as s:
        task = s.get(Task, task_id)
        if task is None:
            return
        task.status, task.updated_at = status, utcnow()
        if message is not None:
            task.message = message[:2000]
        if result is not None:
            task.result = result
        if status in ("success", "failure"):
            hours = config.CONF.image.task_time_to_live
            task.expires_at = task.updated_at + dt.timedelta(hours=hours)


def _live():
    now = utcnow()
    return sa.or_(Task.expires_at.is_(None), Task.expires_at > now)


def view(task: Task) -> dict:
    """glance's _format_task."""
    out = {"id": task.id, "input": task.input, "type": task.type, "status": task.status,
           "owner": task.owner, "message": task.message or "", "result": task.result,
           "created_at": isotime(task.created_at), "updated_at": isotime(task.updated_at),
           "self": f"/v2/tasks/{task.id}", "schema": "/v2/schemas/task"}
    if task.image_id:
        out["image_id"] = task.image_id
    if task.request_id:
        out["request_id"] = task.request_id
    if task.user_id:
        out["user_id"] = task.user_id
    if task.expires_at:
        out["expires_at"] = isotime(task.expires_at)
    return out


def stub(task: Task) -> dict:
    out = {k: v for k, v in view(task).items()
           if k in ("id", "type", "status", "owner", "created_at", "updated_at", "self",
                    "schema", "expires_at")}
    return out


def db_row(task: Task) -> dict:
    """/v2/images/{id}/tasks shows the database rows (glance's tasks_get_by_image)."""
    return {"id": task.id, "image_id": task.image_id, "request_id": task.request_id,
            "user_id": task.user_id, "type": task.type, "status": task.status,
            "owner": task.owner, "expires_at": isotime_naive(task.expires_at),
            "created_at": isotime_naive(task.created_at),
            "updated_at": isotime_naive(task.updated_at), "deleted_at": None,
            "deleted": False, "input": task.input, "result": task.result,
            "message": task.message or ""}


def authorize(ctx) -> None:
    policy.authorize(ctx, "image:tasks_api_access", {"project_id": ctx.project_id or ""})


def get(ctx, task_id: str) -> dict:
    authorize(ctx)
    with db.reader() as s:
        task = s.get(Task, task_id) if len(task_id) <= 36 else None
        if task is None or not (ctx.is_admin or task.owner == ctx.project_id):
            raise exceptions.NotFound(f"Task with the given id {task_id} not found")
        return view(task)


def _int(value: str, name: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise exceptions.BadRequest(f"{name} param must be an integer") from None
    if number < 0:
        raise exceptions.BadRequest(f"{name} param must be positive")
    return number


def list_tasks(ctx, params: dict) -> tuple[list[dict], str | None]:
    """GET /v2/tasks: newest first by default; ``next_marker`` when a page is full."""
    authorize(ctx)
    params = dict(params)
    limit = params.pop("limit", None)
    marker = params.pop("marker", None)
    sort_key = params.pop("sort_key", "created_at")
    sort_dir = params.pop("sort_dir", "desc")
    if sort_dir not in ("asc", "desc"):
        raise exceptions.BadRequest(f"Invalid sort direction: {sort_dir}")
    if sort_key not in SORT_KEYS:
        raise exceptions.BadRequest(f"Invalid sort key: {sort_key}.")
    status, kind = params.get("status"), params.get("type")
    if status and status not in STATUSES:
        raise exceptions.BadRequest(f"Invalid status value: {status}")
    if kind and kind not in ("import",):
        raise exceptions.BadRequest(f"Invalid type value: {kind}")
    if marker is not None:
        try:
            uuid.UUID(marker)
        except ValueError:
            raise exceptions.BadRequest("Invalid marker format") from None
    cap = config.CONF.image.api_limit_max
    size = min(cap, _int(limit, "limit") if limit is not None else
               config.CONF.image.limit_param_default)
    column = getattr(Task, sort_key)
    order = (column.desc(), Task.id.desc()) if sort_dir == "desc" else \
        (column.asc(), Task.id.asc())
    with db.reader() as s:
        stmt = sa.select(Task).where(_live())
        if not ctx.is_admin:
            stmt = stmt.where(Task.owner == ctx.project_id)
        if status:
            stmt = stmt.where(Task.status == status)
        if kind:
            stmt = stmt.where(Task.type == kind)
        if marker is not None:
            mark = s.get(Task, marker)
            if mark is None:
                raise exceptions.BadRequest(f"Task with the given id {marker} not found")
            value = getattr(mark, sort_key)
            after = (column < value) if sort_dir == "desc" else (column > value)
            same = sa.and_(column == value,
                           Task.id < mark.id if sort_dir == "desc" else Task.id > mark.id)
            stmt = stmt.where(sa.or_(after, same))
        rows = s.scalars(stmt.order_by(*order).limit(size)).all()
        tasks = [stub(t) for t in rows]
    following = rows[-1].id if rows and len(rows) == size else None
    return tasks, following


def for_image(ctx, image_id: str) -> list[dict]:
    with db.reader() as s:
        image = access.load(s, ctx, image_id)
        access.authorize(ctx, "get_image", image)
        stmt = sa.select(Task).where(Task.image_id == image_id, _live())
        if not ctx.is_admin:
            stmt = stmt.where(Task.owner == ctx.project_id)
        return [db_row(t) for t in s.scalars(stmt.order_by(Task.created_at))]
