"""Swift API checks through the real clients (python-swiftclient, openstacksdk, plain HTTP),
run against each object-store backend: the embedded service (tests/objectstore) and Ceph's
RADOS Gateway (tests/ceph). Each check takes the cloud's handle and makes its own users
and containers; it asserts what a user sees wherever the catalog's endpoint leads."""
from __future__ import annotations

import hashlib
import hmac
import os
import time
import uuid

import httpx


class Account:
    """A member of a fresh project and its swift connection (from the catalog)."""

    def __init__(self, cloud):
        import swiftclient

        self.user = cloud.make_user(roles=("member",))
        self.session = cloud.user_session(self.user)
        self.url = self.session.get_endpoint(service_type="object-store", interface="public")
        self.token = self.session.get_token()
        self.swift = swiftclient.Connection(preauthurl=self.url, preauthtoken=self.token,
                                            retries=0)
        self.headers = {"X-Auth-Token": self.token}


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def check_container_and_object_crud_with_metadata(cloud):
    a = Account(cloud)
    c = _name("crud")
    a.swift.put_container(c, headers={"X-Container-Meta-Color": "blue"})
    data = os.urandom(70_000)
    etag = a.swift.put_object(c, "dir/blob.bin", data, content_type="application/x-blob",
                              headers={"X-Object-Meta-Owner": "alice"})
    assert etag == hashlib.md5(data).hexdigest()
    headers, body = a.swift.get_object(c, "dir/blob.bin")
    assert body == data
    assert headers["content-type"] == "application/x-blob"
    assert headers["x-object-meta-owner"] == "alice"
    a.swift.post_object(c, "dir/blob.bin", headers={"X-Object-Meta-Owner": "bob"})
    assert a.swift.head_object(c, "dir/blob.bin")["x-object-meta-owner"] == "bob"
    stats = a.swift.head_container(c)
    assert stats["x-container-meta-color"] == "blue"
    assert int(stats["x-container-object-count"]) == 1
    assert int(stats["x-container-bytes-used"]) == len(data)
    account = a.swift.head_account()
    assert int(account["x-account-container-count"]) == 1
    a.swift.copy_object(c, "dir/blob.bin", destination=f"/{c}/copy.bin")
    assert a.swift.get_object(c, "copy.bin")[1] == data
    a.swift.delete_object(c, "dir/blob.bin")
    a.swift.delete_object(c, "copy.bin")
    a.swift.delete_container(c)
    assert c not in [x["name"] for x in a.swift.get_account()[1]]


def check_listings_with_prefix_delimiter_and_marker(cloud):
    a = Account(cloud)
    c = _name("list")
    a.swift.put_container(c)
    names = ["a/1", "a/2", "a/b/3", "b/4", "c"]
    for n in names:
        a.swift.put_object(c, n, n.encode())
    assert [o["name"] for o in a.swift.get_container(c)[1]] == names
    assert [o["name"] for o in a.swift.get_container(c, prefix="a/")[1]] == \
        ["a/1", "a/2", "a/b/3"]
    listed = a.swift.get_container(c, delimiter="/")[1]
    assert [o.get("name") or o.get("subdir") for o in listed] == ["a/", "b/", "c"]
    listed = a.swift.get_container(c, prefix="a/", delimiter="/")[1]
    assert [o.get("name") or o.get("subdir") for o in listed] == ["a/1", "a/2", "a/b/"]
    assert [o["name"] for o in a.swift.get_container(c, marker="a/2", limit=2)[1]] == \
        ["a/b/3", "b/4"]
    first = a.swift.get_container(c)[1][0]
    assert first["bytes"] == 3 and first["hash"] == hashlib.md5(b"a/1").hexdigest()
    r = httpx.get(f"{a.url}/{c}", headers=a.headers, params={"format": "txt"})
    assert r.status_code == 200 and r.text.split() == names


def check_ranges(cloud):
    a = Account(cloud)
    c = _name("range")
    a.swift.put_container(c)
    data = bytes(range(256)) * 40
    a.swift.put_object(c, "r", data)
    headers, body = a.swift.get_object(c, "r", headers={"Range": "bytes=10-19"})
    assert body == data[10:20]
    assert headers["content-range"] == f"bytes 10-19/{len(data)}"
    assert a.swift.get_object(c, "r", headers={"Range": "bytes=-5"})[1] == data[-5:]
    assert a.swift.get_object(c, "r", headers={"Range": "bytes=10230-"})[1] == data[10230:]
    r = httpx.get(f"{a.url}/{c}/r", headers={**a.headers, "Range": "bytes=99999-"})
    assert r.status_code == 416


def check_etag_mismatch_is_422_and_stores_nothing(cloud):
    import swiftclient

    a = Account(cloud)
    c = _name("etag")
    a.swift.put_container(c)
    try:
        a.swift.put_object(c, "bad", b"payload", etag=hashlib.md5(b"other").hexdigest())
    except swiftclient.ClientException as error:
        assert error.http_status == 422
    else:
        raise AssertionError("a PUT whose ETag does not match its body was accepted")
    assert a.swift.get_container(c)[1] == []


def check_temp_url(cloud):
    a = Account(cloud)
    c = _name("tmp")
    a.swift.put_container(c)
    a.swift.put_object(c, "shared.txt", b"for anyone with the link")
    key = "secret-key"
    a.swift.post_account(headers={"X-Account-Meta-Temp-URL-Key": key})
    path = httpx.URL(f"{a.url}/{c}/shared.txt").path
    expires = int(time.time()) + 300
    sig = hmac.new(key.encode(), f"GET\n{expires}\n{path}".encode(), hashlib.sha1).hexdigest()
    base = f"{a.url}/{c}/shared.txt"
    r = httpx.get(base, params={"temp_url_sig": sig, "temp_url_expires": expires})
    assert r.status_code == 200 and r.content == b"for anyone with the link"
    assert httpx.get(base).status_code in (401, 403)


def check_temp_url_with_a_wrong_signature_is_401(cloud):
    a = Account(cloud)
    c = _name("tmp")
    a.swift.put_container(c)
    a.swift.put_object(c, "o", b"x")
    a.swift.post_account(headers={"X-Account-Meta-Temp-URL-Key": "k"})
    r = httpx.get(f"{a.url}/{c}/o", params={"temp_url_sig": "0" * 40,
                                            "temp_url_expires": int(time.time()) + 300})
    assert r.status_code == 401  # swift's tempurl middleware: 401 Unauthorized


def check_one_letter_container_name(cloud):
    a = Account(cloud)
    name = uuid.uuid4().hex[:1]
    a.swift.put_container(name)  # swift: 1 to 256 bytes
    assert a.swift.head_container(name)["x-container-object-count"] == "0"
    a.swift.delete_container(name)


def check_read_acl_lets_another_project_in(cloud):
    a, b = Account(cloud), Account(cloud)
    c = _name("acl")
    a.swift.put_container(c)
    a.swift.put_object(c, "doc", b"shared doc")
    other = f"{a.url}/{c}/doc"  # b reads a's account, by a's URL
    assert httpx.get(other, headers=b.headers).status_code == 403
    a.swift.post_container(c, headers={
        "X-Container-Read": f"{b.user['project_id']}:{b.user['id']}"})
    r = httpx.get(other, headers=b.headers)
    assert r.status_code == 200 and r.content == b"shared doc"
    r = httpx.put(f"{a.url}/{c}/new", headers=b.headers, content=b"x")
    assert r.status_code == 403


def check_public_read_acl(cloud):
    a = Account(cloud)
    c = _name("pub")
    a.swift.put_container(c)
    a.swift.put_object(c, "page", b"public page")
    assert httpx.get(f"{a.url}/{c}/page").status_code in (401, 403)
    a.swift.post_container(c, headers={"X-Container-Read": ".r:*"})
    r = httpx.get(f"{a.url}/{c}/page")
    assert r.status_code == 200 and r.content == b"public page"


def check_static_large_object(cloud):
    a = Account(cloud)
    c = _name("slo")
    a.swift.put_container(c)
    parts = [os.urandom(1 << 20), os.urandom(1 << 20), b"tail"]
    manifest = []
    for i, part in enumerate(parts):
        etag = a.swift.put_object(c, f"seg/{i}", part)
        manifest.append({"path": f"/{c}/seg/{i}", "etag": etag, "size_bytes": len(part)})
    import json

    a.swift.put_object(c, "big", json.dumps(manifest),
                       query_string="multipart-manifest=put")
    headers, body = a.swift.get_object(c, "big")
    assert body == b"".join(parts)
    assert int(headers["content-length"]) == sum(map(len, parts))


def check_dynamic_large_object(cloud):
    a = Account(cloud)
    c = _name("dlo")
    a.swift.put_container(c)
    parts = [b"first-", b"second-", b"third"]
    for i, part in enumerate(parts):
        a.swift.put_object(c, f"dlo/{i:03d}", part)
    a.swift.put_object(c, "whole", b"", headers={"X-Object-Manifest": f"{c}/dlo/"})
    assert a.swift.get_object(c, "whole")[1] == b"first-second-third"


def check_openstacksdk_upload_download(cloud):
    a = Account(cloud)
    conn = cloud.user_sdk(a.user)
    c = _name("sdk")
    conn.object_store.create_container(name=c)
    data = os.urandom(300_000)
    conn.object_store.upload_object(container=c, name="blob.bin", data=data,
                                    content_type="application/x-blob")
    assert conn.object_store.download_object("blob.bin", container=c) == data
    obj = conn.object_store.get_object_metadata("blob.bin", container=c)
    assert obj.etag.strip('"') == hashlib.md5(data).hexdigest()
    assert [o.name for o in conn.object_store.objects(c)] == ["blob.bin"]
    conn.object_store.delete_object("blob.bin", container=c)
    conn.object_store.delete_container(c)
    assert c not in [x.name for x in conn.object_store.containers()]


def check_container_quota(cloud):
    import swiftclient

    a = Account(cloud)
    c = _name("quota")
    a.swift.put_container(c, headers={"X-Container-Meta-Quota-Count": "1"})
    a.swift.put_object(c, "one", b"1")
    try:
        a.swift.put_object(c, "two", b"2")
    except swiftclient.ClientException as error:
        assert error.http_status == 413
    else:
        raise AssertionError("a second object went into a container of quota count 1")


def check_legacy_versioning(cloud):
    a = Account(cloud)
    c, archive = _name("ver"), _name("old")
    a.swift.put_container(archive)
    a.swift.put_container(c, headers={"X-Versions-Location": archive})
    a.swift.put_object(c, "doc", b"v1")
    a.swift.put_object(c, "doc", b"v2")
    assert a.swift.get_object(c, "doc")[1] == b"v2"
    kept = a.swift.get_container(archive)[1]
    assert len(kept) == 1
    assert a.swift.get_object(archive, kept[0]["name"])[1] == b"v1"
    a.swift.delete_object(c, "doc")
    assert a.swift.get_object(c, "doc")[1] == b"v1"


def check_bulk_delete(cloud):
    a = Account(cloud)
    c = _name("bulk")
    a.swift.put_container(c)
    for n in ("x", "y"):
        a.swift.put_object(c, n, n.encode())
    r = httpx.post(a.url, params={"bulk-delete": ""},
                   headers={**a.headers, "Accept": "application/json",
                            "Content-Type": "text/plain"},
                   content=f"/{c}/x\n/{c}/y\n")
    assert r.status_code == 200, r.text
    assert r.json()["Number Deleted"] == 2
    assert a.swift.get_container(c)[1] == []


def check_symlink_is_followed(cloud):
    a = Account(cloud)
    c = _name("sym")
    a.swift.put_container(c)
    a.swift.put_object(c, "target", b"pointed at")
    r = httpx.put(f"{a.url}/{c}/link", content=b"",
                  headers={**a.headers, "X-Symlink-Target": f"{c}/target"})
    assert r.status_code == 201
    assert a.swift.get_object(c, "link")[1] == b"pointed at"


CHECKS = {name.removeprefix("check_"): fn for name, fn in dict(globals()).items()
          if name.startswith("check_")}


def all_checks() -> dict:
    """These checks and the newer features' (swift_feature_checks.py, which builds on
    this module's Account: imported here, not at the top)."""
    from helpers import swift_feature_checks

    return {**CHECKS, **swift_feature_checks.CHECKS}
