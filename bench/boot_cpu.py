"""Sequential boots with one network on a `pocketstack up` child: latency and the cloud's
CPU per boot (issue 13).

Latency on a shared 2-core machine moves with everyone else's load; the CPU seconds the
cloud process spends per boot (utime + stime from /proc, polls included) barely do, so
this is the figure to compare code paths with. Run it once per code path, alternating:

    .venv/bin/python bench/boot_cpu.py --boots 40
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/boot_cpu.py --boots 40

Per boot: POST, then GET the server every --poll seconds until ACTIVE (client-side
latency), then the create action's events (server-side latency and per-step medians).
"""
from __future__ import annotations

import argparse
import collections
import datetime as dt
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import requests


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(data_dir: str):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    exe = os.path.join(os.path.dirname(sys.executable), "pocketstack")
    log = open(os.path.join(data_dir, "up.log"), "wb")
    proc = subprocess.Popen([exe, "up", "--data-dir", os.path.join(data_dir, "d"),
                             "--port", str(port), "--admin-password", "bench-admin"],
                            stdout=log, stderr=subprocess.STDOUT)
    return proc, wait_answering(proc, f"http://127.0.0.1:{port}")


def wait_answering(proc, url: str) -> str:
    """``url`` once the cloud's compute API answers (every service has warmed up), at most
    60 s; a cloud that does not start is killed."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if requests.get(url + "/compute/v2.1/", timeout=5).status_code in (200, 401):
                return url
        except requests.RequestException:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("pocketstack up did not start")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boots", type=int, default=40)
    p.add_argument("--warmup", type=int, default=8, help="boots first (every host's cache)")
    p.add_argument("--poll", type=float, default=0.005)
    p.add_argument("--timeout", type=float, default=300, help="seconds for all boots, at most")
    a = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # still stop the cloud
    data_dir = tempfile.mkdtemp(prefix="boot-cpu-")
    proc, url = start(data_dir)
    try:
        run(a, proc, url)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data_dir, ignore_errors=True)


def run(a, proc, url):
    s = requests.Session()
    r = s.post(url + "/identity/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "password": "bench-admin", "domain": {"id": "default"}}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
    r.raise_for_status()
    s.headers.update({"X-Auth-Token": r.headers["X-Subject-Token"],
                      "OpenStack-API-Version": "compute 2.79"})
    project = r.json()["token"]["project"]["id"]
    s.put(url + f"/compute/v2.1/os-quota-sets/{project}", json={"quota_set": {
        "instances": -1, "cores": -1, "ram": -1}}).raise_for_status()
    s.put(url + f"/network/v2.0/quotas/{project}", json={"quota": {"port": -1}})
    net = s.post(url + "/network/v2.0/networks", json={"network": {"name": "cpu-net"}}
                 ).json()["network"]
    for subnet in ({"ip_version": 4, "cidr": "10.13.0.0/20"},
                   {"ip_version": 6, "cidr": "fd13::/64", "ipv6_address_mode": "slaac",
                    "ipv6_ra_mode": "slaac"}):
        s.post(url + "/network/v2.0/subnets", json={"subnet": dict(
            subnet, network_id=net["id"])}).raise_for_status()
    image = s.post(url + "/image/v2/images", json={
        "name": "cpu-img", "disk_format": "raw", "container_format": "bare"}).json()
    s.put(url + f"/image/v2/images/{image['id']}/file", data=b"\0" * 4096,
          headers={"Content-Type": "application/octet-stream"}).raise_for_status()
    flavor = min(s.get(url + "/compute/v2.1/flavors/detail").json()["flavors"],
                 key=lambda f: f["ram"])

    def boot(name):
        t0 = time.perf_counter()
        r = s.post(url + "/compute/v2.1/servers", json={"server": {
            "name": name, "imageRef": image["id"], "flavorRef": flavor["id"],
            "networks": [{"uuid": net["id"]}]}})
        r.raise_for_status()
        sid, polls, status = r.json()["server"]["id"], 0, "BUILD"
        while status == "BUILD":
            time.sleep(a.poll)
            polls += 1
            status = s.get(url + f"/compute/v2.1/servers/{sid}").json()["server"]["status"]
        return sid, status, (time.perf_counter() - t0) * 1000, polls

    for i in range(a.warmup):
        boot(f"warm-{i}")
    load0 = open("/proc/loadavg").read().split()[:3]
    end = time.monotonic() + a.timeout
    cpu0 = cpu_seconds(proc.pid)
    booted, client, polls, errors = [], [], 0, 0
    for i in range(a.boots):
        if time.monotonic() > end:
            break
        sid, status, ms, n = boot(f"cpu-{i}")
        errors += status != "ACTIVE"
        booted.append(sid)
        client.append(ms)
        polls += n
    cpu = cpu_seconds(proc.pid) - cpu0
    load1 = open("/proc/loadavg").read().split()[:3]

    def when(text):
        return dt.datetime.fromisoformat(text)

    steps, server = collections.defaultdict(list), []
    for sid in booted:
        action = s.get(url + f"/compute/v2.1/servers/{sid}/os-instance-actions"
                       ).json()["instanceActions"][0]
        events = s.get(url + f"/compute/v2.1/servers/{sid}/os-instance-actions/"
                       f"{action['request_id']}").json()["instanceAction"]["events"]
        for e in events:
            steps[e["event"]].append(
                (when(e["finish_time"]) - when(e["start_time"])).total_seconds() * 1000)
        server.append((max(when(e["finish_time"]) for e in events)
                       - when(action["start_time"])).total_seconds() * 1000)
    n = len(booted)
    q95 = lambda v: sorted(v)[min(len(v) - 1, round(0.95 * (len(v) - 1)))]  # noqa: E731
    import pocketstack  # which code the child ran (PYTHONPATH decides)

    print(f"code {os.path.dirname(pocketstack.__file__)}")
    print(f"load average {' '.join(load0)} -> {' '.join(load1)}")
    print(f"boots {n}, not ACTIVE {errors}, polls/boot {polls / n:.1f} "
          f"(every {a.poll * 1000:g} ms)")
    print(f"client POST->ACTIVE ms p50 {statistics.median(client):.1f}  p95 {q95(client):.1f}")
    print(f"server ms (action start -> last event) p50 {statistics.median(server):.1f}  "
          f"p95 {q95(server):.1f}")
    print(f"cloud CPU ms per boot (polls included) {cpu * 1000 / n:.1f}")
    for name, values in steps.items():
        print(f"  {statistics.median(values):7.2f} ms  {name}")


if __name__ == "__main__":
    main()
