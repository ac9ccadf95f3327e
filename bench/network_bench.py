"""Port creation benchmark (issue 4): POST /v2.0/ports with IP allocation and the DHCP
file update, from C concurrent clients. Targets: median under 15 ms, at least 150 ports/s
with 4 clients.

    .venv/bin/python bench/network_bench.py [--clients 4] [--ports 400] [--profile]

Starts a cloud in-process on a temporary data dir (SQLite), creates one network with a
/20 subnet (DHCP enabled), then each client creates ports over HTTP with its own
keep-alive connection. Bounded in count (--ports) and time (60 s).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import cProfile
import os
import pstats
import statistics
import tempfile
import threading
import time

import httpx

TIME_BUDGET = 60.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--ports", type=int, default=400)
    parser.add_argument("--profile", action="store_true", help="cProfile the server side")
    args = parser.parse_args()

    from pocketstack.cloud import Cloud

    data_dir = tempfile.mkdtemp(prefix="pocketstack-netbench-")
    cloud = Cloud(data_dir, admin_password="bench",
                  overrides={"identity.password_hash_rounds": 4}).start(port=0)
    try:
        auth = httpx.post(cloud.auth_url + "/v3/auth/tokens", json={"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": "admin", "domain": {"id": "default"}, "password": "bench"}}},
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
        token = auth.headers["X-Subject-Token"]
        base = cloud.url + "/network/v2.0"
        headers = {"X-Auth-Token": token}
        with httpx.Client(headers=headers, timeout=30) as setup:
            network = setup.post(base + "/networks", json={"network": {"name": "bench"}})
            net_id = network.json()["network"]["id"]
            setup.post(base + "/subnets", json={"subnet": {
                "network_id": net_id, "ip_version": 4, "cidr": "10.50.0.0/20"}}).raise_for_status()
            setup.put(base + f"/quotas/{auth.json()['token']['project']['id']}",
                      json={"quota": {"port": -1}}).raise_for_status()
            # warm up (first-use paths, default security group)
            for _ in range(5):
                setup.post(base + "/ports", json={"port": {"network_id": net_id}})

        latencies: list[float] = []
        lock = threading.Lock()
        deadline = time.monotonic() + TIME_BUDGET
        per_client = args.ports // args.clients

        def client(_):
            mine = []
            with httpx.Client(headers=headers, timeout=30) as http:
                for _ in range(per_client):
                    if time.monotonic() > deadline:
                        break
                    start = time.perf_counter()
                    response = http.post(base + "/ports", json={"port": {"network_id": net_id}})
                    mine.append((time.perf_counter() - start) * 1000)
                    response.raise_for_status()
            with lock:
                latencies.extend(mine)

        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            threading.setprofile(lambda *a: None)
            profiler.enable()
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(client, range(args.clients)))
        elapsed = time.perf_counter() - start
        if profiler:
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)

        from pocketstack.network import dhcp

        dhcp.wait()  # the files are written in the background
        host = os.path.join(data_dir, "network", "dhcp", net_id, "host")
        with open(host) as f:
            lines = len(f.read().splitlines())
        latencies.sort()
        print(f"port create, {args.clients} clients, {len(latencies)} ports "
              f"(DHCP host file: {lines} lines)")
        print(f"  median {statistics.median(latencies):.1f} ms   "
              f"p95 {latencies[int(len(latencies) * 0.95) - 1]:.1f} ms   "
              f"throughput {len(latencies) / elapsed:.0f} ports/s   "
              f"[targets: median < 15 ms, >= 150 ports/s]")
    finally:
        cloud.stop()


if __name__ == "__main__":
    main()
