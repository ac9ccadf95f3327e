"""Object storage throughput: one large object PUT/GET next to `md5sum`/`cat` of the same
file, and 4 KiB objects from 10 concurrent clients.

    .venv/bin/python bench/objectstore.py [--size-mib 256] [--seconds 10] [--clients 10]

Starts `pocketstack up` as its own process on a free port and a fresh data dir, then, in
the same run and on the same disk:

* `md5sum FILE` and `cat FILE > /dev/null` (the yardsticks: a PUT hashes the bytes and
  writes them, a GET reads them);
* PUT of the file with `curl -T` (MD5 checked, fsynced, renamed, row committed), and GET
  with `curl -o /dev/null`, each twice, the best of two; `cat` and the GETs both warm
  (the file in the page cache: `cat` to /dev/null then costs nothing, GNU cat does not
  copy to /dev/null) and cold (the file and the object's data file evicted from the page
  cache with POSIX_FADV_DONTNEED before each run: the usual case for a large object);
* 4 KiB objects: ``--clients`` client processes, each with one keep-alive connection,
  PUT for ``--seconds`` (a real 4 KiB body with the token each time), then GET those
  objects for ``--seconds`` (the whole body read): requests per second, and the CPU
  milliseconds per request of the server and of the clients. The clients are
  ``RawHTTP`` (pre-built HTTP/1.1 requests on a socket, only the status line and
  Content-Length parsed: ~0.1 ms of CPU a request) rather than httpx (~1.2-1.5 ms a
  request measured here, more than the server's own ~1 ms for a GET): the clients run on
  the same 2 cores as the server, so a heavy client takes most of the CPU and compresses
  the ratio between two servers towards 1. Both servers get the same client
  (``--client httpx`` for the old one);

* GET of the same file with curl from a minimal static HTTP server (``python -m
  http.server``, sendfile) in the same run: "the same bytes over HTTP", a fairer yardstick
  for a GET than ``cat`` (the target stays ``cat``);
* ``--upstream``: the same 4 KiB bench against upstream swift on one node
  (``swift_upstream.py``), with the CPU seconds each server spent per request;
* ``--listing N`` (default 1,000,000): N object rows written straight through the object
  store's database layer into one container (``dirNNNN/objNNNN``, 1,000 per directory),
  then one page of a listing with ``prefix`` + ``delimiter`` timed through the API.

curl is the large-object client so the figures measure the server. Targets: PUT ≥ 70 %
of md5sum's throughput, GET ≥ 70 % of cat's, 4 KiB PUTs/s and GETs/s ≥ 5× upstream swift,
a listing page ≤ 50 ms. The load average is printed before and after: on a shared
machine, read the figures with it. Everything is removed at the end.
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
import urllib.parse

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


def cpu_seconds(pid: int | list[int]) -> float:
    """User + system CPU of a process (or several) and its children (psutil)."""
    import psutil

    total = 0.0
    for one in (pid if isinstance(pid, list) else [pid]):
        proc = psutil.Process(one)
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


def start_cloud(workdir: str, workers: int = 1) -> tuple[subprocess.Popen, str]:
    port = free_port()
    data_dir = os.path.join(workdir, "data")
    env = dict(os.environ, POCKETSTACK_ADMIN_PASSWORD=PASSWORD)
    log = open(os.path.join(workdir, "up.log"), "wb")
    proc = subprocess.Popen([os.path.join(VENV_BIN, "pocketstack"), "up", "--data-dir",
                             data_dir, "--port", str(port), "--workers", str(workers)],
                            stdout=log,
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


class RawHTTP:
    """A keep-alive HTTP/1.1 client on one socket that sends pre-built requests and reads
    just the status line and Content-Length (or chunks) of each answer: ~20-40 µs of CPU a
    request where httpx spends ~0.3-0.5 ms. The 10 clients share the machine's cores with
    the server, so a heavy client takes CPU from the server under test and compresses the
    ratio between two servers; both servers get this same client."""

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.address = (parts.hostname, parts.port or 80)
        self.host = parts.netloc.encode()
        self.sock = None
        self.buffer = b""

    def _connect(self) -> None:
        self.sock = socket.create_connection(self.address, timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def request(self, method: str, path: str, headers: bytes, body: bytes = b""
                ) -> tuple[int, bytes]:
        """(status, body); ``path`` already quoted, ``headers`` ready-made lines."""
        head = (f"{method} {path} HTTP/1.1\r\n".encode() + b"Host: " + self.host + b"\r\n"
                + headers + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        if self.sock is None:
            self._connect()
        self.sock.sendall(head + body)
        status, length, chunked, close = self._read_head()
        if chunked:
            data = self._read_chunked()
        else:
            data = self._read_exactly(0 if method == "HEAD" else length)
        if close:
            self.close()
        return status, data

    def _fill(self) -> None:
        more = self.sock.recv(262144)
        if not more:
            raise ConnectionError("the server closed the connection")
        self.buffer += more

    def _read_head(self) -> tuple[int, int, bool, bool]:
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            self._fill()
        head, self.buffer = self.buffer[:end].lower(), self.buffer[end + 4:]
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length, chunked, close = 0, False, False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value
            elif name == b"connection":
                close = b"close" in value
        return status, length, chunked, close

    def _read_exactly(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self._fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def _read_chunked(self) -> bytes:
        parts = []
        while True:
            while (end := self.buffer.find(b"\r\n")) < 0:
                self._fill()
            size = int(self.buffer[:end].split(b";")[0], 16)
            self.buffer = self.buffer[end + 2:]
            parts.append(self._read_exactly(size + 2)[:-2])
            if size == 0:
                return b"".join(parts)


def small_client(args) -> tuple[int, float]:
    """One client: PUT (or GET) 4 KiB objects on one connection until ``until``; (requests
    answered as they should be, this process's CPU seconds spent meanwhile)."""
    storage, token, container, index, mode, until, kind = args
    data = os.urandom(4096)
    done = 0
    at = 0  # the next object's number
    cpu = time.process_time()
    base = urllib.parse.urlsplit(storage).path.rstrip("/")
    if kind == "httpx":
        client = httpx.Client(headers={"X-Auth-Token": token}, timeout=30)
    else:
        client = RawHTTP(storage)
        headers = f"X-Auth-Token: {token}\r\n".encode()
    try:
        while time.time() < until:
            name = f"{container}/c{index}-{at}"
            if kind == "httpx":
                r = (client.put(f"{storage}/{name}", content=data) if mode == "PUT"
                     else client.get(f"{storage}/{name}"))
                status, body = r.status_code, r.content
            else:
                status, body = client.request(mode, f"{base}/{name}", headers,
                                              data if mode == "PUT" else b"")
            if mode == "PUT":
                assert status == 201, (status, body)
            else:
                if status == 404:  # past this client's last object: start over
                    at = 0
                    continue
                assert status == 200 and len(body) == 4096, status
            done += 1
            at += 1
    finally:
        client.close()
    return done, time.process_time() - cpu


def small_objects(storage: str, token: str, clients: int, seconds: float,
                  server_pid: int | list[int] | None = None, kind: str = "raw") -> dict:
    """{"PUT": per second, "GET": per second}, the clients' CPU milliseconds per request
    ({"PUT client": ms, ...}) and, with ``server_pid``, the server's (and its children's):
    {"PUT cpu": ms, "GET cpu": ms}. ``kind``: the client, "raw" (RawHTTP) or "httpx"."""
    deadline = time.monotonic() + 60
    while True:  # upstream's account and container servers may still be starting
        r = httpx.put(f"{storage}/small", headers={"X-Auth-Token": token}, timeout=30)
        if r.status_code in (201, 202) or time.monotonic() > deadline:
            r.raise_for_status()
            break
        time.sleep(0.5)
    rates = {}
    with multiprocessing.Pool(clients) as pool:
        for mode in ("PUT", "GET"):
            cpu = cpu_seconds(server_pid) if server_pid else 0.0
            until = time.time() + seconds
            results = pool.map(small_client, [(storage, token, "small", i, mode, until, kind)
                                              for i in range(clients)])
            counts = [count for count, _ in results]
            rates[mode] = sum(counts) / seconds
            rates[f"{mode} client"] = sum(c for _, c in results) * 1000 / sum(counts)
            if server_pid:
                rates[f"{mode} cpu"] = (cpu_seconds(server_pid) - cpu) * 1000 / sum(counts)
    return rates


def small_summary(rates: dict) -> str:
    return ", ".join(f"{mode} {rates[mode]:.0f}/s ({rates[f'{mode} cpu']:.2f} server CPU "
                     f"ms, {rates[f'{mode} client']:.2f} client CPU ms each)"
                     for mode in ("PUT", "GET"))


def static_server(directory: str) -> tuple[subprocess.Popen, str]:
    """``python -m http.server`` on ``directory`` (its GETs use sendfile)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", "-b", "127.0.0.1",
                             "-d", directory, str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.head(url + "/", timeout=5)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the static server did not start")


def fill_listing(data_dir: str, account: str, container: str, count: int) -> None:
    """``count`` object rows in ``container``, written through the object store's
    database layer (the API would take hours for a million), and its usage to match."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "src"))
    import sqlalchemy as sa

    from pocketstack.common import db
    from pocketstack.objectstore import api
    from pocketstack.objectstore.models import Object

    db.configure(f"sqlite:///{os.path.join(data_dir, 'pocketstack.db')}")
    info = api.get_container(account, container)
    ts = api.timestamp()
    when = api._datetime(ts)
    batch = 20000
    for start in range(0, count, batch):
        rows = [{"container_id": info.id, "name": f"dir{i // 1000:04d}/obj{i % 1000:04d}",
                 "size": 0, "etag": "d41d8cd98f00b204e9800998ecf8427e",
                 "content_type": "application/octet-stream", "timestamp": ts,
                 "last_modified": when, "meta": {}, "delete_at": None, "file": "none"}
                for i in range(start, min(count, start + batch))]
        with db.transaction() as s:
            s.execute(sa.insert(Object), rows)
            api._count(s, info.id, len(rows), 0)
    db.dispose()


def listing_page(storage: str, token: str, container: str, params: dict,
                 tries: int = 20) -> tuple[float, float, int]:
    """(median ms, best ms, entries) of one listing page (JSON) over a kept-alive
    connection."""
    times = []
    with httpx.Client(headers={"X-Auth-Token": token}, timeout=60) as client:
        for _ in range(tries):
            start = time.perf_counter()
            r = client.get(f"{storage}/{container}", params={**params, "format": "json"})
            times.append((time.perf_counter() - start) * 1000)
            r.raise_for_status()
    times.sort()
    return times[len(times) // 2], times[0], len(r.json())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=256, help="0: no large object")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--workers", type=int, default=1,
                        help="pocketstack up --workers: API processes (upstream swift runs "
                             "`workers = auto`, a process per core for each server)")
    parser.add_argument("--upstream", action="store_true",
                        help="the 4 KiB bench against upstream swift too")
    parser.add_argument("--listing", type=int, default=1_000_000, help="0: no listing")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw",
                        help="the 4 KiB clients: RawHTTP (default) or httpx")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="pocketstack-objbench-", dir=os.environ.get("TMPDIR"))
    proc = None
    try:
        print(f"load average at start: {loadavg()}  ({os.cpu_count()} CPUs)")
        proc, url = start_cloud(workdir, args.workers)
        token, storage = token_and_storage_url(url)
        if args.size_mib:
            large_object(workdir, storage, token, proc.pid, args.size_mib)
        rates = small_objects(storage, token, args.clients, args.seconds, proc.pid,
                              args.client)
        print(f"4 KiB objects, {args.clients} concurrent {args.client} clients, "
              f"{args.seconds:g} s each:\n  pocketstack: {small_summary(rates)}  "
              f"load {loadavg()}")
        if args.upstream:
            import swift_upstream

            os.makedirs(os.path.join(workdir, "swift"))
            with swift_upstream.running_swift(os.path.join(workdir, "swift")) as (
                    up_storage, up_token, up_pid):
                up = small_objects(up_storage, up_token, args.clients, args.seconds,
                                   up_pid, args.client)
            print(f"  upstream swift 2.38 (one node, tempauth + memcache): "
                  f"{small_summary(up)}  load {loadavg()}")
            print(f"  pocketstack / upstream: PUT {rates['PUT'] / up['PUT']:.1f}x, "
                  f"GET {rates['GET'] / up['GET']:.1f}x (target >= 5x); server CPU per "
                  f"request: PUT {up['PUT cpu'] / rates['PUT cpu']:.1f}x less, GET "
                  f"{up['GET cpu'] / rates['GET cpu']:.1f}x less")
        if args.listing:
            listing(workdir, storage, token, args.listing)
        print(f"load average at end: {loadavg()}")
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def evict(path: str) -> None:
    """Drop a file's pages from the page cache (works unprivileged; the file's dirty pages
    are written first, as only clean pages can be dropped)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def data_file_of(objects_dir: str, size: int) -> str:
    """The object store's file of the large object: the one file of that size."""
    found = [os.path.join(d, name) for d, _, names in os.walk(objects_dir) for name in names
             if os.path.getsize(os.path.join(d, name)) == size]
    if len(found) != 1:
        raise SystemExit(f"expected one {size}-byte file under {objects_dir}, found {found}")
    return found[0]


def best_of(runs: int, command: list[str], pid: int | None = None,
            cold: list[str] = ()) -> tuple[float, float]:
    """The fastest of ``runs`` (wall, CPU) of ``timed_with_cpu``; ``cold``: files evicted
    from the page cache before each run."""
    results = []
    for _ in range(runs):
        for path in cold:
            evict(path)
        results.append(timed_with_cpu(command, pid))
    return min(results)


def large_object(workdir: str, storage: str, token: str, pid: int, size_mib: int) -> None:
    """Warm: the file (and the object's file) in the page cache, as after the first read.
    Cold: evicted before each run, as a large object usually is: then ``cat`` reads the
    disk (0.9-2 GiB/s here) and so does the server."""
    source = os.path.join(workdir, "large", "large.bin")
    os.makedirs(os.path.dirname(source))
    with open(source, "wb") as f:
        for _ in range(size_mib):
            f.write(os.urandom(MiB))
    httpx.put(f"{storage}/bench", headers={"X-Auth-Token": token}, timeout=30)
    md5, md5_cpu = best_of(2, ["md5sum", source])
    cat, cat_cpu = best_of(2, ["cat", source])
    cold_cat, cold_cat_cpu = best_of(2, ["cat", source], cold=[source])
    static, static_url = static_server(os.path.dirname(source))
    try:
        static_get = ["curl", "-sS", "--fail", "-o", "/dev/null", f"{static_url}/large.bin"]
        plain, plain_cpu = best_of(2, static_get, static.pid)
        cold_plain, cold_plain_cpu = best_of(2, static_get, static.pid, cold=[source])
    finally:
        static.terminate()
        static.wait(10)
    auth = ["-H", f"X-Auth-Token: {token}", "-sS", "--fail"]
    get_command = ["curl", *auth, "-o", "/dev/null", f"{storage}/bench/large"]
    with RssPeak(pid) as rss:
        put, put_cpu = best_of(2, ["curl", *auth, "-T", source, "-o", "/dev/null",
                                   f"{storage}/bench/large"], pid)
        get, get_cpu = best_of(2, get_command, pid)
        stored = data_file_of(os.path.join(workdir, "data", "objects"), size_mib * MiB)
        cold_get, cold_get_cpu = best_of(2, get_command, pid, cold=[stored])
    os.unlink(source)

    def rate(seconds: float) -> float:
        return size_mib / seconds

    print(f"{size_mib} MiB object (wall-clock throughput; CPU seconds of the tool "
          "or of the server, which a loaded machine does not distort):")
    print(f"  md5sum {rate(md5):7.0f} MiB/s ({md5_cpu:.2f} CPU s)   PUT {rate(put):7.0f} "
          f"MiB/s ({put_cpu:.2f} CPU s)  = {md5 / put:4.0%} of md5sum (target >= 70 %)")
    for label, ref, ref_cpu, static_s, static_cpu, ours, ours_cpu in (
            ("warm", cat, cat_cpu, plain, plain_cpu, get, get_cpu),
            ("cold", cold_cat, cold_cat_cpu, cold_plain, cold_plain_cpu, cold_get,
             cold_get_cpu)):
        print(f"  {label} cat {rate(ref):7.0f} MiB/s ({ref_cpu:.2f} CPU s)   GET "
              f"{rate(ours):7.0f} MiB/s ({ours_cpu:.2f} CPU s)  = {ref / ours:4.0%} of cat "
              f"(target >= 70 %)")
        print(f"  {label} static {rate(static_s):7.0f} MiB/s ({static_cpu:.2f} CPU s, python "
              f"-m http.server + curl)  GET = {static_s / ours:4.0%} of it")
    print(f"  server memory growth during the PUTs and GETs: {rss.growth_mib:.0f} MiB  "
          f"load {loadavg()}")


def listing(workdir: str, storage: str, token: str, count: int) -> None:
    account = storage.rstrip("/").rsplit("/", 1)[1]
    httpx.put(f"{storage}/big", headers={"X-Auth-Token": token}, timeout=30)
    start = time.perf_counter()
    fill_listing(os.path.join(workdir, "data"), account, "big", count)
    filled = time.perf_counter() - start
    head = httpx.head(f"{storage}/big", headers={"X-Auth-Token": token}, timeout=30)
    print(f"listing: {head.headers['x-container-object-count']} objects in one container "
          f"(filled through the database layer in {filled:.0f} s)")
    middle = f"dir{count // 2000:04d}/"
    for params in ({"prefix": middle, "delimiter": "/"},
                   {"prefix": middle[:-2], "delimiter": "/"},
                   {"prefix": "dir", "delimiter": "/", "limit": 1000}):
        median, best, entries = listing_page(storage, token, "big", params)
        print(f"  {params}: {entries} entries, median {median:.1f} ms, best {best:.1f} ms "
              f"(target <= 50 ms)  load {loadavg()}")


if __name__ == "__main__":
    main()
