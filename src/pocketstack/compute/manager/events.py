"""Waiting for external events (network-vif-plugged) on a compute host.

The network service may answer before the host starts waiting (the port becomes ACTIVE
as soon as it is bound), so a build registers its interest *before* it creates ports and
early events are kept for a short while.
"""
from __future__ import annotations

import threading
import time

EARLY_TTL = 120.0


class EventWaiter:
    def __init__(self, registry: "EventRegistry", instance_uuid: str):
        self.registry, self.instance_uuid = registry, instance_uuid
        self.received: dict[str, str] = {}  # tag (port id) -> status
        self.cond = threading.Condition(registry.lock)

    def wait(self, tags: set[str], timeout: float) -> set[str]:
        """Wait until every tag has arrived; returns the tags still missing."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                missing = {t for t in tags if t not in self.received}
                failed = {t for t in tags if self.received.get(t) == "failed"}
                if failed:
                    return failed
                if not missing:
                    return set()
                left = deadline - time.monotonic()
                if left <= 0:
                    return missing
                self.cond.wait(left)

    def close(self) -> None:
        with self.registry.lock:
            if self.registry.waiters.get(self.instance_uuid) is self:
                del self.registry.waiters[self.instance_uuid]


class EventRegistry:
    def __init__(self):
        self.lock = threading.Lock()
        self.waiters: dict[str, EventWaiter] = {}
        self.early: dict[str, tuple[float, dict[str, str]]] = {}

    def prepare(self, instance_uuid: str) -> EventWaiter:
        waiter = EventWaiter(self, instance_uuid)
        with self.lock:
            self.waiters[instance_uuid] = waiter
            early = self.early.pop(instance_uuid, None)
            if early:
                waiter.received.update(early[1])
        return waiter

    def deliver(self, instance_uuid: str, name: str, tag: str, status: str) -> None:
        # what a host waits for: a port plugged (tag: port id), a volume written over
        # by a rebuild (volume-reimaged, 2.93; tag: volume id)
        if name not in ("network-vif-plugged", "volume-reimaged"):
            return
        with self.lock:
            waiter = self.waiters.get(instance_uuid)
            if waiter is not None:
                waiter.received[tag] = status
                waiter.cond.notify_all()
                return
            now = time.monotonic()
            for key in [k for k, (t, _) in self.early.items() if now - t > EARLY_TTL]:
                del self.early[key]
            self.early.setdefault(instance_uuid, (now, {}))[1][tag] = status
