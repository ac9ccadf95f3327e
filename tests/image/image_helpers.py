"""Helpers for the image tests: raw HTTP (httpx) against the running cloud's Glance API,
so tests see the exact status, headers and body a client gets. (A module of its own:
``from conftest import`` can resolve to another test directory's conftest.)"""
from __future__ import annotations

import os
import uuid

import httpx

PATCH_TYPE = "application/openstack-images-v2.1-json-patch"


def unique(prefix: str = "img") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class Glance:
    """One caller of the image API: a token, its project, and request helpers."""

    def __init__(self, cloud, session):
        self.cloud = cloud
        self.token = session.get_token()
        self.project_id = session.get_project_id()
        self.http = httpx.Client(base_url=cloud.url + "/image", timeout=60)

    def request(self, method, path, **kwargs) -> httpx.Response:
        # JSON error bodies, as openstacksdk asks for them (glance answers */* with HTML).
        headers = {"X-Auth-Token": self.token, "Accept": "application/json",
                   **kwargs.pop("headers", {})}
        return self.http.request(method, path, headers=headers, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def put(self, path, **kw):
        return self.request("PUT", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def patch(self, image_id, ops, content_type=PATCH_TYPE):
        import json

        return self.request("PATCH", f"/v2/images/{image_id}", content=json.dumps(ops),
                            headers={"Content-Type": content_type})

    def create(self, **attrs) -> dict:
        attrs.setdefault("name", unique())
        attrs.setdefault("disk_format", "raw")
        attrs.setdefault("container_format", "bare")
        r = self.post("/v2/images", json=attrs)
        assert r.status_code == 201, r.text
        return r.json()

    def upload(self, image_id, data: bytes, **headers) -> httpx.Response:
        return self.put(f"/v2/images/{image_id}/file", content=data,
                        headers={"Content-Type": "application/octet-stream", **headers})

    def create_active(self, data: bytes = b"pocketstack image data", **attrs) -> dict:
        image = self.create(**attrs)
        r = self.upload(image["id"], data)
        assert r.status_code == 204, r.text
        return self.get(f"/v2/images/{image['id']}").json()

    def show(self, image_id) -> dict:
        r = self.get(f"/v2/images/{image_id}")
        assert r.status_code == 200, r.text
        return r.json()


def store_dir() -> str:
    from pocketstack.common import config

    return config.CONF.image.filesystem_store_datadir


def files_of(image_id: str) -> list[str]:
    """Every file in the store (data, staging, temp) that belongs to ``image_id``."""
    found = []
    for root, _dirs, names in os.walk(store_dir()):
        found += [os.path.join(root, n) for n in names if n.startswith(image_id)]
    return found


def assert_error(r: httpx.Response, status: int, fragment: str = "") -> dict:
    """A glance error: the status, a JSON body with code/title/message, the message text."""
    assert r.status_code == status, f"{r.status_code} {r.text}"
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["code"].startswith(str(status)), body
    assert fragment in body["message"], body
    return body
