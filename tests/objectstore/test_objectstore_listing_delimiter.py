"""Delimiter listings page as swift's do: a client that pages on the last subdir it got
(python-swiftclient's full listing does) never gets that subdir again, and expired
objects fold into nothing."""
from __future__ import annotations

import time


def test_delimiter_pages_on_subdirs_forward_and_reverse(owner, container):
    swift = owner.swift
    for name in ("a/1", "a/2", "b/1", "b/x/2", "c", "d/1"):
        swift.put_object(container, name, b"x")
    # X-Delete-After, not a client-side X-Delete-At of now + 1: that one could be in the
    # past by the time a loaded server read it (a CI run's 400). Gone within 2 s either way.
    swift.put_object(container, "e/gone", b"x", headers={"X-Delete-After": "1"})
    time.sleep(2)
    listed = swift.get_container(container, delimiter="/", limit=1, full_listing=True)[1]
    assert [e.get("subdir") or e["name"] for e in listed] == ["a/", "b/", "c", "d/"]
    page = swift.get_container(container, delimiter="/", marker="b/")[1]
    assert [e.get("subdir") or e["name"] for e in page] == ["c", "d/"]
    page = swift.get_container(container, delimiter="/", prefix="b/")[1]
    assert [e.get("subdir") or e["name"] for e in page] == ["b/1", "b/x/"]
    page = swift.get_container(container, delimiter="/", end_marker="c")[1]
    assert [e.get("subdir") or e["name"] for e in page] == ["a/", "b/"]
    page = swift.get_container(container, delimiter="/",
                               query_string="reverse=true")[1]
    assert [e.get("subdir") or e["name"] for e in page] == ["d/", "c", "b/", "a/"]
