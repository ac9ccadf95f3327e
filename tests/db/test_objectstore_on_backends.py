"""Object storage on SQLite, PostgreSQL and MariaDB (``pocketstack up`` in a subprocess):
listings in swift's byte order with 1024-byte names, prefix/delimiter, and usage that
stays exact under concurrent writers (the container row lock on each engine)."""
from __future__ import annotations

import concurrent.futures
import uuid

import swiftclient


def _swift(backend_cloud):
    session = backend_cloud.session()
    url = session.get_endpoint(service_type="object-store", interface="public")
    return url, session.get_token()


def test_listing_order_long_names_and_exact_usage(backend_cloud):
    url, token = _swift(backend_cloud)
    swift = swiftclient.Connection(preauthurl=url, preauthtoken=token, retries=0)
    container = f"c-{uuid.uuid4().hex[:8]}"
    swift.put_container(container)
    long_name = "n" * 1020 + "/end"
    names = ["B", "a", "a/b", "a/c/d", "é", "z", "\u4e2d", long_name]
    for name in names:
        swift.put_object(container, name, name.encode())
    listed = [e["name"] for e in swift.get_container(container)[1]]
    assert listed == sorted(names, key=lambda n: n.encode())  # byte order, as swift
    assert [e.get("name", e.get("subdir")) for e in
            swift.get_container(container, prefix="a", delimiter="/")[1]] == ["a", "a/"]
    assert swift.get_object(container, long_name)[1] == long_name.encode()

    def write(i):
        conn = swiftclient.Connection(preauthurl=url, preauthtoken=token, retries=0)
        conn.put_object(container, f"w{i % 8}", b"x" * (i + 1))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(48)))
    listing = swift.get_container(container)[1]
    head = swift.head_container(container)
    assert int(head["x-container-object-count"]) == len(listing) == len(names) + 8
    assert int(head["x-container-bytes-used"]) == sum(e["bytes"] for e in listing)
    for name in [e["name"] for e in listing]:
        swift.delete_object(container, name)
    swift.delete_container(container)
