"""Object storage throughput: one large object PUT/GET next to `md5sum`/`cat` of the same
file, and 4 KiB objects from 10 concurrent clients.

    .venv/bin/python bench/objectstore.py [--size-mib 256] [--seconds 10] [--clients 10]

Starts `pocketstack up` as its own process on a free port and a fresh data dir, then, in
the same run and on the same disk:

* `md5sum FILE` and `cat FILE > /dev/null` (the yardsticks: a PUT hashes the bytes and
  writes them, a GET reads them);
* PUT of the file with `curl -T` (MD5 checked, fsynced, renamed, row committed), and GET
  with `curl -o /dev/null`, each twice, the best of two;
* 4 KiB objects: ``--clients`` client processes, each with one keep-alive connection,
  PUT for ``--seconds``, then GET those objects for ``--seconds``: requests per second.

curl is the large-object client so the figures measure the server. Targets: PUT ≥ 70 %
of md5sum's throughput, GET ≥ 70 % of cat's. The load average is printed before and
after: on a shared machine, read the figures with it. Everything is removed at the end.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import httpx

VENV_BIN = os.path.dirname(sys.executable)
PASSWORD = "bench-secret"
MiB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (psutil)."""
    import psutil

    proc = psutil.Process(pid)
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        times = p.cpu_times()
        total += times.user + times.system
    return total


class RssPeak:
    """The peak resident memory growth of a process (and its children) while in use:
    an object's bytes must stream through, never sit in memory."""

    def __init__(self, pid: int):
        import psutil
        import threading

        self.procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        self.base = self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _rss(self) -> int:
        return sum(p.memory_info().rss for p in self.procs)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self._rss())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    @property
    def growth_mib(self) -> float:
        return (self.peak - self.base) / MiB


def timed_with_cpu(command: list[str], pid: int | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a command, the CPU of ``pid`` (the server) if
    given, else of the command itself (from its rusage)."""
    before_cpu = cpu_seconds(pid) if pid else None
    start = time.perf_counter()
    if pid:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        return wall, cpu_seconds(pid) - before_cpu
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def start_cloud(workdir: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    data_dir = os.path.join(workdir, "data")
    env = dict(os.environ, POCKETSTACK_ADMIN_PASSWORD=PASSWORD)
    log = open(os.path.join(workdir, "up.log"), "wb")
    proc = subprocess.Popen([os.path.join(VENV_BIN, "pocketstack"), "up", "--data-dir",
                             data_dir, "--port", str(port)], stdout=log,
                            stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with open(log.name, errors="replace") as f:
                if "pocketstack is up at" in f.read():
                    return proc, url
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("pocketstack up did not start:\n" + open(log.name).read())


def token_and_storage_url(url: str) -> tuple[str, str]:
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "password": PASSWORD, "domain": {"id": "default"}}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
    r = httpx.post(url + "/identity/v3/auth/tokens", json=body, timeout=30)
    r.raise_for_status()
    for service in r.json()["token"]["catalog"]:
        if service["type"] == "object-store":
            endpoint = next(e["url"] for e in service["endpoints"]
                            if e["interface"] == "public")
            return r.headers["X-Subject-Token"], endpoint
    raise SystemExit("no object-store in the catalog")


def small_client(args) -> int:
    """One client: PUT (or GET) 4 KiB objects on one connection until ``until``."""
    storage, token, container, index, mode, until = args
    data = os.urandom(4096)
    done = 0  # requests answered as they should be
    at = 0  # the next object's number
    with httpx.Client(headers={"X-Auth-Token": token}, timeout=30) as client:
        while time.time() < until:
            name = f"{container}/c{index}-{at}"
            if mode == "PUT":
                r = client.put(f"{storage}/{name}", content=data)
                assert r.status_code == 201, r.text
            else:
                r = client.get(f"{storage}/{name}")
                if r.status_code == 404:  # past this client's last object: start over
                    at = 0
                    continue
                assert r.status_code == 200 and len(r.content) == 4096, r.status_code
            done += 1
            at += 1
    return done


def small_objects(storage: str, token: str, clients: int, seconds: float) -> dict:
    httpx.put(f"{storage}/small", headers={"X-Auth-Token": token}, timeout=30)
    rates = {}
    with multiprocessing.Pool(clients) as pool:
        for mode in ("PUT", "GET"):
            until = time.time() + seconds
            counts = pool.map(small_client, [(storage, token, "small", i, mode, until)
                                             for i in range(clients)])
            rates[mode] = sum(counts) / seconds
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=10)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="pocketstack-objbench-", dir=os.environ.get("TMPDIR"))
    proc = None
    try:
        print(f"load average at start: {loadavg()}  ({os.cpu_count()} CPUs)")
        source = os.path.join(workdir, "large.bin")
        with open(source, "wb") as f:
            for _ in range(args.size_mib):
                f.write(os.urandom(MiB))
        size = args.size_mib * MiB
        proc, url = start_cloud(workdir)
        token, storage = token_and_storage_url(url)
        httpx.put(f"{storage}/bench", headers={"X-Auth-Token": token}, timeout=30)
        md5, md5_cpu = min(timed_with_cpu(["md5sum", source]) for _ in range(2))
        cat, cat_cpu = min(timed_with_cpu(["cat", source]) for _ in range(2))
        auth = ["-H", f"X-Auth-Token: {token}", "-sS", "--fail"]
        with RssPeak(proc.pid) as rss:
            put, put_cpu = min(timed_with_cpu(["curl", *auth, "-T", source, "-o",
                                               "/dev/null", f"{storage}/bench/large"],
                                              proc.pid) for _ in range(2))
            get, get_cpu = min(timed_with_cpu(["curl", *auth, "-o", "/dev/null",
                                               f"{storage}/bench/large"], proc.pid)
                               for _ in range(2))

        def rate(seconds: float) -> float:
            return size / MiB / seconds

        print(f"{args.size_mib} MiB object (wall-clock throughput; CPU seconds of the tool "
              "or of the server, which a loaded machine does not distort):")
        print(f"  md5sum {rate(md5):7.0f} MiB/s ({md5_cpu:.2f} CPU s)   PUT {rate(put):7.0f} "
              f"MiB/s ({put_cpu:.2f} CPU s)  = {md5 / put:4.0%} of md5sum (target >= 70 %)")
        print(f"  cat    {rate(cat):7.0f} MiB/s ({cat_cpu:.2f} CPU s)   GET {rate(get):7.0f} "
              f"MiB/s ({get_cpu:.2f} CPU s)  = {cat / get:4.0%} of cat (target >= 70 %)")
        print(f"  server memory growth during the PUTs and GETs: {rss.growth_mib:.0f} MiB")
        rates = small_objects(storage, token, args.clients, args.seconds)
        print(f"4 KiB objects, {args.clients} concurrent clients, {args.seconds:g} s each: "
              f"PUT {rates['PUT']:.0f}/s, GET {rates['GET']:.0f}/s")
        print(f"load average at end: {loadavg()}")
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
