"""Helpers of the volume tests (a module of their own: test modules do not import each
other): raw calls on the block-storage endpoint, a create, waits for a status or a 404."""
from __future__ import annotations

import time

EP = {"service_type": "block-storage", "interface": "public"}


class Raw:
    """keystoneauth1 calls on the catalog's block-storage endpoint; answers (status, body)."""

    def __init__(self, session, version="3.60"):
        self.session = session
        self.version = version

    def __call__(self, method, path, body=None, version=None, headers=None):
        h = {"OpenStack-API-Version": f"volume {version or self.version}"}
        h.update(headers or {})
        resp = self.session.request(path, method, json=body, endpoint_filter=EP,
                                    headers=h, raise_exc=False)
        try:
            data = resp.json()
        except ValueError:
            data = None
        return resp.status_code, data, resp.headers


def wait_status(raw, volume_id, wanted, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        status, body, _ = raw("GET", f"/volumes/{volume_id}")
        assert status == 200, body
        if body["volume"]["status"] in wanted if isinstance(wanted, tuple) else \
                body["volume"]["status"] == wanted:
            return body["volume"]
        assert time.monotonic() < deadline, body["volume"]
        time.sleep(0.05)


def wait_gone(raw, volume_id, timeout=30):
    deadline = time.monotonic() + timeout
    while raw("GET", f"/volumes/{volume_id}")[0] != 404:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def create(raw, **fields):
    fields.setdefault("size", 1)
    status, body, _ = raw("POST", "/volumes", {"volume": fields})
    assert status == 202, body
    return body["volume"]
