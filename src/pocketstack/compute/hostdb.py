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
  asking host and runs the same function (compute/conductor/hostdb.py) — a compute host
  that holds no database credential.

``[compute] database_access`` picks one. Arguments and results are primitives (they
cross the message bus; datetimes travel as ISO strings).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import types
from typing import Callable

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.compute import instances, resize, service_rows, states, trace
from pocketstack.compute.models import Instance, Migration
from pocketstack.compute.scheduler import claims

HOSTS, INSTANCE = "hosts", "instance"


@dataclasses.dataclass(frozen=True)
class Operation:
    func: Callable
    scope: str  # HOSTS or INSTANCE: what the conductor checks before running it
    returns_instance: bool = False  # a row: its columns cross the bus
    read: bool = False  # a server not on the asking host is not there for it: None


OPERATIONS: dict[str, Operation] = {}
_UNSET = "<unset>"  # a primitive: it crosses the bus as itself


def operation(scope: str, returns_instance: bool = False):
    def register(func):
        OPERATIONS[func.__name__] = Operation(func, scope, returns_instance,
                                              read=returns_instance)
        return func
    return register


def instance_columns(row) -> dict | None:
    """A row (an Instance, a Migration, or a few columns) as primitives: the conductor's
    answer to the operations that return one."""
    if row is None:
        return None
    if isinstance(row, sa.Row):
        return _primitive(row._asdict())
    return _primitive({attr.key: getattr(row, attr.key)
                       for attr in sa.inspect(row).mapper.column_attrs})


def instance_from_columns(columns: dict | None):
    """A row answered over the bus, read as the row was: attributes."""
    if columns is None:
        return None
    return types.SimpleNamespace(**{
        k: dt.datetime.fromisoformat(v) if k in _DATETIMES and isinstance(v, str) else v
        for k, v in columns.items()})


_DATETIMES = frozenset(attr.key for model in (Instance, Migration)
                       for attr in sa.inspect(model).column_attrs
                       if isinstance(attr.columns[0].type, sa.DateTime))


# --- the operations -------------------------------------------------------------------


@operation(HOSTS)
def register_services(hosts: list[str], binary: str, topic: str) -> None:
    service_rows.register_services(hosts, binary, topic)


@operation(HOSTS)
def heartbeats(hosts: list[str], binary: str) -> None:
    service_rows.heartbeats(hosts, binary)


@operation(INSTANCE, returns_instance=True)
def load_instance(instance_uuid: str):
    """The server's row (deleted or not), or None."""
    return instances.load(instance_uuid)


@operation(INSTANCE, returns_instance=True)
def peek_instance(instance_uuid: str, columns: list[str]):
    """A few columns of the server's row (instances.peek), or None."""
    return instances.peek(instance_uuid, *columns)


@operation(INSTANCE)
def add_vifs(instance_uuid: str, vifs: list[dict], request: dict, events: list[dict],
             request_id: str) -> None:
    """An attached interface joins the server's network_info (and, for a port the user
    gave, its requested networks), row-locked against a concurrent detach."""
    with db.transaction() as s:
        row = _locked(s, instance_uuid)
        if row is None:
            raise instances.not_found(instance_uuid)
        row.network_info = list(row.network_info or []) + vifs
        if request.get("port_id"):
            current = row.requested_networks if isinstance(row.requested_networks,
                                                           list) else []
            row.requested_networks = current + [request]
        trace.store_rows(s, [_event_row(e) for e in events])
        trace.finish_action(s, request_id, instance_uuid)


@operation(INSTANCE)
def forget_port(instance_uuid: str, port_id: str, events: list[dict],
                request_id: str | None = None) -> bool:
    """A detached or deleted port leaves the server; whether the server had it."""
    with db.transaction() as s:
        row = _locked(s, instance_uuid)
        if row is None:
            return False
        had = any(v["port_id"] == port_id for v in row.network_info or [])
        row.network_info = [v for v in row.network_info or [] if v["port_id"] != port_id]
        if isinstance(row.requested_networks, list):
            row.requested_networks = [r for r in row.requested_networks
                                      if r.get("port_id") != port_id]
        trace.store_rows(s, [_event_row(e) for e in events])
        if request_id:
            trace.finish_action(s, request_id, instance_uuid)
        return had


@operation(INSTANCE)
def refresh_vifs(instance_uuid: str, fresh: list[dict]) -> None:
    """The server's network_info with what the network service says now."""
    with db.transaction() as s:
        row = _locked(s, instance_uuid)
        if row is not None:
            by_id = {v["port_id"]: v for v in fresh}
            row.network_info = [by_id.get(v["port_id"], v) for v in row.network_info or []]


def _locked(s, instance_uuid: str):
    row = s.scalar(sa.select(Instance).where(Instance.uuid == instance_uuid)
                   .with_for_update())
    return None if row is None or row.deleted else row


@operation(INSTANCE)
def update_instance(instance_uuid: str, values: dict, expect_task=_UNSET) -> bool:
    """The compare-and-swap update of instances.update (``expect_task`` when given)."""
    if expect_task is _UNSET:
        return instances.update(instance_uuid, values)
    return instances.update(instance_uuid, values, expect_task=expect_task)


@operation(INSTANCE)
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
        trace.store_rows(s, [_event_row(e) for e in events])
        if fault is not None:
            instances.add_fault(s, instance_uuid, fault["code"], fault["message"],
                                host=fault.get("host"))
        if ok or not only_if_updated:
            if release_claim:
                claims.release(instance_uuid, session=s)
            if request_id is not None:
                trace.finish_action(s, request_id, instance_uuid, result)
    return ok


# --- resize (manager/resize.py): each a transaction block of the flow, moved here --------


@operation(INSTANCE, returns_instance=True)
def get_migration(instance_uuid: str, migration_uuid: str):
    """The server's migration (the conductor checked that it is this server's)."""
    return resize.get_migration(migration_uuid)


@operation(INSTANCE)
def release_for_delete(instance_uuid: str, release_claim: bool) -> None:
    """A server deleted mid-resize: its migration's claims given back (and its own)."""
    with db.transaction() as s:
        resize.release_for_delete(s, instance_uuid)
        if release_claim:
            claims.release(instance_uuid, session=s)


@operation(INSTANCE)
def release_claim(instance_uuid: str, consumer: str) -> bool:
    """The claim held by the server or by its migration (``consumer``)."""
    return claims.release(consumer)


@operation(INSTANCE)
def advance_resize(instance_uuid: str, migration_uuid: str, values: dict, expect_task,
                   status: str, expect_status: str | None = None,
                   events: list[dict] = (), request_id: str | None = None) -> bool:
    """One step of a resize: the server's task and the migration's status together (and
    the action's finish, given its ``request_id``, when it is the last)."""
    with db.transaction() as s:
        ok = instances.update(instance_uuid, values, expect_task=expect_task, session=s)
        trace.store_rows(s, [_event_row(e) for e in events])
        ok = ok and resize.set_status(migration_uuid, status, expect=expect_status,
                                      session=s)
        if ok and request_id is not None:
            trace.finish_action(s, request_id, instance_uuid)
        return ok


@operation(INSTANCE)
def confirm_resize(instance_uuid: str, migration_uuid: str, values: dict | None,
                   event: dict, request_id: str) -> None:
    """The source's claim given back, the migration confirmed and, for a live server,
    its state from the new flavor (the event says whether a claim was released)."""
    with db.transaction() as s:
        released = claims.release(migration_uuid, session=s)
        resize.set_status(migration_uuid, "confirmed", session=s)
        if values is not None:
            event = dict(event, detail=event["detail"] + (
                ", source claim released" if released else ""))
            if instances.update(instance_uuid, values, expect_vm=states.RESIZED,
                                expect_task=None, session=s):
                trace.store_rows(s, [_event_row(event)])
                trace.finish_action(s, request_id, instance_uuid)
            else:
                trace.store_rows(s, [_event_row(event)])


@operation(INSTANCE)
def finish_revert(instance_uuid: str, migration_uuid: str, values: dict,
                  events: list[dict], request_id: str) -> bool:
    """The source's claim back to the server, its old flavor and host; the migration
    reverted (or in error, and the claim given back, if the server moved on)."""
    with db.transaction() as s:
        claims.move_back(migration_uuid, instance_uuid, session=s)
        ok = instances.update(instance_uuid, values, expect_task=states.RESIZE_REVERTING,
                              session=s)
        trace.store_rows(s, [_event_row(e) for e in events])
        resize.set_status(migration_uuid, "reverted" if ok else "error", session=s)
        if ok:
            trace.finish_action(s, request_id, instance_uuid)
        else:
            claims.release(instance_uuid, session=s)
        return ok


@operation(INSTANCE)
def rollback_resize(instance_uuid: str, migration_uuid: str, event: dict, reason: str,
                    request_id: str, error_state: bool = False, expect_task=None) -> None:
    """resize.rollback, for a host: the destination's claim dropped, the source's back."""
    m = resize.get_migration(migration_uuid)
    resize.rollback(types.SimpleNamespace(request_id=request_id), instance_uuid, m,
                    _StoredStep(event), reason, error_state=error_state,
                    expect_task=expect_task)


class _StoredStep:
    """A finished step as trace.store and resize.rollback read it."""

    def __init__(self, event: dict):
        self.row = _event_row(event)
        self.finish, self.host = self.row["finish_time"], self.row["host"]

    def values(self) -> dict:
        return self.row


def _event_row(event: dict) -> dict:
    return {k: dt.datetime.fromisoformat(v) if k in ("start_time", "finish_time") and
            isinstance(v, str) else v for k, v in event.items()}


def event(step) -> dict:
    """A trace Step's event row (finished now if it was not)."""
    if step.finish is None:
        step.done()
    return step.values()


def _primitive(value):
    """``value`` as the message bus carries it: datetimes as ISO strings."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _primitive(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_primitive(v) for v in value]
    return value


# --- the two ways to run them ---------------------------------------------------------


class Direct:
    """In this process: the caller's thread runs the operation."""

    def __init__(self, host: str | None = None):
        self.host = host

    def call(self, op: str, **kwargs):
        return OPERATIONS[op].func(**kwargs)


class ConductorRPC:
    """On the conductor: one RPC call per operation, naming the asking host."""

    def __init__(self, host: str):
        from pocketstack.compute.conductor.rpcapi import ConductorAPI

        self.host, self.conductor = host, ConductorAPI()

    def call(self, op: str, **kwargs):
        from pocketstack.common.context import RequestContext

        answer = self.conductor.host_db(RequestContext.admin(), self.host, op,
                                        _primitive(kwargs))
        return instance_from_columns(answer) if OPERATIONS[op].returns_instance else answer


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
