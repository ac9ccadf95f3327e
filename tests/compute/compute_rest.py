"""Raw REST access to /compute/v2.1 at a chosen microversion, and to the volume service,
for the compute tests (its own module, not conftest: `from conftest import` is ambiguous
where several conftests load)."""
from __future__ import annotations

import time
import uuid


def public_image(cloud, name: str | None = None) -> str:
    """The id of a new small public active image (a 1 MiB qcow2 header, so its data is
    what it claims), named like DevStack's cirros unless ``name`` is given."""
    from pocketstack.common.image_formats import qcow2_header

    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images", json={
        "name": name or f"cirros-test-{uuid.uuid4().hex[:6]}", "disk_format": "qcow2",
        "container_format": "bare", "visibility": "public"}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=qcow2_header(1 << 20),
          headers={"Content-Type": "application/octet-stream"})
    return image["id"]


class Compute:
    """Raw REST access to /compute/v2.1 with one keystoneauth1 session."""

    def __init__(self, cloud, session, version="2.79"):
        self.cloud, self.s = cloud, session
        self.base = cloud.url + "/compute/v2.1"
        self.headers = {"OpenStack-API-Version": f"compute {version}"}

    def req(self, method, path, json=None, headers=None, **kw):
        h = dict(self.headers, **(headers or {}))
        return self.s.request(self.base + path, method, json=json, headers=h, raise_exc=False,
                              **kw)

    def get(self, path, **kw):
        return self.req("GET", path, **kw)

    def post(self, path, json=None, **kw):
        return self.req("POST", path, json=json, **kw)

    def delete(self, path, **kw):
        return self.req("DELETE", path, **kw)

    def boot(self, image_id, name=None, flavor="42", networks="none", **extra):
        body = {"server": dict({"name": name or f"vm-{uuid.uuid4().hex[:6]}", "imageRef": image_id,
                                "flavorRef": flavor, "networks": networks}, **extra)}
        r = self.post("/servers", body)
        assert r.status_code == 202, r.text
        return r.json()["server"]["id"]

    def server(self, sid):
        r = self.get(f"/servers/{sid}")
        return r.json()["server"] if r.status_code == 200 else None

    def wait(self, sid, statuses=("ACTIVE", "ERROR"), timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.server(sid)
            if s is None and "DELETED" in statuses:
                return None
            if s is not None and s["status"] in statuses:
                return s
            time.sleep(0.02)
        raise AssertionError(f"server {sid} not in {statuses} after {timeout}s: {s}")

    def wait_gone(self, sid, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.get(f"/servers/{sid}").status_code == 404:
                return
            time.sleep(0.02)
        raise AssertionError(f"server {sid} still exists")


VOLUME_API = {"OpenStack-API-Version": "volume 3.60"}


class Volumes:
    """The volume service through the catalog's block-storage endpoint, as a user."""

    def __init__(self, session):
        self.s = session

    def req(self, method, path, json=None, version=None):
        headers = {"OpenStack-API-Version": f"volume {version}"} if version else VOLUME_API
        r = self.s.request(path, method, json=json, headers=headers, raise_exc=False,
                           endpoint_filter={"service_type": "block-storage",
                                            "interface": "public"})
        return r

    def create(self, size=1, **extra):
        r = self.req("POST", "/volumes", {"volume": dict({"size": size,
                                                          "name": f"v-{uuid.uuid4().hex[:6]}"},
                                                         **extra)})
        assert r.status_code == 202, r.text
        return self.wait(r.json()["volume"]["id"], "available")

    def get(self, volume_id):
        r = self.req("GET", f"/volumes/{volume_id}")
        return r.json()["volume"] if r.status_code == 200 else None

    def wait(self, volume_id, status, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            volume = self.get(volume_id)
            if (volume or {}).get("status") == status or (volume is None and
                                                           status == "deleted"):
                return volume
            assert time.monotonic() < deadline, f"{volume_id} not {status}: {volume}"
            time.sleep(0.02)
