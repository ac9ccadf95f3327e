"""What a test suite pays for pocketstack's library and pytest plugin (issue 12):

* session start: ``Cloud(hosts=4).start()`` in a fresh interpreter (what the
  ``openstack_cloud`` fixture costs once per session, imports included) and in a warm one;
* the per-test ``openstack_project`` fixture: create (project, member user, grant,
  network, subnet) and delete (every resource type looked up, then user and project);
* clouds started and stopped in a loop: threads, file descriptors and RSS after each
  cycle, so growth shows up.

    .venv/bin/python bench/library_bench.py [--projects N] [--cycles N]

Prints the figures with the load average; every loop is bounded in count and time.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import threading
import time

TIME_BUDGET = 120.0  # seconds per measurement, whatever the counts say

COLD_START = """
import time
t0, c0 = time.perf_counter(), time.process_time()
from pocketstack import Cloud
cloud = Cloud(hosts=4).start()
t1, c1 = time.perf_counter(), time.process_time()
cloud.stop()
print(f"{(t1 - t0) * 1000:.1f} {(c1 - c0) * 1000:.1f}")
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class _Remote:
    """The cloud as a test would see one in another process (no ``runtime``): Project
    then makes and deletes everything through the REST APIs."""

    def __init__(self, cloud):
        self.__dict__["_cloud"] = cloud

    def __getattr__(self, name):
        if name == "runtime":
            raise AttributeError(name)
        return getattr(self._cloud, name)

    def __setattr__(self, name, value):
        self.__dict__[name] = value


def cold_starts(n: int) -> list[tuple[float, float]]:
    """(wall ms, CPU ms) of each start in a fresh interpreter."""
    out = []
    for _ in range(n):
        proc = subprocess.run([sys.executable, "-c", COLD_START], capture_output=True,
                              text=True, timeout=120)
        wall, cpu = proc.stdout.strip().splitlines()[-1].split()
        out.append((float(wall), float(cpu)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=100)
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--cold", type=int, default=3)
    args = parser.parse_args()

    from pocketstack import Cloud
    from pocketstack.testing import Project

    print(f"load average at start: {load()}")
    cold = cold_starts(args.cold)
    print(f"session start, fresh interpreter (imports + start): median "
          f"{statistics.median(w for w, _ in cold):.0f} ms  "
          f"({', '.join(f'{w:.0f}' for w, _ in cold)}); CPU median "
          f"{statistics.median(c for _, c in cold):.0f} ms")

    cloud = Cloud(hosts=4)
    t0 = time.perf_counter()
    cloud.start()
    print(f"session start, first in this process: {(time.perf_counter() - t0) * 1000:.0f} ms")
    admin = cloud.session()
    admin.get_token()
    # The fixture as the plugin runs it (in-process), then through the REST APIs as for a
    # cloud in another process (the code path before issue 13), under the same load.
    for label, target in (("openstack_project fixture", cloud),
                          ("same through the REST APIs (reference)", _Remote(cloud))):
        creates, deletes = [], []
        cpu0 = time.process_time()
        deadline = time.monotonic() + TIME_BUDGET
        for _ in range(args.projects):
            t0 = time.perf_counter()
            project = Project.create(target, admin)
            t1 = time.perf_counter()
            project.delete()
            t2 = time.perf_counter()
            creates.append((t1 - t0) * 1000)
            deletes.append((t2 - t1) * 1000)
            if time.monotonic() > deadline:
                break
        cpu = (time.process_time() - cpu0) * 1000 / len(creates)
        total = [c + d for c, d in zip(creates, deletes)]
        print(f"{label}, n={len(total)}: median {statistics.median(total):.1f} ms"
              f" (create {statistics.median(creates):.1f} ms, delete "
              f"{statistics.median(deletes):.1f} ms); p95 "
              f"{sorted(total)[int(len(total) * 0.95) - 1]:.1f} ms; min {min(total):.1f} ms; "
              f"process CPU {cpu:.1f} ms each")
    # Reference under the same load: one small authenticated API call.
    ref = []
    for _ in range(100):
        t0 = time.perf_counter()
        admin.get(cloud.url + "/network/v2.0/networks?name=none")
        ref.append((time.perf_counter() - t0) * 1000)
    print(f"reference: GET /network/v2.0/networks, median {statistics.median(ref):.1f} ms "
          f"(the REST path makes 5 calls to create and 12 to delete)")
    cloud.stop()

    warm = []
    print(f"{'cycle':>5} {'start ms':>9} {'threads':>8} {'fds':>5} {'rss MB':>8}")
    deadline = time.monotonic() + TIME_BUDGET * 3
    rows = []
    for i in range(1, args.cycles + 1):
        t0 = time.perf_counter()
        c = Cloud(hosts=4).start()
        warm.append((time.perf_counter() - t0) * 1000)
        c.connection().compute.flavors()  # use it: every service answers
        c.stop()
        del c
        gc.collect()
        rows.append((i, warm[-1], threading.active_count(), fds(), rss_mb()))
        if i in (1, 2, 5, 10) or i % 10 == 0 or i == args.cycles:
            print(f"{i:>5} {warm[-1]:>9.0f} {rows[-1][2]:>8} {rows[-1][3]:>5} "
                  f"{rows[-1][4]:>8.1f}")
        if time.monotonic() > deadline:
            print(f"stopped after {i} cycles (time budget)")
            break
    print(f"session start, warm process: median {statistics.median(warm):.0f} ms")
    first, last = rows[min(4, len(rows) - 1)], rows[-1]
    print(f"from cycle {first[0]} to {last[0]}: threads {first[2]} -> {last[2]}, fds "
          f"{first[3]} -> {last[3]}, rss {first[4]:.1f} -> {last[4]:.1f} MB")
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
