"""What a compute host does on its own: start-up recovery, heartbeats, power-state sync and
resource reconciliation (periodic tasks, as nova's _sync_power_states and
update_available_resource).

Each task takes the hosts of a process at once (``managers``: host name -> its
ComputeManager), so 1,000 simulated hosts in one process cost a few statements per run,
not a few per host (compute/fleet.py); a lone agent passes itself."""
from __future__ import annotations

import logging
import time
import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.common.context import RequestContext
from pocketstack.common.rpc_errors import MessagingTimeout
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import instances, states
from pocketstack.compute.models import Allocation, ComputeNode, Instance, Service
from pocketstack.control import faults

LOG = logging.getLogger(__name__)

# Hosts per IN (...) list: well inside every engine's limit on bound parameters.
CHUNK = 500
# Seconds a restarted host waits for a conductor to hand its interrupted builds back to.
CONDUCTOR_WAIT = 120.0


def chunks(items: list, size: int = CHUNK):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def register_service(host: str, binary: str, topic: str) -> None:
    register_services([host], binary, topic)


def register_services(hosts: list[str], binary: str, topic: str) -> None:
    """Create the services rows that are missing, mark the others seen now."""
    now = utcnow()
    with db.transaction() as s:
        for part in chunks(hosts):
            have = set(s.scalars(sa.select(Service.host).where(
                Service.binary == binary, Service.host.in_(part))).all())
            missing = [h for h in part if h not in have]
            if missing:
                s.execute(sa.insert(Service), [
                    {"uuid": str(uuidlib.uuid4()), "host": h, "binary": binary,
                     "topic": topic, "last_seen_up": now, "report_count": 1,
                     "created_at": now} for h in missing])
            if have:
                s.execute(sa.update(Service).where(Service.binary == binary,
                                                   Service.host.in_(list(have)))
                          .values(last_seen_up=now))


def heartbeat(host: str, binary: str) -> None:
    heartbeats([host], binary)


def heartbeats(hosts: list[str], binary: str) -> None:
    """One UPDATE per CHUNK hosts: every host beats at once (a host a fault rule holds
    down stays silent, so it goes down as a dead one would)."""
    if binary == "nova-compute":
        hosts = [h for h in hosts if not faults.host_is_down(h)]
    if not hosts:
        return
    now = utcnow()
    with db.transaction() as s:
        for part in chunks(hosts):
            s.execute(sa.update(Service).where(Service.binary == binary,
                                               Service.host.in_(part))
                      .values(last_seen_up=now, report_count=Service.report_count + 1))


def register_nodes(managers: dict) -> None:
    """The compute_nodes rows of these hosts, with what their drivers report (ratios from
    [scheduler]), then their services rows."""
    conf = config.CONF.scheduler
    ratios = {"cpu_allocation_ratio": conf.cpu_allocation_ratio,
              "ram_allocation_ratio": conf.ram_allocation_ratio,
              "disk_allocation_ratio": conf.disk_allocation_ratio}
    now = utcnow()
    with db.transaction() as s:
        for part in chunks(list(managers)):
            existing = dict(s.execute(sa.select(ComputeNode.host, ComputeNode.id)
                                      .where(ComputeNode.host.in_(part))).all())
            new, changed = [], []
            for host in part:
                res = managers[host].driver.resources()
                sizes = {"vcpus": res["vcpus"], "memory_mb": res["memory_mb"],
                         "local_gb": res["local_gb"], **ratios}
                if host in existing:
                    changed.append({"node_id": existing[host], **sizes})
                else:
                    new.append({"uuid": str(uuidlib.uuid4()), "host": host,
                                "hypervisor_hostname": host,
                                "hypervisor_type": res["hypervisor_type"],
                                "hypervisor_version": res["hypervisor_version"],
                                "created_at": now, **sizes})
            if new:
                s.execute(sa.insert(ComputeNode), new)
            if changed:
                n = ComputeNode.__table__
                s.connection().execute(
                    n.update().where(n.c.id == sa.bindparam("node_id")),
                    changed)
    register_services(list(managers), "nova-compute", "compute")


def init_hosts(managers: dict) -> None:
    """Start-up recovery of these hosts: one query finds what they own; a host that owns
    nothing only tells its driver so."""
    owned: dict[str, list] = {host: [] for host in managers}
    with db.reader() as s:
        for part in chunks(list(managers)):
            rows = s.scalars(sa.select(Instance).where(Instance.host.in_(part),
                                                       Instance.deleted.is_(False))).all()
            for row in rows:
                owned[row.host].append(row)
    for host, rows in owned.items():
        manager = managers[host]
        try:
            if rows:
                manager.init_host(rows)
            else:
                manager.driver.init_host(host, [])
        except Exception:  # noqa: BLE001 - one host's recovery must not stop the others'
            LOG.exception("Recovery on %s failed", host)


def sync_power_states(managers: dict) -> None:
    """The hypervisor is the truth for power: a guest that stopped on its own shows
    SHUTOFF; one that vanished shows ERROR (nova's _sync_instance_power_state)."""
    rows = []
    with db.reader() as s:
        for part in chunks(list(managers)):
            rows += s.execute(sa.select(Instance.uuid, Instance.host, Instance.vm_state,
                                        Instance.power_state)
                              .where(Instance.host.in_(part), Instance.deleted.is_(False),
                                     Instance.task_state.is_(None),
                                     Instance.vm_state.in_([states.ACTIVE, states.STOPPED,
                                                            states.PAUSED,
                                                            states.SUSPENDED]))).all()
    for uuid, host, vm_state, power in rows:
        actual = managers[host].driver.get_power_state(uuid)
        if actual is None:
            if vm_state != states.STOPPED:
                instances.update(uuid, {"power_state": states.NOSTATE,
                                        "vm_state": states.ERROR}, expect_task=None)
        elif actual != power:
            values = {"power_state": actual}
            if actual == states.SHUTDOWN and vm_state == states.ACTIVE:
                values["vm_state"] = states.STOPPED
            instances.update(uuid, values, expect_task=None)


def reconcile_resources(hosts: list[str]) -> None:
    """Usage counters = the sum of each node's allocations (repairs any drift). Read
    first; only a node that drifted is written, and only while no claim raced us (its
    generation must not have moved)."""
    a, n = Allocation, ComputeNode
    fixes = []
    with db.reader() as s:
        for part in chunks(hosts):
            nodes = s.execute(sa.select(n.id, n.vcpus_used, n.memory_mb_used,
                                        n.local_gb_used, n.running_vms, n.generation)
                              .where(n.host.in_(part))).all()
            sums = {row[0]: tuple(row[1:]) for row in s.execute(
                sa.select(a.node_id, sa.func.coalesce(sa.func.sum(a.vcpus), 0),
                          sa.func.coalesce(sa.func.sum(a.memory_mb), 0),
                          sa.func.coalesce(sa.func.sum(a.disk_gb), 0), sa.func.count())
                .where(a.node_id.in_([node[0] for node in nodes]))
                .group_by(a.node_id)).all()}
            for node_id, vcpus, ram, disk, count, generation in nodes:
                want = sums.get(node_id, (0, 0, 0, 0))
                if (vcpus, ram, disk, count) != want:
                    fixes.append((node_id, generation, want))
    if not fixes:
        return
    with db.transaction() as s:
        for node_id, generation, (vcpus, ram, disk, count) in fixes:
            s.execute(sa.update(n).where(n.id == node_id, n.generation == generation)
                      .values(vcpus_used=vcpus, memory_mb_used=ram, local_gb_used=disk,
                              running_vms=count, generation=generation + 1))


def periodic_tasks(managers: dict) -> None:
    # The heartbeat has its own thread at [compute] report_interval (service.RPCService,
    # fleet.ComputeFleet), so os-services up/down never depends on how long these take.
    sync_power_states(managers)
    from pocketstack.compute.manager.lifecycle import reclaim_queued_deletes

    reclaim_queued_deletes(managers)
    reconcile_resources(list(managers))


class PeriodicMixin:
    def register_node(self) -> None:
        register_nodes({self.host: self})

    def init_host(self, rows=None) -> None:
        """Recover what this host owns after a restart (``rows``: its instances, when the
        caller read them already)."""
        if rows is None:
            with db.reader() as s:
                rows = s.scalars(sa.select(Instance).where(Instance.host == self.host,
                                                           Instance.deleted.is_(False))).all()
        self.driver.init_host(self.host, [{"uuid": r.uuid, "power_state": r.power_state}
                                          for r in rows])
        ctx = RequestContext.admin()
        from pocketstack.compute.manager import volumes

        for line in volumes.reconcile(ctx, [r.uuid for r in rows
                                            if r.vm_state != states.BUILDING]):
            LOG.info("%s: %s", self.host, line)
        for inst in rows:
            if inst.task_state == states.DELETING:
                from pocketstack.compute.manager.delete import finish_delete

                finish_delete(ctx, inst, self.host, use_service_token=True)
            elif inst.vm_state == states.BUILDING:
                # Interrupted mid-build: hand it back for a reschedule now rather than
                # waiting for the build deadline.
                self._undo(ctx, inst, inst.network_info or [], release=True)
                self._hand_back(ctx, inst, f"compute service on {self.host} restarted "
                                           f"during {inst.task_state}")
            elif inst.task_state is not None:
                power = self.driver.get_power_state(inst.uuid)
                vm = {states.RUNNING: states.ACTIVE, states.SHUTDOWN: states.STOPPED,
                      states.PAUSED_POWER: states.PAUSED,
                      states.SUSPENDED_POWER: states.SUSPENDED}.get(power, states.ERROR)
                instances.update(inst.uuid, {"task_state": None, "vm_state": vm,
                                             "power_state": power or states.NOSTATE})

    def _hand_back(self, ctx, inst, reason: str) -> None:
        """Ask the conductor to reschedule ``inst``, waiting (bounded) for one to listen:
        with `up --workers` the main process starts its conductor only once the compute
        processes are up, and this runs on their start-up thread (fleet.py)."""
        deadline = time.monotonic() + CONDUCTOR_WAIT
        while True:
            try:
                return self.conductor.reschedule(ctx, inst.uuid, inst.attempt, self.host,
                                                 reason)
            except MessagingTimeout:  # no conductor listening (yet)
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def periodic_tasks(self) -> None:
        periodic_tasks({self.host: self})

    def sync_power_states(self) -> None:
        sync_power_states({self.host: self})

    def reconcile_resources(self) -> None:
        reconcile_resources([self.host])
