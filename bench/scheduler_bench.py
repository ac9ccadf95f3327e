"""Scheduler benchmark: one ``select_destinations`` over many compute hosts.

    python bench/scheduler_bench.py [--hosts 10000] [--runs 50] [--database URL]

Issue 5's target: p50 ≤ 50 ms over 10,000 hosts (rows, not processes). Nova's own
profiling doc measured 1.96 s for 50 hosts.

The hosts are compute_nodes rows with their nova-compute service rows, written straight
into a fresh database (SQLite in a temporary directory unless ``--database`` names
another); about a tenth are down or disabled and usage varies, so the filters have work
to do. Each run is what the conductor's RPC call costs on the scheduler's side: load the
host states, filter, weigh and claim (in placement: lock the provider, check its room,
bump its generation, insert the consumer and its allocations).
It is measured twice: calling the manager directly, and through the in-process RPC
client as the conductor calls it (JSON round-trip of the request and the answer
included). Every claim is released after its run so each run sees the same hosts. A
NoValidHost over all hosts (a flavor nothing fits) is timed too: it builds the
explanation. CPU time is shown next to wall time (the machine may be shared).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid


def setup(hosts: int, url: str | None):
    from pocketstack.common import config, db

    data_dir = tempfile.mkdtemp(prefix="bench-sched-")
    config.load(data_dir, os.path.join(data_dir, "pocketstack.conf"), {})
    db.configure(url or f"sqlite:///{data_dir}/bench.db")
    db.import_models()
    db.migrate()
    import sqlalchemy as sa

    from pocketstack.common.timeutils import utcnow
    from pocketstack.compute.models import ComputeNode, Service

    rng = random.Random(42)
    now = utcnow()
    nodes, services = [], []
    for i in range(hosts):
        host = f"sim-{i:05d}"
        vcpus, ram, disk = 64, 262144, 4000
        nodes.append({"uuid": str(uuid.uuid4()), "host": host, "hypervisor_hostname": host,
                      "hypervisor_type": "fake", "hypervisor_version": 1000,
                      "host_ip": "127.0.0.1", "vcpus": vcpus, "memory_mb": ram,
                      "local_gb": disk, "vcpus_used": rng.randrange(0, vcpus * 8),
                      "memory_mb_used": rng.randrange(0, ram), "local_gb_used":
                      rng.randrange(0, disk), "running_vms": rng.randrange(0, 100),
                      "cpu_allocation_ratio": 16.0, "ram_allocation_ratio": 1.5,
                      "disk_allocation_ratio": 1.0, "generation": 0,
                      "failed_builds": 1 if rng.random() < 0.01 else 0,
                      "created_at": now})
        services.append({"uuid": str(uuid.uuid4()), "host": host, "binary": "nova-compute",
                         "topic": "compute", "disabled": rng.random() < 0.05,
                         "forced_down": False, "report_count": 1, "created_at": now,
                         "last_seen_up": None if rng.random() < 0.05 else now})
    with db.transaction() as s:
        s.execute(sa.insert(ComputeNode.__table__), nodes)
        s.execute(sa.insert(Service.__table__), services)
    _providers(nodes)
    return db


def _providers(nodes):
    """Each node's resource provider, and its usage as one allocation (issue 25: the
    scheduler reads free room from placement)."""
    import sqlalchemy as sa

    from pocketstack.common import db
    from pocketstack.placement import report
    from pocketstack.placement.models import Allocation, Consumer, ResourceProvider

    report.report([report.Host(
        uuid=n["uuid"], name=n["hypervisor_hostname"],
        totals={"VCPU": n["vcpus"], "MEMORY_MB": n["memory_mb"], "DISK_GB": n["local_gb"]},
        reserved={}, ratios={}, initial_ratios={"VCPU": 16.0, "MEMORY_MB": 1.5,
                                                "DISK_GB": 1.0}) for n in nodes])
    with db.transaction() as s:
        ids = dict(s.execute(sa.select(ResourceProvider.uuid, ResourceProvider.id)).all())
        consumers, allocations = [], []
        for n in nodes:
            consumer = str(uuid.uuid4())
            consumers.append({"uuid": consumer, "project_id": "bench", "user_id": "bench",
                              "generation": 1})
            for rc, used in (("VCPU", n["vcpus_used"]), ("MEMORY_MB", n["memory_mb_used"]),
                             ("DISK_GB", n["local_gb_used"])):
                if used:
                    allocations.append({"resource_provider_id": ids[n["uuid"]],
                                        "consumer_id": consumer, "resource_class": rc,
                                        "used": used})
        s.execute(sa.insert(Consumer.__table__), consumers)
        s.execute(sa.insert(Allocation.__table__), allocations)


def timed(fn, runs: int):
    wall, cpu = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - w0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return statistics.median(wall), sorted(wall)[int(len(wall) * 0.95) - 1], \
        statistics.median(cpu)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hosts", type=int, default=10000)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--database", help="SQLAlchemy URL of an empty database (default: "
                                      "SQLite in a temporary directory)")
    p.add_argument("--json", help="append the figures as one JSON line to this file")
    a = p.parse_args()
    t0 = time.perf_counter()
    setup(a.hosts, a.database)
    print(f"{a.hosts} hosts written in {time.perf_counter() - t0:.1f} s", flush=True)

    from pocketstack.common import rpc
    from pocketstack.common.context import RequestContext
    from pocketstack.compute.scheduler import claims
    from pocketstack.compute.scheduler.manager import NoValidHost, SchedulerManager
    from pocketstack.compute.scheduler.rpcapi import SchedulerAPI

    manager = SchedulerManager()
    server = rpc.get_server("scheduler", [manager], workers=1)
    server.start()
    ctx = RequestContext.admin()
    flavor = {"flavorid": "42", "name": "m1.nano", "memory_mb": 192, "vcpus": 1, "root_gb": 1,
              "ephemeral_gb": 0, "swap": 0, "extra_specs": {}}
    spec = {"flavor": flavor, "image": {"id": str(uuid.uuid4())}, "image_properties": {},
            "availability_zone": None, "force_host": None, "force_node": None, "hints": {},
            "group": None, "security_group_ids": [], "block_device_mapping": [],
            "num_instances": 1}
    api = SchedulerAPI()

    def direct():
        consumer = str(uuid.uuid4())
        chosen = manager.select_destinations(ctx, spec, [consumer])
        claims.release(chosen[0]["instance_uuid"])

    def via_rpc():
        consumer = str(uuid.uuid4())
        chosen = api.select_destinations(ctx, spec, [consumer])
        claims.release(chosen[0]["instance_uuid"])

    huge = dict(spec, flavor=dict(flavor, memory_mb=10 ** 7))

    def no_valid_host():
        try:
            manager.select_destinations(ctx, huge, [str(uuid.uuid4())])
        except NoValidHost:
            return
        raise AssertionError("a flavor nothing fits was scheduled")

    direct()  # warm: statement caches, imports
    results = {"hosts": a.hosts, "runs": a.runs, "load_before": os.getloadavg()}
    for name, fn in (("select_destinations", direct), ("via in-process RPC", via_rpc),
                     ("NoValidHost (explained)", no_valid_host)):
        p50, p95, cpu = timed(fn, a.runs)
        results[name] = {"p50_ms": p50, "p95_ms": p95, "cpu_p50_ms": cpu}
        print(f"{name} over {a.hosts} hosts: p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
              f"CPU p50 {cpu:.1f} ms   [target p50 ≤ 50 ms]", flush=True)
    results["load_after"] = os.getloadavg()
    print(f"load average before {results['load_before'][0]:.2f}, after "
          f"{results['load_after'][0]:.2f} ({os.cpu_count()} CPUs)")
    server.stop()
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(results) + "\n")


if __name__ == "__main__":
    sys.exit(main())
