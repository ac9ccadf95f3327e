"""Atomic, O(1) resource claims — placement's allocations without re-reading them.

A claim is one conditional UPDATE of the host's usage counters, guarded by the capacity
(used + requested <= total × ratio) and bumping the provider generation, plus one
allocation row keyed by the consumer. Two concurrent claims for the last slot cannot both
succeed on any engine: the database evaluates the guard against the committed row. A
release deletes the allocation row first and only the deleter gives the resources back,
so releasing twice (cleanup racing a delete) is harmless.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.compute.models import Allocation, ComputeNode


def claim(node_id: int, host: str, consumer: str, vcpus: int, memory_mb: int,
          disk_gb: int) -> bool:
    n = ComputeNode
    with db.transaction() as s:
        result = s.execute(
            sa.update(n)
            .where(n.id == node_id,
                   n.vcpus_used + vcpus <= n.vcpus * n.cpu_allocation_ratio,
                   n.memory_mb_used + memory_mb <= n.memory_mb * n.ram_allocation_ratio,
                   n.local_gb_used + disk_gb <= n.local_gb * n.disk_allocation_ratio)
            .values(vcpus_used=n.vcpus_used + vcpus, memory_mb_used=n.memory_mb_used + memory_mb,
                    local_gb_used=n.local_gb_used + disk_gb, running_vms=n.running_vms + 1,
                    generation=n.generation + 1)
            .execution_options(synchronize_session=False))
        if result.rowcount != 1:
            return False
        s.add(Allocation(instance_uuid=consumer, node_id=node_id, host=host, vcpus=vcpus,
                         memory_mb=memory_mb, disk_gb=disk_gb))
    return True


def release(consumer: str, session=None) -> bool:
    """Give back what ``consumer`` holds; False if it held nothing."""
    def run(s):
        alloc = s.get(Allocation, consumer)
        if alloc is None:
            return False
        deleted = s.execute(sa.delete(Allocation).where(Allocation.instance_uuid == consumer)
                            .execution_options(synchronize_session=False)).rowcount
        if deleted != 1:
            return False
        n = ComputeNode
        s.execute(sa.update(n).where(n.id == alloc.node_id)
                  .values(vcpus_used=n.vcpus_used - alloc.vcpus,
                          memory_mb_used=n.memory_mb_used - alloc.memory_mb,
                          local_gb_used=n.local_gb_used - alloc.disk_gb,
                          running_vms=n.running_vms - 1, generation=n.generation + 1)
                  .execution_options(synchronize_session=False))
        s.expunge(alloc)
        return True

    if session is not None:
        return run(session)
    with db.transaction() as s:
        return run(s)


def holder_host(consumer: str) -> str | None:
    with db.reader() as s:
        alloc = s.get(Allocation, consumer)
        return alloc.host if alloc else None


def move(consumer: str, new_consumer: str) -> None:
    """Re-key an allocation (resize keeps the old host's claim under the migration id)."""
    with db.transaction() as s:
        s.execute(sa.update(Allocation).where(Allocation.instance_uuid == consumer)
                  .values(instance_uuid=new_consumer))
