"""Dashboard benchmark (issue 14): every main page with 1,000 servers in the project.

    .venv/bin/python bench/dashboard_bench.py [--servers 1000] [--runs 20]

Runs `pocketstack up` (simulated hosts, zero spawn delay) on a temporary data dir in a
child process, raises the admin project's quotas, creates the servers through the compute
API in batches (multi-create, min_count = max_count), waits until none is building, logs in
to the dashboard as admin and times each page: wall time of one GET from this client over
loopback, i.e. the dashboard's whole work (its own API calls over HTTP included). The
reference, measured in the same run, is the bare API call the servers page makes
(`GET /compute/v2.1/servers/detail?limit=50`) and a list of every server
(`?limit=1000`). Target: every page <= 100 ms. Bounded in count and time (TIME_BUDGET).

Then an image of --upload-mib MiB is uploaded through the dashboard (the browser's PUT,
passed on to glance as it arrives) and, as the reference, straight to glance; for each,
MB/s and the cloud process's peak RSS growth while it ran (sampled every 10 ms): the
dashboard must not hold the file in memory.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import httpx

sys.path.insert(0, os.path.dirname(__file__))
from network_bench import start_cloud, token_for  # noqa: E402

TIME_BUDGET = 600.0  # seconds for the whole run
BATCH = 100  # servers a multi-create request

PAGES = ["/dashboard/overview", "/dashboard/servers", "/dashboard/servers?marker={marker}",
         "/dashboard/servers/status", "/dashboard/servers/{server}",
         "/dashboard/servers/launch", "/dashboard/images", "/dashboard/networks",
         "/dashboard/networks/topology", "/dashboard/volumes", "/dashboard/keypairs",
         "/dashboard/admin/hypervisors", "/dashboard/admin/services",
         "/dashboard/admin/servers", "/dashboard/admin/flavors", "/dashboard/admin/faults",
         "/dashboard/floating-ips", "/dashboard/routers", "/dashboard/security-groups",
         "/dashboard/volumes/snapshots", "/dashboard/volumes/backups",
         "/dashboard/admin/projects", "/dashboard/admin/users", "/dashboard/admin/quotas",
         "/dashboard/admin/resource-providers", "/dashboard/containers",
         "/dashboard/secrets", "/dashboard/zones"]


def make_servers(url: str, token: str, project: str, count: int, end: float) -> None:
    api = httpx.Client(base_url=url + "/compute/v2.1", timeout=120,
                       headers={"X-Auth-Token": token})
    api.put(f"/os-quota-sets/{project}", json={"quota_set": {
        "instances": count + 10, "cores": count + 10, "ram": -1}}).raise_for_status()
    image = httpx.post(url + "/image/v2/images", headers={"X-Auth-Token": token}, json={
        "name": "bench", "disk_format": "raw", "container_format": "bare"}).json()
    httpx.put(f"{url}/image/v2/images/{image['id']}/file", content=b"\0" * 4096, headers={
        "X-Auth-Token": token, "Content-Type": "application/octet-stream"}).raise_for_status()
    made = 0
    while made < count and time.monotonic() < end:
        n = min(BATCH, count - made)
        r = api.post("/servers", json={"server": {
            "name": f"bench-{made:04d}", "imageRef": image["id"], "flavorRef": "42",
            "networks": "none", "min_count": n, "max_count": n}},
            headers={"OpenStack-API-Version": "compute 2.79"})
        r.raise_for_status()
        made += n
    while time.monotonic() < end:
        building = api.get("/servers", params={"status": "BUILD", "limit": 1}).json()
        if not building["servers"]:
            break
        time.sleep(0.5)
    else:
        raise SystemExit("servers still building when the time budget ran out")
    total = len(api.get("/servers", params={"limit": count + 10}).json()["servers"])
    active = len(api.get("/servers", params={"status": "ACTIVE",
                                             "limit": count + 10}).json()["servers"])
    print(f"{total} servers in the project, {active} ACTIVE")


def login(url: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=60)
    page = client.get("/dashboard/login")
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    r = client.post("/dashboard/login", data={
        "csrf_token": csrf, "domain": "Default", "username": "admin", "password": "bench",
        "project": "admin"})
    assert r.status_code == 303, r.text
    return client


def timed(client: httpx.Client, path: str, runs: int, **kwargs) -> tuple[float, float, int]:
    for _ in range(3):  # warm-up: first-use imports, connection pools
        client.get(path, **kwargs)
    times, status = [], None
    for _ in range(runs):
        start = time.perf_counter()
        r = client.get(path, **kwargs)
        times.append((time.perf_counter() - start) * 1000)
        status = r.status_code
    times.sort()
    return statistics.median(times), times[max(0, int(len(times) * 0.95) - 1)], status


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def upload(put, path: str, pid: int) -> tuple[float, float]:
    """(MB/s, peak RSS growth in MiB of process pid) of put(chunks)."""
    base, peak, done = rss_mib(pid), [0.0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mib(pid) - base)
            time.sleep(0.01)

    def chunks():
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                yield block
    sampler = threading.Thread(target=sample)
    sampler.start()
    start = time.perf_counter()
    try:
        put(chunks())
    finally:
        seconds = time.perf_counter() - start
        done.set()
        sampler.join()
    return os.path.getsize(path) / (1 << 20) / seconds, peak[0]


def time_uploads(url: str, token: str, client: httpx.Client, pid: int, mib: int,
                 tmp: str) -> None:
    path = os.path.join(tmp, "upload.raw")
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
    page = client.get("/dashboard/images")
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    made = client.post("/dashboard/images/new", headers={"Accept": "application/json"}, data={
        "csrf_token": csrf, "name": "via-dashboard", "disk_format": "raw",
        "container_format": "bare"}).json()
    dash = upload(lambda body: client.put(made["upload"], content=body, timeout=600, headers={
        "X-CSRF-Token": csrf, "Content-Length": str(mib << 20)}).raise_for_status(),
        path, pid)
    images = url + "/image/v2/images"
    auth = {"X-Auth-Token": token}
    image = httpx.post(images, headers=auth, json={
        "name": "direct", "disk_format": "raw", "container_format": "bare"}).json()
    direct = upload(lambda body: httpx.put(
        f"{images}/{image['id']}/file", content=body, timeout=600, headers={
            **auth, "Content-Type": "application/octet-stream",
            "Content-Length": str(mib << 20)}).raise_for_status(), path, pid)
    print(f"upload {mib} MiB through the dashboard: {dash[0]:.0f} MB/s, cloud RSS +"
          f"{dash[1]:.0f} MiB at peak; straight to glance (reference): {direct[0]:.0f} MB/s, "
          f"+{direct[1]:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--servers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--upload-mib", type=int, default=256)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="pocketstack-dashbench-")
    proc, url = start_cloud(os.path.join(tmp, "data"))
    end = time.monotonic() + TIME_BUDGET
    try:
        token, project = token_for(url)
        start = time.perf_counter()
        make_servers(url, token, project, args.servers, end)
        print(f"created in {time.perf_counter() - start:.1f} s; "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        client = login(url)
        api = httpx.Client(base_url=url, timeout=60, headers={"X-Auth-Token": token})
        first = api.get("/compute/v2.1/servers", params={"limit": 50}).json()["servers"]
        marker, server = first[-1]["id"], first[0]["id"]
        references = (
            ("API servers/detail?limit=50", "/compute/v2.1/servers/detail", {"limit": 50}),
            ("API servers/detail?limit=1000", "/compute/v2.1/servers/detail",
             {"limit": 1000}))
        rows = []  # the references before and after the pages: the load may change
        for label, path, params in references:
            rows.append((label + " (reference, before)",
                         *timed(api, path, args.runs, params=params)))
        for page in PAGES:
            path = page.format(marker=marker, server=server)
            rows.append((page, *timed(client, path, args.runs)))
        for label, path, params in references:
            rows.append((label + " (reference, after)",
                         *timed(api, path, args.runs, params=params)))
        width = max(len(r[0]) for r in rows)
        print(f"{'page':<{width}}  median ms  p95 ms  status")
        for label, median, p95, status in rows:
            flag = "" if label.startswith("API") or p95 <= 100 else "  over 100 ms"
            print(f"{label:<{width}}  {median:9.1f}  {p95:6.1f}  {status}{flag}")
        print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
        if args.upload_mib:
            time_uploads(url, token, client, proc.pid, args.upload_mib, tmp)
            print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
