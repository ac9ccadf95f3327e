"""Port creation benchmark (issue 4): POST /v2.0/ports with IP allocation and the DHCP
file update, from C concurrent clients. Targets: median under 15 ms, at least 150 ports/s
with 4 clients.

    .venv/bin/python bench/network_bench.py [--clients 4] [--ports 400] [--like-boot]

``--like-boot`` creates the port a boot creates (issue 13): on a network with an IPv4 and
an IPv6 subnet (two fixed IPs), with device_id and device_owner compute:nova, then binds
it to a host (PUT binding:host_id, as nova's admin client does); the create and the
create + bind are timed apart.

By default it runs `pocketstack up` on a temporary data dir (SQLite) in a child process,
so the clients do not share the server's interpreter, creates one network with a /20
subnet (DHCP enabled), then each client creates ports over HTTP with its own keep-alive
connection. Bounded in count (--ports) and time (60 s). The server's CPU time per port is
read from /proc.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import httpx

TIME_BUDGET = 60.0
EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cloud(data_dir: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(os.path.join(os.path.dirname(data_dir), "up.log"), "wb")
    proc = subprocess.Popen([EXE, "up", "--data-dir", data_dir, "--port", str(port),
                             "--admin-password", "bench"], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/identity/v3", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("pocketstack up did not start; see " + log.name)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def token_for(url: str) -> tuple[str, str]:
    auth = httpx.post(url + "/identity/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": "bench"}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
    auth.raise_for_status()
    return auth.headers["X-Subject-Token"], auth.json()["token"]["project"]["id"]


def wait_for_lines(path: str, wanted: int, timeout: float = 10) -> int:
    deadline, lines = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                lines = len(f.read().splitlines())
        except FileNotFoundError:
            lines = 0
        if lines >= wanted:
            break
        time.sleep(0.05)
    return lines


def record(figures: dict) -> None:
    """Append this run to bench/results/network_bench.json."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                        "network_bench.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    runs = []
    if os.path.exists(path):
        with open(path) as f:
            runs = json.load(f)
    runs.append({"at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 **figures})
    with open(path, "w") as f:
        json.dump(runs[-50:], f, indent=1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--ports", type=int, default=400)
    parser.add_argument("--like-boot", action="store_true",
                        help="dual-stack network, device_id/owner, then bind to a host")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="pocketstack-netbench-")
    data_dir = os.path.join(tmp, "data")
    proc, url = start_cloud(data_dir)
    print(f"server pid {proc.pid}", flush=True)
    try:
        token, project = token_for(url)
        base = url + "/network/v2.0"
        headers = {"X-Auth-Token": token}
        with httpx.Client(headers=headers, timeout=30) as setup:
            network = setup.post(base + "/networks", json={"network": {"name": "bench"}})
            network.raise_for_status()
            net_id = network.json()["network"]["id"]
            setup.post(base + "/subnets", json={"subnet": {
                "network_id": net_id, "ip_version": 4,
                "cidr": "10.50.0.0/20"}}).raise_for_status()
            if args.like_boot:
                setup.post(base + "/subnets", json={"subnet": {
                    "network_id": net_id, "ip_version": 6, "cidr": "fd00:50::/64",
                    "ipv6_address_mode": "dhcpv6-stateful",
                    "ipv6_ra_mode": "dhcpv6-stateful"}}).raise_for_status()
            setup.put(base + f"/quotas/{project}",
                      json={"quota": {"port": -1}}).raise_for_status()
            for _ in range(5):  # warm up: first-use paths, the default security group
                setup.post(base + "/ports", json={"port": {"network_id": net_id}})

        latencies: list[float] = []
        bound: list[float] = []  # --like-boot: create + bind
        lock = threading.Lock()
        deadline = time.monotonic() + TIME_BUDGET
        per_client = args.ports // args.clients

        def client(_):
            mine, mine_bound = [], []
            with httpx.Client(headers=headers, timeout=30) as http:
                for _ in range(per_client):
                    if time.monotonic() > deadline:
                        break
                    body = {"network_id": net_id}
                    if args.like_boot:
                        body.update(device_id=str(uuid.uuid4()), device_owner="compute:nova")
                    start = time.perf_counter()
                    response = http.post(base + "/ports", json={"port": body})
                    mine.append((time.perf_counter() - start) * 1000)
                    response.raise_for_status()
                    port = response.json()["port"]
                    if args.like_boot:
                        assert len(port["fixed_ips"]) == 2, port["fixed_ips"]
                        http.put(base + f"/ports/{port['id']}", json={"port": {
                            "binding:host_id": "cmp-1"}}).raise_for_status()
                        mine_bound.append((time.perf_counter() - start) * 1000)
            with lock:
                latencies.extend(mine)
                bound.extend(mine_bound)

        cpu_before = cpu_seconds(proc.pid)
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(client, range(args.clients)))
        elapsed = time.perf_counter() - start
        server_cpu = cpu_seconds(proc.pid) - cpu_before

        host = os.path.join(data_dir, "network", "dhcp", net_id, "host")
        per_port = 2 if args.like_boot else 1  # a line per fixed IP
        lines = wait_for_lines(host, (len(latencies) + 6) * per_port)
        latencies.sort()
        print(f"port create, {args.clients} clients, {len(latencies)} ports "
              f"(DHCP host file: {lines} lines, expected {(len(latencies) + 6) * per_port})")
        print(f"  median {statistics.median(latencies):.1f} ms   "
              f"p95 {latencies[int(len(latencies) * 0.95) - 1]:.1f} ms   "
              f"throughput {len(latencies) / elapsed:.0f} ports/s   "
              f"server CPU {server_cpu / len(latencies) * 1000:.1f} ms/port   "
              f"[targets: median < 15 ms, >= 150 ports/s]")
        if bound:
            bound.sort()
            print(f"  like a boot (IPv4 + IPv6, device owner, then bound to a host): "
                  f"create median {statistics.median(latencies):.1f} ms, create + bind "
                  f"median {statistics.median(bound):.1f} ms, p95 "
                  f"{bound[int(len(bound) * 0.95) - 1]:.1f} ms")
        print(f"  load average during the run: {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} CPUs")
        record({"clients": args.clients, "ports": len(latencies),
                "median_ms": round(statistics.median(latencies), 1),
                "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1], 1),
                "ports_per_s": round(len(latencies) / elapsed),
                "server_cpu_ms_per_port": round(server_cpu / len(latencies) * 1000, 1),
                "like_boot": args.like_boot,
                "create_bind_median_ms": round(statistics.median(bound), 1) if bound else None,
                "dhcp_host_lines": lines, "load_average": round(os.getloadavg()[0], 1),
                "cpus": os.cpu_count()})
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    main()
