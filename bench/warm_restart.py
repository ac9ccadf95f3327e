"""Warm restart to every service answering, and what the imports cost (issue 13).

    python bench/warm_restart.py [--restarts 5] [--top 15] [--compare OTHER_EXE]

`pocketstack up` starts once on a fresh data dir (migrations, keys, bootstrap) and stops;
then ``--restarts`` times on that data dir, each timed from ``Popen`` to every service of
the catalog answering an authenticated GET of its endpoint (status < 500; a service still
warming up holds the request rather than fail it). Reference in the same run: the start of
``python -c pass`` and of ``python -c 'import pocketstack.cloud'``; with ``--compare``,
another ``pocketstack`` executable (e.g. the code before a change) restarted alternately
with this one on the same data dir. Then ``python -X
importtime -c 'import pocketstack.cloud'``: the top modules by cumulative and by own time.
Every wait is bounded (60 s).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import requests

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def token_and_endpoints(url):
    r = requests.post(url + "/identity/v3/auth/tokens", timeout=30, json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "password": "bench-admin", "domain": {"id": "default"}}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
    r.raise_for_status()
    endpoints = {s["type"]: e["url"] for s in r.json()["token"]["catalog"]
                 for e in s["endpoints"] if e["interface"] == "public"}
    return r.headers["X-Subject-Token"], endpoints


def start(data_dir, port, log, exe=EXE):
    return subprocess.Popen([exe, "up", "--data-dir", data_dir, "--port", str(port),
                             "--admin-password", "bench-admin"], stdout=log,
                            stderr=subprocess.STDOUT)


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_answering(urls, token, t0, deadline):
    """Seconds from t0 until each url answered (< 500), each polled every 10 ms on its own
    thread: a request held by a service still warming up must not delay the others'."""
    def one(url):
        s = requests.Session()
        s.trust_env = False
        while time.monotonic() < deadline:
            try:
                if s.get(url, headers={"X-Auth-Token": token}, timeout=30).status_code < 500:
                    return time.perf_counter() - t0
            except requests.RequestException:
                pass
            time.sleep(0.01)
        return None

    with concurrent.futures.ThreadPoolExecutor(len(urls)) as pool:
        took = dict(zip(urls, pool.map(one, urls.values())))
    return {name: t for name, t in took.items() if t is not None}


def cpu_seconds(pid):
    """CPU time (user + system) the process has used so far: a figure that load from
    other processes on the machine inflates far less than wall time."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def python_start(code, runs=5):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def importtime(top):
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pocketstack.cloud"],
                          check=True, capture_output=True, text=True, timeout=120)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line[len("import time:"):].split("|")
        # Nesting is two spaces per level after the one separating space.
        depth = (len(name) - 1 - len(name.lstrip())) // 2
        rows.append((int(own), int(cumulative), name.strip(), depth))
    total = sum(r[1] for r in rows if r[3] == 0)
    print(f"\nimport pocketstack.cloud: {len(rows)} modules, {total / 1000:.0f} ms in all")
    print(f"top {top} imports by cumulative ms (depth in brackets):")
    for _own, cum, name, depth in sorted(rows, key=lambda r: -r[1])[:top]:
        print(f"  {cum / 1000:7.1f}  {name} [{depth}]")
    print(f"top {top} modules by own ms:")
    for own, _cum, name, _depth in sorted(rows, key=lambda r: -r[0])[:top]:
        print(f"  {own / 1000:7.1f}  {name}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--restarts", type=int, default=5)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--compare", metavar="EXE",
                   help="another pocketstack executable, restarted alternately with this one")
    a = p.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set: modules without a .pyc are compiled at "
              "every start")
    print(f"reference: python -c pass {python_start('pass') * 1000:.0f} ms; "
          f"python -c 'import pocketstack.cloud' "
          f"{python_start('import pocketstack.cloud') * 1000:.0f} ms (medians of 5)")
    work = tempfile.mkdtemp(prefix="bench-warm-restart-")
    data_dir, port = os.path.join(work, "data"), free_port()
    url = f"http://127.0.0.1:{port}"
    try:
        with open(os.path.join(work, "up.log"), "wb") as log:
            t0 = time.perf_counter()
            proc = start(data_dir, port, log)
            try:
                deadline = time.monotonic() + 60
                token = endpoints = None
                while token is None and time.monotonic() < deadline:
                    try:
                        token, endpoints = token_and_endpoints(url)
                    except requests.RequestException:
                        time.sleep(0.05)
                if token is None:
                    raise SystemExit("pocketstack up did not start; see " + log.name)
                first = wait_answering(endpoints, token, t0, time.monotonic() + 60)
            finally:
                stop(proc)
            print(f"first start: every service answering after {max(first.values()):.3f} s")
            exes = {"this": EXE, **({"compared": a.compare} if a.compare else {})}
            runs = {label: [] for label in exes}
            cpu = {label: [] for label in exes}  # the cloud's CPU seconds when all answered
            for _ in range(a.restarts):
                for label, exe in exes.items():
                    t0 = time.perf_counter()
                    proc = start(data_dir, port, log, exe)
                    try:
                        answered = wait_answering(endpoints, token, t0, time.monotonic() + 60)
                        cpu[label].append(cpu_seconds(proc.pid))
                    finally:
                        stop(proc)
                    if len(answered) < len(endpoints):
                        raise SystemExit(f"not every service answered: {sorted(answered)}")
                    runs[label].append(answered)
                    print(f"restart ({label}): " + ", ".join(
                        f"{k} {v:.3f}" for k, v in sorted(answered.items(), key=lambda x: x[1]))
                        + f"; cpu {cpu[label][-1]:.2f} s")
            for label, exe in exes.items():
                alls = [max(r.values()) for r in runs[label]]
                firsts = [min(r.values()) for r in runs[label]]
                print(f"{label} ({exe}): warm restart to every service answering: median "
                      f"{statistics.median(alls):.3f} s (min {min(alls):.3f}, max "
                      f"{max(alls):.3f}); first service median {statistics.median(firsts):.3f} s"
                      f"; cloud CPU by then median {statistics.median(cpu[label]):.2f} s"
                      "   [target <= 0.6 s]")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    importtime(a.top)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
