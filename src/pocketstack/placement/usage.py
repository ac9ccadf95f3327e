"""Each inventory's ``used``: the sum of its class's allocations on its provider, kept in
step by every allocation write in the write's own transaction, so a claim checks one row
(O(1)) where upstream sums every allocation on the provider for each claim.

Writers that change ``used`` lock the providers' rows first, in id order (``lock``):
a claim, a release, a REST allocation or inventory write then queue for one provider
instead of deadlocking on its inventory rows.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.placement.models import Allocation, Inventory, ResourceProvider

_RP, _INV, _ALLOC = ResourceProvider.__table__, Inventory.__table__, Allocation.__table__

_LOCK = (sa.select(_RP.c.id).where(_RP.c.id.in_(sa.bindparam("ids", expanding=True)))
         .order_by(_RP.c.id).with_for_update())
_ADJUST = (sa.update(_INV).where(_INV.c.resource_provider_id == sa.bindparam("rp_id"),
                                 _INV.c.resource_class == sa.bindparam("rc"))
           .values(used=_INV.c.used + sa.bindparam("delta")))
_OF_CONSUMERS = (sa.select(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class,
                           sa.func.sum(_ALLOC.c.used))
                 .where(_ALLOC.c.consumer_id.in_(sa.bindparam("consumers", expanding=True)))
                 .group_by(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class))


def lock(conn, rp_ids) -> None:
    ids = sorted(set(rp_ids))
    if ids:
        conn.execute(_LOCK, {"ids": ids}).all()


def of_consumers(conn, consumers) -> dict[tuple[int, str], int]:
    """{(provider id, class): amount} these consumers hold."""
    consumers = list(consumers)
    if not consumers:
        return {}
    return {(rp_id, rc): int(used) for rp_id, rc, used
            in conn.execute(_OF_CONSUMERS, {"consumers": consumers})}


def adjust(conn, deltas: dict[tuple[int, str], int]) -> None:
    rows = [{"rp_id": rp_id, "rc": rc, "delta": d} for (rp_id, rc), d in sorted(deltas.items())
            if d]
    if rows:
        conn.execute(_ADJUST, rows)


def difference(new: dict, old: dict) -> dict[tuple[int, str], int]:
    return {key: new.get(key, 0) - old.get(key, 0) for key in set(new) | set(old)}


def resync(conn, rp_ids) -> None:
    """``used`` recomputed from the allocations (after a reshape moved them around)."""
    ids = sorted(set(rp_ids))
    if not ids:
        return
    total = (sa.select(sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0))
             .where(_ALLOC.c.resource_provider_id == _INV.c.resource_provider_id,
                    _ALLOC.c.resource_class == _INV.c.resource_class).scalar_subquery())
    conn.execute(sa.update(_INV).where(_INV.c.resource_provider_id.in_(ids))
                 .values(used=total))
