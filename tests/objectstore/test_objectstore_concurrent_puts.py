"""A container's usage right after many concurrent writers: exact, not eventually."""
from __future__ import annotations

import concurrent.futures
import threading

import swiftclient


def test_container_head_after_1000_concurrent_puts_counts_every_object(owner, container):
    local = threading.local()  # one keep-alive connection per writer thread

    def put(i):
        if not hasattr(local, "conn"):
            local.conn = swiftclient.Connection(preauthurl=owner.url,
                                                preauthtoken=owner.token, retries=0)
        local.conn.put_object(container, f"obj-{i:04d}", b"%d" % i)

    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        list(pool.map(put, range(1000)))
    head = owner.swift.head_container(container)
    assert head["x-container-object-count"] == "1000"
    assert int(head["x-container-bytes-used"]) == sum(len(b"%d" % i) for i in range(1000))
    names = [o["name"] for o in owner.swift.get_container(container, full_listing=True)[1]]
    assert names == [f"obj-{i:04d}" for i in range(1000)]
