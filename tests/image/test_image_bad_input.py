"""Bad image inputs: each gets glance's status and a JSON error body, and leaves no
half-written state (no stray file, no image stuck in saving)."""
import os
import socket
import time

from image_helpers import PATCH_TYPE, assert_error, files_of, store_dir, unique


def test_unknown_disk_format_is_400(glance):
    r = glance.post("/v2/images", json={"name": unique(), "disk_format": "floppy",
                                        "container_format": "bare"})
    assert_error(r, 400, "'floppy' is not one of")
    r = glance.post("/v2/images", json={"name": unique(), "container_format": "crate"})
    assert_error(r, 400, "'crate' is not one of")


def test_malformed_create_bodies_are_400_or_403(glance):
    assert_error(glance.post("/v2/images", content=b"{not json"), 400, "Malformed")
    assert_error(glance.post("/v2/images", json=["a", "list"]), 400, "JSON object")
    assert_error(glance.post("/v2/images", json={"min_ram": "lots"}), 400, "not of type")
    assert_error(glance.post("/v2/images", json={"min_disk": -1}), 400, "negative")
    assert_error(glance.post("/v2/images", json={"id": "not-a-uuid"}), 400, "does not match")
    assert_error(glance.post("/v2/images", json={"os_distro": 7}), 400, "not of type")
    assert_error(glance.post("/v2/images", json={"size": 5}), 403, "read-only")
    assert_error(glance.post("/v2/images", json={"self": "/x"}), 403, "read-only")
    assert_error(glance.post("/v2/images", json={"os_glance_x": "1"}), 403, "reserved")
    assert_error(glance.post("/v2/images", json={"k" * 256: "v"}), 400, "255")


def test_duplicate_image_id_is_409(glance):
    image = glance.create()
    r = glance.post("/v2/images", json={"id": image["id"], "name": unique()})
    assert_error(r, 409, "already exists")


def test_json_patch_on_read_only_attributes_is_403(glance):
    image = glance.create()
    for path, value in (("/size", 5), ("/status", "active"), ("/checksum", "0" * 32),
                        ("/id", image["id"]), ("/created_at", "2020-01-01T00:00:00Z"),
                        ("/os_hash_value", "00")):
        r = glance.patch(image["id"], [{"op": "replace", "path": path, "value": value}])
        assert_error(r, 403, "is read-only")
    assert glance.show(image["id"])["status"] == "queued"


def test_json_patch_with_other_content_types_is_415(glance):
    image = glance.create()
    ops = [{"op": "replace", "path": "/name", "value": "x"}]
    for content_type in ("application/json", "application/json-patch+json", "text/plain"):
        r = glance.patch(image["id"], ops, content_type=content_type)
        assert_error(r, 415, "application/openstack-images-v2.1-json-patch")
        assert "application/openstack-images-v2.1-json-patch" in r.headers["accept-patch"]
    assert glance.show(image["id"])["name"] == image["name"]


def test_malformed_json_patches_are_400(glance):
    image = glance.create()
    for ops in ({"op": "add"}, [5], [{"op": "move", "path": "/name"}],
                [{"op": "replace", "path": "name", "value": "x"}],
                [{"op": "replace", "path": "/name"}],
                [{"op": "add", "path": "/tags/0", "value": "x"}],
                [{"op": "replace", "path": "/visibility", "value": "everyone"}],
                [{"op": "add", "path": "/hw_disk_bus", "value": 5}],
                [{"op": "replace", "path": "/min_ram", "value": -5}]):
        assert_error(glance.patch(image["id"], ops), 400)
    r = glance.request("PATCH", f"/v2/images/{image['id']}", content=b"[{",
                       headers={"Content-Type": PATCH_TYPE})
    assert_error(r, 400, "Malformed")


def test_upload_to_a_deleted_image_is_404_and_to_an_active_one_409(glance):
    image = glance.create()
    assert glance.delete(f"/v2/images/{image['id']}").status_code == 204
    assert_error(glance.upload(image["id"], b"data"), 404, image["id"])
    assert_error(glance.get(f"/v2/images/{image['id']}"), 404)

    active = glance.create_active(b"first upload")
    assert_error(glance.upload(active["id"], b"second upload"), 409,
                 "transition from active to saving")
    assert glance.get(f"/v2/images/{active['id']}/file").content == b"first upload"


def test_upload_with_the_wrong_content_type_is_415(glance):
    image = glance.create()
    r = glance.put(f"/v2/images/{image['id']}/file", content=b"data",
                   headers={"Content-Type": "application/json"})
    assert_error(r, 415, "application/octet-stream")
    r = glance.put(f"/v2/images/{image['id']}/file", content=b"data")
    assert_error(r, 415)
    assert glance.show(image["id"])["status"] == "queued"
    assert files_of(image["id"]) == []


def test_upload_before_formats_are_set_is_400(glance):
    r = glance.post("/v2/images", json={"name": unique()})
    image = r.json()
    assert_error(glance.upload(image["id"], b"data"), 400, "disk_format, container_format")
    assert glance.show(image["id"])["status"] == "queued"


def test_another_projects_private_image_is_404(glance, alice, bob):
    image = alice.create(visibility="private")
    for call in (lambda: bob.get(f"/v2/images/{image['id']}"),
                 lambda: bob.get(f"/v2/images/{image['id']}/file"),
                 lambda: bob.patch(image["id"], [{"op": "replace", "path": "/name",
                                                  "value": "mine"}]),
                 lambda: bob.delete(f"/v2/images/{image['id']}"),
                 lambda: bob.upload(image["id"], b"data"),
                 lambda: bob.put(f"/v2/images/{image['id']}/tags/x"),
                 lambda: bob.get(f"/v2/images/{image['id']}/members")):
        assert_error(call(), 404, image["id"])
    ids = [i["id"] for i in bob.get("/v2/images", params={"limit": 1000}).json()["images"]]
    assert image["id"] not in ids
    assert glance.show(image["id"])["name"] == image["name"]  # the admin sees every image


def test_delete_protected_image_is_403(glance):
    image = glance.create_active(protected=True)
    assert_error(glance.delete(f"/v2/images/{image['id']}"), 403, "protected")
    assert glance.show(image["id"])["status"] == "active"
    assert files_of(image["id"])
    r = glance.patch(image["id"], [{"op": "replace", "path": "/protected", "value": False}])
    assert r.status_code == 200, r.text
    assert glance.delete(f"/v2/images/{image['id']}").status_code == 204
    assert files_of(image["id"]) == []


def test_upload_over_the_size_cap_is_413_and_leaves_no_file(glance, cap_override):
    cap_override(1024 * 1024)
    image = glance.create()
    # Declared size over the cap: refused before a byte is stored.
    r = glance.upload(image["id"], b"x" * (1024 * 1024 + 1))
    assert_error(r, 413, "too large")
    # Undeclared (chunked) size: refused when the stream passes the cap.
    chunks = (b"y" * 65536 for _ in range(40))
    r = glance.put(f"/v2/images/{image['id']}/file", content=chunks,
                   headers={"Content-Type": "application/octet-stream"})
    assert_error(r, 413, "the image size cap is 1048576 bytes")
    assert glance.show(image["id"])["status"] == "queued"
    assert files_of(image["id"]) == []
    assert os.listdir(os.path.join(store_dir(), "tmp")) == []
    # Exactly at the cap is fine.
    assert glance.upload(image["id"], b"z" * (1024 * 1024)).status_code == 204
    assert glance.show(image["id"])["size"] == 1024 * 1024


def _wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_interrupted_upload_leaves_no_partial_file_and_image_not_active(cloud, glance):
    image = glance.create()
    host, port = cloud.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall((f"PUT /image/v2/images/{image['id']}/file HTTP/1.1\r\n"
                      f"Host: {host}\r\nX-Auth-Token: {glance.token}\r\n"
                      "Content-Type: application/octet-stream\r\n"
                      f"Content-Length: {20 << 20}\r\n\r\n").encode())
        sock.sendall(b"q" * (9 << 20))
        # Mid-stream: the image is saving and part of the data is on disk.
        assert _wait_for(lambda: glance.show(image["id"])["status"] == "saving")
        assert _wait_for(lambda: any(os.path.getsize(f) > 0 for f in files_of(image["id"])))
    assert _wait_for(lambda: glance.show(image["id"])["status"] == "queued")
    assert _wait_for(lambda: files_of(image["id"]) == [])
    shown = glance.show(image["id"])
    assert shown["size"] is None and shown["checksum"] is None
    assert glance.get(f"/v2/images/{image['id']}/file").status_code == 204
    # The image can be uploaded again afterwards.
    assert glance.upload(image["id"], b"complete").status_code == 204
    assert glance.get(f"/v2/images/{image['id']}/file").content == b"complete"


def test_upload_that_stalls_is_abandoned(cloud, glance, idle_timeout_override):
    idle_timeout_override(1.0)
    image = glance.create()
    host, port = cloud.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall((f"PUT /image/v2/images/{image['id']}/file HTTP/1.1\r\n"
                      f"Host: {host}\r\nX-Auth-Token: {glance.token}\r\n"
                      "Content-Type: application/octet-stream\r\n"
                      "Content-Length: 1000\r\n\r\n").encode() + b"s" * 10)
        sock.settimeout(10)
        reply = sock.recv(4096).decode()
    assert reply.startswith("HTTP/1.1 408"), reply
    assert glance.show(image["id"])["status"] == "queued"
    assert files_of(image["id"]) == []
