"""/servers/{id}/os-instance-actions (+events): the trace as nova shows it."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import isotime_naive
from pocketstack.compute import instances
from pocketstack.compute.models import ActionEvent, Instance, InstanceAction
from pocketstack.compute.rest.common import (at_least, authorize, changes_window, limit_marker,
                                             next_link, respond)
from pocketstack.compute.rest.views import host_id


def _instance(req):
    uuid = req.params["server_id"]
    with db.reader() as s:
        inst = s.get(Instance, uuid)
    if inst is None or (inst.deleted and not at_least(req, "2.21")) or (
            not req.context.is_admin and inst.project_id != req.context.project_id):
        raise instances.not_found(uuid)
    return inst


def _action(a) -> dict:
    out = {"action": a.action, "instance_uuid": a.instance_uuid, "message": a.message,
           "project_id": a.project_id, "request_id": a.request_id,
           "start_time": isotime_naive(a.start_time), "user_id": a.user_id}
    return out


def list_actions(req):
    """Newest first. From 2.58: ``limit`` / ``marker`` (a request id) with
    ``instanceActions_links``, and ``changes-since``; from 2.66 ``changes-before`` - each
    on the action's ``updated_at``, both ends included, as nova filters them."""
    inst = _instance(req)
    authorize(req, "os_compute_api:os-instance-actions:list", {"project_id": inst.project_id})
    paged = at_least(req, "2.58")
    stmt = (sa.select(InstanceAction).where(InstanceAction.instance_uuid == inst.uuid)
            .order_by(InstanceAction.start_time.desc(), InstanceAction.id.desc()))
    limit = None
    if paged:
        since, before = changes_window(req.query, at_least(req, "2.66"))
        if since is not None:
            stmt = stmt.where(InstanceAction.updated_at >= since)
        if before is not None:
            stmt = stmt.where(InstanceAction.updated_at <= before)
        limit, marker = limit_marker(req)
    with db.reader() as s:
        rows = s.scalars(stmt).all()
    if paged and marker:
        ids = [a.request_id for a in rows]
        if marker not in ids:
            raise exceptions.NotFound(f"Marker {marker} could not be found.")
        rows = rows[ids.index(marker) + 1:]
    items = []
    for a in rows[:limit]:
        item = _action(a)
        if paged:
            item["updated_at"] = isotime_naive(a.updated_at)
        items.append(item)
    body = {"instanceActions": items}
    if paged:
        more = next_link(req, f"servers/{inst.uuid}/os-instance-actions", items, limit,
                         key="request_id")
        if more:
            body["instanceActions_links"] = more
    return respond(req, body)


def show_action(req):
    inst = _instance(req)
    authorize(req, "os_compute_api:os-instance-actions:show", {"project_id": inst.project_id})
    with db.reader() as s:
        a = s.scalar(sa.select(InstanceAction).where(
            InstanceAction.instance_uuid == inst.uuid,
            InstanceAction.request_id == req.params["request_id"]))
        if a is None:
            raise exceptions.NotFound(f"Action {req.params['request_id']} not found")
        events = s.scalars(sa.select(ActionEvent).where(
            ActionEvent.request_id == a.request_id, ActionEvent.instance_uuid == inst.uuid)
            .order_by(ActionEvent.start_time, ActionEvent.id)).all()
    out = _action(a)
    if at_least(req, "2.58"):
        out["updated_at"] = isotime_naive(a.updated_at)
    target = {"project_id": inst.project_id}
    if policy.check(req.context, "os_compute_api:os-instance-actions:events", target) or \
            at_least(req, "2.51"):
        show_tb = policy.check(req.context, "os_compute_api:os-instance-actions:events", target)
        show_details = policy.check(req.context,
                                    "os_compute_api:os-instance-actions:events:details", target)
        rendered = []
        for e in events:
            ev = {"event": e.event, "start_time": isotime_naive(e.start_time),
                  "finish_time": isotime_naive(e.finish_time), "result": e.result}
            if show_tb:
                ev["traceback"] = e.traceback
            if at_least(req, "2.62"):
                ev["hostId"] = host_id(inst) if e.host else ""
                if show_details:
                    ev["host"] = e.host or ""
            if at_least(req, "2.84") and show_details:
                # nova keeps a failed event's fault message (cut to 255, as the fault's)
                # and nothing for one that succeeded
                failed = e.result == "Error"
                ev["details"] = ((e.detail or "")[:255] or None) if failed else None
            rendered.append(ev)
        out["events"] = rendered
    return respond(req, {"instanceAction": out})
