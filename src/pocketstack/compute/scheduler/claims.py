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


_n, _a = ComputeNode.__table__.c, Allocation.__table__.c
# Built once (a boot claims once, a delete releases once): Core statements on the tables.
_CLAIM = (sa.update(ComputeNode.__table__)
          .where(_n.id == sa.bindparam("node"),
                 _n.vcpus_used + sa.bindparam("need_vcpus")
                 <= _n.vcpus * _n.cpu_allocation_ratio,
                 _n.memory_mb_used + sa.bindparam("need_ram")
                 <= _n.memory_mb * _n.ram_allocation_ratio,
                 _n.local_gb_used + sa.bindparam("need_disk")
                 <= _n.local_gb * _n.disk_allocation_ratio)
          .values(vcpus_used=_n.vcpus_used + sa.bindparam("need_vcpus"),
                  memory_mb_used=_n.memory_mb_used + sa.bindparam("need_ram"),
                  local_gb_used=_n.local_gb_used + sa.bindparam("need_disk"),
                  running_vms=_n.running_vms + 1, generation=_n.generation + 1))
_ALLOCATE = sa.insert(Allocation.__table__)
_HELD = (sa.select(_a.node_id, _a.host, _a.vcpus, _a.memory_mb, _a.disk_gb)
         .where(_a.instance_uuid == sa.bindparam("consumer")))
_FORGET = sa.delete(Allocation.__table__).where(_a.instance_uuid == sa.bindparam("consumer"))
_GIVE_BACK = (sa.update(ComputeNode.__table__)
              .where(_n.id == sa.bindparam("node"))
              .values(vcpus_used=_n.vcpus_used - sa.bindparam("need_vcpus"),
                      memory_mb_used=_n.memory_mb_used - sa.bindparam("need_ram"),
                      local_gb_used=_n.local_gb_used - sa.bindparam("need_disk"),
                      running_vms=_n.running_vms - 1, generation=_n.generation + 1))


def claim(node_id: int, host: str, consumer: str, vcpus: int, memory_mb: int,
          disk_gb: int) -> bool:
    with db.transaction() as s:
        conn = s.connection()
        result = conn.execute(_CLAIM, {"node": node_id, "need_vcpus": vcpus,
                                       "need_ram": memory_mb, "need_disk": disk_gb})
        if result.rowcount != 1:
            return False
        conn.execute(_ALLOCATE, [{"instance_uuid": consumer, "node_id": node_id,
                                  "host": host, "vcpus": vcpus, "memory_mb": memory_mb,
                                  "disk_gb": disk_gb}])
    return True


def release(consumer: str, session=None, host: str | None = None) -> bool:
    """Give back what ``consumer`` holds (only if it is on ``host``, when given: a build
    attempt that lost its server to a reschedule must not free the next attempt's claim
    elsewhere); False if it held nothing there."""
    def run(s):
        conn = s.connection()
        held = conn.execute(_HELD, {"consumer": consumer}).first()
        if held is None or (host is not None and held.host != host):
            return False
        if conn.execute(_FORGET, {"consumer": consumer}).rowcount != 1:
            return False
        conn.execute(_GIVE_BACK, {"node": held.node_id, "need_vcpus": held.vcpus,
                                  "need_ram": held.memory_mb, "need_disk": held.disk_gb})
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
