"""The conductor: schedule_and_build_instances (seed steps 8-12), reschedules, and the
build deadline that keeps any server from staying in BUILD forever."""
from __future__ import annotations

import datetime as dt
import logging

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.common.context import RequestContext
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import instances, states, trace
from pocketstack.compute.models import ComputeNode, Instance
from pocketstack.compute.conductor.hostdb import HostDBMixin
from pocketstack.compute.conductor.recovery import RecoveryMixin
from pocketstack.compute.conductor.resize import ResizeTaskMixin
from pocketstack.compute.rpcapi import ComputeAPI
from pocketstack.compute.scheduler import claims
from pocketstack.compute.scheduler.rpcapi import SchedulerAPI
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


def _steps_from(rows) -> list[Step]:
    out = []
    for r in rows or ():
        step = Step.__new__(Step)
        step.ctx = None
        step.name, step.service, step.host = r["event"], r["service"], r["host"]
        step.start = dt.datetime.fromisoformat(r["start"])
        step.finish = dt.datetime.fromisoformat(r["finish"]) if r["finish"] else None
        step.result, step.detail, step.traceback = r["result"], r["detail"], r["traceback"]
        out.append(step)
    return out


_TO_SCHEDULE = (Instance.uuid, Instance.deleted, Instance.task_state, Instance.attempt,
                Instance.request_spec)


class ConductorManager(ResizeTaskMixin, RecoveryMixin, HostDBMixin):
    def __init__(self):
        self.scheduler = SchedulerAPI()
        self.compute = ComputeAPI()
        self._init_recovery()

    # --- the boot -----------------------------------------------------------------------

    def schedule_and_build_instances(self, ctx, instance_uuids: list[str]):
        # The columns scheduling reads, not whole ORM instances (every boot comes here).
        with db.reader() as s:
            rows = s.connection().execute(
                sa.select(*_TO_SCHEDULE).where(Instance.uuid.in_(instance_uuids))).all()
        # The API's cast is for the first attempt: a row at a later one was scheduled again
        # by the stalled-build check while this cast waited, and that attempt is not ours.
        live = [r for r in rows if not r.deleted and r.task_state == states.SCHEDULING
                and r.attempt == 1]
        if not live:
            return
        step = Step(ctx, live[0].uuid, "conductor_schedule_and_build_instances", "conductor",
                    config.CONF.host)
        uuids = [r.uuid for r in live]
        self._track(uuids, True)  # the stalled-build check leaves these to us
        try:
            self._schedule(ctx, live, step, tried=[])
        finally:
            self._track(uuids, False)

    def _schedule(self, ctx, rows, step, tried: list[str], history: list[str] | None = None):
        spec = dict(rows[0].request_spec or {}, tried_hosts=tried)
        sched = Step(ctx, rows[0].uuid, "scheduler_select_destinations", "scheduler",
                     config.CONF.host)
        try:
            selections = self.scheduler.select_destinations(ctx, spec, [r.uuid for r in rows])
        except exceptions.PocketstackError as error:
            message = getattr(error, "message", str(error))
            if history:
                message = f"{message}. Earlier attempts: {'; '.join(history)}"
            sched.fail(message)
            step.fail(message)
            for r in rows:
                self._error(ctx, r.uuid, r.attempt, message, [sched, step] if r is rows[0]
                            else [], code=500)
            return
        sched.done(detail=", ".join(f"{sel['host']} (alternates: "
                                    f"{', '.join(sel['alternates']) or 'none'})"
                                    for sel in selections))
        step.done()
        for r, sel in zip(rows, selections):
            self._send(ctx, r, sel, [sched, step] if r is rows[0] else [])

    def _send(self, ctx, inst, sel, events):
        """Record the host on the instance, then cast the build to it (seed step 12)."""
        deadline = instances.build_deadline(config.CONF.compute.build_timeout)
        cast = Step(ctx, inst.uuid, "conductor_cast_build", "conductor", config.CONF.host,
                    f"build_and_run_instance → compute.{sel['host']}")
        spec = dict(inst.request_spec or {}, alternates=sel["alternates"])
        values = {"host": sel["host"], "node": sel["node"], "build_deadline": deadline,
                  "request_spec": spec}
        if not spec.get("availability_zone") and sel.get("az"):
            values["availability_zone"] = sel["az"]  # no zone asked: the host's (as nova)
        ok = instances.update(inst.uuid, values,
                              expect_task=states.SCHEDULING, attempt=inst.attempt,
                              events=list(events) + [cast.done()])
        if not ok:
            # Deleted while we scheduled: give the claim back.
            claims.release(inst.uuid)
            return
        try:
            self.compute.build_and_run_instance(ctx, sel["host"], inst.uuid, inst.attempt,
                                                node=sel["node"])
        except exceptions.PocketstackError as error:
            self.reschedule(ctx, inst.uuid, inst.attempt, sel["host"], str(error))

    # --- failure handling ---------------------------------------------------------------

    def reschedule(self, ctx, instance_uuid: str, attempt: int, failed_host: str | None,
                   reason: str, events=(), host_fault: bool = True):
        """A build failed on ``failed_host``: try another host, or ERROR after max_attempts.

        ``attempt`` must still be current, so a late report of a build already handled
        (by the deadline or a delete) does nothing. A failure the request caused
        (``host_fault`` False: a bad fixed IP, a quota) is ERROR at once and not counted
        against the host — another host would fail the same way, and the scheduler would
        learn to avoid a healthy host.
        """
        steps = _steps_from(events)
        inst = instances.load(instance_uuid)
        if inst is None or inst.deleted or inst.attempt != attempt:
            trace.record(*[self._bind(s, ctx, instance_uuid) for s in steps])
            return
        spec = dict(inst.request_spec or {})
        history = list(spec.get("attempts") or []) + [f"{failed_host or 'no host'}: {reason}"]
        tried = list(spec.get("tried_hosts") or []) + ([failed_host] if failed_host else [])
        spec.update(attempts=history, tried_hosts=tried)
        if failed_host and host_fault:
            self._note_failure(failed_host)
        max_attempts = config.CONF.compute.max_attempts
        if not host_fault:
            self._error(ctx, instance_uuid, attempt, f"Build failed: {reason}",
                        [self._bind(s, ctx, instance_uuid) for s in steps], code=500,
                        spec=spec)
            return
        if len(history) >= max_attempts:
            message = (f"Build failed after {len(history)} attempt(s) "
                       f"(max_attempts={max_attempts}): " + "; ".join(history))
            self._error(ctx, instance_uuid, attempt, message,
                        [self._bind(s, ctx, instance_uuid) for s in steps], code=500,
                        spec=spec)
            return
        step = Step(ctx, instance_uuid, "conductor_reschedule", "conductor", config.CONF.host,
                    f"attempt {len(history) + 1} of {max_attempts} after: {reason}")
        ok = instances.update(instance_uuid, {"task_state": states.SCHEDULING, "host": None,
                                              "node": None, "attempt": attempt + 1,
                                              "request_spec": spec, "network_info": [],
                                              "build_deadline": instances.build_deadline(
                                                  config.CONF.compute.build_timeout)},
                              expect_vm=states.BUILDING, attempt=attempt,
                              events=[self._bind(s, ctx, instance_uuid) for s in steps])
        if not ok:
            return
        # The failed attempt's claim goes first, whoever failed it: a cast to a host
        # nobody serves left it held, and the next claim is keyed by the same server.
        claims.release(instance_uuid)
        inst = instances.load(instance_uuid)
        self._schedule(ctx, [inst], step, tried=tried, history=history)

    @staticmethod
    def _bind(step, ctx, uuid):
        step.ctx, step.instance_uuid = ctx, uuid
        return step

    def _error(self, ctx, uuid, attempt, message, events, code=500, spec=None):
        values = {"vm_state": states.ERROR, "task_state": None, "build_deadline": None,
                  "build_token": None}
        if spec is not None:
            values["request_spec"] = spec
        with db.transaction() as s:
            failed = instances.update(uuid, values, attempt=attempt, events=events, session=s)
            if failed:
                instances.add_fault(s, uuid, code, message)
                trace.finish_action(s, ctx.request_id, uuid, "Error")
        claims.release(uuid)
        if failed:
            # The build is over: the ports earlier attempts kept for it go (the user's
            # are unbound), as nova's conductor does when no reschedule is left ...
            _release_ports(ctx, uuid)
            # ... and the volumes the API reserved for it go back to the user now (a
            # build that never reached a host has no host to give them back).
            from pocketstack.compute.manager import volumes

            try:
                volumes.release(ctx, uuid, use_service_token=True)
            except Exception:  # noqa: BLE001 - the server is in ERROR whatever happens here
                LOG.exception("Giving back the volumes of %s failed", uuid)

    @staticmethod
    def _note_failure(host: str) -> None:
        with db.transaction() as s:
            s.execute(sa.update(ComputeNode).where(ComputeNode.host == host)
                      .values(failed_builds=ComputeNode.failed_builds + 1))

    # --- periodic: build deadlines ------------------------------------------------------

    def periodic_tasks(self) -> None:
        self.check_stalled_builds()
        self.check_build_deadlines()

    def check_build_deadlines(self) -> int:
        """Servers past their build deadline (a lost message, a host that died mid-build)
        are cleaned up and rescheduled, or put in ERROR. Returns how many it handled."""
        return sum(self._time_out_build(inst) for inst in self._expired_builds())

    @staticmethod
    def _expired_builds() -> list:
        with db.reader() as s:
            return s.scalars(sa.select(Instance).where(
                Instance.vm_state == states.BUILDING, Instance.deleted.is_(False),
                Instance.build_deadline.is_not(None),
                Instance.build_deadline < utcnow())).all()

    def _time_out_build(self, inst, reason: str | None = None) -> bool:
        """Take the expired (or stalled: ``reason``) attempt of ``inst`` (as read) away from
        its host and reschedule; False if another conductor, the host itself or a delete
        got there first."""
        # Fence first: bump the attempt with a compare-and-swap. Only one conductor wins,
        # and the stuck host, should it wake up now, finds its build superseded (and undoes
        # only what it holds) instead of completing one whose ports and claim go next.
        # A stalled build is taken only if it still has not moved (the host may just have
        # started it); an expired one whatever it is doing.
        stalled = {"expect_task": states.SCHEDULING} if reason else {}
        if not instances.update(inst.uuid, {"attempt": inst.attempt + 1,
                                            "build_deadline": None},
                                expect_vm=states.BUILDING, attempt=inst.attempt, **stalled):
            return False
        attempt = inst.attempt + 1
        ctx = RequestContext.admin()
        ctx.project_id = inst.project_id
        timeout = config.CONF.compute.build_timeout
        reason = (f"{reason or f'build did not finish within {timeout:g}s'} "
                  f"(stuck in {inst.task_state or 'scheduling'}"
                  f"{' on ' + inst.host if inst.host else ''})")
        step = Step(ctx, inst.uuid, "conductor_build_timeout", "conductor",
                    config.CONF.host, reason).fail(reason)
        # Undo what the attempt may hold, with our own token (the user's may be gone);
        # its ports stay the server's, for the next attempt to bind (nova keeps a
        # rescheduled server's ports, and a floating IP on one with them).
        from pocketstack.compute.manager import volumes

        try:
            volumes.release(ctx, inst.uuid, use_service_token=True)
        except Exception:  # noqa: BLE001 - the reschedule must still happen
            LOG.exception("Cleaning up volumes of %s failed", inst.uuid)
        claims.release(inst.uuid)
        ctx.request_id = trace.creation_request_id(inst.uuid) or ctx.request_id
        self.reschedule(ctx, inst.uuid, attempt, inst.host, reason, events=[_step_row(step)])
        return True


def _release_ports(ctx, uuid: str) -> None:
    from pocketstack.compute.manager import network

    inst = instances.peek(uuid, "requested_networks", "network_info")
    requested = inst.requested_networks if inst is not None else None
    if not (isinstance(requested, list) and requested):
        return  # no network asked for: no port can exist
    try:
        network.deallocate(ctx, uuid, inst.network_info, [
            r["port_id"] for r in requested if isinstance(r, dict) and r.get("port_id")],
            use_service_token=True)
    except Exception:  # noqa: BLE001 - the server is in ERROR whatever happens here
        LOG.exception("Giving back the ports of %s failed", uuid)


def _step_row(e: Step) -> dict:
    return {"event": e.name, "service": e.service, "host": e.host, "start": e.start.isoformat(),
            "finish": e.finish.isoformat() if e.finish else None, "result": e.result,
            "detail": e.detail, "traceback": e.traceback}
