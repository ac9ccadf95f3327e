"""Upstream OpenStack Swift on one node, for the object storage bench's reference.

    .venv/bin/python bench/swift_upstream.py [--seconds 10] [--clients 10]

Installs PyPI ``swift`` 2.38.x into its own venv under /tmp (never the project's venv),
writes a one-node config (rings of one device each, replicas 1, ``mount_check = false``,
storage in a plain directory of /tmp: ext4 keeps the user xattrs swift needs), starts
memcached, the proxy (tempauth, memcache: swift's usual small deployment) and the account,
container and object servers on free 127.0.0.1 ports with swift's defaults otherwise
(``workers = auto``, fsync on), and runs ``objectstore.py``'s 4 KiB bench against it.
``objectstore.py --upstream`` runs it in the same run as pocketstack's. Everything it starts
is stopped and its directory removed at the end. Needs memcached (`apt-get install
memcached`); the swift venv can be given with SWIFT_BENCH_VENV.
"""
from __future__ import annotations

import argparse
import contextlib
import getpass
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import httpx

VENV = os.environ.get("SWIFT_BENCH_VENV", "/tmp/pocketstack-bench-swift-venv")
SWIFT_REQUIREMENT = "swift>=2.38,<2.39"


def ensure_venv() -> str:
    """The venv's bin directory, swift installed on first use."""
    bin_dir = os.path.join(VENV, "bin")
    if not os.path.exists(os.path.join(bin_dir, "swift-proxy-server")):
        subprocess.run(["python3", "-m", "venv", VENV], check=True)
        subprocess.run([os.path.join(bin_dir, "pip"), "install", "-q", SWIFT_REQUIREMENT],
                       check=True)
    return bin_dir


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVER_CONF = """[DEFAULT]
devices = {devices}
mount_check = false
bind_ip = 127.0.0.1
bind_port = {port}
swift_dir = {etc}
log_level = WARNING
user = {user}

[pipeline:main]
pipeline = {kind}-server

[app:{kind}-server]
use = egg:swift#{kind}

[{kind}-replicator]
[{kind}-auditor]
[{kind}-updater]
"""

PROXY_CONF = """[DEFAULT]
bind_ip = 127.0.0.1
bind_port = {port}
swift_dir = {etc}
log_level = WARNING
user = {user}

[pipeline:main]
pipeline = catch_errors cache tempauth proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:{memcache}

[filter:tempauth]
use = egg:swift#tempauth
user_bench_admin = secret .admin
"""


@contextlib.contextmanager
def running_swift(workdir: str):
    """Yield (storage URL, token, the pids of its servers and memcached) of a one-node
    upstream swift started under ``workdir``."""
    bin_dir = ensure_venv()
    etc = os.path.join(workdir, "etc")
    devices = os.path.join(workdir, "node")
    os.makedirs(etc)
    os.makedirs(os.path.join(devices, "d1"))
    with open(os.path.join(etc, "swift.conf"), "w") as f:
        f.write("[swift-hash]\nswift_hash_path_suffix = bench\n\n"
                "[storage-policy:0]\nname = default\ndefault = yes\n")
    ports = {kind: _free_port() for kind in ("proxy", "account", "container", "object",
                                             "memcache")}
    quiet = dict(os.environ, PYTHONWARNINGS="ignore")  # dnspython's DSA deprecation
    for kind in ("account", "container", "object"):
        builder = os.path.join(etc, f"{kind}.builder")
        ring = [os.path.join(bin_dir, "swift-ring-builder"), builder]
        for step in (["create", "6", "1", "1"], ["add", f"r1z1-127.0.0.1:{ports[kind]}/d1", "1"],
                     ["rebalance"]):
            subprocess.run([*ring, *step], check=True, stdout=subprocess.DEVNULL, env=quiet)
        with open(os.path.join(etc, f"{kind}-server.conf"), "w") as f:
            f.write(SERVER_CONF.format(user=getpass.getuser(), devices=devices,
                                       port=ports[kind], etc=etc, kind=kind))
    with open(os.path.join(etc, "proxy-server.conf"), "w") as f:
        f.write(PROXY_CONF.format(user=getpass.getuser(), port=ports["proxy"], etc=etc,
                                  memcache=ports["memcache"]))
    procs = []
    env = quiet  # per worker too
    log = open(os.path.join(workdir, "swift.log"), "wb")
    try:
        procs.append(subprocess.Popen(["memcached", "-l", "127.0.0.1", "-p",
                                       str(ports["memcache"]), "-U", "0",
                                       "-u", getpass.getuser()],
                                      stdout=log, stderr=subprocess.STDOUT))
        for kind in ("account", "container", "object", "proxy"):
            procs.append(subprocess.Popen(
                [os.path.join(bin_dir, f"swift-{kind}-server"),
                 os.path.join(etc, f"{kind}-server.conf")],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env))
        url = f"http://127.0.0.1:{ports['proxy']}"
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(url + "/auth/v1.0", headers={"X-Auth-User": "bench:admin",
                                                           "X-Auth-Key": "secret"})
                if r.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("upstream swift did not start:\n"
                                 + open(log.name).read()[-4000:])
            time.sleep(0.2)
        yield r.headers["X-Storage-Url"], r.headers["X-Auth-Token"], [p.pid for p in procs]
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                # each server's session: its workers go with it
                if proc.args[0] == "memcached":
                    proc.terminate()
                else:
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import objectstore

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=10)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="pocketstack-swiftref-")
    try:
        print(f"load average at start: {objectstore.loadavg()}")
        with running_swift(workdir) as (storage, token, _):
            rates = objectstore.small_objects(storage, token, args.clients, args.seconds)
        print(f"upstream swift, 4 KiB objects, {args.clients} clients: "
              f"PUT {rates['PUT']:.0f}/s, GET {rates['GET']:.0f}/s")
        print(f"load average at end: {objectstore.loadavg()}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
