"""Boot benchmark against any OpenStack compute endpoint.

    python bench/boot.py --compute-url URL --token TOKEN --image ID [--flavor 42]
    python bench/boot.py --local        # a fresh all-in-one cloud in a child process
    python bench/boot.py --inprocess    # the cloud in this process (for profilers)

Measures (issue 5 targets in brackets):

* latency: POST→ACTIVE over N sequential boots, p50/p95 [p50 ≤ 100 ms];
* burst: B servers from C concurrent clients until all ACTIVE [500 from 10 ≤ 10 s, zero
  ERROR];
* detail: GET /servers/detail?limit=1000 with the servers booted so far topped up to D
  [1,000 servers p50 ≤ 200 ms];
* delete: the burst's servers deleted by C clients until all gone [500 ≤ 10 s];
* RSS of the cloud process holding D servers (``--local`` only: /proc/<pid>/status)
  [≤ 300 MB].

Servers boot with networks=none (2.37+) unless ``--network ID`` is given. With ``--local``
the client runs in its own process, as real clients do, so the figures are the cloud's and
not the benchmark's; ``--inprocess`` shares one interpreter (and one GIL) between the two.
Every loop is bounded in count and in time (``--timeout`` per phase). ``--json FILE``
appends the figures, with the machine's load average, to FILE.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import requests

MICROVERSION = "compute 2.79"


class Client:
    def __init__(self, url, token):
        self.url, self.s = url.rstrip("/"), requests.Session()
        self.s.headers.update({"OpenStack-API-Version": MICROVERSION,
                               "Content-Type": "application/json", "X-Auth-Token": token})

    def boot(self, image, flavor, name, network=None):
        networks = [{"uuid": network}] if network else "none"
        r = self.s.post(self.url + "/servers", json={"server": {
            "name": name, "imageRef": image, "flavorRef": flavor, "networks": networks}})
        r.raise_for_status()
        return r.json()["server"]["id"]

    def status(self, sid):
        r = self.s.get(self.url + f"/servers/{sid}")
        return r.json()["server"]["status"] if r.status_code == 200 else "GONE"

    def detail(self, **params):
        r = self.s.get(self.url + "/servers/detail", params=dict(params, limit=1000))
        r.raise_for_status()
        return r.json()["servers"]


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def wait_all(client, ids, want, timeout, interval=0.25):
    """Wait until every id is ACTIVE (or ERROR) or, for ``want="GONE"``, deleted; returns
    (pending, errored). Polls the cheap id list (``GET /servers?status=BUILD`` while
    booting, ``GET /servers`` while deleting), so that waiting on hundreds of servers does
    not itself load the cloud; one detail list at the end tells ACTIVE from ERROR."""
    pending, deadline = set(ids), time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        params = {"name": "^bench-", "limit": 1000}
        if want != "GONE":
            params["status"] = "BUILD"
        r = client.s.get(client.url + "/servers", params=params)
        r.raise_for_status()
        pending &= {s["id"] for s in r.json()["servers"]}
        if pending:
            time.sleep(interval)
    bad = []
    if want != "GONE":
        status = {s["id"]: s["status"] for s in client.detail(name="^bench-")}
        bad = [sid for sid in ids if sid not in pending and status.get(sid) != want]
    return pending, bad


def boot_many(clients, a, prefix, count):
    """``count`` boots spread over the clients, each client on its own thread."""
    def one(i):
        return clients[i % len(clients)].boot(a.image, a.flavor, f"bench-{prefix}-{i}",
                                              a.network)

    with concurrent.futures.ThreadPoolExecutor(len(clients)) as pool:
        return list(pool.map(one, range(count)))


def run(c, a, rss_of=None, cpu_of=None) -> dict:
    out: dict = {"load_before": os.getloadavg()}
    cpu_of = cpu_of or (lambda: None)

    def cpu_note(key, since, count):
        used = cpu_of()
        if used is None or since is None or not count:
            return ""
        out[key]["cloud_cpu_ms_each"] = (used - since) * 1000 / count
        return f"; cloud CPU {(used - since) * 1000 / count:.1f} ms each"

    clients = [Client(a.compute_url, a.token) for _ in range(a.clients)]
    ids = []
    if a.latency_boots:
        lat = []
        cpu0 = cpu_of()
        phase_end = time.monotonic() + a.timeout
        for i in range(a.latency_boots):
            if time.monotonic() > phase_end:
                break
            t0 = time.perf_counter()
            sid = c.boot(a.image, a.flavor, f"bench-lat-{i}", a.network)
            ids.append(sid)
            deadline = time.monotonic() + 30
            while c.status(sid) not in ("ACTIVE", "ERROR") and time.monotonic() < deadline:
                time.sleep(0.002)
            lat.append((time.perf_counter() - t0) * 1000)
        out["latency_ms"] = {"n": len(lat), "p50": statistics.median(lat),
                             "p95": percentile(lat, 0.95), "max": max(lat)}
        note = cpu_note("latency_ms", cpu0, len(lat))
        print(f"boot POST→ACTIVE over {len(lat)}: p50 {out['latency_ms']['p50']:.1f} ms, "
              f"p95 {out['latency_ms']['p95']:.1f} ms{note} (with status polls)   "
              f"[target p50 ≤ 100 ms]", flush=True)
    burst = []
    if a.burst:
        t0, cpu0 = time.perf_counter(), cpu_of()
        burst = boot_many(clients, a, "burst", a.burst)
        posted = time.perf_counter() - t0
        pending, bad = wait_all(c, burst, "ACTIVE", a.timeout)
        took = time.perf_counter() - t0
        out["burst"] = {"n": a.burst, "clients": a.clients, "seconds": took,
                        "posted_seconds": posted, "error": len(bad),
                        "unfinished": len(pending)}
        note = cpu_note("burst", cpu0, a.burst)
        print(f"burst {a.burst} servers from {a.clients} clients all ACTIVE in {took:.2f} s "
              f"(POSTs done after {posted:.2f} s; ERROR {len(bad)}, unfinished "
              f"{len(pending)}{note})   [target 500 ≤ 10 s, zero ERROR]", flush=True)
    extra = []
    if a.detail_target:
        have = len(c.detail())
        extra = boot_many(clients, a, "fill", max(0, a.detail_target - have))
        wait_all(c, extra, "ACTIVE", a.timeout)
        times, n, cpu0 = [], 0, cpu_of()
        for _ in range(a.detail_runs):
            t0 = time.perf_counter()
            n = len(c.detail())
            times.append((time.perf_counter() - t0) * 1000)
        out["detail_ms"] = {"servers": n, "p50": statistics.median(times),
                            "p95": percentile(times, 0.95), "runs": len(times)}
        note = cpu_note("detail_ms", cpu0, len(times))
        print(f"GET /servers/detail with {n} servers: p50 {out['detail_ms']['p50']:.1f} ms, "
              f"p95 {out['detail_ms']['p95']:.1f} ms{note}   "
              f"[target 1,000 servers p50 ≤ 200 ms]", flush=True)
        if rss_of is not None:
            out["rss_mb"] = rss_of()
            print(f"cloud RSS holding {n} servers: {out['rss_mb']['rss']:.0f} MB (peak "
                  f"{out['rss_mb']['peak']:.0f} MB)   [target ≤ 300 MB]", flush=True)
    if burst and a.delete:
        t0, cpu0 = time.perf_counter(), cpu_of()
        with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
            codes = list(pool.map(lambda i: clients[i % a.clients].s.delete(
                c.url + f"/servers/{burst[i]}").status_code, range(len(burst))))
        pending, _ = wait_all(c, burst, "GONE", a.timeout)
        took = time.perf_counter() - t0
        out["delete"] = {"n": len(burst), "seconds": took, "left": len(pending),
                         "non_204": sum(1 for code in codes if code != 204)}
        note = cpu_note("delete", cpu0, len(burst))
        print(f"delete {len(burst)} until gone: {took:.2f} s (left {len(pending)}{note})   "
              f"[target 500 ≤ 10 s]", flush=True)
    if a.cleanup:
        with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
            list(pool.map(lambda sid: c.s.delete(c.url + f"/servers/{sid}"), ids + extra))
        wait_all(c, ids + extra, "GONE", a.timeout)
    out["load_after"] = os.getloadavg()
    print(f"load average before {out['load_before'][0]:.2f}, after "
          f"{out['load_after'][0]:.2f} ({os.cpu_count()} CPUs)", flush=True)
    return out


# --- a local cloud ------------------------------------------------------------------------

_SERVE = """
import logging, os, signal, sys, tempfile, time
logging.basicConfig(level=logging.WARNING)
from pocketstack.cloud import Cloud
cloud = Cloud(sys.argv[1], admin_password="bench",
              overrides={"identity.password_hash_rounds": 4}).start(port=0)
print(cloud.url, flush=True)
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
while not stop and sys.stdin.readline():
    pass
cloud.stop()
"""


def _cpu(pid: int):
    """CPU seconds (user + system) the process has used so far."""
    def read() -> float:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return read


def _rss(pid: int):
    def read() -> dict:
        values = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    values[key] = int(rest.split()[0]) / 1024
        return {"rss": values.get("VmRSS", 0.0), "peak": values.get("VmHWM", 0.0)}
    return read


def start_local():
    """An all-in-one cloud in a child process on a fresh data dir; returns (proc, url)."""
    data_dir = tempfile.mkdtemp(prefix="bench-boot-")
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, data_dir], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    if not url:
        raise SystemExit("the cloud did not start")
    return proc, url


def start_inprocess():
    import logging

    logging.basicConfig(level=logging.WARNING)
    from pocketstack.cloud import Cloud

    cloud = Cloud(tempfile.mkdtemp(prefix="bench-boot-"), admin_password="bench",
                  overrides={"identity.password_hash_rounds": 4}).start(port=0)
    return cloud, cloud.url


def prepare(url):
    """Token, a small active image and unlimited instance quota on a pocketstack cloud."""
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    s = session.Session(auth=v3.Password(auth_url=url + "/identity", username="admin",
                                         password="bench", project_name="admin",
                                         user_domain_id="default", project_domain_id="default"))
    token, project = s.get_token(), s.get_project_id()
    img = s.post(url + "/image/v2/images", json={
        "name": "cirros-bench", "disk_format": "qcow2", "container_format": "bare"}).json()
    s.put(url + f"/image/v2/images/{img['id']}/file", data=b"\0" * 4096,
          headers={"Content-Type": "application/octet-stream"})
    s.put(url + f"/compute/v2.1/os-quota-sets/{project}",
          json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}})
    return url + "/compute/v2.1", token, img["id"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--compute-url")
    p.add_argument("--token")
    p.add_argument("--image")
    p.add_argument("--flavor", default="42")
    p.add_argument("--network", help="boot on this network (default: networks=none)")
    p.add_argument("--latency-boots", type=int, default=50)
    p.add_argument("--burst", type=int, default=500)
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--detail-target", type=int, default=1000)
    p.add_argument("--detail-runs", type=int, default=11)
    p.add_argument("--no-delete", dest="delete", action="store_false")
    p.add_argument("--no-cleanup", dest="cleanup", action="store_false",
                   help="leave the latency and fill servers")
    p.add_argument("--timeout", type=float, default=300, help="seconds per phase, at most")
    p.add_argument("--json", help="append the figures as one JSON line to this file")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true",
                       help="start a fresh all-in-one cloud in a child process")
    where.add_argument("--inprocess", action="store_true",
                       help="start the cloud in this process (profilers)")
    a = p.parse_args()
    proc = cloud = rss_of = cpu_of = None
    if a.local:
        proc, url = start_local()
        rss_of, cpu_of = _rss(proc.pid), _cpu(proc.pid)
        a.compute_url, a.token, a.image = prepare(url)
    elif a.inprocess:
        cloud, url = start_inprocess()
        a.compute_url, a.token, a.image = prepare(url)
    elif not (a.compute_url and a.token and a.image):
        p.error("give --compute-url, --token and --image, or --local/--inprocess")
    try:
        out = run(Client(a.compute_url, a.token), a, rss_of, cpu_of)
        out["mode"] = "local" if a.local else "inprocess" if a.inprocess else a.compute_url
        if a.json:
            with open(a.json, "a") as f:
                f.write(json.dumps(out) + "\n")
    finally:
        if proc is not None:
            proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if cloud is not None:
            cloud.stop()


if __name__ == "__main__":
    main()
