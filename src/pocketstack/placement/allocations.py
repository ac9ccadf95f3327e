"""Allocations: consumers (project, user, generation, type), atomic writes for many
consumers at once, provider and project usages, and the reshaper's move.

Every write is one transaction. It reads the providers' generations first, writes,
checks capacity, then compare-and-swaps those generations (and each consumer's): a
writer that raced ahead makes this one a 409 ``placement.concurrent_update``.
"""
from __future__ import annotations

import dataclasses

import sqlalchemy as sa

from pocketstack.common.timeutils import utcnow
from pocketstack.placement import catalog, errors, inventories, providers, usage
from pocketstack.placement.models import Allocation, Consumer, Inventory, ResourceProvider

INCOMPLETE = "00000000-0000-0000-0000-000000000000"  # upstream's incomplete_consumer ids


@dataclasses.dataclass
class Request:
    """One consumer's wanted allocations: {provider uuid: {resource class: amount}}."""
    consumer: str
    allocations: dict[str, dict[str, int]]
    project_id: str | None = None
    user_id: str | None = None
    generation: int | None = None
    check_generation: bool = False  # microversion 1.28+
    consumer_type: str | None = None


def _consumer(s, req: Request) -> Consumer | None:
    row = s.scalars(sa.select(Consumer).where(Consumer.uuid == req.consumer)).first()
    if req.check_generation:
        if row is None and req.generation is not None:
            raise errors.conflict(f"consumer generation conflict - expected null but got "
                                  f"{req.generation}", errors.CONCURRENT_UPDATE)
        if row is not None and row.generation != req.generation:
            raise errors.conflict(f"consumer generation conflict - expected "
                                  f"{row.generation} but got {req.generation}",
                                  errors.CONCURRENT_UPDATE)
    if row is None:
        row = Consumer(uuid=req.consumer, project_id=req.project_id or INCOMPLETE,
                       user_id=req.user_id or INCOMPLETE, generation=1,
                       consumer_type=req.consumer_type)
        s.add(row)
        s.flush()
        return row
    if req.project_id:
        row.project_id = req.project_id
    if req.user_id:
        row.user_id = req.user_id
    if req.consumer_type:
        row.consumer_type = req.consumer_type
    done = s.execute(sa.update(Consumer).where(Consumer.id == row.id,
                                               Consumer.generation == row.generation)
                     .values(generation=row.generation + 1, updated_at=utcnow(),
                             project_id=row.project_id, user_id=row.user_id,
                             consumer_type=row.consumer_type)
                     .execution_options(synchronize_session=False)).rowcount
    if done != 1:
        raise errors.concurrent_update("consumer")
    s.expire(row)
    return row


def _providers(s, uuids) -> dict[str, ResourceProvider]:
    rows = {rp.uuid: rp for rp in s.scalars(
        sa.select(ResourceProvider).where(ResourceProvider.uuid.in_(sorted(uuids))))}
    for rp_uuid in sorted(set(uuids) - set(rows)):
        raise errors.bad_request(f"Allocation for resource provider '{rp_uuid}' that does "
                                 "not exist.")
    return rows


def replace(s, requests: list[Request]) -> None:
    """Set every consumer's allocations to what it asks (empty: none), all or nothing."""
    uuids = {rp for req in requests for rp in req.allocations}
    conn = s.connection()
    before = usage.of_consumers(conn, [req.consumer for req in requests])
    # Lock every provider whose usage changes (those given and those left) before reading
    # their generations: the scheduler's claims lock them too (usage.py).
    usage.lock(conn, {rp_id for rp_id, _ in before} | set(s.scalars(
        sa.select(ResourceProvider.id).where(ResourceProvider.uuid.in_(sorted(uuids))))))
    before = usage.of_consumers(conn, [req.consumer for req in requests])  # under the locks
    rps = _providers(s, uuids)
    generations = {rp.id: rp.generation for rp in rps.values()}  # read before the checks
    classes = {rc for req in requests for res in req.allocations.values() for rc in res}
    missing = catalog.unknown_classes(s, classes)
    if missing:
        raise errors.bad_request(f"Unable to allocate inventory for consumer "
                                 f"{requests[0].consumer}: No such resource class "
                                 f"{missing[0]}.")
    consumers = [_consumer(s, req) for req in requests]
    s.execute(sa.delete(Allocation).where(
        Allocation.consumer_id.in_([req.consumer for req in requests])))
    wanted: list[tuple[int, str, int]] = []
    for req in requests:
        for rp_uuid, resources in req.allocations.items():
            for rc, amount in resources.items():
                wanted.append((rps[rp_uuid].id, rc, amount))
                s.add(Allocation(resource_provider_id=rps[rp_uuid].id,
                                 consumer_id=req.consumer, resource_class=rc, used=amount))
    s.flush()
    after: dict[tuple[int, str], int] = {}
    for rp_id, rc, amount in wanted:
        after[(rp_id, rc)] = after.get((rp_id, rc), 0) + amount
    usage.adjust(conn, usage.difference(after, before))
    _check_capacity(s, wanted, {rp.id: rp.uuid for rp in rps.values()})
    for rp in rps.values():
        providers.bump(s, rp, generations[rp.id])
    _drop_empty(s, consumers)


def _check_capacity(s, wanted, uuid_of: dict[int, str]) -> None:
    """Every allocation within its inventory's units; every touched (provider, class)
    within (total - reserved) * allocation_ratio, with this write's allocations in."""
    if not wanted:
        return
    rp_ids = sorted({rp_id for rp_id, _, _ in wanted})
    inv = {(i.resource_provider_id, i.resource_class): i for i in s.scalars(
        sa.select(Inventory).where(Inventory.resource_provider_id.in_(rp_ids)))}
    used = {(rp_id, rc): total for rp_id, rc, total in s.execute(
        sa.select(Allocation.resource_provider_id, Allocation.resource_class,
                  sa.func.sum(Allocation.used))
        .where(Allocation.resource_provider_id.in_(rp_ids))
        .group_by(Allocation.resource_provider_id, Allocation.resource_class))}
    for rp_id, rc, amount in wanted:
        record, where = inv.get((rp_id, rc)), f"'{rc}' on resource provider '{uuid_of[rp_id]}'"
        if record is None:
            raise errors.conflict(f"Unable to allocate inventory: Inventory for {where} "
                                  "invalid.")
        if (amount < record.min_unit or amount > record.max_unit
                or amount % record.step_size):
            raise errors.conflict(f"Unable to allocate inventory: Unable to create allocation "
                                  f"for {where}. The requested amount would violate "
                                  "inventory constraints.")
        capacity = (record.total - record.reserved) * record.allocation_ratio
        if used[(rp_id, rc)] > capacity:
            raise errors.conflict(f"Unable to allocate inventory: Unable to create allocation "
                                  f"for {where}. The requested amount would exceed the "
                                  "capacity.")


def _drop_empty(s, consumers) -> None:
    """Consumers without allocations are not kept (as upstream)."""
    ids = [c.uuid for c in consumers if c is not None]
    if not ids:
        return
    kept = set(s.scalars(sa.select(Allocation.consumer_id).where(
        Allocation.consumer_id.in_(ids)).distinct()))
    gone = [c for c in ids if c not in kept]
    if gone:
        s.execute(sa.delete(Consumer).where(Consumer.uuid.in_(gone)))


def delete(s, consumer: str) -> None:
    conn = s.connection()
    before = usage.of_consumers(conn, [consumer])
    usage.lock(conn, {rp_id for rp_id, _ in before})
    before = usage.of_consumers(conn, [consumer])  # as it is now that we hold the locks
    n = s.execute(sa.delete(Allocation).where(Allocation.consumer_id == consumer)).rowcount
    if not n:
        raise errors.not_found(f"No allocations for consumer '{consumer}'")
    usage.adjust(conn, {key: -amount for key, amount in before.items()})
    s.execute(sa.delete(Consumer).where(Consumer.uuid == consumer))


def of_consumer(s, consumer: str) -> tuple[Consumer | None, dict]:
    """The consumer's row and {provider uuid: {"generation", "resources"}}."""
    row = s.scalars(sa.select(Consumer).where(Consumer.uuid == consumer)).first()
    out: dict[str, dict] = {}
    for rp_uuid, gen, rc, used in s.execute(
            sa.select(ResourceProvider.uuid, ResourceProvider.generation,
                      Allocation.resource_class, Allocation.used)
            .join(ResourceProvider, ResourceProvider.id == Allocation.resource_provider_id)
            .where(Allocation.consumer_id == consumer)):
        out.setdefault(rp_uuid, {"generation": gen, "resources": {}})["resources"][rc] = used
    return row, out


def of_provider(s, rp_id: int, consumer_generations: bool = False) -> dict[str, dict]:
    """{consumer: {"resources": ...}} (and its "consumer_generation" from 1.28)."""
    out: dict[str, dict] = {}
    for consumer, rc, used, generation in s.execute(
            sa.select(Allocation.consumer_id, Allocation.resource_class, Allocation.used,
                      Consumer.generation)
            .outerjoin(Consumer, Consumer.uuid == Allocation.consumer_id)
            .where(Allocation.resource_provider_id == rp_id)):
        entry = out.setdefault(consumer, {"resources": {}})
        entry["resources"][rc] = used
        if consumer_generations:
            entry["consumer_generation"] = generation
    return out


def provider_usages(s, rp_id: int) -> dict[str, int]:
    usages = {rc: 0 for rc in inventories.of(s, rp_id)}
    for rc, used in s.execute(sa.select(Allocation.resource_class, sa.func.sum(Allocation.used))
                              .where(Allocation.resource_provider_id == rp_id)
                              .group_by(Allocation.resource_class)):
        usages[rc] = int(used)
    return usages


def project_usages(s, project_id: str, user_id: str | None, consumer_type: str | None,
                   by_type: bool) -> dict:
    """GET /usages: totals per class; from 1.38 per consumer type with consumer counts."""
    query = (sa.select(Consumer.consumer_type, Allocation.resource_class,
                       sa.func.sum(Allocation.used),
                       sa.func.count(sa.distinct(Consumer.id)))
             .join(Consumer, Consumer.uuid == Allocation.consumer_id)
             .where(Consumer.project_id == project_id)
             .group_by(Consumer.consumer_type, Allocation.resource_class))
    if user_id:
        query = query.where(Consumer.user_id == user_id)
    if consumer_type == "unknown":
        query = query.where(Consumer.consumer_type.is_(None))
    elif consumer_type and consumer_type != "all":
        query = query.where(Consumer.consumer_type == consumer_type)
    rows = s.execute(query).all()
    if not by_type:
        totals: dict[str, int] = {}
        for _, rc, used, _ in rows:
            totals[rc] = totals.get(rc, 0) + int(used)
        return totals
    return _by_type(s, rows, project_id, user_id, consumer_type)


def _by_type(s, rows, project_id, user_id, consumer_type) -> dict:
    out: dict[str, dict] = {}
    for ctype, rc, used, _ in rows:
        key = ctype or "unknown"
        entry = out.setdefault(key, {})
        entry[rc] = entry.get(rc, 0) + int(used)
    counts = (sa.select(Consumer.consumer_type, sa.func.count(Consumer.id))
              .where(Consumer.project_id == project_id).group_by(Consumer.consumer_type))
    if user_id:
        counts = counts.where(Consumer.user_id == user_id)
    for ctype, count in s.execute(counts):
        if (ctype or "unknown") in out:
            out[ctype or "unknown"]["consumer_count"] = count
    if consumer_type == "all" and out:
        total: dict[str, int] = {"consumer_count": 0}
        for entry in out.values():
            for key, value in entry.items():
                total[key] = total.get(key, 0) + value
        out = {"all": total}
    return out


def reshape(s, inventory_sets: dict[str, dict], requests: list[Request],
            version: tuple[int, int]) -> None:
    """POST /reshaper: new inventories and allocations at once; a class may lose its
    inventory only if its allocations move away in the same request."""
    touched = []
    usage.lock(s.connection(), s.scalars(sa.select(ResourceProvider.id).where(
        ResourceProvider.uuid.in_(sorted(inventory_sets)))))
    for rp_uuid, data in inventory_sets.items():
        rp = s.scalars(sa.select(ResourceProvider)
                       .where(ResourceProvider.uuid == rp_uuid)).first()
        if rp is None:
            raise errors.bad_request(f"Resource provider {rp_uuid} in inventories not found")
        providers.check_generation(rp, data["resource_provider_generation"])
        inventories.replace_all(s, rp, data["inventories"], version, check_in_use=False)
        touched.append(rp)
    replace(s, requests)
    # Inventories came and went under allocations that moved: count them again.
    usage.resync(s.connection(), {rp.id for rp in touched} | {
        rp_id for rp_id, _ in usage.of_consumers(s.connection(),
                                                 [req.consumer for req in requests])})
    for rp in touched:
        orphan = s.execute(sa.select(Allocation.resource_class).outerjoin(
            Inventory, sa.and_(Inventory.resource_provider_id == Allocation.resource_provider_id,
                               Inventory.resource_class == Allocation.resource_class))
            .where(Allocation.resource_provider_id == rp.id, Inventory.id.is_(None))
            .limit(1)).scalar()
        if orphan:
            raise errors.conflict(f"update conflict: Inventory for '{orphan}' on resource "
                                  f"provider '{rp.uuid}' in use.", errors.INVENTORY_INUSE)
