"""Malformed frames on the `--workers` RPC sockets (common/rpc_unix.py).

A frame is a 4-byte length and a JSON object. A JSON list, a number, 100,000 nested lists
(json raises RecursionError) or an object that is not a call/cast message used to end its
connection's thread with a traceback (or log one through LOG.exception). Now each is
answered with an error frame, logged as one warning line, and the connection ends; the
server keeps serving everyone else. Through a real socket against a real UnixServer.
"""
from __future__ import annotations

import json
import logging
import socket
import struct
import threading
import uuid

import pytest

from pocketstack.common import config, rpc, runtime
from pocketstack.common.context import RequestContext

DEEP = 100_000
BAD_FRAMES = {
    "list": b"[1, 2]",
    "number": b"5",
    "string": b'"call"',
    "null": b"null",
    "deep-lists": b"[" * DEEP + b"]" * DEEP,
    "deep-objects": b'{"a":' * DEEP + b"1" + b"}" * DEEP,
    "not-json": b"{call",
    "not-utf8": b'{"call": "\xff"}',
    "empty": b"",
    "call-without-ctx": b'{"call": "echo", "kwargs": {"value": 1}}',
    "cast-without-kwargs": b'{"cast": "echo", "ctx": {}}',
    "method-not-text": b'{"call": 5, "ctx": {}, "kwargs": {}}',
    "ctx-a-list": b'{"call": "echo", "ctx": [], "kwargs": {"value": 1}}',
    "kwargs-a-list": b'{"call": "echo", "ctx": {}, "kwargs": [1]}',
}


class Endpoint:
    def echo(self, ctx, value):
        return value


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    config.register_opts()
    url = f"unix://{tmp_path_factory.mktemp('rpc-frames')}"
    topic = f"test-{uuid.uuid4().hex[:12]}"
    # A runtime of its own, as another process: the client must go through the socket.
    with runtime.Runtime("rpc-frames-server").activated():
        srv = rpc.get_server(topic, [Endpoint()], server="host-1", transport_url=url)
        srv.start()
    yield srv, topic, url
    srv.stop()
    srv.wait()
    rpc.cleanup()


@pytest.fixture
def thread_errors(monkeypatch):
    """Exceptions that end a thread (threading.excepthook prints them as tracebacks)."""
    seen: list = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    return seen


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.mark.parametrize("frame", BAD_FRAMES.values(), ids=BAD_FRAMES.keys())
def test_a_malformed_frame_is_an_error_and_one_log_line(server, frame, caplog,
                                                        thread_errors):
    srv, topic, url = server
    with caplog.at_level(logging.DEBUG), socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(30)
        sock.connect(srv.path)
        sock.sendall(struct.pack("!I", len(frame)) + frame)
        answer = _read_all(sock)  # returns once the server has closed the connection
    # An error frame, then the end of the connection.
    (size,) = struct.unpack("!I", answer[:4])
    assert len(answer) == 4 + size
    error = json.loads(answer[4:])["error"]
    assert error["class"] == "BadRequest" and len(error["message"]) < 200, error

    records = [r for r in caplog.records if r.name.startswith("pocketstack")]
    assert len(records) == 1, [r.getMessage() for r in records]
    assert records[0].levelno == logging.WARNING and records[0].exc_info is None
    assert "\n" not in records[0].getMessage() and len(records[0].getMessage()) < 300
    assert not thread_errors

    # The server goes on serving: a real client's call still works.
    client = rpc.RPCClient(topic, server="host-1", timeout=20, transport_url=url)
    context = RequestContext(user_id="u-1", project_id="p-1")
    assert client.call(context, "echo", value="still here") == "still here"
