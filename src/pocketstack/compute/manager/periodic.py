"""What a compute host does on its own: start-up recovery, heartbeats, power-state sync and
resource reconciliation (periodic tasks, as nova's _sync_power_states and
update_available_resource)."""
from __future__ import annotations

import logging
import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.common.context import RequestContext
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import instances, states
from pocketstack.compute.models import Allocation, ComputeNode, Instance, Service
from pocketstack.control import faults

LOG = logging.getLogger(__name__)


def register_service(host: str, binary: str, topic: str) -> None:
    with db.transaction() as s:
        row = s.scalar(sa.select(Service).filter_by(host=host, binary=binary))
        if row is None:
            s.add(Service(uuid=str(uuidlib.uuid4()), host=host, binary=binary, topic=topic,
                          last_seen_up=utcnow(), report_count=1))
        else:
            row.last_seen_up = utcnow()


def heartbeat(host: str, binary: str) -> None:
    if binary == "nova-compute" and faults.host_is_down(host):
        return
    with db.transaction() as s:
        s.execute(sa.update(Service).where(Service.host == host, Service.binary == binary)
                  .values(last_seen_up=utcnow(), report_count=Service.report_count + 1))


class PeriodicMixin:
    def register_node(self) -> None:
        res = self.driver.resources()
        conf = config.CONF.scheduler
        with db.transaction() as s:
            node = s.scalar(sa.select(ComputeNode).filter_by(host=self.host))
            if node is None:
                s.add(ComputeNode(uuid=str(uuidlib.uuid4()), host=self.host,
                                  hypervisor_hostname=self.host,
                                  hypervisor_type=res["hypervisor_type"],
                                  hypervisor_version=res["hypervisor_version"],
                                  vcpus=res["vcpus"], memory_mb=res["memory_mb"],
                                  local_gb=res["local_gb"],
                                  cpu_allocation_ratio=conf.cpu_allocation_ratio,
                                  ram_allocation_ratio=conf.ram_allocation_ratio,
                                  disk_allocation_ratio=conf.disk_allocation_ratio))
            else:
                node.vcpus, node.memory_mb, node.local_gb = (res["vcpus"], res["memory_mb"],
                                                             res["local_gb"])
                node.cpu_allocation_ratio = conf.cpu_allocation_ratio
                node.ram_allocation_ratio = conf.ram_allocation_ratio
                node.disk_allocation_ratio = conf.disk_allocation_ratio
        register_service(self.host, "nova-compute", "compute")

    def init_host(self) -> None:
        """Recover what this host owns after a restart."""
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
                self.conductor.reschedule(ctx, inst.uuid, inst.attempt, self.host,
                                          f"compute service on {self.host} restarted "
                                          f"during {inst.task_state}")
            elif inst.task_state is not None:
                power = self.driver.get_power_state(inst.uuid)
                vm = {states.RUNNING: states.ACTIVE, states.SHUTDOWN: states.STOPPED,
                      states.PAUSED_POWER: states.PAUSED,
                      states.SUSPENDED_POWER: states.SUSPENDED}.get(power, states.ERROR)
                instances.update(inst.uuid, {"task_state": None, "vm_state": vm,
                                             "power_state": power or states.NOSTATE})

    def periodic_tasks(self) -> None:
        # The heartbeat has its own thread at [compute] report_interval (service.RPCService),
        # so os-services up/down never depends on how long these tasks take.
        self.sync_power_states()
        self.reclaim_queued_deletes()
        self.reconcile_resources()

    def sync_power_states(self) -> None:
        """The hypervisor is the truth for power: a guest that stopped on its own shows
        SHUTOFF; one that vanished shows ERROR (nova's _sync_instance_power_state)."""
        with db.reader() as s:
            rows = s.execute(sa.select(Instance.uuid, Instance.vm_state, Instance.power_state)
                             .where(Instance.host == self.host, Instance.deleted.is_(False),
                                    Instance.task_state.is_(None),
                                    Instance.vm_state.in_([states.ACTIVE, states.STOPPED,
                                                           states.PAUSED,
                                                           states.SUSPENDED]))).all()
        for uuid, vm_state, power in rows:
            actual = self.driver.get_power_state(uuid)
            if actual is None:
                if vm_state != states.STOPPED:
                    instances.update(uuid, {"power_state": states.NOSTATE, "vm_state": states.ERROR},
                                     expect_task=None)
            elif actual != power:
                values = {"power_state": actual}
                if actual == states.SHUTDOWN and vm_state == states.ACTIVE:
                    values["vm_state"] = states.STOPPED
                instances.update(uuid, values, expect_task=None)

    def reconcile_resources(self) -> None:
        """Usage counters = the sum of this node's allocations (repairs any drift)."""
        a = Allocation
        with db.transaction() as s:
            node = s.scalar(sa.select(ComputeNode).filter_by(host=self.host))
            if node is None:
                return
            vcpus, ram, disk, count = s.execute(
                sa.select(sa.func.coalesce(sa.func.sum(a.vcpus), 0),
                          sa.func.coalesce(sa.func.sum(a.memory_mb), 0),
                          sa.func.coalesce(sa.func.sum(a.disk_gb), 0), sa.func.count())
                .where(a.node_id == node.id)).one()
            if (node.vcpus_used, node.memory_mb_used, node.local_gb_used,
                    node.running_vms) != (vcpus, ram, disk, count):
                # Only while no claim raced us: the generation must not have moved.
                s.execute(sa.update(ComputeNode)
                          .where(ComputeNode.id == node.id,
                                 ComputeNode.generation == node.generation)
                          .values(vcpus_used=vcpus, memory_mb_used=ram, local_gb_used=disk,
                                  running_vms=count, generation=node.generation + 1))

    def _set_failed_builds(self, value: int) -> None:
        with db.transaction() as s:
            s.execute(sa.update(ComputeNode).where(ComputeNode.host == self.host)
                      .values(failed_builds=value))
