"""What every network resource shares: ids, standard attributes (description, timestamps,
revision, tags), project scoping, policy checks, and the work done after commit (DHCP files,
events to compute).
"""
from __future__ import annotations

import functools
import logging
import time
import uuid

import sqlalchemy as sa
from sqlalchemy import orm

from pocketstack.common import config, exceptions, policy, runtime
from pocketstack.common.timeutils import isotime, utcnow
from pocketstack.network import validate
from pocketstack.network.exceptions.common import RevisionNumberConstraintFailed
from pocketstack.network.models import Tag

LOG = logging.getLogger(__name__)


def new_id() -> str:
    return str(uuid.uuid4())


def standard_view(row, tags: list[str] | None) -> dict:
    return {"description": row.description, "created_at": isotime(row.created_at),
            "updated_at": isotime(row.updated_at), "revision_number": row.revision_number,
            "tags": list(tags or [])}


def project_view(project_id: str) -> dict:
    return {"project_id": project_id, "tenant_id": project_id}


def touch(row) -> None:
    """A change to ``row``: neutron bumps updated_at and the revision number."""
    row.updated_at = utcnow()
    row.revision_number = (row.revision_number or 0) + 1


def check_revision(row, expected: int | None) -> None:
    """``If-Match: revision_number=N``: the update goes ahead only while ``row`` (read in
    the write transaction) is at revision N, else neutron's 412."""
    if expected is not None and row.revision_number != expected:
        raise RevisionNumberConstraintFailed(expected, row.revision_number)


def init_standard(row) -> None:
    now = utcnow()
    row.created_at = row.updated_at = now
    row.revision_number = 0


# --- who may see and do what ---------------------------------------------------------

def sees_all(ctx) -> bool:
    return ctx.is_service or ctx.is_admin


# oslo.policy re-checks policy.yaml on every enforce (a stat and a few hundred
# microseconds); a decision depends only on the rules, the caller and the target, so the
# hot paths (a port create asks twice) remember decisions for a second.
_DECISION_TTL = 1.0


def _allowed(ctx, action: str, target: dict) -> bool:
    # Each cloud has its own policy rules (common/runtime.py).
    _decisions = runtime.current().slot(__name__ + ".decisions", dict)
    key = (action, ctx.user_id, ctx.project_id, ctx.domain_id, ctx.system_scope,
           tuple(sorted(ctx.roles)), tuple(sorted(target.items())))
    now = time.monotonic()
    cached = _decisions.get(key)
    if cached is not None and cached[0] > now:
        return cached[1]
    allowed = policy.check(ctx, action, target)
    if len(_decisions) > 4096:
        _decisions.clear()
    _decisions[key] = (now + _DECISION_TTL, allowed)
    return allowed


def authorize(ctx, action: str, target: dict) -> None:
    target = {"shared": False, **target}
    if not _allowed(ctx, action, target):
        raise exceptions.PolicyNotAuthorized(action)


def can(ctx, action: str, target: dict) -> bool:
    try:
        authorize(ctx, action, target)
    except exceptions.Forbidden:
        return False
    return True


def owner_project(ctx, values: dict) -> str:
    """The project a new resource belongs to: the one asked for, else the caller's."""
    project_id = values.get("project_id") or ctx.project_id
    if not project_id:
        raise validate.invalid("project_id", "a project is required: use a project-scoped "
                                             "token or give project_id")
    return project_id


def own_visible(model, ctx):
    """Rows of the caller's project (everything for admins)."""
    return sa.true() if sees_all(ctx) else model.project_id == ctx.project_id


# --- concurrency -----------------------------------------------------------------------

def core(s, statement, params=None):
    """Run a Core statement on the session's connection, without the ORM's per-statement
    work (hot paths: a port create runs several). Sees flushed rows only."""
    # The connection is looked up once per transaction (Session.connection() walks the
    # session's transaction state machine every time).
    cached = s.info.get("core_connection")
    if cached is None or cached[0] is not s.get_transaction():
        connection = s.connection()
        cached = s.info["core_connection"] = (s.get_transaction(), connection)
    return cached[1].execute(statement, params)


_INSERTS: dict = {}  # one INSERT statement per table, built once (its cache key too)


class NewRow:
    """A new row as plain attributes, for ``insert_new(..., attach=False)``: what a hot
    path inserts with Core and then only reads needs no ORM instance."""

    def __init__(self, table, **values):
        self.__table__ = table
        self.__dict__.update(values)


def insert_new(s, objects: list, attach: bool = True) -> None:
    """INSERT new ORM objects with one Core statement per table, skipping the unit of work
    (the hot path of a port create on SQLite), then attach them to the session as
    persistent (or, ``attach=False``, leave them as read-only values). Attributes left
    unset get their column's Python default."""
    by_table: dict = {}
    for obj in objects:
        table = obj.__table__
        row = {}
        for column in table.columns:
            value = getattr(obj, column.key, None)  # a NewRow has only what was given
            if value is None and column.default is not None and not column.nullable:
                default = column.default.arg
                value = default(None) if callable(default) else default
                setattr(obj, column.key, value)
            row[column.key] = value
        by_table.setdefault(table, []).append(row)
    for table, rows in by_table.items():
        statement = _INSERTS.get(table)
        if statement is None:
            statement = _INSERTS[table] = table.insert()
        core(s, statement, rows)
    if not attach:
        return
    for obj in objects:
        assert not isinstance(obj, NewRow), "a NewRow cannot join a session"
        orm.make_transient_to_detached(obj)
        s.add(obj)


def writes_serialized(s) -> bool:
    """SQLite: one writer at a time (common/db.py), so what a write transaction reads stays
    true until it commits. Other engines need savepoints and unique constraints."""
    return s.get_bind().dialect.name == "sqlite"


DEADLOCK_MARKERS = ("deadlock", "lock wait timeout", "could not serialize", "40001", "40p01",
                    "1213")


def is_deadlock(error: Exception) -> bool:
    if not isinstance(error, sa.exc.DBAPIError):
        return False
    text = str(error.orig).lower()
    return any(marker in text for marker in DEADLOCK_MARKERS)


def retry_on_deadlock(function):
    """Run a whole write transaction again when the database chose it as a deadlock
    victim (PostgreSQL, MariaDB), as oslo.db's wrap_db_retry does for neutron."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        for attempt in range(5):
            try:
                return function(*args, **kwargs)
            except sa.exc.DBAPIError as error:
                if not is_deadlock(error) or attempt == 4:
                    raise
                LOG.info("%s: deadlock, retrying (%s)", function.__name__, attempt + 1)
                time.sleep(0.01 * (attempt + 1))
    return wrapper


# --- tags ---------------------------------------------------------------------------

def set_tags(s, resource_id: str, tags: list[str]) -> None:
    s.execute(sa.delete(Tag).where(Tag.resource_id == resource_id))
    for tag in sorted(set(tags)):
        s.add(Tag(resource_id=resource_id, tag=tag))


def delete_tags(s, resource_id: str) -> None:
    s.execute(sa.delete(Tag).where(Tag.resource_id == resource_id))


def tags_of(s, resource_id: str) -> list[str]:
    return list(s.scalars(sa.select(Tag.tag).where(Tag.resource_id == resource_id)
                          .order_by(Tag.tag)))


# --- after commit -------------------------------------------------------------------

class AfterCommit:
    """Side effects of a transaction, run once it has committed: DHCP files of the
    networks it touched, events for compute. Never run for a rolled-back transaction."""

    def __init__(self):
        self.dhcp_networks: set[str] = set()
        self.deleted_networks: set[str] = set()
        self.events: list[dict] = []
        self.dns: list[tuple] = []  # floating IPs' DNS records to change (dns_publish.py)

    def dns_change(self, ctx, address: str, old, new) -> None:
        self.dns.append((ctx, address, old, new))

    def dhcp(self, network_id: str) -> None:
        self.dhcp_networks.add(network_id)

    def event(self, name: str, server_uuid: str, port_id: str) -> None:
        self.events.append({"name": name, "server_uuid": server_uuid, "tag": port_id,
                            "status": "completed"})

    def run(self) -> None:
        from pocketstack.network import dhcp, notifier

        for network_id in sorted(self.dhcp_networks | self.deleted_networks):
            dhcp.sync(network_id)
        if self.events and config.CONF.network.notify_compute_on_port_status_changes:
            notifier.get().send(self.events)
        if self.dns:
            from pocketstack.network import dns_publish

            for change in self.dns:
                dns_publish.apply(*change)
