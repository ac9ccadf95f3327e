"""A whole plain object of 1 MiB or more goes from its file to the socket with sendfile
(wsgi/http_protocol.py); ranges and large objects' segments are read and sent as before.
Driven by python-swiftclient and a raw socket (a client going away mid-download)."""
from __future__ import annotations

import hashlib
import os
import socket
import struct
import time
import urllib.parse

import pytest

from pocketstack.wsgi import http_protocol

SIZE = 3 * 1024 * 1024 + 7  # over the 1 MiB threshold, not a multiple of any chunk


@pytest.fixture
def sendfile_calls(monkeypatch):
    """The byte counts each zero-copy download sent."""
    calls = []
    real = http_protocol._send_blocking

    def spy(*args):
        sent = real(*args)
        calls.append(sent)
        return sent

    monkeypatch.setattr(http_protocol, "_send_blocking", spy)
    return calls


def _settled(calls: list, count: int) -> list:
    """``calls`` once ``count`` sends are recorded: a send's thread records it just after
    the client has its last byte."""
    deadline = time.monotonic() + 10
    while len(calls) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return calls


def test_a_large_object_is_sent_whole_with_sendfile(owner, container, sendfile_calls):
    data = os.urandom(SIZE)
    owner.swift.put_object(container, "big", data)
    headers, body = owner.swift.get_object(container, "big")
    assert body == data
    assert headers["etag"].strip('"') == hashlib.md5(data).hexdigest()
    assert int(headers["content-length"]) == SIZE
    assert _settled(sendfile_calls, 1) == [SIZE]
    # the connection is reused afterwards (swiftclient keeps it alive)
    assert owner.swift.get_object(container, "big")[1] == data
    assert _settled(sendfile_calls, 2) == [SIZE, SIZE]


def test_ranges_heads_and_small_objects_are_sent_as_before(owner, container,
                                                           sendfile_calls):
    data = os.urandom(SIZE)
    owner.swift.put_object(container, "big", data)
    owner.swift.put_object(container, "small", data[:1000])
    _, part = owner.swift.get_object(container, "big",
                                     headers={"Range": "bytes=1048570-2097160"})
    assert part == data[1048570:2097161]
    assert owner.swift.head_object(container, "big")["content-length"] == str(SIZE)
    assert owner.swift.get_object(container, "small")[1] == data[:1000]
    assert sendfile_calls == []


def test_a_static_large_object_of_large_segments_is_read_and_sent(owner, container,
                                                                  sendfile_calls):
    first, second = os.urandom(SIZE), os.urandom(SIZE)
    owner.swift.put_object(container, "seg/1", first)
    owner.swift.put_object(container, "seg/2", second)
    manifest = ('[{"path": "/%s/seg/1"}, {"path": "/%s/seg/2"}]' % (container, container))
    owner.swift.put_object(container, "slo", manifest,
                           query_string="multipart-manifest=put")
    assert owner.swift.get_object(container, "slo")[1] == first + second
    assert sendfile_calls == []


def _data_file_fds(size: int) -> list[str]:
    """This process's (the cloud's) open descriptors on a file of ``size`` bytes."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("/") and os.path.getsize(target) == size:
                found.append(target)
        except OSError:
            continue
    return found


def test_a_client_going_away_mid_download_ends_the_send(owner, container):
    size = 64 * 1024 * 1024 + 3  # far more than the socket buffers hold
    owner.swift.put_object(container, "huge", b"\0" * size)
    url = urllib.parse.urlsplit(owner.url)
    sock = socket.create_connection((url.hostname, url.port), timeout=30)
    sock.sendall(f"GET {url.path}/{container}/huge HTTP/1.1\r\nHost: {url.netloc}\r\n"
                 f"X-Auth-Token: {owner.token}\r\n\r\n".encode())
    received = sock.recv(65536)
    assert received.startswith(b"HTTP/1.1 200")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()  # a reset, as a killed client's
    deadline = time.monotonic() + 20
    while _data_file_fds(size) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _data_file_fds(size) == []  # the object's file was closed
    # the server goes on serving, the object whole
    headers, body = owner.swift.get_object(container, "huge")
    assert len(body) == size and headers["etag"].strip('"') == hashlib.md5(body).hexdigest()
