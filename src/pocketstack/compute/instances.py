"""Instance rows: scoped reads and compare-and-swap updates.

Every worker (conductor, compute, the API's delete) changes an instance with
``update(uuid, values, expect_task=…, attempt=…)``: one UPDATE whose WHERE clause carries
what the worker believes. If the server was deleted, or rescheduled after a build deadline
(``attempt`` bumped), the update matches nothing and the worker cleans up what it holds
instead of overwriting newer state. That is how delete-during-BUILD and lost messages
stay consistent without locks.
"""
from __future__ import annotations

import datetime as dt
import functools

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import states, trace
from pocketstack.compute.models import Instance, InstanceFault

_UNSET = object()
_TABLE = Instance.__table__
# attribute name → column name (``metadata_`` is the column ``metadata``)
_COLUMN = {attr.key: attr.columns[0].name for attr in Instance.__mapper__.column_attrs}


def column_values(inst: Instance) -> dict:
    """The column values set on a new (transient) Instance, for a Core INSERT; the
    columns' defaults fill in the rest, as a flush would."""
    return {_COLUMN[key]: value for key, value in sa.inspect(inst).dict.items()
            if key in _COLUMN}


def not_found(uuid: str) -> exceptions.NotFound:
    return exceptions.NotFound(f"Instance {uuid} could not be found.")


def get(ctx, uuid: str, *, session=None) -> Instance:
    """The live instance ``ctx`` may see; 404 for missing, deleted or another project's."""
    def load(s):
        inst = s.scalars(_LOAD, {"uuid": uuid}).first()
        if inst is None or inst.deleted:
            raise not_found(uuid)
        if not ctx.is_admin and not ctx.is_service and inst.project_id != ctx.project_id:
            raise not_found(uuid)
        return inst

    if session is not None:
        return load(session)
    with db.reader() as s:
        return load(s)


# Built once: a fresh select per call (and its cache key) costs more than running it.
_LOAD = sa.select(Instance).where(Instance.uuid == sa.bindparam("uuid"))


def load(uuid: str) -> Instance | None:
    with db.reader() as s:
        return s.scalars(_LOAD, {"uuid": uuid}).first()


@functools.cache  # built once per set of columns: building costs more than running it
def _peek_statement(columns: tuple[str, ...]) -> sa.Select:
    return sa.select(*(_TABLE.c[_COLUMN[c]].label(c) for c in columns)) \
        .where(_TABLE.c.uuid == sa.bindparam("uuid"))


def peek(uuid: str, *columns: str):
    """A few columns of the row (deleted or not), or None: for workers that need only
    these — the whole row is wide (flavor, request spec, network info as JSON) and an ORM
    load of it costs several times this Core read."""
    with db.reader() as s:
        return s.connection().execute(_peek_statement(columns), {"uuid": uuid}).first()


def is_live(uuid: str) -> bool:
    """The instance exists and is not deleted: one indexed column, not the whole row (a
    build asks this between its port calls)."""
    row = peek(uuid, "deleted")
    return row is not None and not row.deleted


def update(uuid: str, values: dict, *, expect_task=_UNSET, expect_vm=_UNSET,
           attempt: int | None = None, events=(), session=None,
           expect_host: str | None = None) -> bool:
    """Apply ``values`` if the row still matches (``expect_host``: and is on that host);
    store ``events`` in the same commit.

    Returns False (and stores the events anyway) when the instance is gone or changed.
    """
    tasks = vms = None
    if expect_task is not _UNSET:
        tasks = tuple(expect_task) if isinstance(expect_task, (list, tuple, set)) \
            else (expect_task,)
    if expect_vm is not _UNSET:
        vms = tuple(expect_vm) if isinstance(expect_vm, (list, tuple, set)) else (expect_vm,)
    names = tuple(_COLUMN[key] for key in values)
    params = {f"v_{name}": value for name, value in zip(names, values.values())}
    params.update(p_uuid=uuid, v_updated_at=utcnow())
    if attempt is not None:
        params["p_attempt"] = attempt
    if expect_host is not None:
        params["p_host"] = expect_host
    stmt = _update_statement(names, tasks, vms, attempt is not None, expect_host is not None)
    with (db.transaction() if session is None else _joined(session)) as s:
        result = s.connection().execute(stmt, params)
        trace.store(s, events)
        return result.rowcount == 1


_statements: dict[tuple, sa.Update] = {}


def _update_statement(names: tuple, tasks: tuple | None, vms: tuple | None,
                      with_attempt: bool, with_host: bool = False) -> sa.Update:
    """The compare-and-swap UPDATE for one shape of call, built once: a Core statement on
    the table with bind parameters (building it and its cache key cost more than running
    it, and the pipeline runs a handful per boot; there are a few dozen shapes)."""
    key = (names, tasks, vms, with_attempt, with_host)
    stmt = _statements.get(key)
    if stmt is not None:
        return stmt
    c = _TABLE.c
    cond = [c.uuid == sa.bindparam("p_uuid"), c.deleted.is_(False)]
    if tasks is not None:
        parts = [c.task_state.is_(None)] if None in tasks else []
        named = [t for t in tasks if t is not None]
        if named:
            parts.append(c.task_state.in_(named))
        cond.append(sa.or_(*parts))
    if vms is not None:
        cond.append(c.vm_state.in_(vms))
    if with_attempt:
        cond.append(c.attempt == sa.bindparam("p_attempt"))
    if with_host:
        cond.append(c.host == sa.bindparam("p_host"))
    columns = {name: sa.bindparam(f"v_{name}") for name in names + ("updated_at",)}
    stmt = sa.update(_TABLE).where(*cond).values(columns)
    if len(_statements) < 512:
        _statements[key] = stmt
    return stmt


class _joined:
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        return self.session

    def __exit__(self, *exc):
        return False


def add_fault(session, uuid: str, code: int, message: str, details: str = "",
              host: str | None = None) -> None:
    session.add(InstanceFault(instance_uuid=uuid, code=code, message=message[:4000],
                              details=details[:10000], host=host))


def latest_faults(session, uuids: list[str]) -> dict[str, InstanceFault]:
    if not uuids:
        return {}
    rows = session.scalars(sa.select(InstanceFault)
                           .where(InstanceFault.instance_uuid.in_(uuids))
                           .order_by(InstanceFault.id)).all()
    return {row.instance_uuid: row for row in rows}


def build_deadline(seconds: float) -> dt.datetime:
    return utcnow() + dt.timedelta(seconds=seconds)


def build_token(uuid: str) -> str | None:
    """The token the server was created with, while its build that creates volumes runs."""
    with db.reader() as s:
        return s.scalar(sa.select(Instance.build_token).where(Instance.uuid == uuid))


def take_over(instance_uuid: str, attempt: int) -> bool:
    """Make ``attempt`` of the build of ``instance_uuid`` the caller's to clean up and hand
    back: bump it if it is still current (a compare-and-swap), so a conductor that
    rescheduled it, or a host that still works on it, finds it superseded."""
    return update(instance_uuid, {"attempt": attempt + 1},
                  expect_vm=states.BUILDING, attempt=attempt)
