"""Rows a compute host's deletes and periodic tasks write: run where the database is
(in the host's process in the all-in-one, in the conductor when hosts have no database),
always called through hostdb.py's checked operations."""
from __future__ import annotations

import logging
import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import resize
from pocketstack.compute.models import Allocation, ComputeNode, Instance, Migration
from pocketstack.compute.scheduler import claims
from pocketstack.compute.service_rows import chunks
from pocketstack.placement import direct

LOG = logging.getLogger(__name__)


def _resizing_statement():
    table = Migration.__table__
    return sa.select(table.c.id).where(table.c.instance_uuid == sa.bindparam("uuid"),
                                       table.c.status.in_(resize.IN_PROGRESS)).limit(1)


_RESIZING = _resizing_statement()  # built once: every delete asks


def delete_rows(s, instance_uuid: str) -> list[str]:
    """In the delete's commit: the claim given back (and a resize's), the server group
    membership gone; what was released."""
    done = []
    if claims.release(instance_uuid, session=s):
        done.append("released claim")
    from pocketstack.compute.resize import release_for_delete

    # A Core look first: almost no server is deleted mid-resize, and the ORM's
    # look costs several times this under the writer lock.
    if s.connection().execute(_RESIZING, {"uuid": instance_uuid}).first() is not None:
        done += release_for_delete(s, instance_uuid)
    from pocketstack.compute.server_groups import forget_member

    forget_member(s, instance_uuid)
    return done


def write_nodes(hosts: list[str], resources: dict, ratios: dict) -> list[list]:
    """register_nodes' rows (compute/hostdb.py: the operation of the same name)."""
    now = utcnow()
    nodes = []
    with db.transaction() as s:
        for part in chunks(hosts):
            existing = {host: (node_id, node_uuid, name) for host, node_id, node_uuid, name
                        in s.execute(sa.select(ComputeNode.host, ComputeNode.id,
                                               ComputeNode.uuid,
                                               ComputeNode.hypervisor_hostname)
                                     .where(ComputeNode.host.in_(part))).all()}
            new, changed = [], []
            for host in part:
                res = resources[host]
                sizes = {"vcpus": res["vcpus"], "memory_mb": res["memory_mb"],
                         "local_gb": res["local_gb"], **ratios}
                if host in existing:
                    node_id, node_uuid, name = existing[host]
                    changed.append({"node_id": node_id,
                                    "shared_storage": res.get("shared_storage"), **sizes})
                else:
                    node_uuid, name = str(uuidlib.uuid4()), host
                    new.append({"uuid": node_uuid, "host": host,
                                "hypervisor_hostname": host,
                                "hypervisor_type": res["hypervisor_type"],
                                "hypervisor_version": res["hypervisor_version"],
                                "shared_storage": res.get("shared_storage"),
                                "created_at": now, **sizes})
                nodes.append([host, node_uuid, name, sizes])
            if new:
                s.execute(sa.insert(ComputeNode), new)
            if changed:
                n = ComputeNode.__table__
                s.connection().execute(
                    n.update().where(n.c.id == sa.bindparam("node_id")),
                    changed)
    return nodes


def adopt_old_claims(hosts: list[str]) -> None:
    """A cloud upgraded from before placement held the claims kept them in compute_allocations: they
    become placement allocations (server's owner as the consumer's project/user; a
    migration's for the source of a move) and the old rows go."""
    a = Allocation
    with db.transaction() as s:
        for part in chunks(hosts):
            rows = s.execute(sa.select(a.instance_uuid, a.vcpus, a.memory_mb, a.disk_gb,
                                       ComputeNode.uuid)
                             .join(ComputeNode, ComputeNode.id == a.node_id)
                             .where(a.host.in_(part))).all()
            if not rows:
                continue
            consumers = [r[0] for r in rows]
            moves = dict(s.execute(sa.select(Migration.uuid, Migration.instance_uuid)
                                   .where(Migration.uuid.in_(consumers))).all())
            owners = {uuid: (project, user) for uuid, project, user in s.execute(
                sa.select(Instance.uuid, Instance.project_id, Instance.user_id)
                .where(Instance.uuid.in_(consumers + list(moves.values()))))}
            for uuid, instance in moves.items():
                owners[uuid] = owners.get(instance, ("", "")) + ("MIGRATION",)
            for consumer, vcpus, ram, disk, node_uuid in rows:
                project, user, *kind = owners.get(consumer, ("", ""))
                direct.adopt(consumer, node_uuid, {"VCPU": vcpus, "MEMORY_MB": ram,
                                                   "DISK_GB": disk}, project, user,
                             kind[0] if kind else "INSTANCE", session=s)
            s.execute(sa.delete(a).where(a.instance_uuid.in_(consumers)))


def reconcile_usage(hosts: list[str]) -> None:
    """Usage counters = the node's allocations in placement (repairs any drift). Read
    first; only a node that drifted is written, and only while no claim raced us (its
    generation must not have moved)."""
    n = ComputeNode
    fixes = []
    with db.reader() as s:
        for part in chunks(hosts):
            nodes = s.execute(sa.select(n.id, n.uuid, n.vcpus_used, n.memory_mb_used,
                                        n.local_gb_used, n.generation)
                              .where(n.host.in_(part))).all()
            usage = direct.usage_by_provider([node[1] for node in nodes], session=s)
            for node_id, node_uuid, vcpus, ram, disk, generation in nodes:
                used = usage.get(node_uuid, {})
                want = (used.get("VCPU", 0), used.get("MEMORY_MB", 0), used.get("DISK_GB", 0))
                if (vcpus, ram, disk) != want:
                    fixes.append((node_id, generation, want))
    if not fixes:
        return
    with db.transaction() as s:
        for node_id, generation, (vcpus, ram, disk) in fixes:
            s.execute(sa.update(n).where(n.id == node_id, n.generation == generation)
                      .values(vcpus_used=vcpus, memory_mb_used=ram, local_gb_used=disk,
                              generation=generation + 1))
