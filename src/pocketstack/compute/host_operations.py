"""The mechanism of a compute host's named operations (hostdb.py): how an operation is
declared (its scope, what it answers for another host's server, the columns it may
write), and how its arguments and answers cross the message bus as primitives."""
from __future__ import annotations

import dataclasses
import datetime as dt
import types
from typing import Callable

import sqlalchemy as sa

from pocketstack.compute.models import BlockDeviceMapping, Instance, Migration

HOSTS, INSTANCE = "hosts", "instance"

@dataclasses.dataclass(frozen=True)
class Operation:
    func: Callable
    scope: str  # HOSTS or INSTANCE: what the conductor checks before running it
    returns_instance: bool = False  # a row (or a list of rows): columns cross the bus
    # The answer for a server that is not the asking host's (REFUSE: a 403). A read
    # answers None, as for a server that does not exist (a late event for a server that
    # moved on); a build's checks answer what makes a superseded build stop quietly.
    foreign: object = None
    # The server's columns its ``values`` may set (None: it takes no ``values``): what the
    # compute code writes through it, no more. A host never moves a server into another
    # project or onto another host's name: ``host`` only to itself or None, ``node`` only
    # to one of its own nodes or None (the conductor checks both).
    writes: frozenset | None = None
    # It reads the server's whole row first (a ``row`` keyword): the conductor's check
    # loads that row to see whose server it is and hands it over (one read, not two).
    preloads: bool = False
    # Its compare-and-swap names the asking host (an ``asker`` keyword, the conductor's):
    # on a server that is not the host's it matches nothing and answers False, as
    # ``foreign`` would - so the check reads nothing first.
    fenced: bool = False

OPERATIONS: dict[str, Operation] = {}
UNSET = "<unset>"  # a primitive: it crosses the bus as itself
REFUSE = "<refuse>"
STATES = ("vm_state", "task_state", "power_state")
PLACE = ("host", "node")
FLAVOR_USAGE = ("vcpus", "memory_mb")  # resize.flavor_usage

def operation(scope: str, returns_instance: bool = False, foreign=UNSET, writes=None,
              preloads: bool = False, fenced: bool = False):
    def register(func):
        answer = foreign if foreign is not UNSET else (None if returns_instance else REFUSE)
        OPERATIONS[func.__name__] = Operation(
            func, scope, returns_instance, answer,
            None if writes is None else frozenset(writes), preloads, fenced)
        return func
    return register

def instance_columns(row) -> dict | None:
    """A row (an Instance, a Migration, or a few columns) as primitives: the conductor's
    answer to the operations that return one."""
    if row is None or isinstance(row, (bool, int, float, str)):
        return row  # beside a row in a list: a primitive already
    if isinstance(row, list):
        return [instance_columns(r) for r in row]
    if isinstance(row, sa.Row):
        return primitive(row._asdict())
    return primitive({attr.key: getattr(row, attr.key)
                       for attr in sa.inspect(row).mapper.column_attrs})

def instance_from_columns(columns: dict | None):
    """A row answered over the bus, read as the row was: attributes."""
    if isinstance(columns, list):
        return [instance_from_columns(c) for c in columns]
    if not isinstance(columns, dict):
        return columns  # None, or a primitive beside a row
    return types.SimpleNamespace(**{
        k: dt.datetime.fromisoformat(v) if k in DATETIMES and isinstance(v, str) else v
        for k, v in columns.items()})

DATETIMES = frozenset(attr.key for model in (Instance, Migration, BlockDeviceMapping)
                       for attr in sa.inspect(model).column_attrs
                       if isinstance(attr.columns[0].type, sa.DateTime)
                       or isinstance(getattr(attr.columns[0].type, "impl", None),
                                     sa.DateTime))

def locked_instance(s, instance_uuid: str):
    row = s.scalar(sa.select(Instance).where(Instance.uuid == instance_uuid)
                   .with_for_update())
    return None if row is None or row.deleted else row

class StoredStep:
    """A finished step as trace.store and resize.rollback read it."""

    def __init__(self, event: dict):
        self.row = event_row(event)
        self.finish, self.host = self.row["finish_time"], self.row["host"]

    def values(self) -> dict:
        return self.row

def bus_values(values: dict) -> dict:
    """An instance row's new values as they crossed the bus, datetimes read back."""
    return {k: dt.datetime.fromisoformat(v) if k in DATETIMES and isinstance(v, str)
            else v for k, v in values.items()}

def event_row(event: dict) -> dict:
    return {k: dt.datetime.fromisoformat(v) if k in ("start_time", "finish_time") and
            isinstance(v, str) else v for k, v in event.items()}

def event(step) -> dict:
    """A trace Step's event row (finished now if it was not)."""
    if step.finish is None:
        step.done()
    return step.values()

def primitive(value):
    """``value`` as the message bus carries it: datetimes as ISO strings."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: primitive(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [primitive(v) for v in value]
    return value
