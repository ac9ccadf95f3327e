"""The JSON behind the pages' live progress (static/live.js): a server's status, task and
fault while a long action runs, and the statuses of a page's volumes, snapshots and
backups; the markup the script reads; a volume created from an image through the form."""
from __future__ import annotations

import time
import uuid

import httpx

from helpers.dashboard import csrf_token, login


def _until(fetch, test, timeout=60):
    deadline = time.monotonic() + timeout
    while not test(value := fetch()):
        assert time.monotonic() < deadline, value
        time.sleep(0.05)
    return value


def test_server_progress_follows_a_boot_to_its_result_and_is_the_apis_to_refuse(
        cloud, image_id):
    user = cloud.make_user()
    client = login(cloud, user["name"], user["password"])
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name=f"dash-prog-{uuid.uuid4().hex[:6]}",
                                        image_id=image_id, flavor_id="42", networks="none")
    try:
        url = f"/dashboard/servers/{server.id}/progress"
        done = _until(lambda: client.get(url).json(), lambda s: s["status"] != "BUILD")
        assert (done["status"], done["task_state"], done["fault"]) == ("ACTIVE", None, None)
        page = client.get(f"/dashboard/servers/{server.id}").text
        assert f'data-server-live="{server.id}" data-status="ACTIVE" data-task=""' in page
        assert 'id="server-progress" aria-live="polite">none' in page
        assert "/static/live.js" in page
        # Another project's user gets the API's 404; no login, a 401.
        other = cloud.make_user()
        stranger = login(cloud, other["name"], other["password"])
        assert stranger.get(url).status_code == 404 and stranger.get(url).json()["error"]
        stranger.close()
        with httpx.Client(base_url=cloud.url) as anonymous:
            assert anonymous.get(url).status_code == 401
    finally:
        conn.compute.delete_server(server.id)
        client.close()


def test_a_failed_boot_ends_with_its_fault(cloud, image_id):
    user = cloud.make_user()
    client = login(cloud, user["name"], user["password"])
    admin = cloud.sdk()
    cloud.session().put(f"{cloud.url}/compute/v2.1/os-quota-sets/{user['project_id']}",
                        json={"quota_set": {"ram": -1}})
    flavor = admin.compute.create_flavor(name=f"dash-prog-huge-{uuid.uuid4().hex[:6]}",
                                         ram=10_000_000, vcpus=1, disk=1)
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name="dash-prog-nvh", image_id=image_id,
                                        flavor_id=flavor.id, networks="none")
    try:
        url = f"/dashboard/servers/{server.id}/progress"
        done = _until(lambda: client.get(url).json(), lambda s: s["status"] == "ERROR")
        assert done["fault"].startswith("No valid host")
    finally:
        conn.compute.delete_server(server.id)
        admin.compute.delete_flavor(flavor.id)
        client.close()


def test_volume_from_an_image_and_the_statuses_of_volumes_snapshots_backups(
        cloud, image_id):
    user = cloud.make_user()
    client = login(cloud, user["name"], user["password"])
    conn = cloud.user_sdk(user)
    page = client.get("/dashboard/volumes")
    assert f'<option value="{image_id}">' in page.text
    assert 'data-live-statuses="/dashboard/volumes/status"' in page.text
    r = client.post("/dashboard/volumes", data={
        "csrf_token": csrf_token(page.text), "action": "create", "name": "from-image",
        "size": "1", "image_id": image_id})
    assert r.status_code == 303
    (volume,) = conn.block_storage.volumes()
    statuses = _until(lambda: client.get("/dashboard/volumes/status").json(),
                      lambda s: s.get(volume.id) == "available")
    assert statuses == {volume.id: "available"}
    assert conn.block_storage.get_volume(volume.id).is_bootable  # the image's bytes
    assert f'data-live-status="{volume.id}" data-volume-status="{volume.id}">available' in \
        client.get("/dashboard/volumes").text
    snapshot = conn.block_storage.create_snapshot(volume_id=volume.id, name="s")
    assert _until(lambda: client.get("/dashboard/volumes/snapshots/status").json(),
                  lambda s: s.get(snapshot.id) == "available")
    assert client.get("/dashboard/volumes/backups/status").json() == {}
    bad = client.post("/dashboard/volumes", data={
        "csrf_token": csrf_token(page.text), "action": "create", "name": "bad-image",
        "size": "1", "image_id": "no-such-image"})
    assert 400 <= bad.status_code < 500 and 'role="alert"' in bad.text
    assert [v.name for v in conn.block_storage.volumes()] == ["from-image"]
    conn.block_storage.delete_snapshot(snapshot)
    with httpx.Client(base_url=cloud.url) as anonymous:
        assert anonymous.get("/dashboard/volumes/status").status_code == 401
    client.close()
