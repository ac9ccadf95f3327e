"""A burst on a `pocketstack up` child, with the CPU its processes spend (issue 13).

Starts `pocketstack up [extra args]`, lifts the admin project's quotas, runs
`bench/compare.py --cloud @given --phases burst` against it and prints the CPU seconds of
the cloud's processes (main + children alive at the end: utime+stime from /proc) over
burst + delete, in total and per server. Compare code paths by alternating PYTHONPATH:

    .venv/bin/python bench/burst_cpu.py 500 --workers 2
    PYTHONPATH=/path/to/other/tree/src .venv/bin/python bench/burst_cpu.py 500 --workers 2

With YAPPI_OUT=file.pstat the main process runs under yappi (CPU clock, every thread;
bench/burst_cpu_yappi.py) and writes pstats there when it stops.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

import requests

from boot_cpu import cpu_seconds, wait_answering  # same dir: bench/

HERE = os.path.dirname(os.path.abspath(__file__))
PASSWORD = "bench-admin"


def cloud_pids(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [pid] + [int(x) for x in f.read().split()]


def cloud_cpu(pid: int) -> float:
    total = 0.0
    for p in cloud_pids(pid):
        try:
            total += cpu_seconds(p)
        except OSError:  # a child that just exited
            pass
    return total


def start(data_dir: str, extra: list[str]):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    if os.environ.get("YAPPI_OUT"):
        cmd = [sys.executable, os.path.join(HERE, "burst_cpu_yappi.py")]
    else:
        cmd = [os.path.join(os.path.dirname(sys.executable), "pocketstack")]
    cmd += ["up", "--data-dir", os.path.join(data_dir, "d"), "--port", str(port),
            "--admin-password", PASSWORD, *extra]
    with open(os.path.join(data_dir, "up.log"), "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    return proc, wait_answering(proc, f"http://127.0.0.1:{port}")


def lift_quotas(url: str) -> None:
    r = requests.post(url + "/identity/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "password": PASSWORD, "domain": {"id": "default"}}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
    r.raise_for_status()
    headers = {"X-Auth-Token": r.headers["X-Subject-Token"]}
    project = r.json()["token"]["project"]["id"]
    requests.put(url + f"/compute/v2.1/os-quota-sets/{project}", headers=headers, json={
        "quota_set": {"instances": -1, "cores": -1, "ram": -1}}).raise_for_status()
    requests.put(url + f"/network/v2.0/quotas/{project}", headers=headers,
                 json={"quota": {"port": -1}}).raise_for_status()


def main() -> None:
    burst = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    extra = sys.argv[2:]
    data_dir = tempfile.mkdtemp(prefix="burst-cpu-")
    proc, url = start(data_dir, extra)
    try:
        lift_quotas(url)
        load0 = open("/proc/loadavg").read().split()[:3]
        cpu0 = cloud_cpu(proc.pid)
        subprocess.run([sys.executable, os.path.join(HERE, "compare.py"), "--cloud", "@given",
                        "--auth-url", url + "/identity", "--username", "admin",
                        "--password", PASSWORD, "--project-name", "admin",
                        "--phases", "burst", "--burst", str(burst), "--clients", "10",
                        "--timeout", "200"], check=False, timeout=400)
        cpu = cloud_cpu(proc.pid) - cpu0
        load1 = open("/proc/loadavg").read().split()[:3]
        print(f"cloud CPU s over burst + delete {cpu:.2f} = {cpu * 1000 / burst:.1f} ms/server; "
              f"load {' '.join(load0)} -> {' '.join(load1)}")
        for pid in cloud_pids(proc.pid):
            print(f"  pid {pid}: {cpu_seconds(pid):.2f} s CPU since start")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
