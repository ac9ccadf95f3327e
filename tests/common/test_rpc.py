"""RPC call and cast round-trip, in-process, over Unix sockets (`up --workers`) and through
the real RabbitMQ on 127.0.0.1.

Each test uses its own topic so servers from one test never answer another's messages.
The RabbitMQ variants skip (with the reason) only when no broker listens on 5672.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
import uuid

import pytest

from pocketstack.common import config, exceptions, rpc, runtime
from pocketstack.common.context import RequestContext

RABBIT_URL = "rabbit://guest:guest@127.0.0.1:5672/"


def _rabbit_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 5672), timeout=2).close()
        return True
    except OSError:
        return False


def _delete_queues(topic: str, server: str = "host-1") -> None:
    """oslo.messaging's topic queues outlive their servers: remove this test's two."""
    import kombu

    with kombu.Connection(RABBIT_URL.replace("rabbit://", "amqp://")) as conn:
        channel = conn.channel()
        for queue in (topic, f"{topic}.{server}"):
            channel.queue_delete(queue)


@pytest.fixture(scope="module", params=["inproc://", "unix://", RABBIT_URL],
                ids=["inproc", "unix", "rabbit"])
def transport_url(request):
    config.register_opts()
    if request.param == RABBIT_URL and not _rabbit_up():
        pytest.skip("RabbitMQ is not listening on 127.0.0.1:5672")
    if request.param == "unix://":
        directory = tempfile.mkdtemp(prefix="rpc-unix-")
        yield "unix://" + directory
        rpc.cleanup()
        shutil.rmtree(directory, ignore_errors=True)
        return
    yield request.param
    if request.param == RABBIT_URL:
        rpc.cleanup()


def _elsewhere(transport_url: str):
    """Where the test's servers run: for unix://, a runtime of its own, as another process
    would be (a server in the client's own runtime is called directly, not through its
    socket)."""
    if rpc.is_unix(transport_url):
        return runtime.Runtime("rpc-test-server").activated()
    return contextlib.nullcontext()


class Endpoint:
    """Records what arrives; answers with what it saw."""

    def __init__(self):
        self.casts: list = []
        self.cast_seen = threading.Event()

    def echo(self, ctx, value, extra=None):
        return {"value": value, "extra": extra, "context": ctx.to_dict()}

    def remember(self, ctx, value):
        self.casts.append((ctx.to_dict(), value))
        self.cast_seen.set()

    def not_found(self, ctx, name):
        raise exceptions.NotFound(f"No thing named {name}.")

    def conflict(self, ctx):
        raise exceptions.Conflict("Thing is busy.")

    def bug(self, ctx):
        raise ZeroDivisionError("division by zero")

    def _private(self, ctx):
        return "should never be reachable"


@pytest.fixture(scope="module")
def _server(transport_url):
    # One server per transport for the module: stopping an oslo.messaging server takes
    # a second of polling, too slow to pay per test.
    topic = f"test-{uuid.uuid4().hex[:12]}"
    endpoint = Endpoint()
    with _elsewhere(transport_url):
        server = rpc.get_server(topic, [endpoint], server="host-1",
                                transport_url=transport_url)
        server.start()
    try:
        yield topic, endpoint
    finally:
        server.stop()
        server.wait()
        if transport_url == RABBIT_URL:
            _delete_queues(topic)


@pytest.fixture
def served(_server, transport_url):
    """(client, endpoint): a client for a topic that one server listens on."""
    topic, endpoint = _server
    endpoint.casts.clear()
    endpoint.cast_seen.clear()
    return rpc.RPCClient(topic, timeout=20, transport_url=transport_url), endpoint


def _context() -> RequestContext:
    return RequestContext(user_id="u-1", user_name="alice", project_id="p-1",
                          roles=["member", "reader"], auth_token="tok",
                          audit_ids=["aud-1"])


def test_call_returns_the_answer_and_the_context_arrives_intact(served):
    client, _ = served
    ctx = _context()
    reply = client.call(ctx, "echo", value=[1, "two", {"three": 3.0}], extra=None)
    assert reply["value"] == [1, "two", {"three": 3.0}]
    assert reply["extra"] is None
    assert reply["context"] == ctx.to_dict()
    assert reply["context"]["request_id"] == ctx.request_id


def test_call_to_a_named_server(served):
    client, _ = served
    reply = client.prepare(server="host-1").call(_context(), "echo", value="hi")
    assert reply["value"] == "hi"


def test_cast_is_delivered_with_its_context(served):
    client, endpoint = served
    ctx = _context()
    assert client.cast(ctx, "remember", value={"n": 1}) is None
    assert endpoint.cast_seen.wait(20), "the cast never arrived"
    seen_ctx, value = endpoint.casts[0]
    assert value == {"n": 1}
    assert seen_ctx["request_id"] == ctx.request_id
    assert seen_ctx == ctx.to_dict()


@pytest.mark.parametrize("method,kwargs,error_type,message", [
    ("not_found", {"name": "x"}, exceptions.NotFound, "No thing named x."),
    ("conflict", {}, exceptions.Conflict, "Thing is busy."),
])
def test_domain_exceptions_come_back_as_their_own_type(served, method, kwargs, error_type,
                                                       message):
    client, _ = served
    with pytest.raises(error_type) as info:
        client.call(_context(), method, **kwargs)
    assert type(info.value) is error_type
    assert info.value.message == message
    assert info.value.code == error_type.code


def test_unexpected_exception_is_a_remote_error_without_traceback(served):
    client, _ = served
    with pytest.raises(rpc.RemoteError) as info:
        client.call(_context(), "bug")
    assert info.value.exc_type == "ZeroDivisionError"
    assert "division by zero" in info.value.message
    assert "Traceback" not in info.value.message


@pytest.mark.parametrize("method", ["missing", "_private"])
def test_unknown_or_private_method_is_refused(served, method):
    client, _ = served
    with pytest.raises(rpc.NoSuchMethod):
        client.call(_context(), method)


def test_call_with_nothing_listening_fails_instead_of_hanging(transport_url):
    client = rpc.RPCClient(f"nobody-{uuid.uuid4().hex[:8]}", timeout=2,
                           transport_url=transport_url)
    with pytest.raises(rpc.MessagingTimeout):
        client.call(_context(), "echo", value=1)


def test_non_primitive_arguments_are_rejected_in_process():
    """The in-process bus serializes like the real one: objects must not slip through."""
    config.register_opts()
    topic = f"test-{uuid.uuid4().hex[:12]}"
    server = rpc.get_server(topic, [Endpoint()], transport_url="inproc://")
    server.start()
    try:
        with pytest.raises(TypeError):
            rpc.RPCClient(topic, transport_url="inproc://").call(_context(), "echo",
                                                                  value=object())
    finally:
        server.stop()
        server.wait()


def test_unreachable_broker_fails_fast_with_a_clear_error():
    config.register_opts()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = rpc.RPCClient("anything", timeout=5,
                           transport_url=f"rabbit://guest:guest@127.0.0.1:{port}/")
    with pytest.raises(rpc.MessagingUnavailable) as info:
        client.call(_context(), "echo", value=1)
    assert f"127.0.0.1:{port}" in info.value.message
    assert info.value.code == 503
    with pytest.raises(rpc.MessagingUnavailable):
        client.cast(_context(), "echo", value=1)


def test_topic_prefix_keeps_clouds_on_one_vhost_apart():
    """[DEFAULT] rpc_topic_prefix: two clouds on one RabbitMQ vhost never see each other's
    messages (each hears only its own prefixed topics)."""
    config.register_opts()
    if not _rabbit_up():
        pytest.skip("RabbitMQ is not listening on 127.0.0.1:5672")
    topic = f"test-{uuid.uuid4().hex[:12]}"
    try:
        config.CONF.set_override("rpc_topic_prefix", "cloud-a.")
        server = rpc.get_server(topic, [Endpoint()], server="host-1", transport_url=RABBIT_URL)
        server.start()
        try:
            client = rpc.RPCClient(topic, timeout=20, transport_url=RABBIT_URL)
            assert client.call(_context(), "echo", value="a")["value"] == "a"
            config.CONF.set_override("rpc_topic_prefix", "cloud-b.")
            other = rpc.RPCClient(topic, timeout=2, transport_url=RABBIT_URL)
            with pytest.raises(rpc.MessagingTimeout):
                other.call(_context(), "echo", value="b")
        finally:
            server.stop()
            server.wait()
            _delete_queues(f"cloud-a.{topic}")
    finally:
        config.CONF.clear_override("rpc_topic_prefix")


def test_unix_socket_of_a_live_server_is_not_taken_over_and_a_stale_one_is(tmp_path):
    """Two agents for one host would split its messages; a socket file a killed process
    left behind must not block the next start."""
    config.register_opts()
    url = f"unix://{tmp_path}"
    topic = f"test-{uuid.uuid4().hex[:12]}"
    with runtime.Runtime("rpc-first").activated():
        first = rpc.get_server(topic, [Endpoint()], server="host-1", transport_url=url)
        first.start()
    try:
        with runtime.Runtime("rpc-second").activated():
            with pytest.raises(exceptions.Conflict):
                rpc.get_server(topic, [Endpoint()], server="host-1", transport_url=url).start()
    finally:
        first.stop()
        first.wait()
    assert not os.listdir(tmp_path)  # stop removes its socket

    stale = socket.socket(socket.AF_UNIX)  # bound, never listening: what a dead one leaves
    stale.bind(os.path.join(tmp_path, f"{topic}@host-1.sock"))
    stale.close()
    with runtime.Runtime("rpc-third").activated():
        third = rpc.get_server(topic, [Endpoint()], server="host-1", transport_url=url)
        third.start()
    try:
        reply = rpc.RPCClient(topic, server="host-1", timeout=20, transport_url=url).call(
            _context(), "echo", value="after a stale socket")
        assert reply["value"] == "after a stale socket"
    finally:
        third.stop()
        third.wait()
        rpc.cleanup()


def test_a_kept_client_follows_the_transport_of_the_cloud_that_uses_it(cloud, tmp_path):
    """The compute API keeps one RPC client for the process (external events, actions):
    a second cloud in the process (the pytest plugin, tests) must reach its own hosts, not
    the sockets of the first cloud's transport."""
    from pocketstack.compute.conductor.rpcapi import ConductorAPI
    from pocketstack.compute.rest import external_events
    from pocketstack.compute.scheduler.rpcapi import SchedulerAPI

    kept = [external_events._compute, ConductorAPI(), SchedulerAPI()]
    first, second = (f"unix://{tmp_path}/{name}" for name in ("first", "second"))
    try:
        for url in (first, second):
            config.CONF.set_override("transport_url", url)
            assert [api.client.transport_url for api in kept] == [url] * 3
    finally:
        config.CONF.clear_override("transport_url")
