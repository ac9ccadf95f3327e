"""Static and dynamic large objects, bulk delete and quotas, as swift's middlewares."""
from __future__ import annotations

import hashlib
import json
import os
import uuid

import pytest
import requests
from swiftclient.exceptions import ClientException
from swiftclient.service import SwiftService, SwiftUploadObject


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_a_static_large_object_of_segments_of_several_mib_downloads_whole(owner, container):
    """Each segment is read a MiB at a time with reads ahead on several threads: they
    share one open file (they once opened it each, and a file closed under a read made
    about one download in four end early)."""
    size = 3 * 1024 * 1024 + 7  # four reads of a segment in flight at once
    segments = [os.urandom(size), os.urandom(size)]
    for i, data in enumerate(segments):
        owner.swift.put_object(container, f"seg/{i}", data)
    manifest = [{"path": f"/{container}/seg/{i}"} for i in range(len(segments))]
    owner.swift.put_object(container, "slo", json.dumps(manifest),
                           query_string="multipart-manifest=put")
    for _ in range(12):
        assert owner.swift.get_object(container, "slo")[1] == b"".join(segments)


def test_static_large_object_put_get_ranges_manifest_and_delete(owner, container):
    url, h, swift = owner.url, owner.headers, owner.swift
    swift.put_container("segments")
    parts = [b"A" * 1000, b"B" * 600, b"C" * 10]
    for i, part in enumerate(parts):
        swift.put_object("segments", f"s{i}", part)
    manifest = [{"path": "/segments/s0", "etag": _md5(parts[0]), "size_bytes": 1000},
                {"path": "segments/s1"},
                {"path": "/segments/s2", "etag": None, "size_bytes": 10}]
    r = requests.put(f"{url}/{container}/big?multipart-manifest=put",
                     data=json.dumps(manifest), headers=h)
    assert r.status_code == 201
    slo_etag = _md5("".join(_md5(p) for p in parts).encode())
    headers, body = swift.get_object(container, "big")
    assert body == b"".join(parts)
    assert headers["x-static-large-object"] == "True"
    assert headers["etag"] == f'"{slo_etag}"' and headers["content-length"] == "1610"
    r = requests.get(f"{url}/{container}/big", headers={**h, "Range": "bytes=995-1604"})
    assert r.status_code == 206 and r.content == (b"".join(parts))[995:1605]
    stored = requests.get(f"{url}/{container}/big?multipart-manifest=get", headers=h).json()
    assert [(s["name"], s["bytes"], s["hash"]) for s in stored] == [
        (f"/segments/s{i}", len(p), _md5(p)) for i, p in enumerate(parts)]
    swift.post_object(container, "big", {"X-Object-Meta-Kind": "large"})  # stays an SLO
    assert swift.get_object(container, "big")[1] == b"".join(parts)
    listed = swift.get_container(container)[1][0]
    assert (listed["name"], listed["bytes"]) == ("big", 1610)
    assert swift.head_container(container)["x-container-bytes-used"] == "1610"
    # A changed segment makes the large object unreadable rather than wrong.
    swift.put_object("segments", "s1", b"changed")
    assert requests.get(f"{url}/{container}/big", headers=h).status_code == 409
    r = requests.delete(f"{url}/{container}/big?multipart-manifest=delete",
                        headers={**h, "Accept": "application/json"})
    assert r.status_code == 200
    assert r.json()["Number Deleted"] == 4 and r.json()["Errors"] == []
    assert swift.get_container("segments")[1] == []
    assert swift.get_container(container)[1] == []


def test_static_large_object_segment_checks(owner, container):
    url, h = owner.url, owner.headers
    owner.swift.put_object(container, "seg", b"12345")
    bad = [{"path": f"/{container}/seg", "etag": "0" * 32},
           {"path": f"/{container}/seg", "size_bytes": 6},
           {"path": f"/{container}/missing"}]
    r = requests.put(f"{url}/{container}/m?multipart-manifest=put", data=json.dumps(bad),
                     headers=h)
    assert r.status_code == 400
    assert r.text == (f"Errors:\n/{container}/seg, Etag Mismatch\n/{container}/seg, "
                      f"Size Mismatch\n/{container}/missing, 404 Not Found")
    for body in (b"not json", b"[]", json.dumps([{"path": "nocontainer"}]).encode(),
                 json.dumps([{"path": f"/{container}/seg", "extra": 1}]).encode()):
        r = requests.put(f"{url}/{container}/m?multipart-manifest=put", data=body, headers=h)
        assert r.status_code == 400, body
    assert [o["name"] for o in owner.swift.get_container(container)[1]] == ["seg"]


def test_swiftclient_segmented_upload_makes_a_static_large_object(owner, container, tmp_path):
    source = tmp_path / "large.bin"
    data = bytes(range(256)) * 4000  # 1,024,000 bytes in 300,000-byte segments
    source.write_bytes(data)
    options = {"os_storage_url": owner.url, "os_auth_token": owner.token,
               "segment_size": 300_000, "use_slo": True}
    with SwiftService(options=options) as service:
        results = list(service.upload(container, [SwiftUploadObject(str(source),
                                                                    object_name="large")]))
    assert all(r["success"] for r in results), results
    headers, body = owner.swift.get_object(container, "large")
    assert body == data and headers["x-static-large-object"] == "True"


def test_dynamic_large_object(owner, container):
    swift = owner.swift
    for i, part in enumerate((b"one-", b"two-", b"three")):
        swift.put_object(container, f"parts/{i:02d}", part)
    swift.put_object(container, "whole", b"", headers={"X-Object-Manifest":
                                                      f"{container}/parts/"})
    headers, body = swift.get_object(container, "whole")
    assert body == b"one-two-three"
    assert headers["etag"] == '"%s"' % _md5("".join(
        _md5(p) for p in (b"one-", b"two-", b"three")).encode())
    r = requests.get(f"{owner.url}/{container}/whole?multipart-manifest=get",
                     headers=owner.headers)
    assert r.content == b"" and r.headers["X-Object-Manifest"] == f"{container}/parts/"


def test_bulk_delete(owner, container):
    swift = owner.swift
    for name in ("a", "b c", "d/e"):
        swift.put_object(container, name, b"x")
    empty = f"empty-{uuid.uuid4().hex[:6]}"
    swift.put_container(empty)
    body = "\n".join([f"/{container}/a", f"/{container}/b%20c", f"{container}/d/e",
                      f"/{container}/missing", f"/{empty}", f"/{container}"])
    r = requests.post(f"{owner.url}?bulk-delete", data=body,
                      headers={**owner.headers, "Accept": "application/json",
                               "Content-Type": "text/plain"})
    assert r.status_code == 200
    result = r.json()
    assert result["Number Deleted"] == 5  # the three objects, then both containers
    assert result["Number Not Found"] == 1 and result["Errors"] == []
    assert result["Response Status"] == "200 OK"
    with pytest.raises(ClientException):
        swift.head_container(container)
    # Results for a non-empty container and a stranger's account
    swift.put_container(empty)
    swift.put_object(empty, "keep", b"x")
    r = requests.post(f"{owner.url}?bulk-delete", data=f"/{empty}",
                      headers={**owner.headers, "Accept": "application/json"})
    assert r.json()["Errors"] == [[f"/{empty}", "409 Conflict"]]
    assert r.json()["Response Status"] == "400 Bad Request"
    text = requests.post(f"{owner.url}?bulk-delete", data=f"/{empty}/keep",
                         headers=owner.headers)
    assert text.text.startswith("Number Deleted: 1\nNumber Not Found: 0\n")


def test_container_and_account_quotas(cloud, owner, container):
    swift = owner.swift
    swift.post_container(container, {"X-Container-Meta-Quota-Bytes": "10",
                                     "X-Container-Meta-Quota-Count": "2"})
    swift.put_object(container, "a", b"12345")
    r = requests.put(f"{owner.url}/{container}/b", data=b"123456", headers=owner.headers)
    assert (r.status_code, r.text) == (413, "Upload exceeds quota.")
    swift.put_object(container, "a", b"54321")  # swift counts an overwrite as new bytes
    swift.post_container(container, {"X-Container-Meta-Quota-Bytes": ""})
    swift.put_object(container, "b", b"1")
    r = requests.put(f"{owner.url}/{container}/c", data=b"1", headers=owner.headers)
    assert r.status_code == 413  # the third object
    assert swift.head_container(container)["x-container-object-count"] == "2"
    # Account quotas are set by reseller admins, not by the account's owner.
    r = requests.post(owner.url, headers={**owner.headers, "X-Account-Meta-Quota-Bytes": "1"})
    assert r.status_code == 403
