"""Object storage on SQLite, PostgreSQL and MariaDB (``pocketstack up`` in a subprocess):
listings in swift's byte order with 1024-byte names, prefix/delimiter, and usage that
stays exact under concurrent writers (the container row lock on each engine)."""
from __future__ import annotations

import concurrent.futures
import threading
import uuid

import swiftclient


def _swift(backend_cloud):
    session = backend_cloud.session()
    url = session.get_endpoint(service_type="object-store", interface="public")
    return url, session.get_token()


def _connect(url: str, token: str) -> swiftclient.Connection:
    return swiftclient.Connection(preauthurl=url, preauthtoken=token, retries=0)


def _new_container(backend_cloud, prefix: str, versioned: bool = False):
    """(url, token, a swift client, the name of a new container of its own)."""
    url, token = _swift(backend_cloud)
    swift = _connect(url, token)
    container = f"{prefix}-{uuid.uuid4().hex[:8]}"
    swift.put_container(container, headers={"X-Versions-Enabled": "true"} if versioned
                        else {})
    return url, token, swift, container


def test_listing_order_long_names_and_exact_usage(backend_cloud):
    url, token, swift, container = _new_container(backend_cloud, "c")
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
        conn = _connect(url, token)
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


def _version_of(answer: dict) -> str:
    return answer["headers"]["x-object-version-id"]


def test_object_versioning_flows(backend_cloud):
    """X-Versions-Enabled on each engine: overwrites keep versions, a delete leaves a
    marker, an old version is read and made current again, suspending writes "null"."""
    url, token, swift, container = _new_container(backend_cloud, "v", versioned=True)
    assert swift.head_container(container)["x-versions-enabled"] == "True"
    ids = []
    for body in (b"first", b"second", b"third!"):
        answer: dict = {}
        swift.put_object(container, "doc", body, response_dict=answer)
        ids.append(_version_of(answer))
    assert len(set(ids)) == 3 and ids == sorted(ids)
    listed = swift.get_container(container, query_string="versions")[1]
    assert [(e["version_id"], e["is_latest"], e["bytes"]) for e in listed] == [
        (ids[2], True, 6), (ids[1], False, 6), (ids[0], False, 5)]
    assert swift.head_container(container)["x-container-bytes-used"] == "17"
    headers, body = swift.get_object(container, "doc", query_string=f"version-id={ids[0]}")
    assert body == b"first" and headers["x-object-version-id"] == ids[0]

    answer = {}
    swift.delete_object(container, "doc", response_dict=answer)
    marker = _version_of(answer)
    try:
        swift.get_object(container, "doc")
    except swiftclient.ClientException as error:
        assert error.http_status == 404
    else:
        raise AssertionError("a deleted object is still read")
    listed = swift.get_container(container, query_string="versions")[1]
    assert [(e["version_id"], e["is_latest"]) for e in listed] == [
        (marker, True), (ids[2], False), (ids[1], False), (ids[0], False)]
    assert swift.get_object(container, "doc",
                            query_string=f"version-id={ids[1]}")[1] == b"second"
    swift.put_object(container, "doc", b"", query_string=f"version-id={ids[1]}")
    headers, body = swift.get_object(container, "doc")
    assert body == b"second" and headers["x-object-version-id"] == ids[1]

    swift.post_container(container, headers={"X-Versions-Enabled": "false"})
    answer = {}
    swift.put_object(container, "doc", b"null one", response_dict=answer)
    assert "x-object-version-id" not in answer["headers"]
    assert swift.get_object(container, "doc", query_string="version-id=null")[1] == \
        b"null one"
    kept = [e["version_id"] for e in swift.get_container(container,
                                                          query_string="versions")[1]]
    assert kept[0] == "null" and set(ids) | {marker} <= set(kept)
    for version in kept:
        swift.delete_object(container, "doc", query_string=f"version-id={version}")
    assert swift.get_container(container, query_string="versions")[1] == []
    swift.delete_container(container)


def test_concurrent_overwrites_of_a_versioned_object_keep_every_version(backend_cloud):
    """Writers racing on one versioned object (the container row lock on each engine):
    every write is a version, one of them current, and the current one is the newest."""
    url, token, swift, container = _new_container(backend_cloud, "vc", versioned=True)

    def write(i):
        conn = _connect(url, token)
        answer: dict = {}
        conn.put_object(container, "hot", f"write {i}".encode(), response_dict=answer)
        return _version_of(answer)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        written = list(pool.map(write, range(32)))
    assert len(set(written)) == len(written)
    listed = swift.get_container(container, query_string="versions")[1]
    assert sorted(e["version_id"] for e in listed) == sorted(written)
    latest = [e["version_id"] for e in listed if e["is_latest"]]
    assert latest == [max(written)]
    headers, _ = swift.get_object(container, "hot")
    assert headers["x-object-version-id"] == max(written)
    head = swift.head_container(container)
    assert head["x-container-object-count"] == "1"
    assert int(head["x-container-bytes-used"]) == sum(e["bytes"] for e in listed)


def test_racing_overwrites_and_deletes_of_a_versioned_object(backend_cloud):
    """Overwrites and deletes racing on one versioned object: every write and every
    delete marker is a version, the newest one is the latest, and the container's usage
    matches what is listed."""
    url, token, swift, container = _new_container(backend_cloud, "vd", versioned=True)

    def write_or_delete(i):
        conn = _connect(url, token)
        answer: dict = {}
        try:
            if i % 3 == 2:
                conn.delete_object(container, "hot", response_dict=answer)
            else:
                conn.put_object(container, "hot", b"x" * i, response_dict=answer)
        except swiftclient.ClientException as error:  # a delete with nothing current
            assert error.http_status == 404
            return error.http_response_headers["x-object-version-id"]
        return _version_of(answer)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        made = list(pool.map(write_or_delete, range(30)))
    assert len(set(made)) == len(made)
    listed = swift.get_container(container, query_string="versions")[1]
    assert sorted(e["version_id"] for e in listed) == sorted(made)
    assert [e["version_id"] for e in listed if e["is_latest"]] == [max(made)]
    head = swift.head_container(container)
    current = [e for e in swift.get_container(container)[1]]
    newest = next(e for e in listed if e["version_id"] == max(made))
    deleted = newest["content_type"].startswith("application/x-deleted")
    assert len(current) == int(head["x-container-object-count"]) == (0 if deleted else 1)
    assert int(head["x-container-bytes-used"]) == sum(e["bytes"] for e in listed)


def test_versions_listings_during_overwrites_read_one_snapshot(backend_cloud):
    """?versions listings racing overwrites: each listing shows every version once and
    one of them latest (on PostgreSQL its two queries once read two snapshots, so an
    overwrite between them listed the replaced version twice)."""
    url, token, swift, container = _new_container(backend_cloud, "vl", versioned=True)
    swift.put_object(container, "hot", b"0")
    writers_done = threading.Event()
    wrong = []

    def overwrite(_):
        conn = _connect(url, token)
        for _ in range(40):
            conn.put_object(container, "hot", b"x")

    def list_versions():
        conn = _connect(url, token)
        for _ in range(300):
            if writers_done.is_set():
                return
            listed = conn.get_container(container, query_string="versions")[1]
            ids = [e["version_id"] for e in listed]
            if len(set(ids)) != len(ids) or sum(e["is_latest"] for e in listed) != 1:
                wrong.append(ids)

    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        listers = [pool.submit(list_versions) for _ in range(2)]
        list(pool.map(overwrite, range(3)))
        writers_done.set()
        for lister in listers:
            lister.result()
    assert wrong == []
    assert len(swift.get_container(container, query_string="versions")[1]) == 121
