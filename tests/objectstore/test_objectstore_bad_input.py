"""Whatever a client sends gets swift's answer (a 4xx) — never a 500, a traceback or a
half-written object."""
from __future__ import annotations

import http.client
import urllib.parse

import pytest
import requests


def _raw(url: str, method: str, path: str, headers: dict, body: bytes = b""):
    """A request sent as is (no client-side URL normalization or header checks)."""
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for key, value in headers.items():
            conn.putheader(key, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("method, suffix, headers, body, status", [
    ("PUT", "/o", {"Content-Length": "abc"}, None, 400),
    ("PUT", "/o", {"X-Delete-At": "soon"}, b"x", 400),
    ("PUT", "/o", {"X-Delete-After": "-5"}, b"x", 400),
    ("PUT", "/o", {"If-None-Match": "abc"}, b"x", 400),
    ("PUT", "/o", {"X-Copy-From": "no-slash"}, b"", 412),
    ("COPY", "/o", {}, b"", 412),
    ("COPY", "/o", {"Destination": "nowhere"}, b"", 412),
    ("GET", "?limit=abc", {}, b"", 412),
    ("GET", "?limit=-1", {}, b"", 412),
    ("GET", "?delimiter=ab", {}, b"", 412),
    ("GET", "/missing", {"Range": "bytes=-"}, b"", 404),
    ("GET", "/missing", {"If-Modified-Since": "garbage"}, b"", 404),
    ("POST", "/missing", {"X-Object-Meta-A": "b"}, b"", 404),
    ("PUT", "/m?multipart-manifest=put", {}, b'[{"path": 5}]', 400),
    ("PUT", "/m?multipart-manifest=put", {}, b'{"path": "/a/b"}', 400),
    ("PUT", "/m?multipart-manifest=put", {}, b"\xff\xfe", 400),
    ("POST", "", {"X-Container-Meta-Quota-Bytes": "lots"}, b"", 400),
    ("POST", "", {"Content-Type": "multipart/form-data"}, b"junk", 400),
    ("POST", "", {"Content-Type": "multipart/form-data; boundary=x"}, b"--x\r\n", 400),
])
def test_bad_requests_get_swift_statuses(owner, container, method, suffix, headers, body,
                                         status):
    url = f"{owner.url}/{container}{suffix}"
    if body is None:  # a header requests would refuse to send
        base = urllib.parse.urlparse(url)
        got, text = _raw(url, method, base.path, {**owner.headers, **headers})
        assert got == status, text
        return
    r = requests.request(method, url, data=body, headers={**owner.headers, **headers})
    assert r.status_code == status, r.text
    assert r.headers["X-Trans-Id"].startswith("tx")
    assert [o["name"] for o in owner.swift.get_container(container)[1]] == []


def test_bad_paths_and_bodies(owner, container):
    base = urllib.parse.urlparse(owner.url)
    for path, status in ((f"{base.path}/{container}/%FF%FE", 412),
                         (f"{base.path}/{container}/a%00b", 412),
                         (f"{base.path}/{container}%00", 412),
                         ("/object-store/v2/AUTH_x", 404),
                         (f"{base.path}/{container}?prefix=%00", 400)):
        got, text = _raw(owner.url, "GET", path, owner.headers)
        assert got == status, (path, text)
    r = requests.post(f"{owner.url}?bulk-delete", data=b"\xff\xfe/\x00",
                      headers={**owner.headers, "Accept": "application/json"})
    assert r.status_code == 200 and r.json()["Response Status"] == "400 Bad Request"
    r = requests.put(f"{owner.url}/{container}/o", data=b"x",
                     headers={**owner.headers, **{f"X-Object-Meta-{i}": "v"
                                                  for i in range(91)}})
    assert r.status_code == 400
