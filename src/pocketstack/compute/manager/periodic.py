"""What a compute host does on its own: start-up recovery, heartbeats, power-state sync and
resource reconciliation (periodic tasks, as nova's _sync_power_states and
update_available_resource).

Each task takes the hosts of a process at once (``managers``: host name -> its
ComputeManager), so 1,000 simulated hosts in one process cost a few statements per run,
not a few per host (compute/fleet.py); a lone agent passes itself."""
from __future__ import annotations

import logging
import threading
import time


from pocketstack.common import config, exceptions, runtime
from pocketstack.common.context import RequestContext
from pocketstack.common.rpc_errors import MessagingTimeout
from pocketstack.compute import hostdb, states
from pocketstack.compute.service_rows import heartbeats, register_services  # noqa: F401
from pocketstack.placement import report as placement_report

LOG = logging.getLogger(__name__)

# Seconds a restarted host waits for a conductor to hand its interrupted builds back to.
CONDUCTOR_WAIT = 120.0


def register_service(host: str, binary: str, topic: str) -> None:
    register_services([host], binary, topic)


def heartbeat(host: str, binary: str) -> None:
    heartbeats([host], binary)


def _ratio(conf, name: str) -> float:
    value = getattr(conf, f"{name}_allocation_ratio")
    return value if value is not None else getattr(conf, f"initial_{name}_allocation_ratio")


def _each(managers: dict, op: str, per_host=None, **kwargs) -> list:
    """A ``hosts`` operation of compute/hostdb.py for these hosts, its answers (lists)
    joined: one call for all of them in-process (1,000 simulated hosts cost a few
    statements), one per host through the conductor (each host speaks for itself).
    ``per_host(hosts)``: the arguments that depend on the hosts."""
    if config.CONF.compute.database_access == "conductor":
        out: list = []
        for host, manager in managers.items():
            out += manager.db.call(op, hosts=[host], **(per_host([host]) if per_host else {}),
                                   **kwargs) or []
        return out
    hosts = list(managers)
    return hostdb.Direct().call(op, hosts=hosts, **(per_host(hosts) if per_host else {}),
                                **kwargs) or []


def register_nodes(managers: dict) -> None:
    """The compute_nodes rows of these hosts, with what their drivers report, then their
    resource providers in placement (report_to_placement) and their services rows."""
    conf = config.CONF.scheduler
    ratios = {"cpu_allocation_ratio": _ratio(conf, "cpu"),
              "ram_allocation_ratio": _ratio(conf, "ram"),
              "disk_allocation_ratio": _ratio(conf, "disk")}
    resources = {host: manager.driver.resources() for host, manager in managers.items()}
    nodes = _each(managers, "register_nodes", ratios=ratios,
                  per_host=lambda hosts: {"resources": {h: resources[h] for h in hosts}})
    _report(managers, [(host, _provider(node_uuid, name, sizes, conf))
                       for host, node_uuid, name, sizes in nodes], at_start=True)
    _each(managers, "adopt_old_claims")
    hostdb.for_hosts(list(managers), "register_services", binary="nova-compute",
                     topic="compute")


def _report(managers: dict, reports: list[tuple[str, placement_report.Host]],
            at_start: bool = False) -> None:
    """These hosts' providers into placement: in-process (placement/report.py: a
    thousand simulated hosts in a few statements), or, for hosts on the conductor, over
    placement's REST API with the nova service user, as nova's report client does
    (placement/report_client.py)."""
    if config.CONF.compute.database_access != "conductor":
        placement_report.report([r for _, r in reports])
        return
    from pocketstack.placement import report_client

    hosts = [r for _, r in reports]
    if not at_start:
        report_client.report(hosts)
        return
    try:
        report_client.report(hosts)
    except exceptions.ServiceUnavailable as error:
        # The API (placement) may not listen yet: a process that runs it too starts its
        # roles first, and a compute host may start before the API host. Keep trying in
        # the background (the scheduler sees the hosts once it works), bounded.
        LOG.info("Placement not reachable yet (%s); reporting in the background", error)
        threading.Thread(target=runtime.bind(_report_later), args=(hosts,),
                         name="placement-report", daemon=True).start()


def _report_later(hosts: list, timeout: float = CONDUCTOR_WAIT) -> None:
    from pocketstack.placement import report_client

    deadline = time.monotonic() + timeout
    while True:
        time.sleep(0.2)
        try:
            report_client.report(hosts)
            return
        except exceptions.ServiceUnavailable:
            if time.monotonic() > deadline:
                LOG.warning("Placement still unreachable after %gs; the periodic report "
                            "will try again", timeout)
                return
        except Exception:  # noqa: BLE001 - the periodic report tries again
            LOG.exception("Reporting to placement failed")
            return


def report_providers(managers: dict) -> None:
    """The periodic half of update_available_resource: what the drivers report now,
    into placement (a host whose figures did not change writes nothing)."""
    conf = config.CONF.scheduler
    reports = []
    for host, node_uuid, name in _each(managers, "node_providers"):
        res = managers[host].driver.resources()
        reports.append((host, _provider(node_uuid, name, {
            "vcpus": res["vcpus"], "memory_mb": res["memory_mb"],
            "local_gb": res["local_gb"]}, conf)))
    _report(managers, reports)


def _provider(node_uuid: str, name: str, sizes: dict, conf) -> placement_report.Host:
    """The host's resource provider as nova-compute reports it (update_available_resource
    → update_provider_tree); the rule for reserved and ratios is in placement/report.py."""
    disk_mb = conf.reserved_host_disk_mb
    return placement_report.Host(
        uuid=node_uuid, name=name,
        totals={"VCPU": sizes["vcpus"], "MEMORY_MB": sizes["memory_mb"],
                "DISK_GB": sizes["local_gb"]},
        reserved={"VCPU": conf.reserved_host_cpus, "MEMORY_MB": conf.reserved_host_memory_mb,
                  "DISK_GB": None if disk_mb is None else (disk_mb + 1023) // 1024},
        ratios={"VCPU": conf.cpu_allocation_ratio, "MEMORY_MB": conf.ram_allocation_ratio,
                "DISK_GB": conf.disk_allocation_ratio},
        initial_ratios={"VCPU": conf.initial_cpu_allocation_ratio,
                        "MEMORY_MB": conf.initial_ram_allocation_ratio,
                        "DISK_GB": conf.initial_disk_allocation_ratio})


def init_hosts(managers: dict) -> None:
    """Start-up recovery of these hosts: one query finds what they own; a host that owns
    nothing only tells its driver so."""
    owned: dict[str, list] = {host: [] for host in managers}
    for row in _each(managers, "owned_instances"):
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
    for uuid, host, vm_state, power in _each(managers, "power_sync_rows"):
        actual = managers[host].driver.get_power_state(uuid)
        if actual is None:
            if vm_state != states.STOPPED:
                managers[host].db.call("update_instance", instance_uuid=uuid, values={
                    "power_state": states.NOSTATE, "vm_state": states.ERROR},
                    expect_task=None)
        elif actual != power:
            values = {"power_state": actual}
            if actual == states.SHUTDOWN and vm_state == states.ACTIVE:
                values["vm_state"] = states.STOPPED
            managers[host].db.call("update_instance", instance_uuid=uuid, values=values,
                                   expect_task=None)


def reconcile_resources(managers: dict) -> None:
    """Usage counters = the nodes' allocations in placement (reconcile_usage)."""
    _each(managers, "reconcile_resources")


def reclaim_queued_deletes(managers: dict) -> None:
    """Delete for good the servers SOFT_DELETED longer than the reclaim interval
    (nova's _reclaim_queued_deletes), on every host of ``managers`` (name -> manager)."""
    interval = config.CONF.compute.reclaim_instance_interval
    if interval <= 0:
        return
    for uuid, host in _each(managers, "due_reclaims", interval=interval):
        if managers[host].db.call("update_instance", instance_uuid=uuid,
                                  values={"task_state": states.DELETING}, expect_task=None,
                                  expect_vm=states.SOFT_DELETED):
            managers[host].terminate_instance(RequestContext.admin(), uuid)


def periodic_tasks(managers: dict) -> None:
    # The heartbeat has its own thread at [compute] report_interval (service.RPCService,
    # fleet.ComputeFleet), so os-services up/down never depends on how long these take.
    sync_power_states(managers)
    reclaim_queued_deletes(managers)
    report_providers(managers)
    reconcile_resources(managers)


def _heal_network_info(ctx, rows, hdb) -> None:
    """A network-changed event (a floating IP put on a server's port or taken off) cast
    to the process that was killed went with it, and the server would show its old
    addresses for good: read them again once at start-up, for all the host's servers at
    once (nova heals its info cache periodically, _heal_instance_info_cache)."""
    from pocketstack.compute.manager import network

    changed = network.refresh_floating_ips(
        ctx, {r.uuid: list(r.network_info) for r in rows}) if rows else {}
    for uuid, fresh in changed.items():
        hdb.call("refresh_vifs", instance_uuid=uuid, fresh=fresh)


class PeriodicMixin:
    def register_node(self) -> None:
        register_nodes({self.host: self})

    def init_host(self, rows=None) -> None:
        """Recover what this host owns after a restart (``rows``: its instances, when the
        caller read them already)."""
        if rows is None:
            rows = self.db.call("owned_instances", hosts=[self.host])
        self.driver.init_host(self.host, [{"uuid": r.uuid, "power_state": r.power_state}
                                          for r in rows])
        ctx = RequestContext.admin()
        from pocketstack.compute.manager import volumes

        for line in volumes.reconcile(ctx, [r.uuid for r in rows
                                            if r.vm_state != states.BUILDING],
                                      self.started_at, hdb=self.db, host=self.host):
            LOG.info("%s: %s", self.host, line)
        for inst in rows:
            if inst.task_state == states.DELETING:
                from pocketstack.compute.manager.delete import finish_delete

                finish_delete(ctx, inst, self.host, use_service_token=True, hdb=self.db)
            elif inst.vm_state == states.BUILDING:
                # Interrupted mid-build: hand it back for a reschedule now rather than
                # waiting for the build deadline - unless a conductor took it already
                # (what it holds now is the next attempt's).
                if not self.db.call("take_over", instance_uuid=inst.uuid,
                                    attempt=inst.attempt):
                    continue
                # Its ports stay the server's: the next attempt binds them again, so a
                # floating IP the user put on one meanwhile stays on it.
                self._undo(ctx, inst, inst.network_info or [], release=True, keep_ports=True)
                self._hand_back(ctx, inst, inst.attempt + 1,
                                f"compute service on {self.host} restarted during "
                                f"{inst.task_state}")
            elif inst.task_state is not None:
                power = self.driver.get_power_state(inst.uuid)
                vm = {states.RUNNING: states.ACTIVE, states.SHUTDOWN: states.STOPPED,
                      states.PAUSED_POWER: states.PAUSED,
                      states.SUSPENDED_POWER: states.SUSPENDED}.get(power, states.ERROR)
                self.db.call("update_instance", instance_uuid=inst.uuid, values={
                    "task_state": None, "vm_state": vm,
                    "power_state": power or states.NOSTATE})
        try:
            _heal_network_info(ctx, [r for r in rows if r.vm_state != states.BUILDING
                                     and r.task_state != states.DELETING and r.network_info],
                               self.db)
        except Exception:  # noqa: BLE001 - addresses shown as before; the rest is done
            LOG.exception("Refreshing the addresses of the servers on %s failed", self.host)

    def _hand_back(self, ctx, inst, attempt: int, reason: str) -> None:
        """Ask the conductor to reschedule ``inst``, waiting (bounded) for one to listen:
        with `up --workers` the main process starts its conductor only once the compute
        processes are up, and this runs on their start-up thread (fleet.py)."""
        deadline = time.monotonic() + CONDUCTOR_WAIT
        while True:
            try:
                return self.conductor.reschedule(ctx, inst.uuid, attempt, self.host, reason)
            except MessagingTimeout:  # no conductor listening (yet)
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def periodic_tasks(self) -> None:
        periodic_tasks({self.host: self})

    def sync_power_states(self) -> None:
        sync_power_states({self.host: self})

    def reconcile_resources(self) -> None:
        reconcile_resources({self.host: self})
