"""Connections to the Ceph cluster that images, volumes and instance disks share.

One ``rados.Rados`` per cephx user, kept for the cloud's life (librados is thread-safe and a
connection costs a monitor round trip and a thread pool), and one I/O context per pool.
The ``rados``/``rbd`` bindings are Debian's (python3-rados, python3-rbd): `make ceph` links
them into the venv; without them every rbd operation fails with a message saying so.
"""
from __future__ import annotations

import contextlib
import os
import re
import threading
import uuid

from pocketstack.common import config, exceptions, runtime


class CephUnavailable(exceptions.ServiceUnavailable):
    """The cluster or its Python bindings cannot be reached; the message says which."""


def bindings():
    """The (rados, rbd) modules, or CephUnavailable saying how to get them."""
    try:
        import rados
        import rbd
    except ImportError:
        raise CephUnavailable(
            "Ceph's Python bindings (rados, rbd) are not importable: run `make ceph`, which "
            "installs Debian's python3-rados and python3-rbd and links them into the "
            "venv.") from None
    return rados, rbd


def conf_file() -> str:
    return config.CONF.ceph.conf or os.path.join(config.data_dir(), "ceph", "ceph.conf")


# What the default libvirt secret uuids are derived in: the one uuid every cloud used
# before each had its own.
SECRET_NAMESPACE = uuid.UUID("2f3a6e3b-5d41-4c57-9d5b-6d8f1c2b7a10")


def secret_uuid() -> str:
    """The uuid of the libvirt secret holding [ceph] volume_user's key: [ceph] secret_uuid,
    else this cloud's own (clouds on one machine share its libvirtd: with one uuid, each
    cloud's guests would rewrite the key the other's QEMU authenticates with)."""
    return config.CONF.ceph.secret_uuid or str(uuid.uuid5(SECRET_NAMESPACE,
                                                          config.cloud_id()))


def configured() -> bool:
    return os.path.exists(conf_file())


class _Connections:
    def __init__(self):
        self.lock = threading.Lock()
        self.user_locks: dict[str, threading.Lock] = {}  # one connect per user at a time
        self.clusters: dict[str, object] = {}
        self.ioctxs: dict[tuple[str, str], object] = {}


def _state() -> _Connections:
    return runtime.current().slot(__name__, _Connections)


def cluster(user: str):
    """The connected ``rados.Rados`` of cephx user ``user`` (e.g. "glance")."""
    state = _state()
    conn = state.clusters.get(user)
    if conn is not None:
        return conn
    with state.lock:
        user_lock = state.user_locks.setdefault(user, threading.Lock())
    # Callers for the same user share one connect; another user's callers (the image
    # service's while the volume service connects to a silent monitor) do not wait on it.
    with user_lock:
        conn = state.clusters.get(user)
        if conn is not None:
            return conn
        rados, _ = bindings()
        path = conf_file()
        if not os.path.exists(path):
            raise CephUnavailable(f"No Ceph cluster configured: {path} does not exist "
                                  "(run `pocketstack ceph start`, or set [ceph] conf).")
        # Connecting is bounded (below); operations only when [ceph] op_timeout says so:
        # librbd asserts on an operation that times out, and the abort takes the whole
        # process (a test worker at load 12 under stress-ng died of it).
        conf = {}
        if config.CONF.ceph.op_timeout > 0:
            timeout = str(int(config.CONF.ceph.op_timeout))
            conf = {"rados_osd_op_timeout": timeout, "rados_mon_op_timeout": timeout}
        if config.CONF.ceph.keyring:
            conf["keyring"] = config.CONF.ceph.keyring
        conn = rados.Rados(conffile=path, name=f"client.{user}", conf=conf)
        error = _connect(conn, config.CONF.ceph.connect_timeout)
        if error is not None:
            raise CephUnavailable(f"Cannot reach the Ceph cluster of {path} as "
                                  f"client.{user}: {error}")
        with state.lock:
            state.clusters[user] = conn
        return conn


# Handles whose connect failed or never returned. librados can block for good in connect
# and in shutdown (also called when a handle is garbage-collected) when a monitor refuses
# or ignores it: such handles are kept here, never shut down, so no caller waits on them.
_abandoned: list = []


def _connect(conn, timeout: float) -> str | None:
    """Connect on a daemon thread, waiting at most ``timeout`` (+1 s) for it: librados'
    own connect timeout does not cover every way a monitor can fail to answer. Returns
    None, or why it failed."""
    outcome: list = []

    def run():
        try:
            conn.connect(timeout=int(timeout))
            outcome.append(None)
        except Exception as error:  # noqa: BLE001 - reported to the caller
            outcome.append(str(error) or type(error).__name__)

    thread = threading.Thread(target=run, name="ceph-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1)
    if outcome and outcome[0] is None:
        return None
    _abandoned.append(conn)
    return outcome[0] if outcome else f"no answer from its monitors within {timeout:g} s"


def ioctx(user: str, pool: str):
    """An I/O context on ``pool`` as ``user``, shared by the cloud's threads."""
    key = (user, pool)
    state = _state()
    with state.lock:
        if key in state.ioctxs:
            return state.ioctxs[key]
    conn = cluster(user)
    rados, _ = bindings()
    try:
        ctx = conn.open_ioctx(pool)
    except rados.Error as error:
        raise CephUnavailable(f"Cannot open Ceph pool {pool!r} as client.{user}: "
                              f"{error}") from None
    with state.lock:
        return state.ioctxs.setdefault(key, ctx)


def monitors() -> tuple[list[str], list[str]]:
    """(hosts, ports) of the monitors, as cinder's RBD driver puts them in connection_info."""
    conn = cluster(config.CONF.ceph.volume_user)
    value = conn.conf_get("mon_host") or ""
    hosts, ports = [], []
    # "v2:127.0.0.1:3300", "[v2:1.2.3.4:3300,v1:1.2.3.4:6789]", "1.2.3.4:6789 host2"
    for addr in re.split(r"[\s,]+", value.replace("[", " ").replace("]", " ")):
        if not addr:
            continue
        addr = re.sub(r"^v[12]:", "", addr)
        host, _, port = addr.rpartition(":")
        if not host:
            host, port = addr, "6789"
        if host not in hosts:
            hosts.append(host.strip("[]"))
            ports.append(port)
    return hosts, ports


def key_of(user: str) -> str:
    """The secret key of ``client.<user>`` from its keyring (for the libvirt secret)."""
    conn = cluster(user)
    path = config.CONF.ceph.keyring or conn.conf_get("keyring")
    for candidate in (path or "").split(","):
        candidate = candidate.strip()
        if os.path.exists(candidate):
            section = None
            with open(candidate) as f:
                for line in f:
                    line = line.strip()
                    if line.startswith("["):
                        section = line.strip("[]")
                    elif section == f"client.{user}" and line.startswith("key"):
                        return line.split("=", 1)[1].strip()
    raise CephUnavailable(f"No key for client.{user} in its keyring ({path}).")


def shutdown(timeout: float = 10.0) -> None:
    """Close the cloud's connections (its stop), I/O contexts first. Done here, not left to
    the garbage collector: one that frees a connection before an I/O context opened on it
    makes librados touch freed memory (the process crashes). At most ``timeout`` s."""
    state = _state()
    with state.lock:
        clusters, state.clusters = state.clusters, {}
        ioctxs, state.ioctxs = state.ioctxs, {}
    if not clusters and not ioctxs:
        return

    def close():
        for ctx in ioctxs.values():
            with contextlib.suppress(Exception):
                ctx.close()
        for conn in clusters.values():
            with contextlib.suppress(Exception):
                conn.shutdown()

    thread = threading.Thread(target=close, name="ceph-shutdown", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():  # keep the handles: freeing them would wait on librados too
        _abandoned.extend([*ioctxs.values(), *clusters.values()])
