"""The in-process transport (``inproc://``, rpc.py): messages are dispatched inside the
process, still JSON-serialized on the way in and out. unix:// (rpc_unix.py) builds on it:
its servers are registered on this bus too, so a client in the same process skips the
socket. Kept below rpc.py so that rpc_unix.py need not import rpc.py (which imports it)."""
from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import itertools
import json
import logging
import threading
from typing import Any

from pocketstack.common import exceptions, runtime
from pocketstack.common.context import RequestContext
from pocketstack.common.rpc_errors import (MessagingTimeout, NoSuchMethod, RemoteError,
                                           exception_from_dict, exception_to_dict)

LOG = logging.getLogger(__name__)


def _primitive(value: Any) -> Any:
    """JSON round-trip: proves a message holds only primitives."""
    return json.loads(json.dumps(value))


def context_dict(ctx: RequestContext) -> dict:
    """``ctx.to_dict()`` without dataclasses.asdict's recursive deep copy (a millisecond
    per message); the JSON round-trip that follows copies it anyway."""
    return {name: getattr(ctx, name) for name in _context_fields(type(ctx))}


@functools.lru_cache(maxsize=None)
def _context_fields(cls) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


class InProcServer:
    def __init__(self, topic: str, server: str | None, endpoints: list, workers: int,
                 pool: concurrent.futures.Executor | None = None):
        self.topic, self.server, self.endpoints = topic, server, endpoints
        # Its workers serve the cloud that made this server (common/runtime.py).
        self.bus = bus()
        # A pool given by the caller is shared with other servers (compute/fleet.py: one
        # pool for many simulated hosts) and is the caller's to shut down.
        self.owns_pool = pool is None
        self.pool = pool or concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix=f"rpc-{topic}.{server or '*'}",
            initializer=runtime.current().enter)
        self.running = False

    def dispatch(self, ctx_dict: dict, method: str, kwargs: dict):
        for endpoint in self.endpoints:
            func = getattr(endpoint, method, None)
            if func is not None and not method.startswith("_"):
                ctx = RequestContext.from_dict(ctx_dict)
                return func(ctx, **kwargs)
        raise NoSuchMethod(f"Endpoint does not support RPC method {method}")

    def start(self):
        self.bus.register(self)
        self.running = True

    def stop(self):
        self.bus.unregister(self)
        self.running = False

    def wait(self):
        if self.owns_pool:
            self.pool.shutdown(wait=True)


class InProcBus:
    def __init__(self):
        self.lock = threading.Lock()
        self.servers: dict[tuple[str, str | None], InProcServer] = {}
        self.by_topic: dict[str, list[InProcServer]] = {}
        self.rr = itertools.count()

    def register(self, srv: InProcServer):
        with self.lock:
            self.servers[(srv.topic, srv.server)] = srv
            self.by_topic.setdefault(srv.topic, []).append(srv)

    def unregister(self, srv: InProcServer):
        with self.lock:
            self.servers.pop((srv.topic, srv.server), None)
            if srv in self.by_topic.get(srv.topic, []):
                self.by_topic[srv.topic].remove(srv)

    def find(self, topic: str, server: str | None) -> InProcServer | None:
        with self.lock:
            if server is not None:
                return self.servers.get((topic, server))
            candidates = self.by_topic.get(topic) or []
            if not candidates:
                return None
            return candidates[next(self.rr) % len(candidates)]


def bus() -> InProcBus:
    """The current cloud's in-process bus: clouds in one process never see each other's
    servers."""
    return runtime.current().slot(__name__, InProcBus)


class InProcClient:
    def __init__(self, topic: str, server: str | None, timeout: float | None):
        self.topic, self.server, self.timeout = topic, server, timeout

    def _target(self) -> InProcServer:
        srv = bus().find(self.topic, self.server)
        if srv is None:
            raise MessagingTimeout(f"No service is listening on {self.topic}"
                                   f"{'.' + self.server if self.server else ''}")
        return srv

    def call(self, ctx: RequestContext, method: str, **kwargs):
        srv = self._target()
        ctx_dict, kwargs = _primitive(context_dict(ctx)), _primitive(kwargs)
        try:
            result = srv.dispatch(ctx_dict, method, kwargs)
        except exceptions.PocketstackError as error:
            raise exception_from_dict(exception_to_dict(error)) from None
        except Exception as error:  # noqa: BLE001 - mirrors oslo.messaging's RemoteError
            LOG.exception("RPC call %s.%s failed", self.topic, method)
            raise RemoteError(type(error).__name__, str(error)) from None
        return _primitive(result)

    def cast(self, ctx: RequestContext, method: str, **kwargs):
        srv = self._target()
        ctx_dict, kwargs = _primitive(context_dict(ctx)), _primitive(kwargs)

        def run():
            try:
                srv.dispatch(ctx_dict, method, kwargs)
            except Exception:  # noqa: BLE001 - a cast has no caller to report to
                LOG.exception("RPC cast %s.%s failed", self.topic, method)

        srv.pool.submit(run)
