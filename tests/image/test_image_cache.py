"""The image cache API (/v2/cache, admin) through python-glanceclient and openstacksdk:
queue, list, download from the cache (hits), delete, clear, clean, prune."""
from __future__ import annotations

import os
import time
import uuid

import pytest

from image_helpers import assert_error


@pytest.fixture(scope="module")
def gc(cloud):
    from glanceclient import Client

    return Client("2", session=cloud.session(), region_name="RegionOne")


def _wait_cached(gc, image_id, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        state = gc.cache.list()
        if image_id in [c["image_id"] for c in state["cached_images"]]:
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.1)


def test_queue_list_download_delete(glance, gc):
    from pocketstack.common import config

    image = glance.create_active(b"cache me " * 100)
    gc.cache.queue(image["id"])
    state = _wait_cached(gc, image["id"])
    entry = next(c for c in state["cached_images"] if c["image_id"] == image["id"])
    assert entry["size"] == 900 and entry["hits"] == 0
    assert isinstance(entry["last_accessed"], float)
    path = os.path.join(config.CONF.image.image_cache_dir, image["id"])
    assert os.path.exists(path)
    # a download is served from the cache and counted
    assert b"".join(gc.images.data(image["id"])) == b"cache me " * 100
    entry = next(c for c in gc.cache.list()["cached_images"] if c["image_id"] == image["id"])
    assert entry["hits"] == 1
    gc.cache.queue(image["id"])  # already cached: nothing changes
    gc.cache.delete(image["id"])
    assert image["id"] not in [c["image_id"] for c in gc.cache.list()["cached_images"]]
    assert not os.path.exists(path)


def test_sdk_and_clear(cloud, glance):
    sdk = cloud.sdk()
    one = glance.create_active(b"one")
    two = glance.create_active(b"two")
    sdk.image.queue_image(one["id"])
    sdk.image.queue_image(two["id"])
    deadline = time.monotonic() + 20
    while len({one["id"], two["id"]} & {c["image_id"] for c in
                                        sdk.image.get_image_cache().cached_images}) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    sdk.image.clear_cache("cache")
    assert sdk.image.get_image_cache().cached_images == []
    # deleting an image drops its cached copy
    sdk.image.queue_image(one["id"])
    deadline = time.monotonic() + 20
    while one["id"] not in [c["image_id"] for c in sdk.image.get_image_cache().cached_images]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert glance.delete(f"/v2/images/{one['id']}").status_code == 204
    assert sdk.image.get_image_cache().cached_images == []


def test_cache_errors_and_policy(glance, as_user):
    member = as_user()
    image = glance.create_active(b"x", visibility="public")
    for method, path in (("GET", "/v2/cache"), ("PUT", f"/v2/cache/{image['id']}"),
                         ("DELETE", "/v2/cache"), ("POST", "/v2/cache/prune")):
        assert_error(member.request(method, path), 403)
    assert_error(glance.put(f"/v2/cache/{uuid.uuid4()}"), 404, "not found")
    assert_error(glance.delete(f"/v2/cache/{uuid.uuid4()}"), 404, "not found")
    queued = glance.create()
    assert_error(glance.put(f"/v2/cache/{queued['id']}"), 400, "status active")
    assert_error(glance.delete("/v2/cache", headers={"x-image-cache-clear-target": "all"}),
                 400, "must be 'cache', 'queue'")
    assert glance.put(f"/v2/cache/{image['id']}").status_code == 202  # 2.16: always 202
    assert glance.post("/v2/cache/clean").status_code == 200
    pruned = glance.post("/v2/cache/prune").json()
    assert pruned == {"total_files_pruned": 0, "total_bytes_pruned": 0}
    assert glance.delete("/v2/cache").status_code == 204


def test_prune_to_the_size_limit(glance, gc):
    from pocketstack.common import config

    image = glance.create_active(b"z" * 5000)
    gc.cache.queue(image["id"])
    _wait_cached(gc, image["id"])
    config.CONF.set_override("image_cache_max_size", 0, group="image")
    try:
        pruned = glance.post("/v2/cache/prune").json()
    finally:
        config.CONF.clear_override("image_cache_max_size", group="image")
    assert pruned["total_files_pruned"] >= 1 and pruned["total_bytes_pruned"] >= 5000
    assert gc.cache.list()["cached_images"] == []


def test_cache_off_is_404(glance):
    from pocketstack.common import config

    config.CONF.set_override("image_cache_enabled", False, group="image")
    try:
        assert_error(glance.get("/v2/cache"), 404, "not supported at this site")
        ids = [v["id"] for v in glance.get("/versions").json()["versions"]]
        assert "v2.14" not in ids and ids[0] == "v2.15"
    finally:
        config.CONF.clear_override("image_cache_enabled", group="image")
