"""Prebuilt SQL for the hot path of GET /allocation_candidates: one group, no filters but
the resources, flat providers. Statements are built once per number of resource classes
with bind parameters: building a SQLAlchemy statement costs more Python than SQLite
spends running it (~1 ms per statement on this machine, 8 per request)."""
from __future__ import annotations

import functools

import sqlalchemy as sa

from pocketstack.placement.models import (Allocation, Inventory, ProviderTrait,
                                          ResourceProvider)

_RP, _INV, _ALLOC = ResourceProvider.__table__, Inventory.__table__, Allocation.__table__
_TRAITS = ProviderTrait.__table__


@functools.cache
def candidates_statement(count: int):
    """Ids of providers with room for ``count`` classes (rc0/n0 ...), by id, ``limit``.

    Driven by the first class's inventories in provider order (index on resource class,
    provider), each other class an index lookup of its inventory and each a correlated
    sum of its allocations: the database stops at ``limit`` fitting providers instead
    of computing every provider's usage and sorting them all."""
    first = _INV.alias("i0")
    query = sa.select(first.c.resource_provider_id)
    for i in range(count):
        inv = first if i == 0 else _INV.alias(f"i{i}")
        rc, n = sa.bindparam(f"rc{i}"), sa.bindparam(f"n{i}", type_=sa.BigInteger)
        used = (sa.select(sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0))
                .where(_ALLOC.c.resource_provider_id == first.c.resource_provider_id,
                       _ALLOC.c.resource_class == rc).scalar_subquery())
        if i == 0:
            query = query.where(inv.c.resource_class == rc)
        else:
            query = query.join(inv, sa.and_(
                inv.c.resource_provider_id == first.c.resource_provider_id,
                inv.c.resource_class == rc))
        query = query.where(
            (inv.c.total - inv.c.reserved) * inv.c.allocation_ratio >= used + n,
            inv.c.min_unit <= n, inv.c.max_unit >= n, n % inv.c.step_size == 0)
    return query.order_by(first.c.resource_provider_id).limit(sa.bindparam("limit"))


def candidate_ids(s, resources: dict[str, int], limit: int | None) -> list[int]:
    params = {"limit": limit or 2 ** 31 - 1}  # one statement with or without a limit
    for i, (rc, n) in enumerate(resources.items()):
        params[f"rc{i}"], params[f"n{i}"] = rc, n
    return list(s.execute(candidates_statement(len(resources)), params).scalars())


_EXISTS_NESTED = (sa.select(_RP.c.id).where(_RP.c.parent_provider_id.is_not(None)).limit(1))
_EXISTS_SHARING = (sa.select(_TRAITS.c.resource_provider_id)
                   .where(_TRAITS.c.trait == "MISC_SHARES_VIA_AGGREGATE").limit(1))


def flat_and_unshared(s) -> bool:
    """No nested provider and no sharing provider anywhere: every candidate is one
    provider on its own."""
    return s.execute(_EXISTS_NESTED).first() is None and (
        s.execute(_EXISTS_SHARING).first() is None)


_IDS = sa.bindparam("ids", expanding=True)
PROVIDERS = sa.select(_RP).where(_RP.c.id.in_(_IDS))
USAGE = (sa.select(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class,
                   sa.func.sum(_ALLOC.c.used))
         .where(_ALLOC.c.resource_provider_id.in_(_IDS))
         .group_by(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class))
INVENTORIES = sa.select(_INV).where(_INV.c.resource_provider_id.in_(_IDS))
TRAITS = (sa.select(_TRAITS.c.resource_provider_id, _TRAITS.c.trait)
          .where(_TRAITS.c.resource_provider_id.in_(_IDS)))
