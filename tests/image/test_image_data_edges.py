"""Image data edge cases: deletes racing uploads, staging misuse, odd headers and ids."""
import socket
import time

from image_helpers import assert_error, files_of, unique


def _wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _read_response(sock) -> str:
    sock.settimeout(10)
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = sock.recv(65536)
        if not chunk:
            break
        reply += chunk
    return reply.decode(errors="replace")


def test_image_deleted_during_upload_gets_410_and_keeps_nothing(cloud, glance):
    image = glance.create()
    host, port = cloud.url.split("//")[1].split(":")
    total = 6 << 20
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall((f"PUT /image/v2/images/{image['id']}/file HTTP/1.1\r\n"
                      f"Host: {host}\r\nX-Auth-Token: {glance.token}\r\n"
                      "Content-Type: application/octet-stream\r\n"
                      f"Content-Length: {total}\r\n\r\n").encode() + b"d" * (total // 2))
        assert _wait_for(lambda: glance.show(image["id"])["status"] == "saving")
        assert glance.delete(f"/v2/images/{image['id']}").status_code == 204
        sock.sendall(b"d" * (total - total // 2))
        reply = _read_response(sock)
    assert reply.startswith("HTTP/1.1 410"), reply
    assert "deleted during the upload" in reply
    assert _wait_for(lambda: files_of(image["id"]) == [])
    assert_error(glance.get(f"/v2/images/{image['id']}"), 404)


def test_concurrent_upload_to_the_same_image_is_409(cloud, glance):
    image = glance.create()
    host, port = cloud.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall((f"PUT /image/v2/images/{image['id']}/file HTTP/1.1\r\n"
                      f"Host: {host}\r\nX-Auth-Token: {glance.token}\r\n"
                      "Content-Type: application/octet-stream\r\n"
                      "Content-Length: 2000\r\n\r\n").encode() + b"1" * 1000)
        assert _wait_for(lambda: glance.show(image["id"])["status"] == "saving")
        assert_error(glance.upload(image["id"], b"2" * 2000), 409, "saving to saving")
        sock.sendall(b"1" * 1000)
        assert _read_response(sock).startswith("HTTP/1.1 204")
    assert glance.get(f"/v2/images/{image['id']}/file").content == b"1" * 2000


def test_stage_and_import_misuse(glance):
    image = glance.create()
    url = f"/v2/images/{image['id']}"
    body = {"method": {"name": "glance-direct"}}
    assert_error(glance.post(f"{url}/import", json=body), 409, "staged")
    assert_error(glance.post(f"{url}/import", json={"method": {"name": "web-download"}}), 400,
                 "does not pass filtering")  # no uri: nothing can pass the filter
    assert_error(glance.post(f"{url}/import", json={"method": {"name": "glance-download"}}),
                 400, "Unknown import method")
    assert_error(glance.post(f"{url}/import", json={"nothing": 1}), 400, "method")
    assert_error(glance.put(f"{url}/stage", content=b"x",
                            headers={"Content-Type": "text/plain"}), 415)
    r = glance.put(f"{url}/stage", content=b"staged bytes",
                   headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    shown = glance.show(image["id"])
    assert shown["status"] == "uploading" and shown["size"] == len(b"staged bytes")
    assert_error(glance.upload(image["id"], b"direct"), 409, "uploading to saving")
    assert glance.post(f"{url}/import", json=body).status_code == 202
    shown = glance.show(image["id"])
    assert shown["status"] == "active" and shown["checksum"]
    assert glance.get(f"{url}/file").content == b"staged bytes"
    assert_error(glance.put(f"{url}/stage", content=b"again",
                            headers={"Content-Type": "application/octet-stream"}), 409)


def test_deleting_a_staged_image_removes_its_staged_data(glance):
    image = glance.create()
    r = glance.put(f"/v2/images/{image['id']}/stage", content=b"s" * 1000,
                   headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204
    assert files_of(image["id"])
    assert glance.delete(f"/v2/images/{image['id']}").status_code == 204
    assert files_of(image["id"]) == []


def test_odd_ids_tags_and_headers(glance):
    assert_error(glance.get("/v2/images/" + "x" * 300), 404)
    assert_error(glance.get("/v2/images/not-an-image"), 404)
    assert_error(glance.get("/v2/images/not-an-image/members"), 404)
    image = glance.create(tags=["dup", "dup", "other"])
    assert glance.show(image["id"])["tags"] == ["dup", "other"]
    url = f"/v2/images/{image['id']}"
    assert_error(glance.put(f"{url}/tags/{'t' * 256}"), 400)
    assert glance.put(f"{url}/tags/new").status_code == 204
    assert glance.put(f"{url}/tags/new").status_code == 204  # idempotent
    assert_error(glance.delete(f"{url}/tags/missing"), 404)
    assert_error(glance.upload(image["id"], b"x", **{"X-OpenStack-Image-Size": "big"}), 400)
    assert_error(glance.patch(image["id"], [{"op": "add", "path": "/locations/-",
                                             "value": {"url": "http://x", "metadata": {}}}]),
                 403, "locations")
    assert_error(glance.patch(image["id"], [{"op": "remove", "path": "/name"}]), 403)
    assert_error(glance.patch(image["id"], [{"op": "remove", "path": "/nope"}]), 409)
    assert_error(glance.patch(image["id"], [{"op": "replace", "path": "/nope",
                                             "value": "x"}]), 409)
    assert_error(glance.request("POST", url), 405)
    assert glance.show(image["id"])["status"] == "queued"


def test_format_changes_only_while_queued(glance):
    image = glance.create_active()
    r = glance.patch(image["id"], [{"op": "replace", "path": "/disk_format", "value": "qcow2"}])
    assert_error(r, 403, "queued")
    r = glance.patch(image["id"], [{"op": "replace", "path": "/name", "value": unique()}])
    assert r.status_code == 200


def test_quotas_on_tags_and_properties(glance):
    from pocketstack.common import config

    config.CONF.set_override("image_tag_quota", 2, group="image")
    config.CONF.set_override("image_property_quota", 1, group="image")
    try:
        assert_error(glance.post("/v2/images", json={"tags": ["a", "b", "c"]}), 413, "tags")
        assert_error(glance.post("/v2/images", json={"p1": "1", "p2": "2"}), 413, "properties")
        image = glance.create(tags=["a", "b"], p1="1")
        assert_error(glance.put(f"/v2/images/{image['id']}/tags/c"), 413)
        assert_error(glance.patch(image["id"], [{"op": "add", "path": "/p2", "value": "2"}]),
                     413)
        shown = glance.show(image["id"])
        assert shown["tags"] == ["a", "b"] and "p2" not in shown
    finally:
        config.CONF.clear_override("image_tag_quota", group="image")
        config.CONF.clear_override("image_property_quota", group="image")


def test_read_only_and_nullable_properties(glance):
    for key, value in (("os_hash_algo", "md5"), ("os_hash_value", "00"), ("virtual_size", 1)):
        assert_error(glance.post("/v2/images", json={key: value}), 403, "read-only")
    assert_error(glance.post("/v2/images", json={"locations": []}), 403, "locations")
    image = glance.create(kernel_id=None, ramdisk_id="0" * 8 + "-0000-0000-0000-" + "0" * 12)
    assert image["kernel_id"] is None
    assert_error(glance.post("/v2/images", json={"kernel_id": "vmlinuz"}), 400, "match")
    r = glance.patch(image["id"], [{"op": "replace", "path": "/ramdisk_id", "value": None}])
    assert r.status_code == 200 and r.json()["ramdisk_id"] is None
    assert_error(glance.patch(image["id"], [{"op": "add", "path": "/other", "value": None}]),
                 400)
    assert_error(glance.patch(image["id"], [{"op": "add", "path": "/stores", "value": "x"}]),
                 403, "read-only")


def test_numbers_out_of_range_are_400(glance):
    assert_error(glance.post("/v2/images", json={"min_ram": 10**30}), 400, "more than")
    image = glance.create()
    assert_error(glance.patch(image["id"], [{"op": "replace", "path": "/min_disk",
                                             "value": 2**31}]), 400, "more than")
    for params in ({"size_min": 10**30}, {"min_ram": -10**20}, {"virtual_size": "9" * 40},
                   {"limit": 10**30 + 1, "size_max": 10**19}):
        assert_error(glance.get("/v2/images", params=params), 400)
    assert glance.get("/v2/images", params={"limit": 10**30}).status_code == 200


def test_hashing_algorithm_is_the_operators_choice(glance, hashing_override):
    """[image] hashing_algorithm picks os_hash_algo, as glance's option does; md5 stays the
    checksum. Data staged under one algorithm keeps it when imported after a change."""
    import hashlib

    data = b"pocketstack hashes this" * 1000
    hashing_override("sha256")
    image = glance.create_active(data)
    assert (image["os_hash_algo"], image["os_hash_value"]) == \
        ("sha256", hashlib.sha256(data).hexdigest())
    assert image["checksum"] == hashlib.md5(data).hexdigest()

    staged = glance.create()
    r = glance.put(f"/v2/images/{staged['id']}/stage", content=data,
                   headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    hashing_override("sha384")
    r = glance.post(f"/v2/images/{staged['id']}/import",
                    json={"method": {"name": "glance-direct"}})
    assert r.status_code == 202, r.text
    assert _wait_for(lambda: glance.show(staged["id"])["status"] == "active")
    shown = glance.show(staged["id"])
    assert (shown["os_hash_algo"], shown["os_hash_value"]) == \
        ("sha256", hashlib.sha256(data).hexdigest())
