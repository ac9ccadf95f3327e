"""Trace reads: every event of a request (or of a server), ordered, with offsets."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import isotime_naive
from pocketstack.compute.models import ActionEvent, Instance, InstanceAction


def _visible(ctx, instance_uuids) -> set[str]:
    with db.reader() as s:
        rows = s.execute(sa.select(Instance.uuid, Instance.project_id)
                         .where(Instance.uuid.in_(list(instance_uuids)))).all()
    return {u for u, p in rows if ctx.is_admin or p == ctx.project_id}


def _render(events) -> list[dict]:
    if not events:
        return []
    t0 = min(e.start_time for e in events)
    out = []
    for e in events:
        end = e.finish_time or e.start_time
        out.append({"request_id": e.request_id, "instance": e.instance_uuid, "service": e.service,
                    "host": e.host, "step": e.event, "seed_step": e.seed_step,
                    "start": isotime_naive(e.start_time), "finish": isotime_naive(e.finish_time),
                    "offset_ms": round((e.start_time - t0).total_seconds() * 1000, 3),
                    "duration_ms": round((end - e.start_time).total_seconds() * 1000, 3),
                    "result": e.result, "detail": e.detail})
    return out


def by_request(ctx, request_id: str) -> dict:
    with db.reader() as s:
        events = s.scalars(sa.select(ActionEvent).where(ActionEvent.request_id == request_id)
                           .order_by(ActionEvent.start_time, ActionEvent.id)).all()
    allowed = _visible(ctx, {e.instance_uuid for e in events})
    events = [e for e in events if e.instance_uuid in allowed]
    if not events:
        raise exceptions.NotFound(f"No trace for request {request_id}.")
    return {"request_id": request_id, "events": _render(events)}


def by_server(ctx, server_id: str) -> dict:
    if not _visible(ctx, {server_id}):
        raise exceptions.NotFound(f"Server {server_id} could not be found.")
    with db.reader() as s:
        actions = s.scalars(sa.select(InstanceAction)
                            .where(InstanceAction.instance_uuid == server_id)
                            .order_by(InstanceAction.start_time, InstanceAction.id)).all()
        events = s.scalars(sa.select(ActionEvent).where(ActionEvent.instance_uuid == server_id)
                           .order_by(ActionEvent.start_time, ActionEvent.id)).all()
    return {"server_id": server_id,
            "actions": [{"action": a.action, "request_id": a.request_id,
                         "start_time": isotime_naive(a.start_time),
                         "finish_time": isotime_naive(a.finish_time), "message": a.message}
                        for a in actions],
            "events": _render(events)}
