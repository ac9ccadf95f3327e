"""Object versioning as swift's object_versioning (X-Versions-Enabled): version ids on
writes and reads, ?version-id on GET/HEAD/DELETE/PUT/COPY, ?versions listings, delete
markers, suspending, and the 4xx swift gives for bad requests."""
from __future__ import annotations

import uuid

import pytest
import requests
from swiftclient.exceptions import ClientException

MARKER_TYPE = "application/x-deleted;swift_versions_deleted=1"


def _put(swift, container, name, body) -> str:
    answer = {}
    swift.put_object(container, name, body, response_dict=answer)
    return answer["headers"]["x-object-version-id"]


def _versions(swift, container, **kwargs):
    return swift.get_container(container, query_string="versions", **kwargs)[1]


def _status(call) -> int:
    with pytest.raises(ClientException) as caught:
        call()
    return caught.value.http_status


def test_versions_listing_restore_and_delete_markers(owner, container):
    swift = owner.swift
    swift.post_container(container, {"X-Versions-Enabled": "true"})
    assert swift.head_container(container)["x-versions-enabled"] == "True"
    assert "object_versioning" in swift.get_capabilities()
    v1 = _put(swift, container, "doc", b"one")
    v2 = _put(swift, container, "doc", b"two!")
    assert v1 != v2
    headers, body = swift.get_object(container, "doc")
    assert body == b"two!" and headers["x-object-version-id"] == v2
    headers, body = swift.get_object(container, "doc", query_string=f"version-id={v1}")
    assert body == b"one" and headers["x-object-version-id"] == v1
    assert swift.head_object(container, "doc",
                             query_string=f"version-id={v1}")["content-length"] == "3"
    listed = _versions(swift, container)
    assert [(e["name"], e["version_id"], e["is_latest"]) for e in listed] == [
        ("doc", v2, True), ("doc", v1, False)]
    assert swift.get_container(container)[1][0]["name"] == "doc"  # plain listing: current
    # the container's bytes count every version (swift adds its versions container's),
    # in the account's listing and usage too
    assert swift.head_container(container)["x-container-bytes-used"] == "7"
    listed = {c["name"]: c["bytes"] for c in swift.get_account()[1]}
    assert listed[container] == 7
    assert int(swift.head_account()["x-account-bytes-used"]) >= 7

    answer = {}
    swift.delete_object(container, "doc", response_dict=answer)
    marker = answer["headers"]["x-object-version-id"]
    assert _status(lambda: swift.get_object(container, "doc")) == 404
    assert swift.get_container(container)[1] == []
    r = requests.get(f"{owner.url}/{container}/doc", params={"version-id": marker},
                     headers=owner.headers)
    assert r.status_code == 404 and r.headers["x-object-version-id"] == marker
    assert r.headers["content-type"] == MARKER_TYPE
    listed = _versions(swift, container)
    assert [(e["version_id"], e["is_latest"], e["content_type"] == MARKER_TYPE)
            for e in listed] == [(marker, True, True), (v2, False, False),
                                 (v1, False, False)]

    # PUT ?version-id (no body) makes that version current again
    r = requests.put(f"{owner.url}/{container}/doc", params={"version-id": v1},
                     headers={**owner.headers, "Content-Length": "0"})
    assert r.status_code == 201 and r.headers["x-object-version-id"] == v1
    headers, body = swift.get_object(container, "doc")
    assert body == b"one" and headers["x-object-version-id"] == v1

    # DELETE ?version-id of an old version removes it alone
    answer = {}
    swift.delete_object(container, "doc", query_string=f"version-id={v2}",
                        response_dict=answer)
    assert answer["headers"]["x-object-version-id"] == v2
    assert answer["headers"]["x-object-current-version-id"] == v1
    assert _status(lambda: swift.get_object(container, "doc",
                                            query_string=f"version-id={v2}")) == 404

    # a versioned container is deleted only once versioning is off and versions are gone
    swift.delete_object(container, "doc", query_string=f"version-id={v1}")
    r = requests.delete(f"{owner.url}/{container}", headers=owner.headers)
    assert r.status_code == 409 and "Delete all versions" in r.text
    for entry in _versions(swift, container):
        swift.delete_object(container, "doc", query_string=f"version-id={entry['version_id']}")
    swift.post_container(container, {"X-Versions-Enabled": "false"})
    swift.delete_container(container)


def test_suspended_versioning_keeps_old_versions_and_writes_null(owner, container):
    swift = owner.swift
    swift.put_object(container, "n", b"before")  # the "null" version
    swift.post_container(container, {"X-Versions-Enabled": "true"})
    assert swift.head_object(container, "n")["x-object-version-id"] == "null"
    v1 = _put(swift, container, "n", b"versioned")
    listed = _versions(swift, container)
    assert [e["is_latest"] for e in listed] == [True, False]
    old = listed[1]["version_id"]  # the null version got its timestamp as id
    assert swift.get_object(container, "n", query_string=f"version-id={old}")[1] == b"before"

    swift.post_container(container, {"X-Versions-Enabled": "false"})
    assert swift.head_container(container)["x-versions-enabled"] == "False"
    answer = {}
    swift.put_object(container, "n", b"suspended", response_dict=answer)
    assert "x-object-version-id" not in answer["headers"]
    headers, body = swift.get_object(container, "n", query_string="version-id=null")
    assert body == b"suspended" and headers["x-object-version-id"] == "null"
    # the versions written while enabled are still there
    assert swift.get_object(container, "n", query_string=f"version-id={v1}")[1] == \
        b"versioned"
    # COPY of an old version
    r = requests.request("COPY", f"{owner.url}/{container}/n", params={"version-id": v1},
                         headers={**owner.headers, "Destination": f"{container}/copied"})
    assert r.status_code == 201
    assert swift.get_object(container, "copied")[1] == b"versioned"


def test_versions_listing_paging_prefix_and_delimiter(owner, container):
    swift = owner.swift
    swift.post_container(container, {"X-Versions-Enabled": "true"})
    ids = {}
    for name in ("a", "b/x", "b/y", "c"):
        ids[name] = [_put(swift, container, name, name.encode() + bytes([i]))
                     for i in range(2)]
    listed = _versions(swift, container, delimiter="/")
    assert [e.get("name") or e["subdir"] for e in listed] == ["a", "a", "b/", "c", "c"]
    listed = _versions(swift, container, prefix="b/")
    assert [(e["name"], e["version_id"]) for e in listed] == [
        ("b/x", ids["b/x"][1]), ("b/x", ids["b/x"][0]),
        ("b/y", ids["b/y"][1]), ("b/y", ids["b/y"][0])]
    page = _versions(swift, container, marker="a", version_marker=ids["a"][1], limit=2)
    assert [(e["name"], e["version_id"]) for e in page] == [
        ("a", ids["a"][0]), ("b/x", ids["b/x"][1])]
    page = _versions(swift, container, marker="b/y", limit=10)
    assert [e["name"] for e in page] == ["c", "c"]
    # a bulk delete writes delete markers as a DELETE does
    r = requests.post(owner.url, params={"bulk-delete": ""}, data=f"/{container}/c\n",
                      headers={**owner.headers, "Accept": "application/json"})
    assert r.json()["Number Deleted"] == 1
    listed = _versions(swift, container, prefix="c")
    assert [(e["content_type"] == MARKER_TYPE, e["is_latest"]) for e in listed] == [
        (True, True), (False, False), (False, False)]


def test_versioning_bad_requests(owner, container):
    url, headers = f"{owner.url}/{container}", owner.headers
    requests.post(url, headers={**headers, "X-Versions-Enabled": "true"})
    requests.put(f"{url}/o", data=b"1", headers=headers)

    def status(method, path="/o", **kwargs):
        return requests.request(method, url + path, headers={**headers, **kwargs.pop(
            "headers", {})}, **kwargs).status_code

    assert status("POST", params={"version-id": "1"}) == 400
    assert status("GET", params={"version-id": "not-a-version"}) == 400
    assert status("GET", params={"version-id": "1234.5"}) == 404
    assert status("PUT", params={"version-id": "null"}, data=b"") == 400
    assert status("PUT", params={"version-id": "1234.5"}, data=b"body") == 400
    assert status("PUT", params={"version-id": "1234.5"}, data=b"") == 404
    assert status("GET", "", params={"versions": "", "format": "xml"}) == 406
    assert status("GET", "", params={"versions": "", "version_marker": "1"}) == 400
    assert status("GET", "", params={"versions": "", "marker": "o",
                                     "version_marker": "x"}) == 400
    assert status("GET", "", params={"versions": "", "delimiter": "1"}) == 400
    assert status("DELETE", params={"version-id": "1234.5"}) == 404

    plain = f"plain-{uuid.uuid4().hex[:8]}"
    owner.swift.put_container(plain)
    r = requests.get(f"{owner.url}/{plain}/o", params={"version-id": "1234.5"},
                     headers=headers)
    assert r.status_code == 400 and "versioned" in r.text
    # the two kinds of versioning do not mix
    legacy = f"legacy-{uuid.uuid4().hex[:8]}"
    owner.swift.put_container(legacy, {"X-Versions-Location": plain})
    r = requests.post(f"{owner.url}/{legacy}", headers={**headers,
                                                        "X-Versions-Enabled": "true"})
    assert r.status_code == 400 and "legacy" in r.text
    assert "x-versions-enabled" not in owner.swift.head_container(legacy)
    r = requests.post(url, headers={**headers, "X-Versions-Location": plain})
    assert r.status_code == 400


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e20", "0x10", "", "1 2", "null"])
def test_odd_version_ids_are_400_or_404_never_500(owner, container, value):
    url = f"{owner.url}/{container}/o"
    requests.post(f"{owner.url}/{container}", headers={**owner.headers,
                                                       "X-Versions-Enabled": "true"})
    requests.put(url, data=b"1", headers=owner.headers)
    for method in ("GET", "HEAD", "DELETE", "PUT"):
        r = requests.request(method, url, params={"version-id": value},
                             headers={**owner.headers, "Content-Length": "0"})
        if value == "":  # no version asked for: the plain request
            continue
        # "null" is a version id: the object has a real one (404), DELETE keeps it as a
        # non-current version (204), PUT cannot make "null" current (400)
        expected = {400, 404} | ({204} if value == "null" else set())
        assert r.status_code in expected, (method, r.status_code, r.text)
    listing = requests.get(f"{owner.url}/{container}", params={
        "versions": "", "marker": "o", "version_marker": value, "reverse": "true"},
        headers=owner.headers)
    assert listing.status_code in (200, 400)
