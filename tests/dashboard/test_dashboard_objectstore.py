"""The dashboard's object storage pages over real HTTP: containers (count, bytes, create,
delete when empty, public or private) and their objects (pseudo-folders, upload streamed
through, download, delete), checked against the Swift API's own answers. Bad input shows
swift's message with its status, never a 500."""
from __future__ import annotations

import html
import uuid

import httpx

from helpers.dashboard import alert_text, csrf_token


def _swift(cloud, user):
    s = cloud.user_session(user)
    return s, s.get_endpoint(service_type="object-store", interface="public")


def _post(client, path, **data):
    page = client.get(path)
    assert page.status_code == 200, page.text
    return client.post(path, data={"csrf_token": csrf_token(page.text), **data})


def test_containers_page_shows_the_projects_containers_only(cloud, member):
    user, client = member
    s, account = _swift(cloud, user)
    mine = f"mine-{uuid.uuid4().hex[:6]}"
    s.put(f"{account}/{mine}")
    s.put(f"{account}/{mine}/a.txt", data=b"12345")
    other = cloud.make_user()
    os_, other_account = _swift(cloud, other)
    theirs = f"theirs-{uuid.uuid4().hex[:6]}"
    os_.put(f"{other_account}/{theirs}")
    page = client.get("/dashboard/containers")
    assert page.status_code == 200
    assert f'data-count="{mine}">1</td><td data-bytes="{mine}">5</td>' in page.text
    assert theirs not in page.text
    # Not empty: no delete offered (swift would refuse it).
    assert f"Delete container {mine}" not in page.text
    # The menu has it, for a cloud whose catalog has object storage.
    assert 'href="/dashboard/containers">Containers</a>' in page.text


def test_create_make_public_and_private_and_delete_a_container(cloud, member):
    user, client = member
    s, account = _swift(cloud, user)
    name = f"pub-{uuid.uuid4().hex[:6]}"
    r = _post(client, "/dashboard/containers", action="create", container=name)
    assert r.status_code == 303, r.text
    assert s.head(f"{account}/{name}").status_code == 204
    s.put(f"{account}/{name}/hello.txt", data=b"hello world",
          headers={"Content-Type": "text/plain"})
    anonymous = httpx.get(f"{account}/{name}/hello.txt")
    assert anonymous.status_code == 401
    page = client.get(f"/dashboard/containers/{name}")
    assert f'data-access="{name}">private</span>' in page.text
    r = _post(client, f"/dashboard/containers/{name}", action="public")
    assert r.status_code == 303, r.text
    assert s.head(f"{account}/{name}").headers["X-Container-Read"] == ".r:*,.rlistings"
    page = client.get(f"/dashboard/containers/{name}")
    assert f'data-access="{name}">public: anyone may read' in page.text
    assert 'value="private">Make private</button>' in page.text
    # Readable and listable by anyone, without a token.
    anonymous = httpx.get(f"{account}/{name}/hello.txt")
    assert anonymous.status_code == 200 and anonymous.content == b"hello world"
    assert httpx.get(f"{account}/{name}").text.split() == ["hello.txt"]
    r = _post(client, f"/dashboard/containers/{name}", action="private")
    assert r.status_code == 303
    assert httpx.get(f"{account}/{name}/hello.txt").status_code == 401
    assert f'data-access="{name}">private</span>' in client.get(
        f"/dashboard/containers/{name}").text
    # Not empty: swift's own 409, shown.
    r = _post(client, "/dashboard/containers", action="delete", container=name)
    api = s.delete(f"{account}/{name}", raise_exc=False)
    assert r.status_code == api.status_code == 409
    assert alert_text(r.text) in api.text
    s.delete(f"{account}/{name}/hello.txt")
    assert f"Delete container {name}" in client.get("/dashboard/containers").text
    r = _post(client, "/dashboard/containers", action="delete", container=name)
    assert r.status_code == 303
    assert s.head(f"{account}/{name}", raise_exc=False).status_code == 404


def test_bad_container_input_shows_swifts_message(cloud, member):
    user, client = member
    s, account = _swift(cloud, user)
    long = "x" * 300
    r = _post(client, "/dashboard/containers", action="create", container=long)
    api = s.put(f"{account}/{long}", raise_exc=False)
    assert r.status_code == api.status_code == 400
    assert alert_text(r.text) == api.text.strip()
    for name, status in (("", 400), ("a/b", 400)):
        r = _post(client, "/dashboard/containers", action="create", container=name)
        assert r.status_code == status and alert_text(r.text)
    name = f"dup-{uuid.uuid4().hex[:6]}"
    assert _post(client, "/dashboard/containers", action="create",
                 container=name).status_code == 303
    r = _post(client, "/dashboard/containers", action="create", container=name)
    assert r.status_code == 409 and "already exists" in alert_text(r.text)
    r = _post(client, "/dashboard/containers", action="delete", container="no-such")
    assert r.status_code == 404 and alert_text(r.text)
    assert client.get("/dashboard/containers/no-such").status_code == 404


def test_objects_with_folders_upload_download_and_delete(cloud, member):
    user, client = member
    s, account = _swift(cloud, user)
    name = f"objs-{uuid.uuid4().hex[:6]}"
    s.put(f"{account}/{name}")
    s.put(f"{account}/{name}/top.txt", data=b"top")
    s.put(f"{account}/{name}/docs/a.txt", data=b"a")
    s.put(f"{account}/{name}/docs/deep/b.txt", data=b"bb")
    page = client.get(f"/dashboard/containers/{name}")
    assert page.status_code == 200
    assert 'data-folder="docs/"' in page.text and 'data-object="top.txt"' in page.text
    assert 'data-object="docs/a.txt"' not in page.text
    assert 'id="upload-progress"' in page.text and "/static/upload.js" in page.text
    assert client.get("/dashboard/static/upload.js").status_code == 200
    inside = client.get(f"/dashboard/containers/{name}", params={"prefix": "docs/"})
    assert 'data-object="docs/a.txt"' in inside.text
    assert 'data-folder="docs/deep/"' in inside.text and 'data-object="top.txt"' not in inside.text
    # Upload: the body streamed through in chunks, with the page's CSRF token.
    csrf = csrf_token(page.text)
    data = bytes(range(256)) * 4096 + b"tail"

    def chunks():
        for i in range(0, len(data), 64 * 1024):
            yield data[i:i + 64 * 1024]
    r = client.put(f"/dashboard/containers/{name}/object", params={"name": "docs/big.bin"},
                   content=chunks(), headers={"X-CSRF-Token": csrf,
                                              "Content-Type": "application/x-thing"})
    assert r.status_code == 200, r.text
    assert r.json()["location"] == f"/dashboard/containers/{name}?prefix=docs%2F"
    stored = s.get(f"{account}/{name}/docs/big.bin")
    assert stored.content == data and stored.headers["Content-Type"] == "application/x-thing"
    # Download: the same bytes, always as an attachment.
    got = client.get(f"/dashboard/containers/{name}/object", params={"name": "docs/big.bin"})
    assert got.status_code == 200 and got.content == data
    assert got.headers["content-disposition"] == "attachment; filename*=UTF-8''big.bin"
    assert got.headers["content-type"] == "application/octet-stream"
    missing = client.get(f"/dashboard/containers/{name}/object", params={"name": "nope"})
    assert missing.status_code == 404
    # No CSRF header: refused before anything reaches swift.
    r = client.put(f"/dashboard/containers/{name}/object", params={"name": "x"},
                   content=b"x")
    assert r.status_code == 403
    assert s.head(f"{account}/{name}/x", raise_exc=False).status_code == 404
    # Swift's refusal (a name too long): its message and status.
    r = client.put(f"/dashboard/containers/{name}/object", params={"name": "n" * 1100},
                   content=b"x", headers={"X-CSRF-Token": csrf})
    api = s.put(f"{account}/{name}/{'n' * 1100}", data=b"x", raise_exc=False)
    assert r.status_code == api.status_code == 400 and r.json()["error"] == api.text.strip()
    # Delete from inside a folder: back to the folder, the object gone.
    r = client.post(f"/dashboard/containers/{name}?prefix=docs%2F",
                    data={"csrf_token": csrf, "action": "delete", "object": "docs/a.txt"})
    assert r.status_code == 303
    assert r.headers["location"] == f"/dashboard/containers/{name}?prefix=docs%2F"
    assert s.head(f"{account}/{name}/docs/a.txt", raise_exc=False).status_code == 404
    r = client.post(f"/dashboard/containers/{name}",
                    data={"csrf_token": csrf, "action": "delete", "object": "docs/a.txt"})
    assert r.status_code == 404 and html.unescape(alert_text(r.text))
    container = client.get("/dashboard/containers").text
    assert f'data-count="{name}">3</td>' in container  # top, deep/b, big


def test_another_projects_container_is_not_reachable(cloud, member):
    user, client = member
    other = cloud.make_user()
    s, account = _swift(cloud, other)
    name = f"priv-{uuid.uuid4().hex[:6]}"
    s.put(f"{account}/{name}")
    s.put(f"{account}/{name}/secret.txt", data=b"hidden")
    mine, my_account = _swift(cloud, user)
    mine.put(f"{my_account}/{name}-mine")
    mine.put(f"{my_account}/{name}-mine/note.txt", data=b"mine")
    assert 'data-object="note.txt"' in client.get(f"/dashboard/containers/{name}-mine").text
    assert client.get(f"/dashboard/containers/{name}-mine/object",
                      params={"name": "note.txt"}).content == b"mine"
    # The member's own account has no such container: swift says 404.
    assert client.get(f"/dashboard/containers/{name}").status_code == 404
    assert client.get(f"/dashboard/containers/{name}/object",
                      params={"name": "secret.txt"}).status_code == 404
