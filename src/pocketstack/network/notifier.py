"""Events for compute: network-vif-plugged / -unplugged / -deleted, sent to
``POST /compute/v2.1/os-server-external-events`` as the neutron service user, as
neutron's nova notifier does (clients/compute.py).

Sending is asynchronous and in order: one background thread drains a queue, batching what
has piled up into one request. A compute service that is absent or failing is logged, never
an error for the network API call that caused the event.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Protocol

from pocketstack.common import config, runtime

LOG = logging.getLogger(__name__)
MAX_BATCH = 100


class ComputeNotifier(Protocol):
    def send(self, events: list[dict]) -> None: ...

    def stop(self) -> None: ...


class NullNotifier:
    """Used until the service starts (and by tools that run no compute)."""

    def send(self, events: list[dict]) -> None:
        LOG.debug("No compute notifier: dropping %s", events)

    def stop(self) -> None:
        pass


class NovaNotifier:
    """Sends as the neutron service user (clients/), to this cloud's compute or to
    ``url`` / ``[network] compute_url``."""

    def __init__(self, url: str | None = None, timeout: float | None = None):
        self.url = url
        self.timeout = timeout or config.CONF.network.compute_timeout
        self.queue: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=runtime.bind(self._run),
                                       name="network-compute-notifier",
                                       daemon=True)
        self.thread.start()

    def events_url(self) -> str:
        base = self.url or config.CONF.network.compute_url or (
            config.public_url() + "/compute/v2.1")
        return base.rstrip("/") + "/os-server-external-events"

    def send(self, events: list[dict]) -> None:
        if events:
            self.queue.put(list(events))

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far has been sent (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while self.queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self.queue.unfinished_tasks

    def stop(self) -> None:
        self.queue.put(None)
        self.thread.join(timeout=self.timeout + 1)

    def _run(self) -> None:
        while True:
            batch = self.queue.get()
            if batch is None:
                self.queue.task_done()
                return
            taken, stopping = 1, False
            while len(batch) < MAX_BATCH:
                try:
                    more = self.queue.get_nowait()
                except queue.Empty:
                    break
                taken += 1
                if more is None:
                    stopping = True
                    break
                batch.extend(more)
            try:
                self._post(batch)
            finally:
                for _ in range(taken):
                    self.queue.task_done()
            if stopping:
                return

    def _post(self, events: list[dict]) -> None:
        from pocketstack.clients.compute import ComputeClient

        try:
            client = ComputeClient(caller="network",
                                   endpoint=self.url or config.CONF.network.compute_url)
            response = client.external_events(events, timeout=self.timeout)
        except Exception as error:  # noqa: BLE001 - compute may be down: log, go on
            LOG.warning("Could not send %d event(s) to compute: %s", len(events), error)
            return
        if response.status_code == 404 and "itemNotFound" in response.text:
            # Nova's answer when none of the servers exists (any more): e.g. the
            # network-vif-deleted of a server that was just deleted. Nothing to deliver.
            LOG.debug("Compute has none of the servers of %s", events)
        elif response.status_code == 404:
            LOG.info("Compute has no os-server-external-events (absent?); %d event(s) "
                     "dropped", len(events))
        elif response.status_code >= 400:
            LOG.warning("Compute refused %d event(s): %s %s", len(events),
                        response.status_code, response.text[:300])
        else:
            LOG.debug("Sent %s to compute: %s", events, response.status_code)


class _Installed:
    def __init__(self):
        self.notifier: ComputeNotifier = NullNotifier()


def _installed() -> _Installed:
    """The current cloud's notifier (common/runtime.py)."""
    return runtime.current().slot(__name__, _Installed)


def get() -> ComputeNotifier:
    return _installed().notifier


def set_notifier(notifier: ComputeNotifier) -> ComputeNotifier:
    """Install ``notifier`` (tests install a recording double); returns the previous one."""
    installed = _installed()
    previous, installed.notifier = installed.notifier, notifier
    return previous
