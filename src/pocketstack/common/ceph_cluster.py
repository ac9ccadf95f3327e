"""A one-node Ceph cluster owned by a directory, for a lab or the tests (``pocketstack ceph``).

Debian's Ceph daemons started by hand, as in Ceph's "manual deployment" guide, without
systemd, ceph-volume or LVM (this kernel has no device-mapper): one monitor, one manager,
one OSD whose BlueStore is a sparse file, cephx, pools of size 1. Everything — config,
keyrings, daemon data, logs, pid files — lives under the directory, so `rm -r` of a
stopped cluster removes it all.

Each service gets its own cephx user with the capabilities upstream's "Block Devices and
OpenStack" guide gives it: ``client.glance`` on the images pool, ``client.cinder`` on the
volumes and vms pools (read-only on images, to clone from them), ``client.cinder-backup``
on backups. Nova uses ``client.cinder``, as in that guide. ``client.rgw`` is the RADOS
Gateway's (common/rgw.py), with the caps upstream's radosgw guide gives it (it makes its
own pools).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import uuid

DAEMONS = ("mon.a", "mgr.x", "osd.0")

# The service pools, by the [ceph] option that names them.
POOLS = {"image_pool": "images", "volume_pool": "volumes", "compute_pool": "vms",
         "backup_pool": "backups"}
USERS = {"image_user": "glance", "volume_user": "cinder", "backup_user": "cinder-backup",
         "rgw_user": "rgw"}


def user_caps(pools: dict[str, str]) -> dict[str, list[str]]:
    """cephx caps of each service user, as upstream's guide gives them."""
    images, volumes, vms, backups = (pools[k] for k in POOLS)
    return {
        "image_user": ["mon", "profile rbd", "osd", f"profile rbd pool={images}",
                       "mgr", f"profile rbd pool={images}"],
        "volume_user": ["mon", "profile rbd",
                        "osd", f"profile rbd pool={volumes}, profile rbd pool={vms}, "
                               f"profile rbd-read-only pool={images}",
                        "mgr", f"profile rbd pool={volumes}, profile rbd pool={vms}"],
        "backup_user": ["mon", "profile rbd", "osd", f"profile rbd pool={backups}",
                        "mgr", f"profile rbd pool={backups}"],
        "rgw_user": ["mon", "allow rw", "osd", "allow rwx"],
    }


class ClusterError(Exception):
    """The cluster could not be made or started; the message says which step and why."""


def conf_path(directory: str) -> str:
    return os.path.join(directory, "ceph.conf")


def _run(directory: str, *args: str, stdin: str | None = None, timeout: float = 60) -> str:
    try:
        proc = subprocess.run(args, input=stdin, capture_output=True, text=True,
                              timeout=timeout, cwd=directory)
    except FileNotFoundError:
        raise ClusterError(f"{args[0]} is not installed: run `make ceph` (Debian's ceph-mon, "
                           "ceph-mgr, ceph-osd and ceph-common)") from None
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{' '.join(args[:4])} did not finish in {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise ClusterError(f"{' '.join(args[:4])} failed: {proc.stderr.strip()[-800:]}")
    return proc.stdout


def _ceph(directory: str, *args: str, **kw) -> str:
    return _run(directory, "ceph", "-c", conf_path(directory), "--connect-timeout", "20",
                *args, **kw)


def _write_conf(directory: str, fsid: str, port: int, osd_gb: int) -> None:
    d = directory
    text = f"""# A one-node Ceph cluster made by `pocketstack ceph start` (owned by this directory).
[global]
fsid = {fsid}
mon host = v2:127.0.0.1:{port}
mon initial members = a
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 1
ms bind ipv6 = false
run dir = {d}/run
admin socket = {d}/run/$name.asok
pid file = {d}/run/$name.pid
log file = {d}/log/$name.log
keyring = {d}/$cluster.$name.keyring
[mon]
mon data = {d}/mon/$id
keyring = {d}/mon/$id/keyring
# One monitor has no quorum to batch for: commit map changes (a pool, its application) in
# 0.1 s instead of the default 1 s each.
paxos propose interval = 0.1
[mgr]
mgr data = {d}/mgr/$id
keyring = {d}/mgr/$id/keyring
[osd]
osd data = {d}/osd/$id
keyring = {d}/osd/$id/keyring
osd objectstore = bluestore
bluestore block path = {d}/osd/$id/block.file
bluestore block create = true
bluestore block size = {osd_gb << 30}
osd memory target = 536870912
"""
    with open(conf_path(d), "w") as f:
        f.write(text)


def pid_of(directory: str, daemon: str) -> int | None:
    try:
        with open(os.path.join(directory, "run", f"{daemon}.pid")) as f:
            pid = int(f.read().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def running(directory: str) -> list[str]:
    return [d for d in DAEMONS if pid_of(directory, d)]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bootstrap(directory: str, osd_gb: int, port: int | None) -> None:
    """Keyrings, monmap and the monitor's store: a cluster that has never run."""
    d = directory
    for sub in ("run", "log", "mon", "mgr/x", "osd/0"):
        os.makedirs(os.path.join(d, sub), mode=0o700, exist_ok=True)
    fsid = str(uuid.uuid4())
    _write_conf(d, fsid, port or 3300, osd_gb)
    # Outside mon/a: --mkfs refuses a non-empty data dir (and copies the key into it).
    mon_keyring = os.path.join(d, "run", "mon.keyring")
    admin = os.path.join(d, "ceph.client.admin.keyring")
    _run(d, "ceph-authtool", "--create-keyring", mon_keyring, "--gen-key", "-n", "mon.",
         "--cap", "mon", "allow *")
    _run(d, "ceph-authtool", "--create-keyring", admin, "--gen-key", "-n", "client.admin",
         "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mgr", "allow *",
         "--cap", "mds", "allow *")
    _run(d, "ceph-authtool", mon_keyring, "--import-keyring", admin)
    monmap = os.path.join(d, "run", "monmap")
    _run(d, "monmaptool", "--create", "--addv", "a", f"[v2:127.0.0.1:{port or 3300}]",
         "--fsid", fsid, monmap)
    _run(d, "ceph-mon", "-c", conf_path(d), "--mkfs", "-i", "a", "--monmap", monmap,
         "--keyring", mon_keyring)


def _make_mgr_and_osd(directory: str) -> None:
    d = directory
    _ceph(d, "auth", "get-or-create", "mgr.x", "mon", "allow profile mgr", "osd", "allow *",
          "mds", "allow *", "-o", os.path.join(d, "mgr", "x", "keyring"))
    osd_uuid = str(uuid.uuid4())
    key = _run(d, "ceph-authtool", "--gen-print-key").strip()
    osd_id = _ceph(d, "osd", "new", osd_uuid, "-i", "-",
                   stdin=json.dumps({"cephx_secret": key})).strip()
    if osd_id != "0":
        raise ClusterError(f"expected OSD id 0, the monitor gave {osd_id!r}")
    keyring = os.path.join(d, "osd", "0", "keyring")
    _run(d, "ceph-authtool", "--create-keyring", keyring, "--name", "osd.0", "--add-key", key)
    _run(d, "ceph-osd", "-c", conf_path(d), "-i", "0", "--mkfs", "--osd-uuid", osd_uuid,
         timeout=120)


def _start_daemon(directory: str, daemon: str) -> None:
    if pid_of(directory, daemon):
        return
    kind, _, ident = daemon.partition(".")
    _run(directory, f"ceph-{kind}", "-c", conf_path(directory), "-i", ident)


def _wait(what: str, check, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except ClusterError:
            pass
        if time.monotonic() > deadline:
            raise ClusterError(f"{what} within {timeout:.0f} s (see the logs under log/)")
        time.sleep(0.3)


def start(directory: str, *, osd_gb: int = 10, port: int | None = None,
          timeout: float = 120) -> str:
    """Make the cluster on first use, start whichever daemon is not running and wait until
    the OSD is up. Returns the path of its ceph.conf."""
    directory = os.path.abspath(directory)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fresh = not os.path.exists(os.path.join(directory, "mon", "a", "store.db"))
    if fresh:
        _bootstrap(directory, osd_gb, port or _free_port())
    _start_daemon(directory, "mon.a")
    if fresh:
        _make_mgr_and_osd(directory)
    _start_daemon(directory, "mgr.x")
    _start_daemon(directory, "osd.0")
    _wait("The OSD did not come up",
          lambda: json.loads(_ceph(directory, "osd", "stat", "-f", "json"))
          .get("num_up_osds", 0) >= 1, timeout)
    return conf_path(directory)


class _Monitor:
    """Monitor commands as client.admin: over one librados connection when the bindings
    import (a dozen commands in well under a second), else through the `ceph` CLI (about a
    second each: each run starts a Python interpreter and a connection)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.conn = None
        try:
            import rados
        except ImportError:
            return
        conn = rados.Rados(conffile=conf_path(directory), name="client.admin")
        try:
            conn.connect(timeout=20)
        except rados.Error as error:
            raise ClusterError(f"Cannot reach the monitor as client.admin: {error}") from None
        self.conn = conn

    def __call__(self, prefix: str, cli: list[str], **args) -> str:
        if self.conn is None:
            return _ceph(self.directory, *cli)
        ret, out, why = self.conn.mon_command(json.dumps({"prefix": prefix, **args}), b"")
        if ret != 0:
            raise ClusterError(f"ceph {' '.join(cli)} failed ({ret}): {why}")
        return out.decode()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.shutdown()


def _wait_for_active_pgs(mon, timeout: float = 120) -> None:
    """New pools' placement groups take a moment to peer; I/O to them waits meanwhile
    (and a client's op timeout may end it): return once every PG is active."""
    deadline = time.monotonic() + timeout
    while True:
        summary = json.loads(mon("pg stat", ["pg", "stat", "--format", "json"],
                                 format="json"))
        summary = summary.get("pg_summary", summary)
        states = summary.get("num_pg_by_state") or []
        active = sum(s["num"] for s in states if "active" in s["name"].split("+"))
        if active >= summary.get("num_pgs", 0):
            return
        if time.monotonic() > deadline:
            raise ClusterError(f"placement groups not active after {timeout:g} s: {states}")
        time.sleep(0.1)


def ensure_pools_and_users(directory: str, prefix: str = "") -> dict[str, str]:
    """Create the service pools and cephx users (keyrings beside ceph.conf); idempotent.
    ``prefix`` names a separate set (tests sharing one cluster). Returns the [ceph] options
    that name them: image_pool, ..., image_user, ..."""
    names = {k: prefix + v for k, v in {**POOLS, **USERS}.items()}
    names["compute_user"] = names["volume_user"]  # nova uses cinder's user (the guide)
    mon = _Monitor(directory)
    try:
        existing = set(mon("osd pool ls", ["osd", "pool", "ls"]).split())
        created = False
        for option in POOLS:
            pool = names[option]
            if pool not in existing:
                mon("osd pool create", ["osd", "pool", "create", pool, "8"],
                    pool=pool, pg_num=8)
                mon("osd pool application enable",
                    ["osd", "pool", "application", "enable", pool, "rbd"], pool=pool, app="rbd")
                created = True
        if created:
            _wait_for_active_pgs(mon)
        for option, caps in user_caps(names).items():
            entity = f"client.{names[option]}"
            keyring = os.path.join(directory, f"ceph.{entity}.keyring")
            text = mon("auth get-or-create", ["auth", "get-or-create", entity, *caps],
                       entity=entity, caps=caps)
            # get-or-create keeps an existing user's caps: set them (pool names may differ).
            mon("auth caps", ["auth", "caps", entity, *caps], entity=entity, caps=caps)
            fd = os.open(keyring, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.chmod(keyring, 0o600)
    finally:
        mon.close()
    return names


def remove_pools_and_users(directory: str, prefix: str) -> None:
    """Drop what ensure_pools_and_users(prefix=...) made (tests)."""
    mon = _Monitor(directory)
    try:
        for name in POOLS.values():
            pool = prefix + name
            mon("osd pool rm", ["osd", "pool", "rm", pool, pool,
                                "--yes-i-really-really-mean-it"],
                pool=pool, pool2=pool, yes_i_really_really_mean_it=True)
        for name in set(USERS.values()):
            entity = f"client.{prefix}{name}"
            mon("auth rm", ["auth", "rm", entity], entity=entity)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, f"ceph.{entity}.keyring"))
    finally:
        mon.close()


def stop(directory: str, timeout: float = 30) -> list[str]:
    """SIGTERM the daemons (OSD first), wait for them; SIGKILL what is left. Returns the
    daemons that were running."""
    stopped = []
    for daemon in reversed(DAEMONS):
        pid = pid_of(directory, daemon)
        if pid is None:
            continue
        stopped.append(daemon)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_of(directory, daemon) == pid and time.monotonic() < deadline:
            time.sleep(0.1)
        if pid_of(directory, daemon) == pid:
            os.kill(pid, signal.SIGKILL)
    return stopped


def status(directory: str) -> str:
    return _ceph(directory, "-s")
