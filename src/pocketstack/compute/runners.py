"""What a compute service process runs on: periodic threads, the RPC service of a role,
the build pool of a compute host and the hypervisor driver of a host. service.py starts
roles from these, and fleet.py runs many hosts on shared ones."""
from __future__ import annotations

import logging
import threading
import time

from pocketstack.common import config, rpc, runtime

LOG = logging.getLogger(__name__)


class Periodic:
    """Run ``func`` every ``interval()`` seconds on a daemon thread until stop()."""

    def __init__(self, name: str, func, interval):
        self.func, self.interval = func, interval
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=runtime.bind(self._run), name=name, daemon=True)
        self.thread.start()

    def _run(self):
        # Wake at least every half second so a changed interval applies promptly.
        last = time.monotonic()
        while not self.stopping.wait(min(self.interval(), 0.5)):
            if time.monotonic() - last < self.interval():
                continue
            last = time.monotonic()
            try:
                self.func()
            except Exception as error:  # noqa: BLE001 - a periodic task must keep running
                if self.stopping.is_set():
                    # Stopped mid-run: what it was asking may have stopped too (on SIGTERM
                    # a host on the conductor finds the conductor gone, or its transport
                    # closed under the call) - the end of the run, not a fault.
                    LOG.info("Periodic task %s ended by the stop: %s", self.thread.name,
                             error or type(error).__name__)
                    return
                LOG.exception("Periodic task %s failed", self.thread.name)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=5)


class RPCService:
    def __init__(self, topic: str, endpoint, server: str | None = None, workers: int = 16,
                 periodic=None, binary: str | None = None, host: str | None = None):
        self.server = rpc.get_server(topic, [endpoint], server=server, workers=workers)
        self.server.start()
        self.periodic = None
        if periodic is not None:
            self.periodic = Periodic(f"periodic-{topic}.{server or '*'}", periodic,
                                     lambda: config.CONF.compute.periodic_interval)
        self.heartbeat = None
        if binary:
            from pocketstack.compute.manager.periodic import heartbeat, register_service

            register_service(host, binary, topic)
            self.heartbeat = Periodic(f"heartbeat-{binary}.{host}",
                                      lambda: heartbeat(host, binary),
                                      lambda: config.CONF.compute.report_interval)

    def stop(self):
        for p in (self.heartbeat, self.periodic):
            if p is not None:
                p.stop()
        self.server.stop()
        try:
            self.server.wait()
        except Exception:  # noqa: BLE001
            pass
        builds = getattr(self, "builds", None)
        if builds is not None:
            builds.stop()


class BuildPool:
    """A compute host's RPC endpoint whose builds run on a pool of their own.

    A build waits for network-vif-plugged, which reaches the host as another cast. With
    builds on the RPC server's own workers, a burst filled every worker with builds whose
    events were queued behind other builds: each waited out vif_plugging_timeout (30 s)
    and failed or stalled (seen as 30 s tails and "no progress" reschedules). Nova, too,
    runs builds off its RPC workers. Everything else goes straight to the manager."""

    def __init__(self, manager, workers: int = 16, pool=None):
        import concurrent.futures

        self._manager = manager
        # A pool given by the caller is shared by many hosts (compute/fleet.py) and is
        # the caller's to shut down.
        self._owns_pool = pool is None
        self._pool = pool or concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix=f"build-{manager.host}",
            initializer=runtime.current().enter)

    def __getattr__(self, name):
        return getattr(self._manager, name)

    def build_and_run_instance(self, ctx, **kwargs) -> None:
        self._pool.submit(self._build, ctx, kwargs)

    def _build(self, ctx, kwargs) -> None:
        try:
            self._manager.build_and_run_instance(ctx, **kwargs)
        except Exception:  # noqa: BLE001 - a cast has no caller to report to
            LOG.exception("Build on %s failed", self._manager.host)

    def stop(self) -> None:
        if self._owns_pool:
            self._pool.shutdown(wait=True)  # in-flight builds finish, as the RPC pool's do


def make_driver(kind: str, host: str, data_dir: str):
    """The hypervisor driver of one compute agent: ``fake`` or ``libvirt``."""
    if kind == "libvirt":
        from pocketstack.compute.virt.libvirt.driver import LibvirtDriver

        return LibvirtDriver(host, data_dir)
    from pocketstack.compute.virt.fake import FakeDriver

    return FakeDriver(host)
