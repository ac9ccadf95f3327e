"""Claims are placement allocations: consumer = the server's uuid (a
migration's uuid for the source side of a move), provider = the compute node (same uuid,
name = its hypervisor hostname), VCPU / MEMORY_MB / DISK_GB.

They go through placement's in-process door (placement/direct.py: why not HTTP is said
there), in the caller's transaction when it passes one, so a release commits with the
compute rows that say why. compute_nodes' usage counters (os-hypervisors shows them)
follow in the same transaction; placement's allocations are the truth the scheduler
checks, and the periodic reconcile repairs the counters from them.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.compute.models import ComputeNode
from pocketstack.placement import direct

_n = ComputeNode.__table__.c
_COUNT = (sa.update(ComputeNode.__table__)
          .where(_n.uuid == sa.bindparam("node_uuid"))
          .values(vcpus_used=_n.vcpus_used + sa.bindparam("d_vcpus"),
                  memory_mb_used=_n.memory_mb_used + sa.bindparam("d_ram"),
                  local_gb_used=_n.local_gb_used + sa.bindparam("d_disk"),
                  running_vms=_n.running_vms + sa.bindparam("d_vms"),
                  generation=_n.generation + 1))


def _count(s, node_uuid: str, resources: dict[str, int], sign: int) -> None:
    s.connection().execute(_COUNT, {
        "node_uuid": node_uuid, "d_vcpus": sign * resources.get("VCPU", 0),
        "d_ram": sign * resources.get("MEMORY_MB", 0),
        "d_disk": sign * resources.get("DISK_GB", 0), "d_vms": sign})


def claim(node_uuid: str, consumer: str, vcpus: int, memory_mb: int, disk_gb: int, *,
          project_id: str, user_id: str) -> bool:
    """Allocate on the node for a server that holds nothing; False when it has no room
    (placement's capacity: (total - reserved) x allocation_ratio)."""
    resources = {"VCPU": vcpus, "MEMORY_MB": memory_mb, "DISK_GB": disk_gb}
    try:
        with db.transaction() as s:
            direct.claim(consumer, node_uuid, resources, project_id or "", user_id or "",
                         session=s)
            _count(s, node_uuid, resources, +1)
    except direct.NoRoom:
        return False
    return True


def release(consumer: str, session=None, host: str | None = None) -> bool:
    """Give back what ``consumer`` holds (only if it is on ``host``, when given: a build
    attempt that lost its server to a reschedule must not free the next attempt's claim
    elsewhere); False if it held nothing there."""
    def run(s):
        released = direct.release(consumer, session=s, only_on=host)  # provider name = host
        for node_uuid, entry in released.items():
            _count(s, node_uuid, entry["resources"], -1)
        return bool(released)

    if session is not None:
        return run(session)
    with db.transaction() as s:
        return run(s)


def holder_host(consumer: str) -> str | None:
    holding = direct.held(consumer)
    return next((e["name"] for e in holding.values()), None)


def holder_hosts(consumers) -> list[str]:
    """Hosts of these consumers' claims (server group members: set at claim time, before
    the conductor writes instance.host)."""
    return list(direct.holders(consumers).values())


def move_to_migration(instance_uuid: str, migration_uuid: str, session=None) -> None:
    """The source's claim goes under the migration's uuid (nova's migration allocation):
    the server's uuid is then free for the destination's claim."""
    direct.move(instance_uuid, migration_uuid, consumer_type="MIGRATION", session=session)


def move_back(migration_uuid: str, instance_uuid: str, session=None) -> None:
    """A revert or a move that failed: the source's claim is the server's again."""
    direct.move(migration_uuid, instance_uuid, consumer_type="INSTANCE", session=session)
