"""Issue 2's performance figures: start-up, token validation (HTTP and in-process), token
issue at the configured bcrypt cost.

    .venv/bin/python bench/identity_bench.py [--seconds 10] [--restarts 5] [--record]

* start-up: `pocketstack up` in a subprocess on a fresh data dir (first start: bootstrap),
  then ``--restarts`` times on the same data dir; each time from process start to the
  first 200 from GET /identity/v3, and to "ready" (the summary line: every service and
  worker started). Medians.
* validation over HTTP: GET /v3/auth/tokens (X-Auth-Token = X-Subject-Token = an admin
  token) with 2 concurrent keep-alive clients for ``--seconds``, by ``wrk`` (apt-get
  install wrk) or, without it, 2 httpx client processes. Server and client share the
  machine: the client's CPU is part of the figure.
* validation in-process: ``identity.tokens.validate_to_context`` on the same keys.
* token issue: POST /v3/auth/tokens with a password, sequentially, at the configured bcrypt
  cost ([identity] password_hash_rounds, default 12).

``--record`` appends the figures to bench/results/identity.md. Every loop is bounded in
count and time; servers listen on 127.0.0.1 only.
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")
PASSWORD = "bench-admin-password"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far: on a shared machine the wall
    clock measures the neighbours too, this measures only us."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def get_status(port: int, path: str, headers: dict | None = None) -> int:
    """One GET on a fresh connection (cheap: no client library in the polling loop)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


class Up:
    """`pocketstack up` timed from process start to first 200 and to its summary line."""

    def __init__(self, data_dir: str, port: int):
        self.data_dir, self.port = data_dir, port
        self.ready_at: float | None = None
        self.cpu_at_200 = self.cpu_at_ready = 0.0

    def start(self, timeout: float = 60) -> tuple[float, float]:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [EXE, "up", "--data-dir", self.data_dir, "--port", str(self.port),
             "--admin-password", PASSWORD],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read_output, daemon=True).start()
        first_200 = None
        deadline = self.started + timeout
        while time.perf_counter() < deadline and first_200 is None:
            if self.proc.poll() is not None:
                raise SystemExit(f"pocketstack up exited {self.proc.returncode}")
            try:
                if get_status(self.port, "/identity/v3") == 200:
                    first_200 = time.perf_counter() - self.started
                    self.cpu_at_200 = proc_cpu(self.proc.pid)
            except OSError:
                time.sleep(0.002)
        while self.ready_at is None and time.perf_counter() < deadline:
            time.sleep(0.005)
        if first_200 is None or self.ready_at is None:
            self.stop()
            raise SystemExit("pocketstack up did not get ready in time")
        self.cpu_at_ready = proc_cpu(self.proc.pid)
        return first_200, self.ready_at - self.started

    def _read_output(self):
        for line in self.proc.stdout:
            if line.startswith("pocketstack is up at") and self.ready_at is None:
                self.ready_at = time.perf_counter()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def bench_startup(data_dir: str, restarts: int) -> dict:
    port = free_port()
    up = Up(data_dir, port)
    first = up.start()
    first_cpu = (up.cpu_at_200, up.cpu_at_ready)
    assert up.stop() == 0
    again, cpu = [], []
    for _ in range(restarts):
        up = Up(data_dir, port)
        again.append(up.start())
        cpu.append((up.cpu_at_200, up.cpu_at_ready))
        assert up.stop() == 0
    return {"first_200": first[0], "first_ready": first[1],
            "first_cpu_200": first_cpu[0], "first_cpu_ready": first_cpu[1],
            "restart_200": statistics.median(t[0] for t in again),
            "restart_ready": statistics.median(t[1] for t in again),
            "restart_cpu_200": statistics.median(c[0] for c in cpu),
            "restart_cpu_ready": statistics.median(c[1] for c in cpu),
            "restart_200_all": [round(t[0], 3) for t in again]}


def issue_token(port: int) -> tuple[str, float]:
    body = json.dumps({"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": PASSWORD}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        start = time.perf_counter()
        conn.request("POST", "/identity/v3/auth/tokens", body=body,
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        elapsed = time.perf_counter() - start
        assert response.status == 201, response.status
        return response.getheader("X-Subject-Token"), elapsed
    finally:
        conn.close()


WRK_SCRIPT = """
wrk.method = "GET"
wrk.headers["X-Auth-Token"] = "{token}"
wrk.headers["X-Subject-Token"] = "{token}"
"""


def bench_http_validation(pid: int, port: int, token: str, seconds: float, path: str) -> dict:
    cpu_before = proc_cpu(pid)
    result = _run_clients(port, token, seconds, path)
    # The server is one event loop: one core's worth of its CPU per request bounds the rate.
    result["server_cpu_us"] = (proc_cpu(pid) - cpu_before) / result["requests"] * 1e6
    return result


def _run_clients(port: int, token: str, seconds: float, path: str) -> dict:
    if shutil.which("wrk"):
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
            f.write(WRK_SCRIPT.format(token=token))
        try:
            out = subprocess.run(
                ["wrk", "-t2", "-c2", f"-d{max(1, int(seconds))}s", "-s", f.name,
                 f"http://127.0.0.1:{port}{path}"],
                capture_output=True, text=True, timeout=seconds + 60).stdout
        finally:
            os.unlink(f.name)
        rate = float(next(line.split()[1] for line in out.splitlines()
                          if line.startswith("Requests/sec")))
        requests = int(next(line.split()[0] for line in out.splitlines()
                            if " requests in " in line))
        errors = [line.strip() for line in out.splitlines() if "Non-2xx" in line]
        if errors:
            raise SystemExit(f"validation failed during the run: {errors}")
        return {"client": "wrk -t2 -c2", "per_second": rate, "requests": requests}
    with multiprocessing.Pool(2) as pool:
        counts = pool.starmap(_httpx_client, [(port, token, seconds, path)] * 2)
    return {"client": "2 httpx processes", "per_second": sum(counts) / seconds,
            "requests": sum(counts)}


def _httpx_client(port: int, token: str, seconds: float, path: str) -> int:
    import httpx

    headers = {"X-Auth-Token": token, "X-Subject-Token": token}
    done, deadline = 0, time.monotonic() + seconds
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        while time.monotonic() < deadline:
            assert client.get(path, headers=headers).status_code == 200
            done += 1
    return done


def bench_inprocess_validation(data_dir: str, token: str, count: int = 20000) -> dict:
    from pocketstack.common import config, db
    from pocketstack.identity import tokens

    config.load(data_dir, os.path.join(data_dir, "pocketstack.conf"))
    config.CONF.set_default("key_repository", os.path.join(data_dir, "fernet-keys"),
                            group="fernet_tokens")
    db.configure()
    tokens.validate_to_context(token)  # warm: keys and revocation events loaded
    deadline = time.monotonic() + 30
    start, cpu_start = time.perf_counter(), time.process_time()
    done = 0
    while done < count and time.monotonic() < deadline:
        tokens.validate_to_context(token)
        done += 1
    per_call = (time.perf_counter() - start) / done
    cpu_per_call = (time.process_time() - cpu_start) / done
    db.dispose()
    return {"microseconds": per_call * 1e6, "cpu_microseconds": cpu_per_call * 1e6,
            "calls": done}


def bench_issue(pid: int, port: int, count: int) -> dict:
    samples, deadline = [], time.monotonic() + 60
    cpu_before = proc_cpu(pid)
    while len(samples) < count and time.monotonic() < deadline:
        samples.append(issue_token(port)[1])
    server_cpu_ms = (proc_cpu(pid) - cpu_before) / len(samples) * 1000
    from pocketstack.common import config

    config.register_opts()  # the server's cost: the default unless the data dir's file says
    return {"median_ms": statistics.median(samples) * 1000, "count": len(samples),
            "server_cpu_ms": server_cpu_ms,
            "per_second": 1 / statistics.median(samples),
            "bcrypt_cost": config.CONF.identity.password_hash_rounds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument("--issues", type=int, default=20)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="pocketstack-bench-")
    data_dir = os.path.join(tmp, "data")
    load_before = os.getloadavg()
    results: dict = {}
    try:
        results["startup"] = bench_startup(data_dir, args.restarts)
        s = results["startup"]
        print(f"first start (bootstrap): first 200 {s['first_200']:.3f} s "
              f"(CPU {s['first_cpu_200']:.2f} s), all ready {s['first_ready']:.3f} s "
              f"(CPU {s['first_cpu_ready']:.2f} s)   (target first start < 2.0 s)")
        print(f"restart, median of {args.restarts}: first 200 {s['restart_200']:.3f} s "
              f"{s['restart_200_all']} (CPU {s['restart_cpu_200']:.2f} s), all ready "
              f"{s['restart_ready']:.3f} s (CPU {s['restart_cpu_ready']:.2f} s)   "
              "(target < 1.0 s)")

        port = free_port()
        up = Up(data_dir, port)
        up.start()
        try:
            token, _ = issue_token(port)
            for name, path in (("with catalog", "/identity/v3/auth/tokens"),
                               ("nocatalog", "/identity/v3/auth/tokens?nocatalog")):
                r = bench_http_validation(up.proc.pid, port, token, args.seconds, path)
                results[f"http_validation_{name}"] = r
                print(f"HTTP validation ({name}, {r['client']}, {args.seconds:.0f} s): "
                      f"{r['per_second']:.0f}/s, server CPU {r['server_cpu_us']:.0f} µs per "
                      "request   (target >= 1500/s)")
            r = bench_issue(up.proc.pid, port, args.issues)
            results["issue"] = r
            print(f"token issue (password, bcrypt cost {r['bcrypt_cost']}): median "
                  f"{r['median_ms']:.1f} ms = {r['per_second']:.1f}/s sequential, server CPU "
                  f"{r['server_cpu_ms']:.0f} ms per token (n={r['count']})")
        finally:
            up.stop()
        r = bench_inprocess_validation(data_dir, token)
        results["inprocess_validation"] = r
        print(f"in-process validate_to_context: {r['microseconds']:.1f} µs per call, "
              f"{r['cpu_microseconds']:.1f} µs CPU (n={r['calls']})   (target < 100 µs)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()
    print(f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} "
          f"on {os.cpu_count()} CPUs")
    if args.record:
        record(results, load_before, load_after, args)


def record(results: dict, load_before, load_after, args) -> None:
    s = results["startup"]
    lines = [
        f"\n## {time.strftime('%Y-%m-%d %H:%M')} — {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{load_before[0]:.2f} before / {load_after[0]:.2f} after\n",
        "| measurement | result | target |", "|---|---|---|",
        f"| first start (bootstrap): process start → first 200 from /identity/v3 | "
        f"{s['first_200']:.3f} s, CPU {s['first_cpu_200']:.2f} s (all services ready "
        f"{s['first_ready']:.3f} s, CPU {s['first_cpu_ready']:.2f} s) | < 2.0 s |",
        f"| restart: process start → first 200, median of {args.restarts} | "
        f"{s['restart_200']:.3f} s {s['restart_200_all']}, CPU {s['restart_cpu_200']:.2f} s "
        f"(all ready {s['restart_ready']:.3f} s, CPU {s['restart_cpu_ready']:.2f} s) "
        "| < 1.0 s |",
    ]
    for name in ("with catalog", "nocatalog"):
        r = results[f"http_validation_{name}"]
        lines.append(f"| GET /v3/auth/tokens ({name}), {r['client']}, {args.seconds:.0f} s | "
                     f"{r['per_second']:.0f}/s; server CPU {r['server_cpu_us']:.0f} µs/request "
                     f"(one core: ≤ {1e6 / r['server_cpu_us']:.0f}/s) | ≥ 1500/s |")
    r = results["inprocess_validation"]
    lines.append(f"| in-process validate_to_context | {r['microseconds']:.1f} µs "
                 f"(CPU {r['cpu_microseconds']:.1f} µs) | < 100 µs |")
    r = results["issue"]
    lines.append(f"| token issue, password, bcrypt cost {r['bcrypt_cost']} | median "
                 f"{r['median_ms']:.1f} ms ({r['per_second']:.1f}/s sequential); server CPU "
                 f"{r['server_cpu_ms']:.0f} ms/token | report |")
    path = os.path.join(HERE, "results", "identity.md")
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write("# Identity and start-up benchmarks (bench/identity_bench.py)\n")
        f.write("\n".join(lines) + "\n")
    print(f"recorded in {path}")


if __name__ == "__main__":
    main()
