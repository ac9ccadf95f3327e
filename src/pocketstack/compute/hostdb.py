"""What a compute host reads and writes of the cloud's state, as named operations.

A compute host runs untrusted guests; a database credential on it could read and rewrite
every project's servers. So, as nova-compute does through nova-conductor, a host asks for
its changes by name, and each operation says what it may touch:

* ``hosts``: rows of the asking host itself (its service and node rows) — every host
  name given must be the caller's;
* ``instance``: one server scheduled to the asking host (its ``host``, or the source or
  destination of its migration in progress).

Two ways to run an operation (``for_host``):

* ``Direct``: in this process, in the caller's thread — the all-in-one, as fast as a
  plain function call;
* ``ConductorRPC``: an RPC call to the conductor, which checks the operation against the
  asking host (named in the call, proved by its own identity user's token:
  clients/host_users.py) and runs the same function (compute/conductor/hostdb.py) — a
  compute host that holds no database credential.

``[compute] database_access`` picks one. Arguments and results are primitives (they
cross the message bus; datetimes travel as ISO strings). How an operation is declared
and carried is in host_operations.py; the operations that move a server (migration,
evacuation, resize) are in hostdb_moves.py.
"""
from __future__ import annotations

import datetime as dt
import logging

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import (block_devices, host_rows, instances, service_rows,
                                 states, trace)
from pocketstack.compute.models import BlockDeviceMapping, ComputeNode, Instance
from pocketstack.compute.scheduler import claims
from pocketstack.compute import hostdb_moves  # noqa: F401 - registers the move operations
from pocketstack.compute.host_operations import (  # noqa: F401 - callers' names: hostdb.*
    HOSTS, INSTANCE, OPERATIONS, PLACE, REFUSE, STATES, UNSET, Operation, StoredStep,
    bus_values, event, event_row, instance_columns, instance_from_columns, locked_instance,
    operation, primitive)

LOG = logging.getLogger(__name__)

# --- the operations -------------------------------------------------------------------


@operation(HOSTS)
def register_services(hosts: list[str], binary: str, topic: str) -> None:
    service_rows.register_services(hosts, binary, topic)


@operation(HOSTS)
def heartbeats(hosts: list[str], binary: str) -> None:
    service_rows.heartbeats(hosts, binary)


@operation(INSTANCE, returns_instance=True, preloads=True)
def load_instance(instance_uuid: str, *, row=UNSET):
    """The server's row (deleted or not), or None."""
    return instances.load(instance_uuid) if row is UNSET else row


@operation(INSTANCE, returns_instance=True)
def peek_instance(instance_uuid: str, columns: list[str]):
    """A few columns of the server's row (instances.peek), or None."""
    return instances.peek(instance_uuid, *columns)


@operation(INSTANCE, foreign=None)
def metadata_instance(instance_uuid: str) -> dict | None:
    """The server as its metadata presents it (metadata/content.load_instance: the row,
    its key pair's type): what a config drive adds to the driver's view."""
    from pocketstack.compute.metadata import content

    return primitive(content.load_instance(instance_uuid))


@operation(INSTANCE)
def add_vifs(instance_uuid: str, vifs: list[dict], request: dict, events: list[dict],
             request_id: str) -> None:
    """An attached interface joins the server's network_info (and, for a port the user
    gave, its requested networks), row-locked against a concurrent detach."""
    with db.transaction() as s:
        row = locked_instance(s, instance_uuid)
        if row is None:
            raise instances.not_found(instance_uuid)
        row.network_info = list(row.network_info or []) + vifs
        if request.get("port_id"):
            current = row.requested_networks if isinstance(row.requested_networks,
                                                           list) else []
            row.requested_networks = current + [request]
        trace.store_rows(s, [event_row(e) for e in events])
        trace.finish_action(s, request_id, instance_uuid)


@operation(INSTANCE)
def forget_port(instance_uuid: str, port_id: str, events: list[dict],
                request_id: str | None = None) -> bool:
    """A detached or deleted port leaves the server; whether the server had it."""
    with db.transaction() as s:
        row = locked_instance(s, instance_uuid)
        if row is None:
            return False
        had = any(v["port_id"] == port_id for v in row.network_info or [])
        row.network_info = [v for v in row.network_info or [] if v["port_id"] != port_id]
        if isinstance(row.requested_networks, list):
            row.requested_networks = [r for r in row.requested_networks
                                      if r.get("port_id") != port_id]
        trace.store_rows(s, [event_row(e) for e in events])
        if request_id:
            trace.finish_action(s, request_id, instance_uuid)
        return had


@operation(INSTANCE)
def refresh_vifs(instance_uuid: str, fresh: list[dict]) -> None:
    """The server's network_info with what the network service says now."""
    with db.transaction() as s:
        row = locked_instance(s, instance_uuid)
        if row is not None:
            by_id = {v["port_id"]: v for v in fresh}
            row.network_info = [by_id.get(v["port_id"], v) for v in row.network_info or []]


@operation(INSTANCE, writes=(*STATES, "request_spec"))
def update_instance(instance_uuid: str, values: dict, expect_task=UNSET,
                    expect_vm=UNSET) -> bool:
    """The compare-and-swap update of instances.update (``expect_task``, ``expect_vm``
    when given)."""
    expect = {k: v for k, v in (("expect_task", expect_task), ("expect_vm", expect_vm))
              if v != UNSET}
    return instances.update(instance_uuid, bus_values(values), **expect)


@operation(INSTANCE, writes=(*STATES, *PLACE, "system_metadata"))
def finish_action(instance_uuid: str, values: dict | None, expect_task, events: list[dict],
                  request_id: str | None, result: str | None = None,
                  fault: dict | None = None, release_claim: bool = False,
                  only_if_updated: bool = False) -> bool:
    """The end of a host's work on a server, in one commit: the compare-and-swap update
    (``expect_task``; none when ``values`` is None), its events, a fault, the server's
    claim given back and the instance action's finish (none when ``request_id`` is None:
    more work follows). ``only_if_updated``: the claim and the finish only if the update
    matched."""
    with db.transaction() as s:
        ok = values is None or instances.update(instance_uuid, values,
                                                expect_task=expect_task, session=s)
        trace.store_rows(s, [event_row(e) for e in events])
        if fault is not None:
            instances.add_fault(s, instance_uuid, fault["code"], fault["message"],
                                host=fault.get("host"))
        if ok or not only_if_updated:
            if release_claim:
                claims.release(instance_uuid, session=s)
            if request_id is not None:
                trace.finish_action(s, request_id, instance_uuid, result)
    return ok


# --- the build (manager/build.py) and the delete (manager/delete.py) ------------------


# Not the host's (rescheduled elsewhere): None, as for a server that does not exist.
@operation(INSTANCE, returns_instance=True, preloads=True)
def begin_build(instance_uuid: str, attempt: int, *, row=UNSET) -> list:
    """A build's first load and first step in one call: [the server's row (deleted or
    not, or None), whether its task moved from scheduling to networking under this
    ``attempt`` (the compare-and-swap of the first advance_build)]."""
    if row is UNSET:
        row = instances.load(instance_uuid)
    if row is None or row.deleted or row.attempt != attempt:
        return [row, False]
    advanced = instances.update(instance_uuid, {"task_state": states.NETWORKING},
                                expect_task=states.SCHEDULING, attempt=attempt)
    if advanced:
        row.task_state = states.NETWORKING  # as the update left it (a detached row)
    return [row, advanced]


# rescheduled to another host: superseded here
@operation(INSTANCE, foreign=False, writes=("task_state", "network_info"), fenced=True)
def advance_build(instance_uuid: str, values: dict, expect_task, attempt: int,
                  events: list[dict], *, asker: str | None = None) -> bool:
    """One step of a build: the compare-and-swap on the task and the attempt (and, from
    the conductor, the asking host), with the events of the step that ended."""
    with db.transaction() as s:
        ok = instances.update(instance_uuid, bus_values(values), expect_task=expect_task,
                              attempt=attempt, expect_host=asker, session=s)
        _store_if_own(s, instance_uuid, ok, asker, events)
        return ok


def _store_if_own(s, instance_uuid: str, ok: bool, asker: str | None,
                  events: list[dict]) -> None:
    """A fenced step's events: with its write, or (a step superseded meanwhile) on the
    server's trace only if the server is still the asking host's - another host's server
    gets no events from it, as the check would have refused them."""
    if not ok and asker is not None and s.scalar(
            sa.select(Instance.host).where(Instance.uuid == instance_uuid)) != asker:
        return
    trace.store(s, [StoredStep(e) for e in events])


@operation(INSTANCE, foreign=False, writes=(*STATES, "launched_at", "build_deadline",
                                           "build_token", "progress"), fenced=True)
def finish_build(instance_uuid: str, hosts: list[str], values: dict, attempt: int,
                 events: list[dict], *, asker: str | None = None) -> bool:
    """The guest is up: a success of this host's (its failed-build count cleared, the
    node row first, as a delete's claim release takes them: no deadlock on engines that
    lock rows) and the server ACTIVE, in one commit."""
    with db.transaction() as s:
        s.connection().execute(_CLEAR_FAILED_BUILDS, {"p_host": hosts[0]})
        ok = instances.update(instance_uuid, bus_values(values), expect_task=states.SPAWNING,
                              attempt=attempt, expect_host=asker, session=s)
        _store_if_own(s, instance_uuid, ok, asker, events)
        return ok


_CLEAR_FAILED_BUILDS = (sa.update(ComputeNode.__table__)
                        .where(ComputeNode.__table__.c.host == sa.bindparam("p_host"),
                               ComputeNode.__table__.c.failed_builds != 0)
                        .values(failed_builds=0))


@operation(INSTANCE, foreign=False)
def take_over(instance_uuid: str, attempt: int) -> bool:
    """instances.take_over: the build's attempt made the caller's to undo and hand back."""
    return instances.take_over(instance_uuid, attempt)


# A server that moved to another host lives on there: its ports stay (the answer that
# undoes less).
@operation(INSTANCE, foreign=True)
def is_live(instance_uuid: str) -> bool:
    return instances.is_live(instance_uuid)


@operation(INSTANCE, foreign=None)  # events of a server that moved on: dropped
def record(instance_uuid: str, events: list[dict]) -> None:
    """Trace events no state change carries (trace.record)."""
    try:
        with db.transaction() as s:
            trace.store_rows(s, [event_row(e) for e in events])
    except Exception:  # noqa: BLE001 - tracing must never break the pipeline
        LOG.exception("Could not record trace events")


@operation(HOSTS)
def release_own_claim(hosts: list[str], instance_uuid: str) -> bool:
    """The server's claim, only if it is on the asking host's own provider (a build that
    lost its server to a reschedule must not free the next attempt's claim elsewhere)."""
    return claims.release(instance_uuid, host=hosts[0])


@operation(INSTANCE, returns_instance=True, foreign=[])
def block_devices_of(instance_uuid: str):
    """The server's block device mappings (block_devices.for_instance)."""
    return block_devices.for_instance(instance_uuid)


# What the compute code writes of a mapping: the volume service's attachment and its
# connection, and the volume it created for an image, snapshot or blank source.
BLOCK_DEVICE_WRITES = ("attachment_id", "connection_info", "volume_id")


@operation(INSTANCE, writes=BLOCK_DEVICE_WRITES)
def update_block_device(instance_uuid: str, bdm_id: int, values: dict,
                        expect: dict | None = None) -> bool:
    """block_devices.update of one of the server's mappings (the conductor checks it is
    the server's, and the columns: conductor/hostdb._check_block_device)."""
    return block_devices.update(bdm_id, values, expect=expect)


@operation(INSTANCE)
def forget_block_device(instance_uuid: str, bdm_id: int) -> None:
    with db.transaction() as s:
        s.execute(sa.delete(BlockDeviceMapping).where(BlockDeviceMapping.id == bdm_id))


@operation(HOSTS, returns_instance=True)
def unconnected_block_devices(hosts: list[str], instance_uuids: list[str], before):
    """Mappings of these servers (those on the asking host) reserved but never connected
    before ``before`` (an attach cut short by a crash: manager/volumes.reconcile)."""
    if isinstance(before, str):
        before = dt.datetime.fromisoformat(before)
    b = BlockDeviceMapping
    with db.reader() as s:
        rows = list(s.scalars(sa.select(b).join(Instance, Instance.uuid == b.instance_uuid)
                              .where(b.instance_uuid.in_(instance_uuids),
                                     Instance.host.in_(hosts),
                                     b.attachment_id.is_not(None),
                                     b.connection_info.is_(None),
                                     b.updated_at < before)).all())
        s.expunge_all()
    return rows


@operation(INSTANCE)
def finish_volume_step(instance_uuid: str, bdm_id: int, events: list[dict],
                       request_id: str | None, connection_info=UNSET,
                       result: str | None = None) -> None:
    """The end of a volume attach or detach, in one commit: the mapping connected
    (``connection_info``) or gone (none given), its events and the action's finish."""
    b = BlockDeviceMapping
    with db.transaction() as s:
        if connection_info == UNSET:
            s.execute(sa.delete(b).where(b.id == bdm_id))
        else:
            s.execute(sa.update(b).where(b.id == bdm_id)
                      .values(connection_info=connection_info, updated_at=utcnow()))
        trace.store_rows(s, [event_row(e) for e in events])
        if request_id is not None:
            trace.finish_action(s, request_id, instance_uuid, result)


@operation(INSTANCE)
def forget_block_devices(instance_uuid: str) -> None:
    """A deleted server's mappings go (after its volumes were released)."""
    with db.transaction() as s:
        s.execute(sa.delete(BlockDeviceMapping)
                  .where(BlockDeviceMapping.instance_uuid == instance_uuid))


@operation(INSTANCE)
def finish_delete(instance_uuid: str, events: list[dict], request_id: str | None,
                  cleanup: dict) -> list[str]:
    """The end of a delete, in one commit: the claim (and a resize's) given back, the
    server group membership gone, the row marked deleted, its events (``cleanup``: the
    step whose detail lists what was released, finished here) and the action finished.
    What was released, for the detail."""

    with db.transaction() as s:
        done = host_rows.delete_rows(s, instance_uuid)
        cleanup = dict(cleanup)
        cleanup["detail"] = "; ".join(cleanup.pop("done") + done) or "nothing held"
        now = utcnow()
        instances.update(instance_uuid, {
            "deleted": True, "deleted_at": now, "terminated_at": now,
            "vm_state": states.DELETED, "task_state": None, "power_state": states.NOSTATE,
            "build_token": None}, events=[StoredStep(e) for e in events + [cleanup]],
            session=s)
        if request_id is not None:
            trace.finish_action(s, request_id, instance_uuid)
    return done


# --- start-up recovery and the periodic tasks (manager/periodic.py) -------------------


@operation(HOSTS, returns_instance=True)
def owned_instances(hosts: list[str]):
    """The live servers of these hosts (start-up recovery)."""
    rows = []
    with db.reader() as s:
        for part in service_rows.chunks(hosts):
            rows += s.scalars(sa.select(Instance).where(Instance.host.in_(part),
                                                        Instance.deleted.is_(False))).all()
        s.expunge_all()
    return rows


@operation(HOSTS)
def power_sync_rows(hosts: list[str]) -> list[list]:
    """[uuid, host, vm_state, power_state] of these hosts' settled servers."""
    rows = []
    with db.reader() as s:
        for part in service_rows.chunks(hosts):
            rows += s.execute(sa.select(Instance.uuid, Instance.host, Instance.vm_state,
                                        Instance.power_state)
                              .where(Instance.host.in_(part), Instance.deleted.is_(False),
                                     Instance.task_state.is_(None),
                                     Instance.vm_state.in_([states.ACTIVE, states.STOPPED,
                                                            states.PAUSED,
                                                            states.SUSPENDED]))).all()
    return [list(r) for r in rows]


@operation(HOSTS)
def due_reclaims(hosts: list[str], interval: float) -> list[list]:
    """[uuid, host] of these hosts' servers soft-deleted longer than ``interval``."""
    due = []
    with db.reader() as s:
        for part in service_rows.chunks(hosts):
            due += s.execute(sa.select(Instance.uuid, Instance.host).where(
                Instance.host.in_(part), Instance.deleted.is_(False),
                Instance.vm_state == states.SOFT_DELETED, Instance.task_state.is_(None),
                Instance.deleted_at < utcnow() - dt.timedelta(seconds=interval))).all()
    return [list(r) for r in due]


@operation(HOSTS)
def register_nodes(hosts: list[str], resources: dict, ratios: dict) -> list[list]:
    """The compute_nodes rows of these hosts with what their drivers report
    (``resources``: host -> the driver's figures); [host, node uuid, name, sizes] of
    each, for its resource provider."""

    return host_rows.write_nodes(hosts, resources, ratios)


@operation(HOSTS)
def node_providers(hosts: list[str]) -> list[list]:
    """[host, node uuid, hypervisor hostname] of these hosts' nodes."""
    rows = []
    with db.reader() as s:
        for part in service_rows.chunks(hosts):
            rows += s.execute(sa.select(ComputeNode.host, ComputeNode.uuid,
                                        ComputeNode.hypervisor_hostname)
                              .where(ComputeNode.host.in_(part))).all()
    return [list(r) for r in rows]


@operation(HOSTS)
def adopt_old_claims(hosts: list[str]) -> None:

    host_rows.adopt_old_claims(hosts)


@operation(HOSTS)
def reconcile_resources(hosts: list[str]) -> None:

    host_rows.reconcile_usage(hosts)


@operation(HOSTS)
def fault_rules(hosts: list[str]) -> list[dict]:
    """The fault injection rules for these hosts (and for every host)."""
    from pocketstack.control import faults

    return [r for r in faults.read_rules() if r["host"] in (None, *hosts)]


@operation(HOSTS)
def consume_fault(hosts: list[str], rule_id: str) -> bool:
    """One use of a rule for these hosts (or for every host)."""
    from pocketstack.control import faults

    if not any(r["id"] == rule_id for r in fault_rules(hosts)):
        return False
    return faults.consume_rule(rule_id)


# --- the two ways to run them ---------------------------------------------------------


class Direct:
    """In this process: the caller's thread runs the operation."""

    def __init__(self, host: str | None = None):
        self.host = host

    def call(self, op: str, **kwargs):
        return OPERATIONS[op].func(**kwargs)


class ConductorRPC:
    """On the conductor: one RPC call per operation, naming the asking host, with the
    token of the host's own identity user in its context (clients/host_users.py), which
    the conductor checks the name against."""

    def __init__(self, host: str):
        from pocketstack.compute.conductor.rpcapi import ConductorAPI

        self.host, self.conductor = host, ConductorAPI()

    def call(self, op: str, **kwargs):
        from pocketstack.clients import host_users
        from pocketstack.common import exceptions
        from pocketstack.compute.conductor.host_identity import INVALID

        args = primitive(kwargs)
        ctx = host_users.context(self.host)
        try:
            answer = self.conductor.host_db(ctx, self.host, op, args)
        except exceptions.Forbidden as error:
            if INVALID not in str(error):
                raise
            # Its token was revoked before it expired: a fresh login, once.
            host_users.forget(self.host, ctx.auth_token)
            answer = self.conductor.host_db(host_users.context(self.host), self.host, op,
                                            args)
        return instance_from_columns(answer) if OPERATIONS[op].returns_instance else answer


RETRY_GAP = 0.05  # s: at least this between two tries of wait_for_conductor


def wait_for_conductor(host: str, timeout: float, poll: float = 2.0) -> None:
    """Until a conductor answers ``host`` (a compute host without the database starts
    nothing before: its node rows and providers are written through it), or raise the
    last MessagingTimeout (or failed login) after ``timeout`` seconds. A call to a
    conductor not started yet is lost (no queue to hold it), so each try waits ``poll``
    seconds only."""
    import time

    from pocketstack.clients import host_users
    from pocketstack.common import exceptions
    from pocketstack.common.rpc_errors import MessagingTimeout
    from pocketstack.compute.conductor.rpcapi import ConductorAPI

    deadline, said = time.monotonic() + timeout, False
    while True:
        tried = time.monotonic()
        try:
            # Its own user's login first: the identity API may not listen yet either.
            ConductorAPI().host_db(host_users.context(host), host, "node_providers",
                                   {"hosts": [host]}, timeout=poll)
            return
        except (MessagingTimeout, exceptions.ServiceUnavailable) as error:
            if time.monotonic() > deadline:
                raise
            if isinstance(error, exceptions.ServiceUnavailable):
                time.sleep(poll)  # a refused login answers at once: try again later
            if not said:
                LOG.info("Waiting up to %gs for a conductor to answer %s", timeout, host)
                said = True
            # Unix sockets (`up --workers`) say at once that nothing listens: no busy loop.
            time.sleep(max(0.0, tried + RETRY_GAP - time.monotonic()))


def for_host(host: str):
    """How ``host``'s agent reaches the cloud's state ([compute] database_access)."""
    if config.CONF.compute.database_access == "conductor":
        return ConductorRPC(host)
    return Direct(host)


def for_hosts(hosts: list[str], op: str, **kwargs) -> None:
    """A ``hosts`` operation for all the hosts of this process: one call in-process (a
    thousand simulated hosts cost one statement), one per host through the conductor
    (each host speaks for itself only)."""
    if config.CONF.compute.database_access == "conductor":
        for host in hosts:
            ConductorRPC(host).call(op, hosts=[host], **kwargs)
    else:
        Direct().call(op, hosts=list(hosts), **kwargs)
