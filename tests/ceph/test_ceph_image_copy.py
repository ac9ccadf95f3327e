"""copy-image between the file and rbd stores against a real Ceph cluster (a cloud with
both stores, file the default), through python-glanceclient as glance's users call it;
DELETE /v2/stores/{store}/{image}; the cache of an rbd image; discovery with two stores.
Skipped without Ceph (tests/ceph/conftest.py)."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import sys
import time
import uuid

import pytest

TESTS = pathlib.Path(__file__).parent.parent


def _load(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


import ceph_helpers as _ceph  # noqa: E402
from helpers.cloud import own_cloud  # noqa: E402

_image_helpers = _load("_image_copy_image_helpers", TESTS / "image" / "image_helpers.py")
Glance, assert_error = _image_helpers.Glance, _image_helpers.assert_error


@pytest.fixture(scope="module")
def cloud(ceph):
    with own_cloud("image-copy", **_ceph.ceph_overrides(ceph),
                   **{"image.default_store": "file", "image.show_multiple_locations": True}) as c:
        yield c


@pytest.fixture(scope="module")
def pool(ceph):
    conn = ceph.admin()
    yield conn.open_ioctx(ceph.names["image_pool"])
    conn.shutdown()


@pytest.fixture(scope="module")
def admin(cloud):
    return Glance(cloud, cloud.session())


@pytest.fixture(scope="module")
def gc(cloud):
    from glanceclient import Client

    return Client("2", session=cloud.session(), region_name="RegionOne")


def rbd_names(pool) -> list[str]:
    import rbd

    return rbd.RBD().list(pool)


def _wait(fetch, done, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if done(value):
            return value
        assert time.monotonic() < deadline, value
        time.sleep(0.2)


def test_discovery_with_two_stores(admin):
    methods = admin.get("/v2/info/import").json()["import-methods"]["value"]
    assert methods == ["glance-direct", "web-download", "copy-image"]
    stores = admin.get("/v2/info/stores").json()["stores"]
    assert [(s["id"], s.get("default")) for s in stores] == [("file", "true"), ("rbd", None)]
    ids = [v["id"] for v in admin.get("/versions").json()["versions"]]
    assert ids[:11] == ["v2.18", "v2.16", "v2.15", "v2.14", "v2.13", "v2.12", "v2.11",
                        "v2.10", "v2.9", "v2.8", "v2.7"]


def test_copy_image_file_to_rbd_and_back(cloud, admin, gc, pool):
    data = os.urandom(3 << 20)
    image = admin.create_active(data)
    assert image["stores"] == "file"
    gc.images.image_import(image["id"], method="copy-image", stores=["rbd"])
    copied = _wait(lambda: admin.show(image["id"]),
                   lambda i: i.get("os_glance_importing_to_stores") == "")
    assert copied["stores"] == "file,rbd" and copied["os_glance_failed_import"] == ""
    assert copied["status"] == "active" and "os_glance_import_task" not in copied
    assert [loc["metadata"]["store"] for loc in copied["locations"]] == ["file", "rbd"]
    assert image["id"] in rbd_names(pool)
    tasks = gc.images.get_associated_image_tasks(image["id"])["tasks"]  # needs v2.12
    assert [(t["status"], t["input"]["backend"]) for t in tasks] == [("success", ["rbd"])]
    # glance's refusals
    again = admin.post(f"/v2/images/{image['id']}/import",
                       json={"method": {"name": "copy-image"}, "stores": ["rbd"]})
    assert_error(again, 400, "already present at store 'rbd'")
    everywhere = admin.post(f"/v2/images/{image['id']}/import",
                            json={"method": {"name": "copy-image"}, "all_stores": True})
    assert everywhere.status_code == 202  # nothing left to copy: no task
    assert len(gc.images.get_associated_image_tasks(image["id"])["tasks"]) == 1
    member = Glance(cloud, cloud.user_session(cloud.make_user()))
    shared = admin.create_active(b"public", visibility="public")
    assert_error(member.post(f"/v2/images/{shared['id']}/import", json={
        "method": {"name": "copy-image"}, "stores": ["rbd"]}), 403)
    queued = admin.create()
    assert_error(admin.post(f"/v2/images/{queued['id']}/import", json={
        "method": {"name": "copy-image"}, "stores": ["rbd"]}), 409, "status active")
    # the data one store holds goes (2.10); the last copy cannot
    assert admin.delete(f"/v2/stores/file/{image['id']}").status_code == 204
    shown = admin.show(image["id"])
    assert shown["stores"] == "rbd"
    got = admin.get(f"/v2/images/{image['id']}/file")
    assert got.status_code == 200 and got.content == data  # now read from Ceph
    assert_error(admin.delete(f"/v2/stores/rbd/{image['id']}"), 403, "only store")
    # glance checks "the only store" before whether that store holds it
    assert_error(admin.delete(f"/v2/stores/file/{image['id']}"), 403, "only store")
    assert_error(admin.delete(f"/v2/stores/swift/{image['id']}"), 409, "not available")
    # and back: rbd → file, then deleting the image removes both
    gc.images.image_import(image["id"], method="copy-image", stores=["file"])
    _wait(lambda: admin.show(image["id"]), lambda i: i["stores"] == "rbd,file")
    assert admin.delete(f"/v2/images/{image['id']}").status_code == 204
    assert image["id"] not in rbd_names(pool)


def test_cache_of_an_rbd_image_is_a_local_copy(cloud, admin, gc):
    from pocketstack.common import config

    data = os.urandom(1 << 20)
    image = admin.create(name=f"rbd-{uuid.uuid4().hex[:6]}")
    r = admin.upload(image["id"], data, **{"X-Image-Meta-Store": "rbd"})
    assert r.status_code == 204, r.text
    gc.cache.queue(image["id"])
    _wait(gc.cache.list, lambda s: image["id"] in [c["image_id"]
                                                   for c in s["cached_images"]])
    path = os.path.join(config.CONF.image.image_cache_dir, image["id"])
    with open(path, "rb") as f:
        assert f.read() == data
    assert admin.get(f"/v2/images/{image['id']}/file").content == data
    gc.cache.delete(image["id"])
    assert admin.delete(f"/v2/images/{image['id']}").status_code == 204
