"""Pipeline trace: every step records one event (request id, instance, service, host,
step, start, finish, result, detail). The rows are nova's instance action events too, so
`openstack server event show` and /pocketstack/v1/traces/<request id> read the same data.

Events are written in the transaction of the state change they belong to when there is
one (``instances.update(..., events=[...])``), so a boot costs no extra commits for its
trace.
"""
from __future__ import annotations

import datetime as dt
import logging
import traceback as tb

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.compute.models import ActionEvent, InstanceAction

LOG = logging.getLogger(__name__)
_EVENTS = ActionEvent.__table__
_ACTIONS = InstanceAction.__table__
_INSERT_EVENTS = sa.insert(_EVENTS)
_INSERT_ACTION = sa.insert(_ACTIONS)

# The seed-001 step each event belongs to (shown by `pocketstack trace`).
SEED_STEPS = {
    "api_validate": "3-5", "api_create": "6-7", "api_delete": "3-7",
    "conductor_schedule_and_build_instances": "8", "scheduler_select_destinations": "9-11",
    "scheduler_claim_resources": "11", "conductor_cast_build": "12",
    "compute__do_build_and_run_instance": "13-28", "compute_get_image": "19-21",
    "compute_allocate_network": "22-24", "compute_wait_vif_plugged": "24",
    "compute_refresh_network_info": "24",
    "compute_prep_block_device": "25-27", "compute_spawn": "28",
    "compute_create_volume": "25", "compute_attach_volume": "26-27",
    "api_attach_volume": "-", "api_detach_volume": "-", "compute_detach_volume": "-",
    "compute_cleanup": "-", "conductor_reschedule": "8-12", "conductor_build_timeout": "-",
}


class Step:
    """Time one step; ``event()`` gives the row to store (call once the step is over)."""

    def __init__(self, ctx, instance_uuid: str, name: str, service: str, host: str | None,
                 detail: str = ""):
        self.ctx, self.instance_uuid, self.name = ctx, instance_uuid, name
        self.service, self.host, self.detail = service, host, detail
        self.start = utcnow()
        self.finish: dt.datetime | None = None
        self.result: str | None = None
        self.traceback: str | None = None

    def done(self, result: str = "Success", detail: str | None = None,
             error: BaseException | None = None) -> "Step":
        self.finish = utcnow()
        self.result = result
        if detail is not None:
            self.detail = detail
        if error is not None:
            self.result = "Error"
            self.detail = self.detail or str(error)
            self.traceback = "".join(tb.format_exception_only(type(error), error)).strip()
        return self

    def fail(self, error: BaseException | str) -> "Step":
        if isinstance(error, BaseException):
            return self.done("Error", error=error)
        return self.done("Error", detail=str(error))

    def values(self) -> dict:
        """The event's column values (call once the step is over)."""
        return {"request_id": self.ctx.request_id, "instance_uuid": self.instance_uuid,
                "event": self.name, "service": self.service, "host": self.host,
                "seed_step": SEED_STEPS.get(self.name, ""), "start_time": self.start,
                "finish_time": self.finish, "result": self.result,
                "detail": (self.detail or "")[:4000], "traceback": self.traceback}

    def row(self) -> ActionEvent:
        return ActionEvent(**self.values())


def store(session, steps) -> None:
    """Add the steps' events to ``session``'s transaction: one Core INSERT for all of them
    (no ORM unit of work: every state change of a boot carries events, so this is on the
    hot path)."""
    rows = []
    for step in steps:
        if step.finish is None:
            step.done()
        rows.append(step.values())
    store_rows(session, rows)


def store_rows(session, rows: list[dict]) -> None:
    """Add events given as their column values (Step.values())."""
    if rows:
        session.connection().execute(_INSERT_EVENTS, rows)


def record(*steps: Step) -> None:
    """Write steps in their own transaction (when no state change carries them)."""
    try:
        with db.transaction() as s:
            store(s, steps)
    except Exception:  # noqa: BLE001 - tracing must never break the pipeline
        LOG.exception("Could not record trace events")


def start_action(session, ctx, instance_uuid: str, action: str) -> None:
    """nova's instance action: one per user request on a server."""
    now = utcnow()
    session.connection().execute(_INSERT_ACTION, [{
        "instance_uuid": instance_uuid, "action": action, "request_id": ctx.request_id,
        "user_id": ctx.user_id, "project_id": ctx.project_id, "start_time": now,
        "updated_at": now}])


_FINISH = (sa.update(_ACTIONS)
           .where(_ACTIONS.c.request_id == sa.bindparam("req"),
                  _ACTIONS.c.instance_uuid == sa.bindparam("uuid"))
           .values(finish_time=sa.bindparam("now"), updated_at=sa.bindparam("now"),
                   message=sa.bindparam("msg")))


def finish_action(session, request_id: str, instance_uuid: str, message: str | None = None):
    session.connection().execute(_FINISH, {"req": request_id, "uuid": instance_uuid,
                                           "now": utcnow(), "msg": message})


def creation_request_id(instance_uuid: str) -> str | None:
    """The request id of the server's create action, so a step the conductor takes for it
    later (a build timed out or recovered) joins its trace."""
    with db.reader() as s:
        return s.scalar(sa.select(InstanceAction.request_id)
                        .where(InstanceAction.instance_uuid == instance_uuid,
                               InstanceAction.action == "create"))
