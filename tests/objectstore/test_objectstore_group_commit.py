"""Rows of concurrent uploads share transactions (objectstore/group_commit.py): a write
that is refused, or that fails, takes only itself down."""
from __future__ import annotations

import concurrent.futures
import threading
import uuid

import pytest
import requests

from pocketstack.objectstore import group_commit

N = 16


def test_racing_creates_with_if_none_match_store_one_object(owner, container):
    """16 clients PUT one name with If-None-Match: * at once: one 201, fifteen 412,
    whichever batches their rows fall in, and the container counts one object."""
    url = f"{owner.url}/{container}/only-once"
    start = threading.Barrier(N)

    def put(i):
        with requests.Session() as http:
            start.wait(10)
            return http.put(url, data=b"v%d" % i,
                            headers={**owner.headers, "If-None-Match": "*"}).status_code

    with concurrent.futures.ThreadPoolExecutor(N) as pool:
        codes = sorted(pool.map(put, range(N)))
    assert codes == [201] + [412] * (N - 1)
    head = owner.swift.head_container(container)
    assert head["x-container-object-count"] == "1"
    assert head["x-container-bytes-used"] == str(len(owner.swift.get_object(
        container, "only-once")[1]))


def test_a_write_that_fails_in_a_batch_fails_alone(cloud):
    """A failure other than a refusal (a fault no request can cause: raised here after the
    write changed a row) rolls its batch back; every other write of the batch is committed
    again on its own and only the failing one raises, its row gone with it."""
    names = [f"acct-{uuid.uuid4().hex[:8]}" for _ in range(8)]
    release = threading.Event()

    def insert(name, fail=False):
        def write(driver):
            driver.execute("INSERT INTO objectstore_accounts (name, meta, timestamp, "
                           "created_at) VALUES (?, '{}', '0', '2026-01-01 00:00:00')",
                           (name,))
            if fail:
                raise RuntimeError("disk on fire")
            return name
        return write

    def blocker(driver):
        release.wait(10)  # the others queue up meanwhile: the next batch takes them all

    with cloud.cloud.runtime.activated(), concurrent.futures.ThreadPoolExecutor(10) as pool:
        first = pool.submit(group_commit.run, blocker)
        results = [pool.submit(group_commit.run, insert(name, fail=(i == 3)))
                   for i, name in enumerate(names)]
        release.set()
        first.result(10)
        with pytest.raises(RuntimeError, match="disk on fire"):
            results[3].result(10)
        assert [r.result(10) for i, r in enumerate(results) if i != 3] == \
            [n for i, n in enumerate(names) if i != 3]

        def stored(driver):
            marks = ",".join("?" * len(names))
            return {row[0] for row in driver.execute(
                f"SELECT name FROM objectstore_accounts WHERE name IN ({marks})", names)}

        assert group_commit.run(stored) == set(names) - {names[3]}
