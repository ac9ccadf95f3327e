"""RPC between services: ``call`` waits for an answer, ``cast`` fires and forgets.

Two transports behind one interface, chosen by ``[DEFAULT] transport_url``:

* ``inproc://`` (default, all-in-one, common/rpc_inproc.py): messages are dispatched
  inside the process. Every
  message is still JSON-serialized on the way in and out, so code that works here only
  sends primitives and works unchanged over RabbitMQ. Casts run on a per-server worker
  pool, as they would in another process.
* ``unix:///dir``: Unix domain sockets between the processes of one machine
  (`pocketstack up --workers N`, common/rpc_unix.py); no broker.
* ``rabbit://…``: oslo.messaging (imported only then: it costs half a second of start-up).

Targets follow nova: topic ``conductor``, ``scheduler``, ``compute`` with ``server=<host>``.
The RequestContext travels inside every message and is rebuilt on the receiving side.
"""
from __future__ import annotations

import logging
import socket
import sys
import threading
import warnings
from typing import Any

from pocketstack.common import config, exceptions, runtime
from pocketstack.common.context import RequestContext
from pocketstack.common.rpc_errors import (  # callers catch them as rpc.MessagingTimeout etc.
    MessagingTimeout, MessagingUnavailable, NoSuchMethod, RemoteError, exception_from_dict,
    exception_to_dict)
from pocketstack.common.rpc_inproc import InProcClient, InProcServer

LOG = logging.getLogger(__name__)


# --- oslo.messaging transport ---------------------------------------------------------

# oslo.messaging gets oslo's global cfg.CONF (it registers its [DEFAULT] transport_url and
# [oslo_messaging_*] options there, some only there), parsed from pocketstack's config
# files; pocketstack's own options live on config.CONF, a separate object.
_oslo_lock = threading.Lock()


def _oslo_transports() -> dict[str, Any]:
    """The current cloud's oslo.messaging transports, by transport_url."""
    return runtime.current().slot(__name__ + ".oslo", dict)


_oslo_configured = False

# A domain error raised by an endpoint travels back as this reply, in the same shape as the
# in-process transport uses, so the caller gets the same exception type and message on both
# transports (oslo.messaging would otherwise need every module listed in
# allowed_remote_exmods and would log each expected error with a traceback).
_ERROR_KEY = "__pocketstack_error__"


def _oslo():
    with warnings.catch_warnings():
        # oslo.messaging imports oslo.service, which warns about eventlet on import; we
        # use its threading executor and never eventlet.
        warnings.filterwarnings("ignore", module="oslo_service")
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="oslo_utils")
        import oslo_messaging
    return oslo_messaging


def preload(transport_url: str | None = None) -> None:
    """Import the transport's library now. Processes call this on their main thread while
    starting: oslo.messaging imports eventlet, whose hub module copies the threading module
    (``eventlet.patcher.original``); done on any other thread (a request handler's, on the
    first RPC), that copy replaces the thread's exit sentinel, so at exit the interpreter
    waits forever for a thread that is long gone and the process never ends."""
    if is_oslo(transport_url or config.CONF.transport_url):
        _oslo()


def _get_oslo_transport(transport_url: str):
    global _oslo_configured
    transports = _oslo_transports()
    with _oslo_lock:
        if transport_url not in transports:
            from oslo_config import cfg

            om = _oslo()
            if not _oslo_configured:  # oslo's global CONF: parsed once per process
                cfg.CONF([], project="pocketstack", default_config_files=_config_files())
                _oslo_configured = True
            url = om.TransportURL.parse(cfg.CONF, transport_url)
            _check_reachable(url)
            transports[transport_url] = om.get_rpc_transport(cfg.CONF, url=url)
        return transports[transport_url]


def _config_files() -> list[str]:
    try:
        return list(config.CONF.config_file or [])
    except Exception:  # noqa: BLE001 - NoSuchOptError before the config was parsed
        return []


def _bus_topic(topic: str) -> str:
    """The topic's name on the broker: [DEFAULT] rpc_topic_prefix + topic."""
    return (config.CONF.rpc_topic_prefix or "") + topic


def _check_reachable(url) -> None:
    """Fail fast when no broker listens: oslo.messaging's reply listener would otherwise
    retry the connection forever and a first call would hang past its timeout."""
    errors = []
    for host in url.hosts:
        address = (host.hostname or "127.0.0.1", host.port or 5672)
        try:
            socket.create_connection(address, timeout=3).close()
            return
        except OSError as error:
            errors.append(f"{address[0]}:{address[1]}: {error.strerror or error}")
    if errors:
        raise MessagingUnavailable("Cannot reach the message bus (transport_url) at "
                                   + "; ".join(errors) + ".")


def _context_serializer():
    om = _oslo()

    class ContextSerializer(om.NoOpSerializer):
        def serialize_context(self, ctx):
            return ctx.to_dict()

        def deserialize_context(self, ctx):
            return RequestContext.from_dict(ctx)

    return ContextSerializer()


class _EndpointProxy:
    """An endpoint as oslo.messaging sees it: domain errors become an error reply."""

    def __init__(self, endpoint, topic: str):
        self._endpoint, self._topic = endpoint, topic
        self.target = getattr(endpoint, "target", None)
        self._runtime = runtime.current()  # oslo's worker threads serve this cloud

    def __getattr__(self, name):
        func = getattr(self._endpoint, name)
        if name.startswith("_") or not callable(func):
            return func

        def dispatch(ctx, **kwargs):
            try:
                with self._runtime.activated():
                    return func(ctx, **kwargs)
            except exceptions.PocketstackError as error:
                # Logged here because for a cast nobody else will see it.
                LOG.info("%s: RPC %s.%s: %s: %s", ctx.request_id, self._topic, name,
                         type(error).__name__, error.message)
                return {_ERROR_KEY: exception_to_dict(error)}
            except Exception as error:  # noqa: BLE001 - the caller gets a RemoteError
                LOG.exception("%s: RPC %s.%s failed", ctx.request_id, self._topic, name)
                return {_ERROR_KEY: exception_to_dict(error)}

        return dispatch


class _OsloClient:
    def __init__(self, topic: str, server: str | None, timeout: float | None,
                 transport_url: str):
        self.topic, self.server, self.timeout = topic, server, timeout
        self.transport_url = transport_url
        self._client = None

    @property
    def client(self):
        """Created on first use, so building an RPCClient never touches the network."""
        if self._client is None:
            om = _oslo()
            target = om.Target(topic=_bus_topic(self.topic), server=self.server)
            # retry bounds reconnecting while sending (1 + 3 s of back-off), so a request
            # whose broker went away fails with a 503 instead of hanging; servers keep
            # reconnecting.
            self._client = om.get_rpc_client(_get_oslo_transport(self.transport_url), target,
                                             timeout=self.timeout, retry=2,
                                             serializer=_context_serializer())
        return self._client

    def call(self, ctx, method, **kwargs):
        om = _oslo()
        try:
            result = self.client.call(ctx, method, **kwargs)
        except om.MessagingTimeout as error:
            raise MessagingTimeout(str(error)) from None
        except om.MessageDeliveryFailure as error:
            raise MessagingUnavailable(str(error)) from None
        except (om.NoSuchMethod, om.UnsupportedVersion) as error:
            raise NoSuchMethod(str(error)) from None
        except om.RemoteError as error:
            if error.exc_type in ("NoSuchMethod", "UnsupportedVersion"):  # the dispatcher's
                raise NoSuchMethod(error.value) from None
            raise RemoteError(error.exc_type, error.value) from None
        if isinstance(result, dict) and _ERROR_KEY in result:
            raise exception_from_dict(result[_ERROR_KEY])
        return result

    def cast(self, ctx, method, **kwargs):
        try:
            self.client.cast(ctx, method, **kwargs)
        except _oslo().MessageDeliveryFailure as error:
            raise MessagingUnavailable(str(error)) from None


class _OsloServer:
    """start/stop/wait like the in-process server; the pool size is ours, not oslo's 64."""

    def __init__(self, topic, server, endpoints, workers, transport_url):
        om = _oslo()
        target = om.Target(topic=_bus_topic(topic), server=server or config.CONF.host)
        self.workers = workers
        with warnings.catch_warnings():
            # Threading is the executor we want; oslo.messaging >= 17 warns that naming it
            # is deprecated (it became the only one), older releases default to another.
            warnings.simplefilter("ignore", DeprecationWarning)
            self.server = om.get_rpc_server(_get_oslo_transport(transport_url), target,
                                            [_EndpointProxy(e, topic) for e in endpoints],
                                            executor="threading",
                                            serializer=_context_serializer())

    def start(self):
        self.server.start(override_pool_size=self.workers)

    def stop(self):
        # amqp warns about the broker's consumer-cancel notices that cross the channel
        # closes asked for here; nothing anyone could act on while shutting down.
        logging.getLogger("amqp").setLevel(logging.ERROR)
        self.server.stop()

    def wait(self):
        self.server.wait()


# --- public interface -------------------------------------------------------------------

def is_inproc(transport_url: str) -> bool:
    return transport_url.startswith("inproc")


def is_unix(transport_url: str) -> bool:
    return transport_url.startswith("unix://")


def is_oslo(transport_url: str) -> bool:
    """A broker (oslo.messaging) carries the messages, and keeps them while nobody listens."""
    return not (is_inproc(transport_url) or is_unix(transport_url))


class RPCClient:
    """Client for one target: ``RPCClient("compute").prepare(server=host).cast(...)``.

    ``transport_url`` defaults to ``[DEFAULT] transport_url``.
    """

    def __init__(self, topic: str, server: str | None = None, timeout: float | None = 60,
                 transport_url: str | None = None):
        self.topic, self.server, self.timeout = topic, server, timeout
        self.transport_url = transport_url or config.CONF.transport_url
        if is_inproc(self.transport_url):
            self._impl = InProcClient(topic, server, timeout)
        elif is_unix(self.transport_url):
            from pocketstack.common import rpc_unix

            self._impl = rpc_unix.UnixClient(topic, server, timeout, self.transport_url)
        else:
            self._impl = _OsloClient(topic, server, timeout, self.transport_url)

    def prepare(self, server: str | None = None, timeout: float | None = None) -> "RPCClient":
        return RPCClient(self.topic, server or self.server, timeout or self.timeout,
                         self.transport_url)

    def call(self, ctx: RequestContext, method: str, **kwargs):
        return self._impl.call(ctx, method, **kwargs)

    def cast(self, ctx: RequestContext, method: str, **kwargs) -> None:
        self._impl.cast(ctx, method, **kwargs)


def current_client(client: "RPCClient | None", topic: str, timeout: float = 60) -> "RPCClient":
    """``client`` if it uses this cloud's transport, else a new client for ``topic``: a
    client kept across calls is made on first use (the transport is configured only once
    the cloud starts) and made again for another cloud in this process (the pytest plugin,
    tests), whose casts would otherwise go to the first cloud's sockets."""
    if client is None or client.transport_url != config.CONF.transport_url:
        return RPCClient(topic, timeout=timeout)
    return client


def get_server(topic: str, endpoints: list, server: str | None = None, workers: int = 8,
               transport_url: str | None = None, pool=None):
    """An RPC server for ``topic`` (and ``server`` for per-host topics); call start(), and
    stop() then wait() to shut it down. ``pool``: an executor shared with other servers
    (in-process transport only; oslo.messaging servers keep their own)."""
    transport_url = transport_url or config.CONF.transport_url
    if is_inproc(transport_url):
        return InProcServer(topic, server, endpoints, workers, pool)
    if is_unix(transport_url):
        from pocketstack.common import rpc_unix

        return rpc_unix.UnixServer(topic, server, endpoints, workers, transport_url)
    return _OsloServer(topic, server, endpoints, workers, transport_url)


def cleanup() -> None:
    """Close the oslo.messaging transports and idle unix:// connections, if any."""
    if "pocketstack.common.rpc_unix" in sys.modules:
        sys.modules["pocketstack.common.rpc_unix"].cleanup()
    transports = _oslo_transports()
    with _oslo_lock:
        while transports:
            transports.popitem()[1].cleanup()
