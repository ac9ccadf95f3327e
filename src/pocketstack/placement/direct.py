"""Placement for the scheduler and the compute hosts of this deployment, as calls.

What nova's SchedulerReportClient does over HTTP (report a host's provider and
inventories, claim, release, move a claim to a migration), run against placement's own
tables inside the caller's transaction when it has one. Upstream's ``placement/direct.py``
runs the service in-process the same way. Why not HTTP on the hot path: a boot claims
once and a delete releases once, each of them a few indexed statements here; through the
REST API (even the in-process transport) every one also pays token checks, JSON and a
new transaction, and a release could no longer commit with the compute rows that say the
server is gone (a crash in between would leak or double-free). The REST API shows and
edits the same rows, so an operator's ``reserved`` or ``allocation_ratio`` is what the
next claim checks.

Every write bumps the providers' generations, as placement's REST writes do, so a
client holding a generation sees the change. A claim locks the provider's row, checks
its inventory rows' ``used`` against capacity and counts them up (usage.py): one
provider's claims queue for a moment, two cannot both take its last room, and a REST
write (which locks the same row first) cannot slip between the check and the write.
"""
from __future__ import annotations

import functools

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.placement import usage
from pocketstack.placement.models import Allocation, Consumer, Inventory, ResourceProvider

_RP, _INV = ResourceProvider.__table__, Inventory.__table__
_ALLOC, _CONS = Allocation.__table__, Consumer.__table__
CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB")


def _transaction(session):
    return db.transaction() if session is None else _Joined(session)


class _Joined:
    """The caller's session as a context manager (it commits, not us)."""
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        return self.session

    def __exit__(self, *exc):
        return False


# --- what the scheduler reads: free room per provider, as SQL to join on -----------------

def join_free_room(onto, uuid_column):
    """``onto`` (a from-clause) joined to the provider whose uuid is ``uuid_column`` and
    its inventories, flat (SQLite would materialize a parenthesized join of every
    provider first), and ({class: free-units column}, generation column). Free =
    (total - reserved) x allocation_ratio, truncated, minus ``used`` (usage.py): what a
    claim checks; no provider or no inventory of a class: no room for it."""
    joined = onto.outerjoin(_RP, _RP.c.uuid == uuid_column)
    free = {}
    for rc in CLASSES:
        inv = _INV.alias(f"inv_{rc.lower()}")
        joined = joined.outerjoin(inv, sa.and_(inv.c.resource_provider_id == _RP.c.id,
                                               inv.c.resource_class == rc))
        capacity = sa.cast((inv.c.total - inv.c.reserved) * inv.c.allocation_ratio,
                           sa.BigInteger)
        # cast: PostgreSQL would hand BIGINT arithmetic back as NUMERIC (Decimal)
        free[rc] = sa.cast(sa.func.coalesce(capacity - inv.c.used, 0), sa.Integer)
    return joined, free, _RP.c.generation


# --- claims --------------------------------------------------------------------------------

_PROVIDER = sa.select(_RP.c.id).where(_RP.c.uuid == sa.bindparam("rp"))
_BUMP = (sa.update(_RP).where(_RP.c.id.in_(sa.bindparam("ids", expanding=True)))
         .values(generation=_RP.c.generation + 1, updated_at=sa.bindparam("now")))
# A claim's first statement bumps its provider's generation, which also locks the row
# (PostgreSQL/MariaDB; SQLite serializes writers): claims on one host queue for a
# moment, and every other writer of its usage locks it first too (usage.py).
_LOCK_BY_UUID = (sa.update(_RP).where(_RP.c.uuid == sa.bindparam("rp"))
                 .values(generation=_RP.c.generation + 1, updated_at=sa.bindparam("now")))
# A release's: the providers the consumer holds anything on (none: nothing to do).
_LOCK_HELD = (sa.update(_RP).where(_RP.c.id.in_(
    sa.select(_ALLOC.c.resource_provider_id)
    .where(_ALLOC.c.consumer_id == sa.bindparam("consumer"))))
    .values(generation=_RP.c.generation + 1, updated_at=sa.bindparam("now")))
_HOLDS = (sa.select(_ALLOC.c.resource_provider_id, _RP.c.uuid, _RP.c.name,
                    _ALLOC.c.resource_class, _ALLOC.c.used)
          .join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
          .where(_ALLOC.c.consumer_id == sa.bindparam("consumer")))
_CONSUMER = sa.select(_CONS.c.id).where(_CONS.c.uuid == sa.bindparam("consumer"))
_FORGET = sa.delete(_ALLOC).where(_ALLOC.c.consumer_id == sa.bindparam("consumer"))
_FORGET_CONSUMER = sa.delete(_CONS).where(_CONS.c.uuid == sa.bindparam("consumer"))
_USE = (sa.update(_INV).where(_INV.c.resource_provider_id == sa.bindparam("rp_id"),
                              _INV.c.resource_class == sa.bindparam("rc"))
        .values(used=_INV.c.used + sa.bindparam("n")))


@functools.cache
def _room_statement(count: int):
    """Provider ``rp``'s id and how many of ``count`` classes (rc0/n0 ...) have room for
    the amount: (total - reserved) x ratio >= used + n, within min/max unit and step."""
    fits = []
    for i in range(count):
        rc, n = sa.bindparam(f"rc{i}"), sa.bindparam(f"n{i}", type_=sa.BigInteger)
        fits.append(sa.and_(_INV.c.resource_class == rc,
                            (_INV.c.total - _INV.c.reserved) * _INV.c.allocation_ratio
                            >= _INV.c.used + n,
                            _INV.c.min_unit <= n, _INV.c.max_unit >= n,
                            n % _INV.c.step_size == 0))
    fitting = (sa.select(sa.func.count()).select_from(_INV)
               .where(_INV.c.resource_provider_id == _RP.c.id, sa.or_(*fits))
               .scalar_subquery())
    return sa.select(_RP.c.id, fitting).where(_RP.c.uuid == sa.bindparam("rp"))


class NoRoom(Exception):
    """The provider lacks room (or is unknown): the claim's transaction must roll back
    (its lock bumped the provider's generation)."""


def claim(consumer: str, rp_uuid: str, resources: dict[str, int], project_id: str,
          user_id: str, *, consumer_type: str = "INSTANCE", session=None) -> bool:
    """Allocate ``resources`` on the provider for a consumer that holds nothing (it may
    already exist without allocations). O(1): lock the provider, check its inventory
    rows, count them up. Without ``session``: False when there is no room; in the
    caller's ``session``: raises NoRoom, and the caller rolls back."""
    if session is not None:
        _claim(session.connection(), consumer, rp_uuid, resources, project_id, user_id,
               consumer_type)
        return True
    try:
        with db.transaction() as s:
            _claim(s.connection(), consumer, rp_uuid, resources, project_id, user_id,
                   consumer_type)
    except NoRoom:
        return False
    return True


def _claim(conn, consumer, rp_uuid, resources, project_id, user_id, consumer_type):
    resources = {rc: n for rc, n in resources.items() if n > 0}
    now = utcnow()
    if not conn.execute(_LOCK_BY_UUID, {"rp": rp_uuid, "now": now}).rowcount:
        raise NoRoom(rp_uuid)  # not reported (yet): no room anywhere on it
    params = {"rp": rp_uuid}
    for i, (rc, n) in enumerate(resources.items()):
        params[f"rc{i}"], params[f"n{i}"] = rc, n
    rp_id, fitting = conn.execute(_room_statement(len(resources)), params).one()
    if fitting != len(resources):
        raise NoRoom(rp_uuid)
    if resources:
        conn.execute(_USE, [{"rp_id": rp_id, "rc": rc, "n": n}
                            for rc, n in resources.items()])
        conn.execute(sa.insert(_ALLOC), [
            {"resource_provider_id": rp_id, "consumer_id": consumer, "resource_class": rc,
             "used": n, "created_at": now, "updated_at": now}
            for rc, n in resources.items()])
    if conn.execute(_CONSUMER, {"consumer": consumer}).first() is None:
        conn.execute(sa.insert(_CONS), [{
            "uuid": consumer, "project_id": project_id, "user_id": user_id,
            "generation": 1, "consumer_type": consumer_type, "created_at": now,
            "updated_at": now}])
    else:
        conn.execute(sa.update(_CONS).where(_CONS.c.uuid == consumer).values(
            generation=_CONS.c.generation + 1, updated_at=now))


def adopt(consumer: str, rp_uuid: str, resources: dict[str, int], project_id: str,
          user_id: str, consumer_type: str, session) -> None:
    """Record an allocation made before placement held them (an upgraded cloud's old
    claims): no capacity check, it is already counted on the host."""
    conn = session.connection()
    row = conn.execute(_PROVIDER, {"rp": rp_uuid}).first()
    if row is None or conn.execute(_CONSUMER, {"consumer": consumer}).first() is not None:
        return
    now = utcnow()
    conn.execute(sa.insert(_CONS), [{
        "uuid": consumer, "project_id": project_id, "user_id": user_id, "generation": 1,
        "consumer_type": consumer_type, "created_at": now, "updated_at": now}])
    conn.execute(sa.insert(_ALLOC), [
        {"resource_provider_id": row[0], "consumer_id": consumer, "resource_class": rc,
         "used": n, "created_at": now, "updated_at": now}
        for rc, n in resources.items() if n > 0])
    usage.adjust(conn, {(row[0], rc): n for rc, n in resources.items()})
    conn.execute(_BUMP, {"ids": [row[0]], "now": now})


def held(consumer: str, session=None) -> dict[str, dict]:
    """{provider uuid: {"name", "resources": {class: amount}}} the consumer holds."""
    with (db.reader() if session is None else _Joined(session)) as s:
        return _held(s.connection(), consumer)


def _held(conn, consumer: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for rp_id, rp_uuid, name, rc, used in conn.execute(_HOLDS, {"consumer": consumer}):
        entry = out.setdefault(rp_uuid, {"id": rp_id, "name": name, "resources": {}})
        entry["resources"][rc] = used
    return out


def release(consumer: str, *, session=None, only_on: str | None = None) -> dict[str, dict]:
    """Delete what ``consumer`` holds (only if it holds something on the provider named
    ``only_on``, when given); what was released, as ``held`` says it ({} when nothing).
    Only the deleter gets it back, so releasing twice (cleanup racing a delete) gives
    back once."""
    with _transaction(session) as s:
        conn = s.connection()
        if only_on is not None:
            holding = _held(conn, consumer)
            if all(e["name"] != only_on for e in holding.values()):
                return {}
        # Lock (and bump) the providers it holds on, then read what it holds: a release
        # that raced us and won leaves nothing to read.
        if not conn.execute(_LOCK_HELD, {"consumer": consumer, "now": utcnow()}).rowcount:
            return {}
        holding = _held(conn, consumer)
        if not holding or not conn.execute(_FORGET, {"consumer": consumer}).rowcount:
            return {}
        usage.adjust(conn, {(e["id"], rc): -n for e in holding.values()
                            for rc, n in e["resources"].items()})
        conn.execute(_FORGET_CONSUMER, {"consumer": consumer})
        return holding


def move(consumer: str, new_consumer: str, *, consumer_type: str | None = None,
         session=None) -> None:
    """Hand ``consumer``'s allocations to ``new_consumer`` (nova's move of the source's
    allocations to the migration at the start of a resize, and back on revert)."""
    with _transaction(session) as s:
        conn = s.connection()
        holding = _held(conn, consumer)
        if not holding:
            return
        now = utcnow()
        conn.execute(sa.update(_ALLOC).where(_ALLOC.c.consumer_id == consumer)
                     .values(consumer_id=new_consumer, updated_at=now))
        if conn.execute(_CONSUMER, {"consumer": new_consumer}).first() is None:
            values = {"uuid": new_consumer, "updated_at": now,
                      "generation": _CONS.c.generation + 1}
            if consumer_type:
                values["consumer_type"] = consumer_type
            conn.execute(sa.update(_CONS).where(_CONS.c.uuid == consumer).values(**values))
        else:
            conn.execute(_FORGET_CONSUMER, {"consumer": consumer})
        conn.execute(_BUMP, {"ids": [e["id"] for e in holding.values()], "now": now})


def holders(consumers) -> dict[str, str]:
    """{consumer: name of the provider it holds resources on}."""
    consumers = list(consumers)
    if not consumers:
        return {}
    with db.reader() as s:
        return dict(s.execute(
            sa.select(_ALLOC.c.consumer_id, _RP.c.name).distinct()
            .join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
            .where(_ALLOC.c.consumer_id.in_(consumers))).all())


def usage_by_provider(uuids, session=None) -> dict[str, dict[str, int]]:
    """{provider uuid: {class: used}} for these providers."""
    with (db.reader() if session is None else _Joined(session)) as s:
        out: dict[str, dict[str, int]] = {u: {} for u in uuids}
        for rp_uuid, rc, used in s.execute(
                sa.select(_RP.c.uuid, _ALLOC.c.resource_class, sa.func.sum(_ALLOC.c.used))
                .join(_ALLOC, _ALLOC.c.resource_provider_id == _RP.c.id)
                .where(_RP.c.uuid.in_(list(uuids)))
                .group_by(_RP.c.uuid, _ALLOC.c.resource_class)):
            out[rp_uuid][rc] = int(used)
        return out


def all_allocations(session) -> list[tuple[str, str, str, str, int]]:
    """(consumer, provider uuid, provider name, class, used) of every allocation (audit)."""
    return [tuple(r) for r in session.execute(
        sa.select(_ALLOC.c.consumer_id, _RP.c.uuid, _RP.c.name, _ALLOC.c.resource_class,
                  _ALLOC.c.used).join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id))]
