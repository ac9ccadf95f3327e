"""Many simulated compute hosts in one cloud (issue 13): boot latency, hypervisor list and
idle CPU with N hosts, against the same cloud with one host in the same run.

    .venv/bin/python bench/scale_hosts.py [--hosts 1000] [--boots 30] [--idle-seconds 60]

For each host count (1, then N) it starts `pocketstack up` as its own process with
``[fake] hosts`` set, waits until every host is listed, then measures:

* start: seconds from launch to every hypervisor listed;
* idle CPU: the process's CPU time (utime + stime) over ``--idle-seconds`` with nothing
  to do but heartbeats and periodic tasks, as % of one core [N hosts ≤ 5 %];
* boot: POST /servers (networks=none) → ACTIVE polled every 5 ms, sequential, p50/p95
  [p50 ≤ 60 ms with 1,000 hosts];
* GET /os-hypervisors and /os-hypervisors/detail (2.79, the newest here; every page) p50;
* the same list through openstacksdk in the benchmark's process (the client's share);
* `openstack hypervisor list` wall time (median of ``--cli-runs``), with `openstack
  --version` and `openstack token issue` as the CLI's own floor [≤ 300 ms];
* threads and RSS of the cloud process.

Every loop is bounded in count and time; every figure is printed with the load average.
``--json FILE`` appends the figures as one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
VENV_BIN = os.path.dirname(sys.executable)
PASSWORD = "bench-secret"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def proc_status(pid: int) -> dict:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "Threads"):
                out[key] = int(value.split()[0])
    return out


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


class Cloud:
    def __init__(self, hosts: int, timeout: float):
        self.dir = tempfile.mkdtemp(prefix=f"scale-{hosts}-")
        data_dir = os.path.join(self.dir, "d")
        os.makedirs(data_dir, mode=0o700)
        with open(os.path.join(data_dir, "pocketstack.conf"), "w") as f:
            f.write(f"[fake]\nhosts = {hosts}\n")
        self.data_dir, self.hosts = data_dir, hosts
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [os.path.join(VENV_BIN, "pocketstack"), "up", "--data-dir", data_dir,
             "--port", str(self.port), "--admin-password", PASSWORD],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "log"), "w"))
        self.s = requests.Session()
        try:
            self._wait_ready(started + timeout)
        except BaseException:
            self.stop()  # never leave a cloud of 1,000 hosts running behind a failure
            raise
        self.start_seconds = time.monotonic() - started

    def _wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            try:
                self.login()
                break
            except (requests.RequestException, KeyError):
                time.sleep(0.1)
        else:
            raise RuntimeError("pocketstack did not start; see " + self.dir)
        while time.monotonic() < deadline:
            try:
                if len(self.hypervisors("2.53")) >= self.hosts:
                    return
            except requests.HTTPError:  # 503 while the services still warm up
                pass
            time.sleep(0.1)
        raise RuntimeError(f"not every one of {self.hosts} hosts registered")

    def login(self):
        r = self.s.post(self.url + "/identity/v3/auth/tokens", json={"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": "admin", "domain": {"id": "default"}, "password": PASSWORD}}},
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
        r.raise_for_status()
        self.s.headers["X-Auth-Token"] = r.headers["X-Subject-Token"]
        self.project = r.json()["token"]["project"]["id"]

    def compute(self, method, path, version="2.79", **kw):
        return self.s.request(method, self.url + "/compute/v2.1" + path,
                              headers={"OpenStack-API-Version": f"compute {version}"}, **kw)

    def hypervisors(self, version="2.79", detail=False) -> list:
        """Every page, as a client that follows hypervisors_links does."""
        out, url = [], self.url + "/compute/v2.1/os-hypervisors" + ("/detail" if detail else "")
        for _ in range(100):
            r = self.s.get(url, headers={"OpenStack-API-Version": f"compute {version}"})
            r.raise_for_status()
            body = r.json()
            out += body["hypervisors"]
            url = next((link["href"] for link in body.get("hypervisors_links", [])
                        if link["rel"] == "next"), None)
            if url is None:
                return out
        raise RuntimeError("more than 100 pages of hypervisors")

    def image(self) -> str:
        img = self.s.post(self.url + "/image/v2/images", json={
            "name": "bench", "disk_format": "raw", "container_format": "bare"}).json()
        self.s.put(self.url + f"/image/v2/images/{img['id']}/file", data=b"\0" * 4096,
                   headers={"Content-Type": "application/octet-stream"}).raise_for_status()
        self.compute("PUT", f"/os-quota-sets/{self.project}", json={
            "quota_set": {"instances": -1, "cores": -1, "ram": -1}}).raise_for_status()
        return img["id"]

    def boot_once(self, image: str, n: int, timeout: float = 30) -> tuple[float, str]:
        start = time.perf_counter()
        r = self.compute("POST", "/servers", json={"server": {
            "name": f"scale-{n}", "imageRef": image, "flavorRef": "42", "networks": "none"}})
        r.raise_for_status()
        sid = r.json()["server"]["id"]
        while time.perf_counter() - start < timeout:
            status = self.compute("GET", f"/servers/{sid}").json()["server"]["status"]
            if status in ("ACTIVE", "ERROR"):
                return time.perf_counter() - start, sid if status == "ACTIVE" else ""
            time.sleep(0.005)
        return time.perf_counter() - start, ""

    def cli(self, *args) -> float:
        env = dict(os.environ, OS_CLIENT_CONFIG_FILE=os.path.join(self.data_dir,
                                                                   "clouds.yaml"))
        start = time.perf_counter()
        subprocess.run([os.path.join(VENV_BIN, "openstack"), *args], env=env, check=True,
                       stdout=subprocess.DEVNULL, timeout=60)
        return time.perf_counter() - start

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def measure(hosts: int, a) -> dict:
    cloud = Cloud(hosts, a.timeout)
    out = {"hosts": hosts, "start_s": round(cloud.start_seconds, 2)}
    try:
        time.sleep(a.settle)  # start-up recovery and the first periodic runs
        out["load_idle"] = os.getloadavg()[0]
        before, t0 = cpu_seconds(cloud.proc.pid), time.monotonic()
        time.sleep(a.idle_seconds)
        used = cpu_seconds(cloud.proc.pid) - before
        out["idle_cpu_pct"] = round(100 * used / (time.monotonic() - t0), 2)
        out.update(proc_status(cloud.proc.pid))

        image = cloud.image()
        cloud.boot_once(image, -1)  # warm
        boots, errors, servers = [], 0, []
        deadline = time.monotonic() + a.timeout
        for n in range(a.boots):
            if time.monotonic() > deadline:
                break
            seconds, sid = cloud.boot_once(image, n)
            boots.append(seconds * 1000)
            errors += not sid
            servers.append(sid)
        out["load_boot"] = os.getloadavg()[0]
        out["boot_p50_ms"] = round(statistics.median(boots), 1)
        out["boot_p95_ms"] = round(pct(boots, 95), 1)
        out["boot_errors"] = errors

        for name, fn in (("list", lambda: cloud.hypervisors()),
                         ("detail", lambda: cloud.hypervisors(detail=True)),
                         ("detail_2.27", lambda: cloud.hypervisors("2.27", detail=True))):
            ms = timed(fn, a.http_runs)
            out[f"http_{name}_p50_ms"] = round(statistics.median(ms), 1)
        out["listed"] = len(cloud.hypervisors())
        # The same list through openstacksdk in this process (what the CLI calls): the
        # client's own cost of 1,000 Hypervisor resources shows against the HTTP figure.
        import openstack

        conn = openstack.connect(auth_url=cloud.url + "/identity", username="admin",
                                 password=PASSWORD, project_name="admin",
                                 user_domain_id="default", project_domain_id="default",
                                 region_name="RegionOne")
        list(conn.compute.hypervisors(details=True))  # warm: discovery, microversion
        ms = timed(lambda: list(conn.compute.hypervisors(details=True)), a.cli_runs)
        out["sdk_detail_p50_ms"] = round(statistics.median(ms), 1)

        out["load_cli"] = os.getloadavg()[0]
        for name, args in (("version", ["--version"]),
                           ("token_issue", ["--os-cloud", "pocketstack", "token", "issue"]),
                           ("hypervisor_list", ["--os-cloud", "pocketstack", "hypervisor",
                                                "list"])):
            runs = [cloud.cli(*args) * 1000 for _ in range(a.cli_runs)]
            out[f"cli_{name}_ms"] = round(statistics.median(runs))
        for sid in servers:
            if sid:
                cloud.compute("DELETE", f"/servers/{sid}")
    finally:
        cloud.stop()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hosts", type=int, default=1000)
    p.add_argument("--reference-hosts", type=int, default=1,
                   help="host count measured first, as the reference (0: skip)")
    p.add_argument("--boots", type=int, default=30)
    p.add_argument("--idle-seconds", type=float, default=60)
    p.add_argument("--settle", type=float, default=5, help="seconds after start before "
                                                            "the idle measurement")
    p.add_argument("--http-runs", type=int, default=11)
    p.add_argument("--cli-runs", type=int, default=3)
    p.add_argument("--timeout", type=float, default=180, help="seconds per phase, at most")
    p.add_argument("--json", help="append the figures as one JSON line to this file")
    a = p.parse_args()
    counts = ([a.reference_hosts] if a.reference_hosts else []) + [a.hosts]
    results = {"load_before": os.getloadavg(), "runs": []}
    for hosts in counts:
        r = measure(hosts, a)
        results["runs"].append(r)
        print(f"{hosts:5d} hosts: start {r['start_s']} s | idle CPU {r['idle_cpu_pct']} % "
              f"of a core (load {r['load_idle']:.2f}) | boot p50 {r['boot_p50_ms']} ms "
              f"p95 {r['boot_p95_ms']} ms, {r['boot_errors']} errors (load "
              f"{r['load_boot']:.2f}) | GET os-hypervisors {r['http_list_p50_ms']} ms, "
              f"detail {r['http_detail_p50_ms']} ms, detail@2.27 "
              f"{r['http_detail_2.27_p50_ms']} ms ({r['listed']} listed), openstacksdk "
              f"hypervisors(details=True) {r['sdk_detail_p50_ms']} ms | CLI hypervisor "
              f"list {r['cli_hypervisor_list_ms']} ms vs --version {r['cli_version_ms']} ms, "
              f"token issue {r['cli_token_issue_ms']} ms (load {r['load_cli']:.2f}) | "
              f"{r['Threads']} threads, RSS {r['VmRSS'] // 1024} MiB", flush=True)
    results["load_after"] = os.getloadavg()
    print(f"load average before {results['load_before'][0]:.2f}, after "
          f"{results['load_after'][0]:.2f} ({os.cpu_count()} CPUs)")
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(results) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
