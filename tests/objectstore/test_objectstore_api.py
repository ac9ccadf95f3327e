"""The Swift API through python-swiftclient and plain HTTP: catalog and /info, accounts,
containers, objects, listings, metadata, usage, and swift's errors."""
from __future__ import annotations

import hashlib
import json
import os
import re
import uuid

import pytest
import requests
import swiftclient
from swiftclient.exceptions import ClientException

TRANS_ID = re.compile(r"^tx[0-9a-f]{21}-[0-9a-f]{10}$")
NOT_FOUND = b"<html><h1>Not Found</h1><p>The resource could not be found.</p></html>"


def _status(call, *args, **kwargs) -> int:
    with pytest.raises(ClientException) as caught:
        call(*args, **kwargs)
    return caught.value.http_status


def test_catalog_url_carries_the_project_and_info_lists_what_is_supported(owner):
    assert owner.url.endswith(f"/object-store/v1/AUTH_{owner.user['project_id']}")
    info = owner.swift.get_capabilities()
    assert info["swift"]["max_object_name_length"] == 1024
    assert info["swift"]["container_listing_limit"] == 10000
    assert set(info["tempurl"]["allowed_digests"]) == {"sha1", "sha256", "sha512"}
    # exactly what is implemented
    assert set(info) == {"swift", "tempurl", "keystoneauth", "slo", "dlo", "bulk_delete",
                         "container_quotas", "account_quotas", "versioned_writes",
                         "formpost", "symlink", "object_versioning", "staticweb"}
    r = requests.get(owner.url.split("/v1/")[0] + "/info")
    assert r.status_code == 200 and r.json() == info


def test_every_response_carries_a_swift_transaction_id_date_and_length(owner, container):
    for method, path in (("HEAD", ""), ("GET", f"/{container}"),
                         ("POST", f"/{container}"), ("GET", "/missing-c"),
                         ("DELETE", f"/{container}/missing-o")):
        r = requests.request(method, owner.url + path, headers=owner.headers)
        assert TRANS_ID.match(r.headers["X-Trans-Id"]), (method, path, r.headers)
        assert r.headers["X-Openstack-Request-Id"] == r.headers["X-Trans-Id"]
        assert "Date" in r.headers and "Content-Type" in r.headers
        assert "Content-Length" in r.headers
    assert r.status_code == 404 and r.content == NOT_FOUND
    assert r.headers["Content-Type"] == "text/html; charset=UTF-8"
    post = requests.post(owner.url + f"/{container}", headers=owner.headers)
    assert post.status_code == 204 and post.headers["Content-Length"] == "0"


def test_container_and_object_lifecycle_with_metadata_and_usage(owner, container):
    swift = owner.swift
    etag = swift.put_object(container, "hello.txt", b"hello world", content_type="text/plain",
                            headers={"X-Object-Meta-Color": "blue",
                                     "Content-Disposition": "attachment; filename=h.txt",
                                     "Content-Encoding": "identity"})
    assert etag == hashlib.md5(b"hello world").hexdigest()
    headers, body = swift.get_object(container, "hello.txt")
    assert body == b"hello world"
    assert headers["etag"] == f'"{etag}"'
    assert headers["content-type"] == "text/plain"
    assert headers["x-object-meta-color"] == "blue"
    assert headers["content-disposition"] == "attachment; filename=h.txt"
    assert headers["content-encoding"] == "identity"
    assert re.match(r"^\d{10}\.\d{5}$", headers["x-timestamp"])

    swift.post_object(container, "hello.txt", {"X-Object-Meta-Size": "big"})
    headers = swift.head_object(container, "hello.txt")
    assert headers["x-object-meta-size"] == "big" and "x-object-meta-color" not in headers

    swift.put_object(container, "two", b"12345")
    swift.post_container(container, {"X-Container-Meta-Owner": "me"})
    c = swift.head_container(container)
    assert c["x-container-object-count"] == "2" and c["x-container-bytes-used"] == "16"
    assert c["x-container-meta-owner"] == "me"
    swift.post_account({"X-Account-Meta-Team": "storage"})
    a = swift.head_account()
    assert a["x-account-object-count"] == "2" and a["x-account-bytes-used"] == "16"
    assert a["x-account-container-count"] == "1" and a["x-account-meta-team"] == "storage"
    swift.post_container(container, {"X-Remove-Container-Meta-Owner": "x"})
    assert "x-container-meta-owner" not in swift.head_container(container)

    swift.put_object(container, "two", b"1234567")  # an overwrite replaces the bytes
    assert swift.head_container(container)["x-container-bytes-used"] == "18"
    assert _status(swift.delete_container, container) == 409
    swift.delete_object(container, "hello.txt")
    swift.delete_object(container, "two")
    assert _status(swift.get_object, container, "two") == 404
    assert _status(swift.delete_object, container, "two") == 404
    swift.delete_container(container)
    assert _status(swift.head_container, container) == 404
    assert swift.head_account()["x-account-object-count"] == "0"


def test_container_put_twice_is_202_and_missing_container_404(owner):
    name = f"c-{uuid.uuid4().hex[:8]}"
    first = requests.put(f"{owner.url}/{name}", headers=owner.headers)
    again = requests.put(f"{owner.url}/{name}", headers=owner.headers)
    assert (first.status_code, again.status_code) == (201, 202)
    assert requests.put(f"{owner.url}/nope-{name}/o", data=b"x",
                        headers=owner.headers).status_code == 404
    assert requests.delete(f"{owner.url}/nope-{name}", headers=owner.headers).status_code == 404
    assert requests.put(owner.url, headers=owner.headers).status_code == 405


def test_listings_prefix_delimiter_markers_limit_reverse_and_formats(owner, container):
    swift = owner.swift
    names = ["a", "b/1", "b/2", "b/c/3", "c", "d é"]
    for name in names:
        swift.put_object(container, name, name.encode(), content_type="text/plain")

    def listed(**params):
        return [e.get("name", e.get("subdir"))
                for e in swift.get_container(container, **params)[1]]

    assert listed() == names
    assert listed(delimiter="/") == ["a", "b/", "c", "d é"]
    assert listed(prefix="b/", delimiter="/") == ["b/1", "b/2", "b/c/"]
    assert listed(marker="b/1", end_marker="c") == ["b/2", "b/c/3"]
    assert listed(limit=2) == ["a", "b/1"]
    r = requests.get(f"{owner.url}/{container}?reverse=true&format=json",
                     headers=owner.headers)
    assert [e["name"] for e in r.json()] == list(reversed(names))
    entry = swift.get_container(container, prefix="a")[1][0]
    assert set(entry) == {"name", "hash", "bytes", "content_type", "last_modified"}
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$", entry["last_modified"])
    assert entry["hash"] == hashlib.md5(b"a").hexdigest() and entry["bytes"] == 1

    plain = requests.get(f"{owner.url}/{container}", headers=owner.headers)
    assert plain.status_code == 200 and plain.text == "".join(n + "\n" for n in names)
    assert plain.headers["Content-Type"] == "text/plain; charset=utf-8"
    xml = requests.get(f"{owner.url}/{container}?format=xml&delimiter=/",
                       headers=owner.headers)
    assert xml.headers["Content-Type"] == "application/xml; charset=utf-8"
    assert '<subdir name="b/"><name>b/</name></subdir>' in xml.text
    assert xml.text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    empty = requests.get(f"{owner.url}/{container}?prefix=zzz", headers=owner.headers)
    assert empty.status_code == 204 and empty.content == b""
    empty_json = requests.get(f"{owner.url}/{container}?prefix=zzz&format=json",
                              headers=owner.headers)
    assert empty_json.status_code == 200 and empty_json.json() == []
    too_many = requests.get(f"{owner.url}/{container}?limit=10001", headers=owner.headers)
    assert too_many.status_code == 412
    accounts = requests.get(f"{owner.url}?format=json", headers=owner.headers).json()
    assert [(c["name"], c["count"], c["bytes"]) for c in accounts] == [
        (container, 6, sum(len(n.encode()) for n in names))]


def test_names_and_metadata_over_swift_limits_are_refused(owner, container):
    url, h = owner.url, owner.headers
    r = requests.put(f"{url}/{'c' * 257}", headers=h)
    assert (r.status_code, r.text) == (400, "Container name length of 257 longer than 256")
    r = requests.put(f"{url}/{container}/{'o' * 1025}", data=b"x", headers=h)
    assert (r.status_code, r.text) == (400, "Object name length of 1025 longer than 1024")
    r = requests.put(f"{url}/{container}/a%00b", data=b"x", headers=h)
    assert (r.status_code, r.text) == (412, "Invalid UTF8 or contains NULL")
    r = requests.put(f"{url}/{container}/o", data=b"x",
                     headers={**h, "X-Object-Meta-" + "k" * 129: "v"})
    assert r.status_code == 400 and r.text.startswith("Metadata name too long")
    r = requests.post(f"{url}/{container}", headers={**h, "X-Container-Meta-K": "v" * 257})
    assert r.status_code == 400 and r.text.startswith("Metadata value longer than 256")
    many = {f"X-Container-Meta-K{i}": "v" for i in range(91)}
    r = requests.post(f"{url}/{container}", headers={**h, **many})
    assert (r.status_code, r.text) == (400, "Too many metadata items; max 90")
    big = {f"X-Account-Meta-K{i}": "v" * 250 for i in range(17)}
    r = requests.post(url, headers={**h, **big})
    assert (r.status_code, r.text) == (400, "Total metadata too large; max 4096")
    # A name with dot segments is just a name: stored and listed as given, nothing escapes.
    r = requests.put(f"{url}/{container}/x/%2E%2E/%2E%2E/etc", data=b"dots", headers=h)
    assert r.status_code == 201
    assert requests.get(f"{url}/{container}/x/%2E%2E/%2E%2E/etc", headers=h).content == b"dots"
    assert [e["name"] for e in owner.swift.get_container(container)[1]] == ["x/../../etc"]


def test_wrong_etag_is_422_and_stores_nothing(owner, container):
    r = requests.put(f"{owner.url}/{container}/o", data=b"payload",
                     headers={**owner.headers, "ETag": "0" * 32})
    assert r.status_code == 422
    assert b"Unprocessable Entity" in r.content
    assert _status(owner.swift.head_object, container, "o") == 404
    assert owner.swift.head_container(container)["x-container-object-count"] == "0"
    right = hashlib.md5(b"payload").hexdigest()
    r = requests.put(f"{owner.url}/{container}/o", data=b"payload",
                     headers={**owner.headers, "ETag": right})
    assert r.status_code == 201 and r.headers["Etag"] == right


def test_ranges_single_multiple_and_unsatisfiable(owner, container):
    owner.swift.put_object(container, "r", b"0123456789", content_type="text/plain")
    url = f"{owner.url}/{container}/r"

    def get(value):
        return requests.get(url, headers={**owner.headers, "Range": value})

    r = get("bytes=2-4")
    assert (r.status_code, r.content) == (206, b"234")
    assert r.headers["Content-Range"] == "bytes 2-4/10"
    assert get("bytes=-3").content == b"789" and get("bytes=7-").content == b"789"
    r = get("bytes=0-1,8-9")
    assert r.status_code == 206
    assert r.headers["Content-Type"].startswith("multipart/byteranges;boundary=")
    assert b"Content-Range: bytes 0-1/10\r\n\r\n01\r\n" in r.content
    assert b"Content-Range: bytes 8-9/10\r\n\r\n89\r\n" in r.content
    r = get("bytes=20-30")
    assert r.status_code == 416 and r.headers["Content-Range"] == "bytes */10"
    assert get("bytes=oops").status_code == 200  # a malformed Range is ignored, as swob does


def test_conditional_requests(owner, container):
    etag = owner.swift.put_object(container, "c", b"data")
    url, h = f"{owner.url}/{container}/c", owner.headers
    assert requests.get(url, headers={**h, "If-Match": f'"{etag}"'}).status_code == 200
    assert requests.get(url, headers={**h, "If-Match": '"nope"'}).status_code == 412
    r = requests.get(url, headers={**h, "If-None-Match": etag})
    assert r.status_code == 304 and r.headers["Etag"] == f'"{etag}"'
    last = requests.head(url, headers=h).headers["Last-Modified"]
    assert requests.get(url, headers={**h, "If-Modified-Since": last}).status_code == 304
    assert requests.get(url, headers={**h, "If-Unmodified-Since":
                                      "Mon, 01 Jan 2001 00:00:00 GMT"}).status_code == 412
    r = requests.put(url, data=b"new", headers={**h, "If-None-Match": "*"})
    assert r.status_code == 412
    assert owner.swift.get_object(container, "c")[1] == b"data"
    r = requests.put(f"{url}-fresh", data=b"new", headers={**h, "If-None-Match": "*"})
    assert r.status_code == 201


def test_chunked_upload_and_missing_length(owner, container):
    def chunks():
        for i in range(5):
            yield bytes([65 + i]) * 100_000

    r = requests.put(f"{owner.url}/{container}/chunked", data=chunks(), headers=owner.headers)
    assert r.status_code == 201
    body = owner.swift.get_object(container, "chunked")[1]
    assert body == b"".join(chunks())
    assert r.headers["Etag"] == hashlib.md5(body).hexdigest()


def test_server_side_copy_with_copy_and_x_copy_from(owner, container):
    swift = owner.swift
    swift.put_object(container, "src", b"copy me", content_type="text/x-src",
                     headers={"X-Object-Meta-A": "1"})
    r = requests.request("COPY", f"{owner.url}/{container}/src",
                         headers={**owner.headers, "Destination": f"{container}/dst1",
                                  "X-Object-Meta-B": "2"})
    assert r.status_code == 201 and r.headers["X-Copied-From"] == f"{container}/src"
    h, body = swift.get_object(container, "dst1")
    assert body == b"copy me" and h["x-object-meta-a"] == "1" and h["x-object-meta-b"] == "2"
    assert h["content-type"] == "text/x-src"
    r = requests.put(f"{owner.url}/{container}/dst2", data=b"",
                     headers={**owner.headers, "X-Copy-From": f"/{container}/src"})
    assert r.status_code == 201
    assert swift.get_object(container, "dst2")[1] == b"copy me"
    r = requests.put(f"{owner.url}/{container}/dst3", data=b"",
                     headers={**owner.headers, "X-Copy-From": f"{container}/nope"})
    assert r.status_code == 404
    assert swift.head_container(container)["x-container-object-count"] == "3"


def test_expiring_objects_are_gone_from_reads_at_once_and_from_listings_after(
        cloud, owner, container):
    from helpers.cloud import wait_for

    swift = owner.swift
    swift.put_object(container, "soon", b"x", headers={"X-Delete-After": "1"})
    swift.put_object(container, "kept", b"y")
    assert swift.head_object(container, "soon")["x-delete-at"]
    r = requests.put(f"{owner.url}/{container}/bad", data=b"x",
                     headers={**owner.headers, "X-Delete-At": "1"})
    assert (r.status_code, r.text) == (400, "X-Delete-At in past")
    url = f"{owner.url}/{container}/soon"
    wait_for(lambda: requests.get(url, headers=owner.headers).status_code == 404, 10,
             "the expired object to be refused", interval=0.2)
    assert [e["name"] for e in swift.get_container(container)[1]] == ["kept"]
    import sqlalchemy as sa

    from pocketstack.common import db
    from pocketstack.objectstore import api, service, store
    from pocketstack.objectstore.models import Blob
    with cloud.cloud.runtime.activated():
        service.expire_now()  # what the expirer runs every [objectstore] expirer_interval
        on_disk = {name for path, _, names in os.walk(store.root()) for name in names
                   if os.path.basename(path) != "tmp"}
        with db.reader() as s:
            in_blobs = set(s.scalars(sa.select(Blob.id)))  # small objects' bytes
        named = api.all_files()
    assert swift.head_container(container)["x-container-object-count"] == "1"
    assert on_disk | in_blobs == named  # the expired object's bytes went with its row


def test_concurrent_writers_keep_usage_exact(owner, container):
    import concurrent.futures

    def write(i):
        conn = swiftclient.Connection(preauthurl=owner.url, preauthtoken=owner.token)
        conn.put_object(container, f"o{i % 10}", b"x" * (i + 1))  # overwrites too
        if i % 7 == 0:
            conn.put_object(container, f"extra{i}", b"12")
            conn.delete_object(container, f"extra{i}")

    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        list(pool.map(write, range(60)))
    listing = owner.swift.get_container(container)[1]
    head = owner.swift.head_container(container)
    assert int(head["x-container-object-count"]) == len(listing) == 10
    assert int(head["x-container-bytes-used"]) == sum(e["bytes"] for e in listing)
    account = owner.swift.head_account()
    assert account["x-account-bytes-used"] == head["x-container-bytes-used"]


def test_pseudo_directory_names_keep_their_trailing_slash(owner, container):
    owner.swift.put_object(container, "dir/", b"", content_type="application/directory")
    assert [e["name"] for e in owner.swift.get_container(container)[1]] == ["dir/"]
    assert owner.swift.head_object(container, "dir/")["content-length"] == "0"
    assert json.loads(requests.get(f"{owner.url}/{container}?format=json",
                                   headers=owner.headers).text)[0]["name"] == "dir/"
