"""Builds nobody is working on any more, found long before the build
deadline:

* at start-up of an all-in-one (in-process bus), every build still waiting to be scheduled
  that was last touched before this conductor started: the process that had it in hand
  is gone (kill -9, a crash) and its messages with it, so a restart reschedules them at
  once. (With a broker, the messages wait in its queue for the restarted conductor.) (Builds that
  already reached a host are
  recovered by that host's ``init_host``, which owns them.)
* periodically, builds with no progress for ``[compute] build_stall_timeout`` seconds while
  still in ``scheduling``: the cast to the conductor or to the chosen host was lost. Not
  while whoever holds them is visibly busy — this conductor scheduling others, or the host
  advancing other builds: in a burst, a build waits in a queue, and that is no loss (the
  build deadline still covers a host that is busy and has lost one).

Each is fenced first — its ``attempt`` bumped with a compare-and-swap — so a conductor or
host that wakes up late finds its attempt superseded and leaves it alone.
"""
from __future__ import annotations

import datetime as dt
import logging
import threading

import sqlalchemy as sa

from pocketstack.common import config, db, runtime
from pocketstack.common.context import RequestContext
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import instances, states, trace
from pocketstack.compute.models import Instance
from pocketstack.compute.scheduler import claims
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


class RecoveryMixin:
    """For ConductorManager: needs ``_schedule`` and ``_time_out_build``."""

    def _init_recovery(self) -> None:
        self._in_flight: set[str] = set()  # uuids this conductor is scheduling right now
        self._in_flight_lock = threading.Lock()
        self.started_at = utcnow()

    def _track(self, uuids, busy: bool) -> None:
        with self._in_flight_lock:
            (self._in_flight.update if busy else self._in_flight.difference_update)(uuids)

    def recover_unfinished_builds(self) -> int:
        """Start-up: reschedule every build a previous process left waiting for a host."""
        return self._recover(self.started_at, "the conductor restarted before scheduling it",
                             only_unplaced=True)

    def check_stalled_builds(self) -> int:
        """Periodic: builds in ``scheduling`` with no progress for build_stall_timeout."""
        stall = config.CONF.compute.build_stall_timeout
        return self._recover(utcnow() - dt.timedelta(seconds=stall),
                             f"no progress for {stall:g}s (a lost message)", unless_busy=True)

    def _busy_hosts(self, since) -> set[str]:
        """Hosts that changed a server since ``since``: their queues are moving."""
        with db.reader() as s:
            return set(s.scalars(sa.select(Instance.host).distinct().where(
                Instance.host.is_not(None), Instance.updated_at >= since)))

    def _recover(self, touched_before, reason: str, only_unplaced: bool = False,
                 unless_busy: bool = False) -> int:
        with db.reader() as s:
            stmt = sa.select(Instance).where(
                Instance.vm_state == states.BUILDING, Instance.deleted.is_(False),
                Instance.task_state == states.SCHEDULING,
                Instance.updated_at < touched_before)
            if only_unplaced:
                stmt = stmt.where(Instance.host.is_(None))
            rows = s.scalars(stmt).all()
        with self._in_flight_lock:
            conductor_busy = bool(self._in_flight)
            rows = [r for r in rows if r.uuid not in self._in_flight]
        if unless_busy and rows:
            busy = self._busy_hosts(touched_before)
            rows = [r for r in rows if not (r.host in busy if r.host else conductor_busy)]
        handled = 0
        for inst in rows:
            try:
                if inst.host is None:
                    handled += self._schedule_again(inst, reason)
                else:  # placed, but the host never started it: as at the deadline, earlier
                    handled += self._time_out_build(inst, reason=reason)
            except Exception:  # noqa: BLE001 - one bad row must not stop the others
                LOG.exception("Recovering the build of %s failed", inst.uuid)
        if handled:
            LOG.warning("Rescheduled %d build(s): %s", handled, reason)
        return handled

    def _schedule_again(self, inst, reason: str) -> bool:
        """A build that never reached a host: fence it, then schedule it as new."""
        attempt = inst.attempt + 1
        if not instances.update(inst.uuid, {"attempt": attempt},
                                expect_task=states.SCHEDULING, expect_vm=states.BUILDING,
                                attempt=inst.attempt):
            return False  # deleted, or progressed after all
        claims.release(inst.uuid)  # a claim made by the lost attempt, if any
        ctx = RequestContext.admin()
        ctx.project_id = inst.project_id
        ctx.request_id = trace.creation_request_id(inst.uuid) or ctx.request_id
        step = Step(ctx, inst.uuid, "conductor_recover_build", "conductor", config.CONF.host,
                    reason)
        fresh = instances.load(inst.uuid)
        if fresh is None or fresh.attempt != attempt:
            return False
        self._track([inst.uuid], True)
        try:
            self._schedule(ctx, [fresh], step, tried=[])
        finally:
            self._track([inst.uuid], False)
        return True


def start_recovery(manager) -> threading.Thread:
    """Run the start-up recovery on its own thread (the RPC servers are up by then)."""
    def run():
        try:
            manager.recover_unfinished_builds()
        except Exception:  # noqa: BLE001 - the periodic check will try again
            LOG.exception("Recovering unfinished builds at start-up failed")

    # Bound to this cloud's runtime: a thread does not inherit it (common/runtime.py).
    thread = threading.Thread(target=runtime.bind(run), name="conductor-recovery",
                              daemon=True)
    thread.start()
    return thread
