"""The scheduler's "pick a host" step with many simulated hosts (issue 13), in-process:
SchedulerManager.select_destinations for one m1.nano boot (the claim included, then
released), timed over ``--picks`` runs; ``--profile`` prints a cProfile of them.

    .venv/bin/python bench/pick_host.py [--hosts 1000] [--picks 200] [--profile]

Prints p50/p95 ms and the load average. Bounded: ``--picks`` runs, one cloud, stopped at
the end.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
import uuid

from pocketstack import Cloud


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--picks", type=int, default=200)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    with Cloud(hosts=args.hosts) as cloud, cloud.runtime.activated():
        from pocketstack.compute.scheduler import claims
        from pocketstack.compute.scheduler.manager import SchedulerManager
        sched = SchedulerManager()
        spec = {"flavor": {"vcpus": 1, "memory_mb": 128, "root_gb": 1, "ephemeral_gb": 0,
                           "swap": 0, "extra_specs": {}},
                "image_properties": {}, "hints": {}}
        times, chosen = [], set()
        prof = cProfile.Profile() if args.profile else None
        for _ in range(args.picks):
            consumer = str(uuid.uuid4())
            if prof:
                prof.enable()
            start = time.perf_counter()
            [sel] = sched.select_destinations(None, spec, [consumer])
            times.append((time.perf_counter() - start) * 1000)
            if prof:
                prof.disable()
            chosen.add(sel["host"])
            claims.release(consumer)
        times.sort()
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        print(f"hosts={args.hosts} picks={args.picks} p50={statistics.median(times):.2f} ms "
              f"p95={times[int(0.95 * (len(times) - 1))]:.2f} ms distinct hosts={len(chosen)} "
              f"load={load}")
        if prof:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
