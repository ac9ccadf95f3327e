"""`pocketstack up --workers N`: the all-in-one cloud in several processes of one machine,
so it can use more than one core (one Python process is one GIL).

* The **main process** is `pocketstack up` as always (data-dir lock, migrations, bootstrap,
  the listening socket, clouds.yaml) and serves the API itself; it runs the conductor, the
  scheduler, the volume manager and the start-up repairs that must happen once, and it
  supervises the others: a child that dies is started again (and every network's DHCP
  files rewritten: it may have had rewrites pending).
* **N-1 API worker processes** serve the same REST app on the same listening socket (its
  descriptor is inherited): the kernel gives each new connection to whichever process
  accepts first, so a busy process takes fewer.
* **Compute processes** (``--compute-workers``, default as many as ``--workers``) run the
  compute hosts (the [fake] hosts split between them). Each also builds the REST app,
  without listening (``ComputeWorker``): a build's calls to network, image and volume run
  inline on its thread (wsgi/inprocess.py) instead of over HTTP to an API process, which
  cost a fifth of the CPU of a burst; the DHCP file writer and the vif-plugged notifier
  those calls feed run in that process too, as in an API worker. With ``[compute]
  database_access = conductor`` they run as `pocketstack service compute` does instead
  (``HostsOnConductor``): no database, no REST app, the state through this process's
  conductor and the other services over HTTP; this process's conductor and API then
  start before it waits for them (Supervised.start_workers).

RPC between them goes over Unix domain sockets in ``<data dir>/rpc`` (``unix://``,
common/rpc_unix.py); everything else is in the SQLite database, which every process
writes (WAL; writers serialized by BEGIN IMMEDIATE and an flock, common/db.py).

Every child holds one end of a socketpair whose other end only the main process has: the
child says "ready" on it, and exits when it reads end-of-file — the main process is gone,
however it died (SIGKILL included) — so no child outlives it. Each child also inherits the
main process's lock of the data dir, so the lock is held until the last process of the
cloud has exited: a cloud started again after a kill -9 of the main process waits for the
children of the killed one (cloud.Cloud._acquire_lock) instead of running beside them.
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from pocketstack.agent import Agent
from pocketstack.cli.logs import setup_logging
from pocketstack.cloud import Cloud, _in_own_runtime, collect_after_start
from pocketstack.common import config, db, policy, rpc, runtime

LOG = logging.getLogger(__name__)

READY_TIMEOUT = 120.0  # seconds a child may take to start
STOP_TIMEOUT = 35.0    # seconds a child may take to stop (agents drain for 30 s)


def transport_url(data_dir: str) -> str:
    return "unix://" + os.path.join(os.path.abspath(data_dir), "rpc")


# --- the main process ------------------------------------------------------------------------

class Supervised(Cloud):
    """`pocketstack up` that also starts and watches API worker and compute agent processes
    (see the module's docstring). ``workers`` counts the API processes, this one included;
    ``compute_workers`` 0 keeps the compute hosts in this process."""

    def __init__(self, data_dir: str, *, workers: int = 2, compute_workers: int = 2,
                 overrides: dict | None = None, **kwargs):
        overrides = dict(overrides or {}, transport_url=transport_url(data_dir))
        roles = ("conductor", "scheduler") + (() if compute_workers else ("compute",))
        super().__init__(data_dir, overrides=overrides, roles=roles, **kwargs)
        self.api_workers = workers
        self.compute_workers = compute_workers
        self.children: list[Child] = []
        self._watcher: threading.Thread | None = None
        # Compute children on the conductor (set once the config is read): see
        # start_workers; compute/service.py's start leaves the recovery to it then.
        self.recovery_waits_for_children = False

    def runs_hosts(self) -> bool:
        return True  # in this process, or in its compute children

    @_in_own_runtime
    def warm_up(self) -> None:
        """The children start while this process loads its own services."""
        self._spawn_children()
        super().warm_up()

    @_in_own_runtime
    def start_workers(self) -> None:
        """Wait until the children serve, then this process's own services: the
        conductor's start-up recovery casts builds to compute hosts, which must be
        listening by then. Compute hosts on the conductor cannot listen before this
        process's conductor answers (their node rows are written through it) and its API
        takes writes (they report their providers to placement over REST; the kernel may
        give those calls to this process): then this process's services start first, it
        takes writes (as an API worker already does), and only the recovery and the
        summary wait for the children."""
        if self.recovery_waits_for_children:
            super().start_workers()  # the conductor listens; its recovery waits
            self.ready.set()
        if not self._wait_for_children():
            return
        self._watcher = threading.Thread(target=self._watch, name="pocketstack-supervisor",
                                         daemon=True)
        self._watcher.start()
        if self.recovery_waits_for_children:
            from pocketstack.compute import service as compute_service

            compute_service.start_deferred_recovery(self.workers)
        else:
            super().start_workers()

    def _wait_for_children(self) -> bool:
        for child in self.children:
            if self.stop_requested:
                return False
            child.wait_ready(READY_TIMEOUT)
        return not self.stop_requested

    def _spawn_children(self) -> None:
        self._remove_stale_sockets()
        base = ["--data-dir", self.data_dir, "--config-file", self.config_file,
                "--overrides", json.dumps(self.overrides)]
        lock = self._lock_file.fileno()
        for i in range(1, self.api_workers):
            self.children.append(Child(f"api-{i}", [
                *base, "api"], listen=self._socket, lock=lock))
        hosts = _split(_compute_hosts(), self.compute_workers)
        on_conductor = bool(hosts) and config.CONF.compute.database_access == "conductor"
        self.recovery_waits_for_children = on_conductor
        for i, share in enumerate(hosts, 1):
            self.children.append(Child(f"compute-{i}", [
                *base, "compute", "--hosts", json.dumps(share),
                *(["--on-conductor"] if on_conductor else [])], lock=lock))
        for child in self.children:
            child.spawn()

    def _remove_stale_sockets(self) -> None:
        """Sockets a killed cloud left behind (this process holds the data-dir lock, so
        no other cloud uses them)."""
        from pocketstack.common import rpc_unix

        directory = rpc_unix.socket_dir(config.CONF.transport_url)
        for name in os.listdir(directory):
            if name.endswith(".sock"):
                try:
                    os.unlink(os.path.join(directory, name))
                except FileNotFoundError:
                    pass

    def _watch(self) -> None:
        """Start a child that died again (after a pause that grows while it keeps dying)."""
        while not self.stop_requested:
            time.sleep(0.5)
            for child in list(self.children):
                if self.stop_requested:
                    return
                code = child.proc.poll() if child.proc is not None else None
                if code is None or child.stopping:
                    continue
                delay = child.next_restart_delay()
                LOG.warning("Worker %s (pid %s) exited with %s; starting it again in %gs",
                            child.name, child.proc.pid, code, delay)
                if _sleep_unless(lambda: self.stop_requested, delay):
                    return
                try:
                    child.spawn()
                    child.wait_ready(READY_TIMEOUT)
                    self._resync_dhcp()
                except Exception as error:  # noqa: BLE001 - tried again next round
                    LOG.error("Worker %s could not start again: %s", child.name, error)

    def _resync_dhcp(self) -> None:
        """A child that died may have had DHCP file rewrites pending (its writer batches
        them after the commits): rewrite every network's files from the database."""
        from pocketstack.network import dhcp

        with self.runtime.activated():
            dhcp.resync_all()

    @_in_own_runtime
    def close(self) -> None:
        self.stop_requested = True
        stop_all(self.children, STOP_TIMEOUT)
        self.children = []
        super().close()


def _sleep_unless(stop, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if stop():
            return True
        time.sleep(0.1)
    return stop()


def _compute_hosts() -> list[list[str]]:
    from pocketstack.compute.service import all_in_one_hosts

    return [list(pair) for pair in all_in_one_hosts()]


def _split(items: list, parts: int) -> list[list]:
    """``items`` dealt round-robin into at most ``parts`` non-empty lists."""
    shares = [items[i::parts] for i in range(max(parts, 0))]
    return [share for share in shares if share]


class Child:
    """One worker process of the main one: spawned, watched, stopped."""

    def __init__(self, name: str, args: list[str], listen: socket.socket | None = None,
                 lock: int | None = None):
        self.name, self.args, self.listen, self.lock = name, args, listen, lock
        self.proc: subprocess.Popen | None = None
        self.lifeline: socket.socket | None = None
        self.stopping = False
        self.restarts: list[float] = []

    def spawn(self) -> None:
        if self.lifeline is not None:
            self.lifeline.close()
        ours, theirs = socket.socketpair()
        fds = [theirs.fileno()] + ([self.listen.fileno()] if self.listen else [])
        # The data dir's lock, only held open (see the module's docstring).
        fds += [self.lock] if self.lock is not None else []
        argv = [sys.executable, "-m", "pocketstack.workers", "--name", self.name,
                "--lifeline", str(theirs.fileno()),
                *(["--listen-fd", str(self.listen.fileno())] if self.listen else []),
                *self.args]
        # A session of its own: Ctrl-C at the terminal reaches the main process only,
        # which then stops the children in order.
        self.proc = subprocess.Popen(argv, pass_fds=fds, start_new_session=True)
        theirs.close()
        self.lifeline = ours

    def wait_ready(self, timeout: float) -> None:
        self.lifeline.settimeout(timeout)
        timed_out = False
        try:
            said = self.lifeline.recv(16)
        except socket.timeout:
            said, timed_out = b"", True
        if not said.startswith(b"ready"):
            code = self.proc.poll()
            if code is None and not timed_out:
                # Its end closed: it is exiting (read before, "not ready after 120s").
                try:
                    code = self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            raise RuntimeError(f"worker {self.name} did not start ("
                               + (f"exit code {code}" if code is not None
                                  else f"not ready after {timeout:g}s" if timed_out
                                  else "it closed its lifeline") + ")")
        self.lifeline.settimeout(None)

    def next_restart_delay(self) -> float:
        now = time.monotonic()
        self.restarts = [t for t in self.restarts if now - t < 60] + [now]
        return min(30.0, 0.5 * 2 ** (len(self.restarts) - 1))

    def terminate(self) -> None:
        self.stopping = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()


def stop_all(children: list[Child], timeout: float) -> None:
    """SIGTERM every child, wait up to ``timeout``, then SIGKILL what is left."""
    for child in children:
        child.terminate()
    deadline = time.monotonic() + timeout
    for child in children:
        if child.proc is None:
            continue
        try:
            child.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            LOG.warning("Worker %s (pid %s) did not stop in %gs: killed", child.name,
                        child.proc.pid, timeout)
            child.proc.kill()
            child.proc.wait()
        if child.lifeline is not None:
            child.lifeline.close()
            child.lifeline = None


# --- the children ----------------------------------------------------------------------------

class ApiWorker(Cloud):
    """The REST APIs on the main process's listening socket. The main process prepared the
    data dir (lock, migrations, bootstrap); this one reads the config and opens the
    database. Services skip their once-per-cloud start-up work (``api_worker``)."""

    api_worker = True

    def __init__(self, data_dir: str, *, listen: socket.socket | None, **kwargs):
        super().__init__(data_dir, roles=(), **kwargs)
        self._socket = listen

    @_in_own_runtime
    def prepare(self, bind: bool = False) -> "ApiWorker":
        runtime.started(self.runtime)
        config.load(self.data_dir, self.config_file, self.overrides)
        config.check()
        rpc.preload()  # on this (main) thread: see rpc.preload
        conf = config.CONF
        if conf.fernet_tokens.key_repository is None:
            conf.set_default("key_repository", os.path.join(self.data_dir, "fernet-keys"),
                             group="fernet_tokens")
        db.configure(conf.database.connection)
        db.configure_models()
        policy.configure(self.data_dir)
        self._prepared = True
        return self


class ComputeWorker(ApiWorker):
    """Compute hosts in a process that also builds the REST app, without listening: the
    hosts' calls to network, image and volume then run inline (wsgi/inprocess.py) instead
    of over HTTP to the API processes, and the network service's background pieces those
    calls rely on (DHCP file writer, vif-plugged notifier) run here as in an API worker."""

    def __init__(self, data_dir: str, *, hosts: list, **kwargs):
        super().__init__(data_dir, listen=None, **kwargs)
        self.hosts = [tuple(pair) for pair in hosts]
        self._stop = threading.Event()

    def request_stop(self) -> None:
        super().request_stop()
        self._stop.set()

    @_in_own_runtime
    def run(self, on_ready) -> None:
        """Start, say ready, then wait for request_stop() and clean up."""
        from pocketstack.compute import service as compute_service
        from pocketstack.wsgi.app import PocketstackApp

        try:
            self.app = PocketstackApp(self.ready, reads_ready=self.reads_ready)
            self.warm_up()  # the services' api_worker share: compute starts no role here
            self.workers.extend(compute_service.start_roles(("compute",), self.data_dir,
                                                            self.hosts))
            if not self.stop_requested:
                on_ready()
            while not self._stop.wait(1.0):
                pass
        finally:
            # In-flight builds may finish within the agents' drain time, not longer.
            stopper = threading.Thread(target=self.close, name="pocketstack-stop",
                                       daemon=True)
            stopper.start()
            stopper.join(STOP_TIMEOUT - 5)
            if stopper.is_alive():
                LOG.warning("Work still running after %gs; exiting without it (an "
                            "interrupted build is rescheduled by its deadline)",
                            STOP_TIMEOUT - 5)
                os._exit(1)


class HostsOnConductor(Agent):
    """Compute hosts with ``[compute] database_access = conductor``, as `pocketstack
    service compute` runs them: no database at all (db.forbid), no REST app. Their state
    goes through the main process's conductor, their calls to network, image, volume and
    placement over HTTP to the API processes; hence not a ComputeWorker, whose inline
    calls run the services' handlers on the database."""

    @staticmethod
    def _refuse_database(opts) -> None:
        """A ``[database] connection`` in the config is the main process's: every process
        of `up` reads the one config file on this one machine. This one still opens
        nothing (Agent.prepare forbids the database)."""


def _lifeline(fd: int) -> socket.socket:
    """Report readiness on it; exit at once when the main process is gone. (A stop the
    main process asks for is a SIGTERM, and drains.) Without the main process there is
    no cloud to finish work for: the builds a compute child has in hand wait on its
    conductor and volume manager, and the next start recovers them, so draining would
    only hold that start back (it waits for this process: cloud.Cloud._acquire_lock)."""
    line = socket.socket(fileno=fd)

    def watch():
        try:
            while line.recv(16):
                pass
        except OSError:
            pass
        LOG.warning("The main pocketstack process is gone: exiting")
        os._exit(1)

    threading.Thread(target=watch, name="pocketstack-lifeline", daemon=True).start()
    return line


def _run_api(a, overrides: dict) -> None:
    listen = socket.socket(fileno=a.listen_fd)
    cloud = ApiWorker(a.data_dir, config_file=a.config_file, overrides=overrides,
                      listen=listen)
    line = _lifeline(a.lifeline)
    signal.signal(signal.SIGTERM, lambda *_: cloud.request_stop())
    cloud.prepare()
    cloud.serve_forever(on_ready=lambda: _ready(line))
    if cloud.startup_error is not None:
        raise SystemExit(f"worker {a.name} could not start: {cloud.startup_error}")


def _run_compute(a, overrides: dict) -> None:
    cloud = ComputeWorker(a.data_dir, config_file=a.config_file, overrides=overrides,
                          hosts=json.loads(a.hosts))
    line = _lifeline(a.lifeline)
    signal.signal(signal.SIGTERM, lambda *_: cloud.request_stop())
    cloud.prepare()
    cloud.run(on_ready=lambda: _ready(line))


def _run_hosts_on_conductor(a, overrides: dict) -> None:
    agent = HostsOnConductor(a.data_dir, config_file=a.config_file, overrides=overrides)
    line = _lifeline(a.lifeline)
    signal.signal(signal.SIGTERM, lambda *_: agent.request_stop())
    roles = ("compute",)
    agent.prepare(roles=roles)
    # Waits for the conductor (compute/fleet.py), which the main process starts while
    # this one starts: in either order.
    agent.start(roles, [tuple(pair) for pair in json.loads(a.hosts)])
    _ready(line)
    if not agent.serve_forever():
        os._exit(1)  # in-flight work outlived the drain time: exit without it


def _ready(line: socket.socket) -> None:
    collect_after_start()  # as `up` does
    line.sendall(b"ready")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m pocketstack.workers",
                                description="A worker process of `pocketstack up --workers`.")
    p.add_argument("--name", required=True)
    p.add_argument("--lifeline", type=int, required=True)
    p.add_argument("--listen-fd", type=int)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--config-file", required=True)
    p.add_argument("--overrides", default="{}")
    sub = p.add_subparsers(dest="kind", required=True)
    sub.add_parser("api")
    compute = sub.add_parser("compute")
    compute.add_argument("--hosts", required=True)
    compute.add_argument("--on-conductor", action="store_true",
                         help="[compute] database_access = conductor: no database")
    a = p.parse_args(argv)

    overrides = json.loads(a.overrides)
    os.umask(0o077)
    setup_logging(bool(overrides.get("debug")))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides when to stop
    gc.disable()  # until ready: see cloud.collect_after_start
    if a.kind == "api":
        _run_api(a, overrides)
    elif a.on_conductor:
        _run_hosts_on_conductor(a, overrides)
    else:
        _run_compute(a, overrides)


if __name__ == "__main__":
    main()
