"""The compute hosts of one process, run together (1,000 simulated hosts in one process).

Each host keeps its own ComputeManager, driver and RPC target ``compute.<host>``, so a
message reaches the host it names exactly as with one agent per process. What the hosts
share is what made many of them expensive:

* one worker pool for all their RPC servers: threads follow the messages in flight, not
  16 per host (with the in-process transport; oslo.messaging servers keep their own);
* one heartbeat thread: one UPDATE (per 500 hosts) of the hosts' service rows each
  report_interval;
* one periodic thread: power sync, queued deletes and resource reconciliation as a few
  statements over all hosts each periodic_interval (compute/manager/periodic.py);
* registration and start-up recovery in a few statements, not a few per host;
* the simulated (fake driver) hosts share one image cache.
"""
from __future__ import annotations

import concurrent.futures
import os
import threading

from pocketstack.common import config, db, rpc, runtime
from pocketstack.control import faults
from pocketstack.compute.runners import BuildPool, Periodic, make_driver

# Messages one host may have in flight at once, as its own agent's pool allowed.
WORKERS_PER_HOST = 16


class HostAgent:
    """One host of a fleet as the cloud's workers list shows it (``.manager``)."""

    def __init__(self, manager, server):
        self.manager, self.server = manager, server
        self.stopped = False

    def stop(self):
        """No new messages for this host; the fleet's pool finishes the ones it has."""
        if self.stopped:
            return
        self.stopped = True
        self.server.stop()
        try:
            self.server.wait()
        except Exception:  # noqa: BLE001
            pass


class ComputeFleet:
    def __init__(self, hosts: list[tuple[str, str | None]], data_dir: str):
        from pocketstack.compute import hostdb
        from pocketstack.compute.manager import ComputeManager, periodic

        self.managers = {}
        # The simulated hosts share one image cache: they are one machine's disk, and
        # 1,000 of them would otherwise keep 1,000 copies of every image they boot.
        fake_cache = os.path.join(data_dir, "compute", "_fake_base")
        for name, kind in hosts:
            kind = kind or config.CONF.compute_driver
            driver = make_driver(kind, name, data_dir)
            self.managers[name] = ComputeManager(name, driver, data_dir,
                                                 fake_cache if kind == "fake" else None)
        if db.forbidden():  # everything goes through the conductor: wait for one
            hostdb.wait_for_conductor(next(iter(self.managers)), CONDUCTOR_WAIT)
            faults.use_remote(*_remote_faults(self.managers))  # fault injection rules too
        periodic.register_nodes(self.managers)
        # Threads are made as messages arrive and reused once idle, so the pool's size is
        # only the ceiling one agent per host had.
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=WORKERS_PER_HOST * max(len(hosts), 1),
            thread_name_prefix="rpc-compute", initializer=runtime.current().enter)
        # Builds run off the RPC workers (service.BuildPool: a build waits for an event
        # that arrives as another message), on one pool for the whole fleet.
        self.builds = concurrent.futures.ThreadPoolExecutor(
            max_workers=WORKERS_PER_HOST * max(len(hosts), 1),
            thread_name_prefix="build-compute", initializer=runtime.current().enter)
        self.agents = []
        try:
            for name, manager in self.managers.items():
                endpoint = BuildPool(manager, pool=self.builds)
                server = rpc.get_server("compute", [endpoint], server=name,
                                        workers=WORKERS_PER_HOST, pool=self.pool)
                server.start()
                self.agents.append(HostAgent(manager, server))
        except BaseException:
            self.stop()
            raise
        names = list(self.managers)
        self.heartbeat = Periodic("heartbeat-nova-compute",
                                  lambda: hostdb.for_hosts(names, "heartbeats",
                                                           binary="nova-compute"),
                                  lambda: config.CONF.compute.report_interval)
        self.periodic = Periodic("periodic-compute",
                                 lambda: periodic.periodic_tasks(self.managers),
                                 lambda: config.CONF.compute.periodic_interval)
        threading.Thread(target=runtime.bind(periodic.init_hosts), args=(self.managers,),
                         name="init-compute-hosts", daemon=True).start()

    def stop(self):
        for agent in self.agents:
            agent.stop()
        for task in (getattr(self, "heartbeat", None), getattr(self, "periodic", None)):
            if task is not None:
                task.stop()
        self.pool.shutdown(wait=True)
        self.builds.shutdown(wait=True)


CONDUCTOR_WAIT = 120.0  # seconds a host without the database waits for a conductor


def _remote_faults(managers: dict):
    """(read, consume) of the fault injection rules, asked of the conductor host by host
    (each host may read and take only its own rules and those for every host)."""
    def read() -> list[dict]:
        rules = {}
        for host, manager in managers.items():
            for rule in manager.db.call("fault_rules", hosts=[host]):
                rules[rule["id"]] = rule
        return sorted(rules.values(), key=lambda r: r["created_at"] or "")

    def consume(rule_id: str) -> bool:
        return any(manager.db.call("consume_fault", hosts=[host], rule_id=rule_id)
                   for host, manager in managers.items())

    return read, consume


def start(hosts: list[tuple[str, str | None]], data_dir: str) -> list:
    """The fleet and its hosts, in the order a cloud stops its workers (last first): the
    hosts stop taking messages, then the fleet drains the pool and stops its threads."""
    fleet = ComputeFleet(hosts, data_dir)
    return [fleet, *fleet.agents]
