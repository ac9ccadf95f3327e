"""The HTTP protocol the cloud serves with (wsgi/http_protocol.py: a response's head and
body written together), over a raw socket so nothing hides what goes on the wire:
pipelined requests are answered whole and in order, a HEAD carries no body, a body larger
than what is held back arrives whole, and the connection stays usable after each."""
from __future__ import annotations

import socket
import urllib.parse

import pytest


@pytest.fixture
def conn(cloud):
    url = urllib.parse.urlsplit(cloud.url)
    sock = socket.create_connection((url.hostname, url.port), timeout=30)
    yield sock, url.netloc
    sock.close()


class Reader:
    def __init__(self, sock):
        self.sock, self.buffer = sock, b""

    def _fill(self):
        more = self.sock.recv(65536)
        assert more, "the server closed the connection"
        self.buffer += more

    def _take(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self._fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._fill()
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def response(self, head_only: bool = False) -> tuple[int, dict, bytes]:
        status = int(self._line().split()[1])
        headers = {}
        while line := self._line():
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        if head_only:
            return status, headers, b""
        if headers.get("transfer-encoding") == "chunked":
            body = b""
            while size := int(self._line(), 16):
                body += self._take(size)
                assert self._take(2) == b"\r\n"
            assert self._line() == b""
            return status, headers, body
        return status, headers, self._take(int(headers["content-length"]))


def _request(method: str, path: str, host: str, headers: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n{headers}\r\n".encode()


def test_pipelined_requests_are_answered_whole_and_in_order(conn):
    sock, host = conn
    sock.sendall(_request("GET", "/identity/v3", host)
                 + _request("GET", "/identity/no-such-path", host)
                 + _request("GET", "/identity/v3", host))
    reader = Reader(sock)
    answers = [reader.response() for _ in range(3)]
    assert [status for status, _, _ in answers] == [200, 404, 200]
    assert b'"version"' in answers[0][2] and answers[0][2] == answers[2][2]
    assert b'"error"' in answers[1][2]


def test_head_then_get_on_one_connection(conn):
    sock, host = conn
    reader = Reader(sock)
    sock.sendall(_request("HEAD", "/identity/v3", host))
    status, headers, _ = reader.response(head_only=True)
    assert status == 200 and int(headers["content-length"]) > 0
    sock.sendall(_request("GET", "/identity/v3", host))
    status, get_headers, body = reader.response()
    assert status == 200 and len(body) == int(headers["content-length"])
    assert reader.buffer == b""  # the HEAD's answer carried no body


def test_a_large_object_then_a_small_request_on_one_connection(conn, admin):
    """A body larger than what the transport holds back, written in pieces, then the same
    connection answers again."""
    sock, host = conn
    token = admin.get_token()
    storage = admin.get_endpoint(service_type="object-store", interface="public")
    path = urllib.parse.urlsplit(storage).path
    data = bytes(range(256)) * 12289  # ~3 MiB, not a multiple of any chunk size
    reader = Reader(sock)
    auth = f"X-Auth-Token: {token}\r\n"
    sock.sendall(_request("PUT", f"{path}/protocol-test", host, auth))
    assert reader.response()[0] in (201, 202)
    sock.sendall(_request("PUT", f"{path}/protocol-test/big", host,
                          auth + f"Content-Length: {len(data)}\r\n") + data)
    assert reader.response()[0] == 201
    sock.sendall(_request("GET", f"{path}/protocol-test/big", host, auth))
    status, _, body = reader.response()
    assert status == 200 and body == data
    sock.sendall(_request("GET", f"{path}/protocol-test?format=json", host, auth))
    status, _, body = reader.response()
    assert status == 200 and b'"big"' in body
    for name in ("protocol-test/big", "protocol-test"):
        sock.sendall(_request("DELETE", f"{path}/{name}", host, auth))
        assert reader.response()[0] == 204
