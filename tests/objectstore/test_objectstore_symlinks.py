"""Symlinks (swift's symlink middleware): X-Symlink-Target links followed by GET/HEAD and
COPY, shown with ?symlink=get, static links pinned by X-Symlink-Target-Etag, loops and
dangling links refused, listed in /info."""
from __future__ import annotations

import hashlib

import httpx
import pytest
import swiftclient


def _link(owner, container, name, target, **headers):
    return httpx.put(f"{owner.url}/{container}/{name}", content=b"",
                     headers={**owner.headers, "X-Symlink-Target": target, **headers})


def test_a_link_is_followed_and_shown_with_symlink_get(owner, container):
    owner.swift.put_object(container, "target.txt", b"the real bytes",
                           content_type="text/plain")
    r = _link(owner, container, "link", f"{container}/target.txt")
    assert r.status_code == 201
    headers, body = owner.swift.get_object(container, "link")
    assert body == b"the real bytes"
    assert headers["content-type"] == "text/plain"
    assert headers["content-location"].endswith(f"/{container}/target.txt")
    r = httpx.get(f"{owner.url}/{container}/link", params={"symlink": "get"},
                  headers=owner.headers)
    assert r.status_code == 200 and r.content == b""
    assert r.headers["x-symlink-target"] == f"{container}/target.txt"
    assert r.headers["content-type"] == "application/symlink"
    # POST keeps the link; DELETE removes the link only
    owner.swift.post_object(container, "link", headers={"X-Object-Meta-Note": "n"})
    assert owner.swift.get_object(container, "link")[1] == b"the real bytes"
    owner.swift.delete_object(container, "link")
    assert owner.swift.get_object(container, "target.txt")[1] == b"the real bytes"


def test_copy_of_a_link_copies_its_target(owner, container):
    owner.swift.put_object(container, "t", b"copied content")
    _link(owner, container, "l", f"{container}/t")
    owner.swift.copy_object(container, "l", destination=f"/{container}/copy")
    headers, body = owner.swift.get_object(container, "copy",
                                           query_string="symlink=get")
    assert body == b"copied content" and "x-symlink-target" not in headers


def test_dangling_links_loops_and_bodies_are_refused(owner, container):
    assert _link(owner, container, "dangling", f"{container}/nothing").status_code == 201
    with pytest.raises(swiftclient.ClientException) as error:
        owner.swift.get_object(container, "dangling")
    assert error.value.http_status == 404
    _link(owner, container, "a", f"{container}/b")
    _link(owner, container, "b", f"{container}/a")
    r = httpx.get(f"{owner.url}/{container}/a", headers=owner.headers)
    assert r.status_code == 409 and b"Too many levels of symbolic links" in r.content
    r = httpx.put(f"{owner.url}/{container}/x", content=b"body",
                  headers={**owner.headers, "X-Symlink-Target": f"{container}/a"})
    assert r.status_code == 400
    assert _link(owner, container, "y", "no-slash").status_code == 412
    r = httpx.post(f"{owner.url}/{container}/a",
                   headers={**owner.headers, "X-Symlink-Target": f"{container}/x"})
    assert r.status_code == 400


def test_static_links_pin_the_targets_etag(owner, container):
    owner.swift.put_object(container, "v", b"version one")
    etag = hashlib.md5(b"version one").hexdigest()
    assert _link(owner, container, "bad", f"{container}/v",
                 **{"X-Symlink-Target-Etag": "0" * 32}).status_code == 409
    assert _link(owner, container, "pinned", f"{container}/v",
                 **{"X-Symlink-Target-Etag": etag}).status_code == 201
    assert owner.swift.get_object(container, "pinned")[1] == b"version one"
    owner.swift.put_object(container, "v", b"version two")
    r = httpx.get(f"{owner.url}/{container}/pinned", headers=owner.headers)
    assert r.status_code == 409


def test_info_lists_symlinks(owner):
    info = httpx.get(owner.url.split("/v1/")[0] + "/info").json()
    assert info["symlink"] == {"symloop_max": 2, "static_links": True}
