"""The image service's rbd store against a real Ceph cluster: real HTTP, the RBD
images checked with the admin's rbd bindings."""
from __future__ import annotations

import hashlib
import os
import pathlib
import socket
import time
import uuid

import httpx
import pytest

HERE = pathlib.Path(__file__).parent


import ceph_helpers as _ceph  # noqa: E402
from helpers.cloud import own_cloud  # noqa: E402


@pytest.fixture(scope="module")
def cloud(ceph):
    with own_cloud("ceph-images", **_ceph.ceph_overrides(ceph),
                   **{"image.default_store": "rbd", "image.show_image_direct_url": True}) as c:
        yield c


@pytest.fixture(scope="module")
def admin_rados(ceph):
    conn = ceph.admin()
    yield conn
    conn.shutdown()


@pytest.fixture(scope="module")
def pool(ceph, admin_rados):
    return admin_rados.open_ioctx(ceph.names["image_pool"])


class Glance:
    def __init__(self, cloud, session):
        self.token = session.get_token()
        self.project_id = session.get_project_id()
        self.http = httpx.Client(base_url=cloud.url + "/image", timeout=120)

    def request(self, method, path, **kw):
        headers = {"X-Auth-Token": self.token, "Accept": "application/json",
                   **kw.pop("headers", {})}
        return self.http.request(method, path, headers=headers, **kw)

    def create(self, **attrs) -> dict:
        attrs = {"name": f"img-{uuid.uuid4().hex[:8]}", "disk_format": "raw",
                 "container_format": "bare", **attrs}
        r = self.request("POST", "/v2/images", json=attrs)
        assert r.status_code == 201, r.text
        return r.json()

    def upload(self, image_id, content, **headers):
        return self.request("PUT", f"/v2/images/{image_id}/file", content=content,
                            headers={"Content-Type": "application/octet-stream", **headers})

    def show(self, image_id) -> dict:
        r = self.request("GET", f"/v2/images/{image_id}")
        assert r.status_code == 200, r.text
        return r.json()


@pytest.fixture(scope="module")
def admin(cloud):
    return Glance(cloud, cloud.session())


@pytest.fixture(scope="module")
def member(cloud):
    return Glance(cloud, cloud.user_session(cloud.make_user()))


def rbd_names(pool) -> list[str]:
    import rbd

    return rbd.RBD().list(pool)


def snap_of(pool, name) -> dict:
    import rbd

    with rbd.Image(pool, name, read_only=True) as image:
        snaps = {s["name"]: s for s in image.list_snaps()}
        assert "snap" in snaps, snaps
        return {"protected": image.is_protected_snap("snap"), "size": image.size()}


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_upload_download_byte_identical_with_protected_snapshot(cloud, admin, pool, ceph):
    data = os.urandom(5 << 20) + b"tail"
    image = admin.create()
    r = admin.upload(image["id"], data)
    assert r.status_code == 204, r.text
    shown = admin.show(image["id"])
    assert shown["status"] == "active" and shown["size"] == len(data)
    assert shown["checksum"] == hashlib.md5(data).hexdigest()
    assert shown["os_hash_algo"] == "sha512"
    assert shown["os_hash_value"] == hashlib.sha512(data).hexdigest()
    assert snap_of(pool, image["id"]) == {"protected": True, "size": len(data)}
    fsid = admin_fsid(ceph)
    assert shown["direct_url"] == f"rbd://{fsid}/{ceph.names['image_pool']}/{image['id']}/snap"
    assert shown["stores"] == "rbd"
    got = admin.request("GET", f"/v2/images/{image['id']}/file")
    assert got.status_code == 200 and got.content == data
    assert got.headers["Content-MD5"] == shown["checksum"]
    part = admin.request("GET", f"/v2/images/{image['id']}/file",
                         headers={"Range": "bytes=4194300-4194311"})
    assert part.status_code == 206 and part.content == data[4194300:4194312]


def admin_fsid(ceph) -> str:
    conn = ceph.admin()
    try:
        return conn.get_fsid()
    finally:
        conn.shutdown()


def test_chunked_upload_of_unknown_size(admin, pool):
    pieces = [os.urandom(777_777) for _ in range(9)]
    image = admin.create()
    r = admin.upload(image["id"], iter(pieces))  # no Content-Length: chunked
    assert r.status_code == 204, r.text
    data = b"".join(pieces)
    shown = admin.show(image["id"])
    assert shown["size"] == len(data) and shown["checksum"] == hashlib.md5(data).hexdigest()
    assert snap_of(pool, image["id"])["size"] == len(data)
    assert admin.request("GET", f"/v2/images/{image['id']}/file").content == data


def test_direct_url_and_locations_as_glance_shows_them(cloud, admin, member, ceph):
    from pocketstack.common import config

    image = admin.create(visibility="public")
    assert admin.upload(image["id"], b"public data").status_code == 204
    url = admin.show(image["id"])["direct_url"]
    # glance gates them by its options only: whoever sees the image sees them.
    seen = member.show(image["id"])
    assert seen["direct_url"] == url and "locations" not in seen
    queued = member.show(member.create()["id"])
    assert "direct_url" not in queued and "stores" not in queued
    with cloud.cloud.runtime.activated():
        config.CONF.set_override("show_multiple_locations", True, group="image")
        config.CONF.set_override("show_image_direct_url", False, group="image")
    try:
        for caller in (admin, member):
            shown = caller.show(image["id"])
            assert shown["locations"] == [{"url": url, "metadata": {"store": "rbd"}}]
            assert "direct_url" not in shown
        assert member.show(queued["id"])["locations"] == []
        listed = admin.request("GET", "/v2/images", params={"id": image["id"]}).json()
        assert listed["images"][0]["locations"][0]["url"] == url
    finally:
        with cloud.cloud.runtime.activated():
            # Back to the cloud's overrides (clear_override would drop those too).
            config.CONF.set_override("show_multiple_locations", False, group="image")
            config.CONF.set_override("show_image_direct_url", True, group="image")


def test_delete_removes_the_rbd_image(admin, pool):
    image = admin.create()
    assert admin.upload(image["id"], b"x" * 100_000).status_code == 204
    assert image["id"] in rbd_names(pool)
    assert admin.request("DELETE", f"/v2/images/{image['id']}").status_code == 204
    assert image["id"] not in rbd_names(pool)


def test_delete_of_an_image_with_a_clone_is_409_and_keeps_it(admin, pool, ceph, admin_rados):
    import rbd

    image = admin.create()
    assert admin.upload(image["id"], b"parent" * 1000).status_code == 204
    volumes = admin_rados.open_ioctx(ceph.names["volume_pool"])
    clone = f"clone-{uuid.uuid4().hex[:8]}"
    rbd.RBD().clone(pool, image["id"], "snap", volumes, clone)
    try:
        r = admin.request("DELETE", f"/v2/images/{image['id']}")
        assert r.status_code == 409, r.text
        assert "in use" in r.text
        assert admin.show(image["id"])["status"] == "active"
        assert snap_of(pool, image["id"])["protected"]
        assert admin.request("GET", f"/v2/images/{image['id']}/file").content == \
            b"parent" * 1000
    finally:
        rbd.RBD().remove(volumes, clone)
    assert admin.request("DELETE", f"/v2/images/{image['id']}").status_code == 204
    assert image["id"] not in rbd_names(pool)


def test_stage_and_import_land_in_rbd(admin, pool):
    data = os.urandom(3 << 20)
    image = admin.create()
    r = admin.request("PUT", f"/v2/images/{image['id']}/stage", content=data,
                      headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    assert image["id"] not in rbd_names(pool)
    r = admin.request("POST", f"/v2/images/{image['id']}/import",
                      json={"method": {"name": "glance-direct"}})
    assert r.status_code == 202, r.text
    shown = admin.show(image["id"])
    assert shown["status"] == "active" and shown["stores"] == "rbd"
    assert shown["os_hash_value"] == hashlib.sha512(data).hexdigest()
    assert snap_of(pool, image["id"]) == {"protected": True, "size": len(data)}
    assert admin.request("GET", f"/v2/images/{image['id']}/file").content == data


def test_import_into_an_unknown_store_is_409(admin):
    image = admin.create()
    admin.request("PUT", f"/v2/images/{image['id']}/stage", content=b"s",
                  headers={"Content-Type": "application/octet-stream"})
    r = admin.request("POST", f"/v2/images/{image['id']}/import",
                      json={"method": {"name": "glance-direct"}, "stores": ["nope"]})
    assert r.status_code == 409, r.text
    assert admin.upload(admin.create()["id"], b"x",
                        **{"X-Image-Meta-Store": "nope"}).status_code == 400


def test_an_upload_cut_off_halfway_leaves_no_rbd_image(cloud, admin, pool):
    image = admin.create()
    host, port = cloud.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall((f"PUT /image/v2/images/{image['id']}/file HTTP/1.1\r\n"
                      f"Host: {host}\r\nX-Auth-Token: {admin.token}\r\n"
                      "Content-Type: application/octet-stream\r\n"
                      f"Content-Length: {24 << 20}\r\n\r\n").encode())
        sock.sendall(b"q" * (10 << 20))
        assert wait_for(lambda: admin.show(image["id"])["status"] == "saving")
        assert wait_for(lambda: image["id"] in rbd_names(pool))
    assert wait_for(lambda: admin.show(image["id"])["status"] == "queued")
    assert wait_for(lambda: image["id"] not in rbd_names(pool))
    # ... and it can be uploaded again.
    assert admin.upload(image["id"], b"complete").status_code == 204
    assert admin.request("GET", f"/v2/images/{image['id']}/file").content == b"complete"


def test_switching_default_store_still_serves_the_other_stores_images(cloud, admin, pool):
    from pocketstack.common import config

    in_rbd = admin.create()
    assert admin.upload(in_rbd["id"], b"in rbd").status_code == 204
    with cloud.cloud.runtime.activated():
        config.CONF.set_override("default_store", "file", group="image")
    try:
        in_file = admin.create()
        assert admin.upload(in_file["id"], b"in file").status_code == 204
        assert admin.show(in_file["id"])["stores"] == "file"
        assert admin.show(in_file["id"])["direct_url"].startswith("file://")
        assert in_file["id"] not in rbd_names(pool)
        assert admin.request("GET", f"/v2/images/{in_rbd['id']}/file").content == b"in rbd"
        # X-Image-Meta-Store picks the other store for one upload.
        picked = admin.create()
        assert admin.upload(picked["id"], b"picked",
                            **{"X-Image-Meta-Store": "rbd"}).status_code == 204
        assert picked["id"] in rbd_names(pool)
    finally:
        with cloud.cloud.runtime.activated():
            config.CONF.set_override("default_store", "rbd", group="image")
    assert admin.request("GET", f"/v2/images/{in_file['id']}/file").content == b"in file"
    assert admin.request("DELETE", f"/v2/images/{in_rbd['id']}").status_code == 204
    assert admin.request("DELETE", f"/v2/images/{in_file['id']}").status_code == 204


def test_info_stores(admin, member, ceph):
    listed = admin.request("GET", "/v2/info/stores").json()["stores"]
    assert [s["id"] for s in listed] == ["file", "rbd"]
    assert [s for s in listed if s.get("default") == "true"][0]["id"] == "rbd"
    detail = admin.request("GET", "/v2/info/stores/detail")
    assert detail.status_code == 200, detail.text
    rbd_entry = [s for s in detail.json()["stores"] if s["id"] == "rbd"][0]
    assert rbd_entry["type"] == "rbd"
    assert rbd_entry["properties"]["pool"] == ceph.names["image_pool"]
    assert rbd_entry["properties"]["fsid"] == admin_fsid(ceph)
    assert member.request("GET", "/v2/info/stores").status_code == 200
    assert member.request("GET", "/v2/info/stores/detail").status_code == 403


def test_ceph_unreachable_is_503_and_the_image_stays_queued(cloud, admin, monkeypatch):
    from pocketstack.common import ceph as common_ceph
    from pocketstack.image import rbd_store

    def unreachable(pool_name=None):
        raise common_ceph.CephUnavailable("Cannot reach the Ceph cluster (test)")

    monkeypatch.setattr(rbd_store, "_ioctx", unreachable)
    image = admin.create()
    r = admin.upload(image["id"], b"x" * 1000)
    assert r.status_code == 503, r.text
    assert "Cannot reach the Ceph cluster" in r.text
    assert admin.show(image["id"])["status"] == "queued"


def test_orphans_are_removed_at_start_and_reported_by_audit(cloud, admin, pool):
    import rbd

    from pocketstack.cli import audit
    from pocketstack.common import db
    from pocketstack.image import service

    orphan = str(uuid.uuid4())
    rbd.RBD().create(pool, orphan, 1 << 20)
    with rbd.Image(pool, orphan) as image:
        image.create_snap("snap")
        image.protect_snap("snap")
    kept = admin.create()
    assert admin.upload(kept["id"], b"kept").status_code == 204
    with cloud.cloud.runtime.activated():
        with db.reader() as s:
            found = audit._service_problems(s, "image")
        assert any(orphan in line for line in found), found
        assert not any(kept["id"] in line for line in found)
        service.recover()
        with db.reader() as s:
            assert not any(orphan in line for line in audit._service_problems(s, "image"))
    assert orphan not in rbd_names(pool)
    assert kept["id"] in rbd_names(pool)


OBJECT = 8 << 20  # the rbd store's object size ([image] rbd_store_chunk_size)


def stored_objects(pool, name) -> set[int]:
    """The numbers of the RBD image's data objects that exist in the pool: what `rbd du`
    counts (an object each) as used."""
    import rbd

    with rbd.Image(pool, name, read_only=True) as image:
        prefix = image.stat()["block_name_prefix"] + "."
    return {int(o.key[len(prefix):], 16) for o in pool.list_objects()
            if o.key.startswith(prefix)}


def objects_with_data(data: bytes) -> set[int]:
    zero = bytes(4096)
    return {at // OBJECT for at in range(0, len(data), 4096) if data[at:at + 4096] != zero}


def sparse_raw(size: int) -> bytes:
    """A raw disk of ``size`` bytes, mostly zeros: 4 x 4 MiB of data at aligned and
    unaligned offsets, a few small writes and its last bytes (like a fresh filesystem)."""
    data = bytearray(size)
    for at in (0, (5 << 20) + 123, size // 2, size - (9 << 20) + 4097):
        data[at:at + (4 << 20)] = os.urandom(4 << 20)
    for at in (size // 3, size // 3 + 70_000, size - 16):
        data[at:at + 16] = b"x" * 16
    return bytes(data)


@pytest.mark.parametrize("how", ["upload", "stage and import"])
def test_a_sparse_image_takes_the_space_of_its_data(admin, pool, how):
    """Thin provisioning (glance's rbd_thin_provisioning): the all-zero blocks of an
    upload are not written, so a sparse raw image uses about the space of its data, as
    `rbd import` stores it; the bytes and checksums stay those uploaded."""
    data = sparse_raw(256 << 20 if how == "upload" else 128 << 20)
    image = admin.create()
    if how == "upload":
        r = admin.upload(image["id"], data)
    else:
        r = admin.request("PUT", f"/v2/images/{image['id']}/stage", content=data,
                          headers={"Content-Type": "application/octet-stream"})
        assert r.status_code == 204, r.text
        r = admin.request("POST", f"/v2/images/{image['id']}/import",
                          json={"method": {"name": "glance-direct"}})
    assert r.status_code in (202, 204), r.text
    assert wait_for(lambda: admin.show(image["id"])["status"] == "active")
    shown = admin.show(image["id"])
    assert shown["size"] == len(data) and shown["stores"] == "rbd"
    assert shown["checksum"] == hashlib.md5(data).hexdigest()
    assert shown["os_hash_value"] == hashlib.sha512(data).hexdigest()
    # only the 6 objects that hold data exist (of 32, or 16), as `rbd du` shows
    assert stored_objects(pool, image["id"]) == objects_with_data(data)
    assert len(objects_with_data(data)) == 6
    got = admin.request("GET", f"/v2/images/{image['id']}/file")
    assert got.status_code == 200 and got.content == data
    assert admin.request("DELETE", f"/v2/images/{image['id']}").status_code == 204
