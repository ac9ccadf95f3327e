"""Object versioning as swift's versioned_writes: X-Versions-Location (stack: a DELETE
brings the previous version back) and X-History-Location (history: a DELETE archives)."""
from __future__ import annotations

import uuid

import pytest
import requests
from swiftclient.exceptions import ClientException


def _archive(owner):
    name = f"archive-{uuid.uuid4().hex[:8]}"
    owner.swift.put_container(name)
    return name


def test_stack_mode_keeps_versions_and_delete_restores_the_previous(owner, container):
    swift = owner.swift
    archive = _archive(owner)
    swift.post_container(container, {"X-Versions-Location": archive})
    assert swift.head_container(container)["x-versions-location"] == archive
    for body in (b"v1", b"v2", b"v3"):
        swift.put_object(container, "doc", body, headers={"X-Object-Meta-V": body.decode()})
    versions = [e["name"] for e in swift.get_container(archive)[1]]
    assert len(versions) == 2 and all(v.startswith("003doc/") for v in versions)
    assert swift.get_object(archive, versions[0])[1] == b"v1"
    swift.delete_object(container, "doc")
    headers, body = swift.get_object(container, "doc")
    assert body == b"v2" and headers["x-object-meta-v"] == "v2"
    swift.delete_object(container, "doc")
    assert swift.get_object(container, "doc")[1] == b"v1"
    swift.delete_object(container, "doc")
    with pytest.raises(ClientException) as caught:
        swift.get_object(container, "doc")
    assert caught.value.http_status == 404
    assert swift.get_container(archive)[1] == []


def test_history_mode_archives_on_delete(owner, container):
    swift = owner.swift
    archive = _archive(owner)
    swift.post_container(container, {"X-History-Location": archive})
    swift.put_object(container, "log", b"first")
    swift.put_object(container, "log", b"second")
    swift.delete_object(container, "log")
    with pytest.raises(ClientException):
        swift.get_object(container, "log")
    archived = [swift.get_object(archive, e["name"])[1]
                for e in swift.get_container(archive)[1]]
    assert archived == [b"first", b"second"]


def test_versioning_headers_are_checked(owner, container):
    r = requests.post(f"{owner.url}/{container}", headers={
        **owner.headers, "X-Versions-Location": "a", "X-History-Location": "b"})
    assert r.status_code == 400
    owner.swift.post_container(container, {"X-Versions-Location": "nowhere"})
    owner.swift.put_object(container, "o", b"1")
    r = requests.put(f"{owner.url}/{container}/o", data=b"2", headers=owner.headers)
    assert r.status_code == 412  # the archive container does not exist
    assert owner.swift.get_object(container, "o")[1] == b"1"
    owner.swift.post_container(container, {"X-Remove-Versions-Location": "x"})
    assert "x-versions-location" not in owner.swift.head_container(container)
