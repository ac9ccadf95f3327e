"""RPC between services: ``call`` waits for an answer, ``cast`` fires and forgets.

Two transports behind one interface, chosen by ``[DEFAULT] transport_url``:

* ``inproc://`` (default, all-in-one): messages are dispatched inside the process. Every
  message is still JSON-serialized on the way in and out, so code that works here only
  sends primitives and works unchanged over RabbitMQ. Casts run on a per-server worker
  pool, as they would in another process.
* ``rabbit://…``: oslo.messaging (imported only then: it costs half a second of start-up).

Targets follow nova: topic ``conductor``, ``scheduler``, ``compute`` with ``server=<host>``.
The RequestContext travels inside every message and is rebuilt on the receiving side.
"""
from __future__ import annotations

import concurrent.futures
import importlib
import itertools
import json
import logging
import threading
from typing import Any

from pocketstack.common import config, exceptions
from pocketstack.common.context import RequestContext

LOG = logging.getLogger(__name__)


class RemoteError(exceptions.PocketstackError):
    """An unexpected exception raised by the remote endpoint."""

    def __init__(self, exc_type: str, value: str):
        self.exc_type = exc_type
        self.value = value
        super().__init__(f"Remote error: {exc_type} {value}")


class NoSuchMethod(exceptions.PocketstackError):
    pass


class MessagingTimeout(exceptions.PocketstackError):
    code = 504
    message = "Timed out waiting for a reply."


def _primitive(value: Any) -> Any:
    """JSON round-trip: proves a message holds only primitives."""
    return json.loads(json.dumps(value))


def _exception_to_dict(error: BaseException) -> dict:
    return {"module": type(error).__module__, "class": type(error).__name__,
            "message": str(getattr(error, "message", error)), "code": getattr(error, "code", 500)}


def _exception_from_dict(data: dict) -> exceptions.PocketstackError:
    """Rebuild a PocketstackError subclass if we know it, else a RemoteError."""
    if data["module"].startswith("pocketstack."):
        try:
            cls = getattr(importlib.import_module(data["module"]), data["class"])
            if issubclass(cls, exceptions.PocketstackError):
                error = cls.__new__(cls)
                exceptions.PocketstackError.__init__(error, data["message"])
                return error
        except (ImportError, AttributeError, TypeError):
            pass
    return RemoteError(data["class"], data["message"])


# --- in-process transport ------------------------------------------------------------

class _InProcServer:
    def __init__(self, topic: str, server: str | None, endpoints: list, workers: int):
        self.topic, self.server, self.endpoints = topic, server, endpoints
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix=f"rpc-{topic}.{server or '*'}")
        self.running = False

    def dispatch(self, ctx_dict: dict, method: str, kwargs: dict):
        for endpoint in self.endpoints:
            func = getattr(endpoint, method, None)
            if func is not None and not method.startswith("_"):
                ctx = RequestContext.from_dict(ctx_dict)
                return func(ctx, **kwargs)
        raise NoSuchMethod(f"Endpoint does not support RPC method {method}")

    def start(self):
        _INPROC.register(self)
        self.running = True

    def stop(self):
        _INPROC.unregister(self)
        self.running = False

    def wait(self):
        self.pool.shutdown(wait=True)


class _InProcBus:
    def __init__(self):
        self.lock = threading.Lock()
        self.servers: dict[tuple[str, str | None], _InProcServer] = {}
        self.by_topic: dict[str, list[_InProcServer]] = {}
        self.rr = itertools.count()

    def register(self, srv: _InProcServer):
        with self.lock:
            self.servers[(srv.topic, srv.server)] = srv
            self.by_topic.setdefault(srv.topic, []).append(srv)

    def unregister(self, srv: _InProcServer):
        with self.lock:
            self.servers.pop((srv.topic, srv.server), None)
            if srv in self.by_topic.get(srv.topic, []):
                self.by_topic[srv.topic].remove(srv)

    def find(self, topic: str, server: str | None) -> _InProcServer | None:
        with self.lock:
            if server is not None:
                return self.servers.get((topic, server))
            candidates = self.by_topic.get(topic) or []
            if not candidates:
                return None
            return candidates[next(self.rr) % len(candidates)]


_INPROC = _InProcBus()


class _InProcClient:
    def __init__(self, topic: str, server: str | None, timeout: float | None):
        self.topic, self.server, self.timeout = topic, server, timeout

    def _target(self) -> _InProcServer:
        srv = _INPROC.find(self.topic, self.server)
        if srv is None:
            raise MessagingTimeout(f"No service is listening on {self.topic}"
                                   f"{'.' + self.server if self.server else ''}")
        return srv

    def call(self, ctx: RequestContext, method: str, **kwargs):
        srv = self._target()
        ctx_dict, kwargs = _primitive(ctx.to_dict()), _primitive(kwargs)
        try:
            result = srv.dispatch(ctx_dict, method, kwargs)
        except exceptions.PocketstackError as error:
            raise _exception_from_dict(_exception_to_dict(error)) from None
        except Exception as error:  # noqa: BLE001 - mirrors oslo.messaging's RemoteError
            LOG.exception("RPC call %s.%s failed", self.topic, method)
            raise RemoteError(type(error).__name__, str(error)) from None
        return _primitive(result)

    def cast(self, ctx: RequestContext, method: str, **kwargs):
        srv = self._target()
        ctx_dict, kwargs = _primitive(ctx.to_dict()), _primitive(kwargs)

        def run():
            try:
                srv.dispatch(ctx_dict, method, kwargs)
            except Exception:  # noqa: BLE001 - a cast has no caller to report to
                LOG.exception("RPC cast %s.%s failed", self.topic, method)

        srv.pool.submit(run)


# --- oslo.messaging transport ---------------------------------------------------------

_oslo_transport = None


def _oslo():
    import oslo_messaging

    return oslo_messaging


def _get_oslo_transport():
    global _oslo_transport
    if _oslo_transport is None:
        om = _oslo()
        _oslo_transport = om.get_rpc_transport(config.CONF, url=config.CONF.transport_url)
    return _oslo_transport


def _context_serializer():
    om = _oslo()

    class ContextSerializer(om.NoOpSerializer):
        def serialize_context(self, ctx):
            return ctx.to_dict()

        def deserialize_context(self, ctx):
            return RequestContext.from_dict(ctx)

    return ContextSerializer()


class _OsloClient:
    def __init__(self, topic: str, server: str | None, timeout: float | None):
        om = _oslo()
        target = om.Target(topic=topic, server=server)
        self.client = om.get_rpc_client(_get_oslo_transport(), target, timeout=timeout,
                                        serializer=_context_serializer())

    def call(self, ctx, method, **kwargs):
        om = _oslo()
        try:
            return self.client.call(ctx, method, **kwargs)
        except om.MessagingTimeout as error:
            raise MessagingTimeout(str(error)) from None
        except om.RemoteError as error:
            raise RemoteError(error.exc_type, error.value) from None

    def cast(self, ctx, method, **kwargs):
        self.client.cast(ctx, method, **kwargs)


def _oslo_server(topic, server, endpoints, workers):
    om = _oslo()
    target = om.Target(topic=topic, server=server or config.CONF.host)
    return om.get_rpc_server(_get_oslo_transport(), target, endpoints, executor="threading",
                             serializer=_context_serializer())


# --- public interface -------------------------------------------------------------------

def _inproc() -> bool:
    return config.CONF.transport_url.startswith("inproc")


class RPCClient:
    """Client for one target: ``RPCClient("compute").prepare(server=host).cast(...)``."""

    def __init__(self, topic: str, server: str | None = None, timeout: float | None = 60):
        self.topic, self.server, self.timeout = topic, server, timeout
        impl = _InProcClient if _inproc() else _OsloClient
        self._impl = impl(topic, server, timeout)

    def prepare(self, server: str | None = None, timeout: float | None = None) -> "RPCClient":
        return RPCClient(self.topic, server or self.server, timeout or self.timeout)

    def call(self, ctx: RequestContext, method: str, **kwargs):
        return self._impl.call(ctx, method, **kwargs)

    def cast(self, ctx: RequestContext, method: str, **kwargs) -> None:
        self._impl.cast(ctx, method, **kwargs)


def get_server(topic: str, endpoints: list, server: str | None = None, workers: int = 8):
    """An RPC server for ``topic`` (and ``server`` for per-host topics); call start()."""
    if _inproc():
        return _InProcServer(topic, server, endpoints, workers)
    return _oslo_server(topic, server, endpoints, workers)


def cleanup() -> None:
    """Close the oslo.messaging transport, if one was opened."""
    global _oslo_transport
    if _oslo_transport is not None:
        _oslo_transport.cleanup()
        _oslo_transport = None
