"""Placement's internal API: what the REST handlers call and what the scheduler will
call to claim (``claim``/``set_allocations``). Each function is one transaction and
returns plain data; errors are placement's (errors.py).

Claiming for the scheduler: ``claim(consumer, {provider: {class: amount}}, project, user,
consumer_generation=..., provider_generations=...)`` writes the consumer's allocations
atomically: capacity is checked with the write in place and each provider's generation
(and the consumer's) is compare-and-swapped, so two schedulers claiming the last room on
a host cannot both win; the loser gets a 409 ``placement.concurrent_update`` or a
capacity 409 and picks an alternate.
"""
from __future__ import annotations

import functools
import logging
import time

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.placement import (allocations, candidates, catalog, errors, filters,
                                   inventories, providers)
from pocketstack.placement.allocations import Request
from pocketstack.placement.models import ResourceProvider as RP

__all__ = ["Request", "claim", "set_allocations"]

LOG = logging.getLogger(__name__)
# A deadlock victim (PostgreSQL, MariaDB) or MariaDB's snapshot check (error 1020).
_RETRY_MARKERS = ("deadlock", "lock wait timeout", "could not serialize", "40001", "40p01",
                  "1213", "1020", "record has changed since last read")


def _retryable(error: Exception) -> bool:
    if isinstance(error, exceptions.PocketstackError):
        return getattr(error, "retryable", False)
    if isinstance(error, sa.exc.DBAPIError):
        return any(m in str(error.orig).lower() for m in _RETRY_MARKERS)
    return False


def _retrying(function):
    """Run an allocation write again when a concurrent writer bumped one of its providers'
    generations (or the database aborted it), as upstream's replace_all does: a claim fails
    with 409 only when capacity or the consumer's generation says so, or after
    [placement] allocation_conflict_retry_count tries."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        retries = config.CONF.placement.allocation_conflict_retry_count
        for attempt in range(retries + 1):
            try:
                return function(*args, **kwargs)
            except (exceptions.PocketstackError, sa.exc.DBAPIError) as error:
                if not _retryable(error):
                    raise
                if attempt == retries:
                    if isinstance(error, exceptions.PocketstackError):
                        raise
                    raise errors.concurrent_update() from None
                LOG.debug("%s: concurrent update, retrying (%s)", function.__name__,
                          attempt + 1)
                time.sleep(0.002 * (attempt + 1))
    return wrapper


def _provider_view(s, rps, version, base) -> list[dict]:
    tree = providers.uuids_of(s, {r.parent_provider_id for r in rps}
                              | {r.root_provider_id for r in rps})
    return [providers.to_dict(rp, tree, version, base) for rp in rps]


# --- providers ---------------------------------------------------------------------------

def list_providers(name=None, rp_uuid=None, member_of=None, resources=None, in_tree=None,
                   required=None, *, version=(1, 0), base="") -> list[dict]:
    with db.reader() as s:
        query = sa.select(RP).order_by(RP.id)
        if name is not None:
            query = query.where(RP.name == name)
        if rp_uuid is not None:
            query = query.where(RP.uuid == rp_uuid)
        if member_of is not None:
            query = query.where(*filters.member_of_clauses(RP.id, member_of))
        if required is not None:
            missing = catalog.unknown_traits(s, required.names())
            if missing:
                raise errors.bad_request(f"Invalid query string parameters: No such "
                                         f"trait(s): {', '.join(missing)}")
            query = query.where(*filters.trait_clauses(RP.id, required))
        if resources:
            missing = catalog.unknown_classes(s, resources)
            if missing:
                raise errors.bad_request(f"Invalid resource class in resources parameter: "
                                         f"No such resource class {missing[0]}.")
            for rc, amount in resources.items():
                query = query.where(RP.id.in_(filters.with_capacity(rc, amount)))
        if in_tree is not None:
            root = s.scalar(sa.select(RP.root_provider_id).where(RP.uuid == in_tree))
            if root is None:
                return []
            query = query.where(RP.root_provider_id == root)
        return _provider_view(s, list(s.scalars(query)), version, base)


def get_provider(rp_uuid, *, version=(1, 0), base="") -> dict:
    with db.reader() as s:
        return _provider_view(s, [providers.get(s, rp_uuid)], version, base)[0]


@_retrying
def create_provider(name, rp_uuid=None, parent_uuid=None, *, version=(1, 0), base=""):
    with db.transaction() as s:
        rp = providers.create(s, name, rp_uuid, parent_uuid)
        return _provider_view(s, [rp], version, base)[0]


@_retrying
def update_provider(rp_uuid, name, parent_uuid=None, parent_given=False, *, version=(1, 0),
                    base="") -> dict:
    with db.transaction() as s:
        rp = providers.update(s, providers.get(s, rp_uuid), name, parent_uuid, version,
                              parent_given)
        return _provider_view(s, [rp], version, base)[0]


@_retrying
def delete_provider(rp_uuid) -> None:
    with db.transaction() as s:
        providers.delete(s, providers.get(s, rp_uuid, for_update=True))


# --- inventories -------------------------------------------------------------------------

def get_inventories(rp_uuid) -> tuple[int, dict]:
    with db.reader() as s:
        rp = providers.get(s, rp_uuid)
        return rp.generation, {rc: inventories.to_dict(i)
                               for rc, i in inventories.of(s, rp.id).items()}


def get_inventory(rp_uuid, rc) -> tuple[int, dict]:
    with db.reader() as s:
        rp = providers.get(s, rp_uuid)
        inv = inventories.of(s, rp.id).get(rc)
        if inv is None:
            raise errors.not_found(f"No inventory of class {rc} for {rp_uuid}")
        return rp.generation, inventories.to_dict(inv)


@_retrying
def set_inventories(rp_uuid, generation, data, version) -> tuple[int, dict]:
    with db.transaction() as s:
        rp = providers.get(s, rp_uuid, for_update=True)
        providers.check_generation(rp, generation)
        inventories.replace_all(s, rp, data, version)
        return rp.generation, {rc: inventories.to_dict(i)
                               for rc, i in inventories.of(s, rp.id).items()}


@_retrying
def create_inventory(rp_uuid, rc, data, version) -> tuple[int, dict]:
    with db.transaction() as s:
        rp = providers.get(s, rp_uuid, for_update=True)
        inv = inventories.create_one(s, rp, rc, data, version)
        return rp.generation, inventories.to_dict(inv)


@_retrying
def update_inventory(rp_uuid, rc, data, version) -> tuple[int, dict]:
    with db.transaction() as s:
        rp = providers.get(s, rp_uuid, for_update=True)
        inv = inventories.update_one(s, rp, rc, data, version)
        return rp.generation, inventories.to_dict(inv)


@_retrying
def delete_inventory(rp_uuid, rc) -> None:
    with db.transaction() as s:
        inventories.delete_one(s, providers.get(s, rp_uuid, for_update=True), rc)


@_retrying
def delete_inventories(rp_uuid) -> None:
    with db.transaction() as s:
        inventories.delete_all(s, providers.get(s, rp_uuid, for_update=True))


# --- traits, aggregates, resource classes -------------------------------------------------

def provider_traits(rp_uuid) -> tuple[int, list[str]]:
    with db.reader() as s:
        rp = providers.get(s, rp_uuid)
        return rp.generation, sorted(catalog.provider_traits(s, [rp.id])[rp.id])


@_retrying
def set_provider_traits(rp_uuid, traits, generation) -> tuple[int, list[str]]:
    with db.transaction() as s:
        rp = providers.get(s, rp_uuid)
        catalog.set_provider_traits(s, rp, traits, generation)
        return rp.generation, sorted(set(traits))


@_retrying
def delete_provider_traits(rp_uuid) -> None:
    with db.transaction() as s:
        catalog.set_provider_traits(s, providers.get(s, rp_uuid), [], None)


def provider_aggregates(rp_uuid) -> tuple[int, list[str]]:
    with db.reader() as s:
        rp = providers.get(s, rp_uuid)
        return rp.generation, catalog.provider_aggregates(s, rp.id)


@_retrying
def set_provider_aggregates(rp_uuid, aggregates, generation, increment) -> tuple[int, list]:
    with db.transaction() as s:
        rp = providers.get(s, rp_uuid)
        catalog.set_provider_aggregates(s, rp, aggregates, generation, increment)
        return rp.generation, catalog.provider_aggregates(s, rp.id)


def call(function, *args, write: bool = False):
    """Run one catalog function in a transaction (resource classes, traits)."""
    if write:
        return _write(function, *args)
    with db.reader() as s:
        return function(s, *args)


@_retrying
def _write(function, *args):
    with db.transaction() as s:
        return function(s, *args)


# --- allocations and usages --------------------------------------------------------------

@_retrying
def set_allocations(requests: list[Request]) -> None:
    """Many consumers' allocations at once (POST /allocations, moves), all or nothing."""
    with db.transaction() as s:
        allocations.replace(s, requests)


@_retrying
def claim(consumer, resources: dict[str, dict[str, int]], project_id, user_id, *,
          consumer_generation=None, consumer_type=None,
          provider_generations: dict[str, int] | None = None) -> int:
    """Claim ``resources`` ({provider uuid: {class: amount}}) for ``consumer``, replacing
    what it held; the consumer's new generation. ``provider_generations`` (optional)
    must match, as for an inventory write; the claim bumps them in any case."""
    with db.transaction() as s:
        for rp_uuid, generation in (provider_generations or {}).items():
            providers.check_generation(providers.get(s, rp_uuid), generation)
        allocations.replace(s, [Request(consumer, resources, project_id, user_id,
                                        consumer_generation, True, consumer_type)])
        row, _ = allocations.of_consumer(s, consumer)
        return row.generation if row is not None else 0


def consumer_allocations(consumer):
    with db.reader() as s:
        row, allocs = allocations.of_consumer(s, consumer)
        info = None if row is None else {"project_id": row.project_id, "user_id": row.user_id,
                                         "generation": row.generation,
                                         "consumer_type": row.consumer_type}
        return info, allocs


@_retrying
def delete_allocations(consumer) -> None:
    with db.transaction() as s:
        allocations.delete(s, consumer)


def provider_allocations(rp_uuid, consumer_generations=False) -> tuple[int, dict]:
    with db.reader() as s:
        rp = providers.get(s, rp_uuid)
        return rp.generation, allocations.of_provider(s, rp.id, consumer_generations)


def provider_usages(rp_uuid) -> tuple[int, dict]:
    with db.reader() as s:
        rp = providers.get(s, rp_uuid)
        return rp.generation, allocations.provider_usages(s, rp.id)


def project_usages(project_id, user_id=None, consumer_type=None, by_type=False) -> dict:
    with db.reader() as s:
        return allocations.project_usages(s, project_id, user_id, consumer_type, by_type)


@_retrying
def reshape(inventory_sets, requests, version) -> None:
    with db.transaction() as s:
        allocations.reshape(s, inventory_sets, requests, version)


def allocation_candidates(query: candidates.Query, summarize):
    """``summarize(s, result)`` builds the response inside the read transaction."""
    with db.reader() as s:
        return summarize(s, candidates.find(s, query))
