"""Issue 22: compute microversions 2.80 and up, each through the REST API as a client
speaking that version would, with the error cases nova answers."""
import time

import pytest

from conftest import Compute


def _at(cloud, session, version):
    return Compute(cloud, session, version)


@pytest.fixture(scope="module")
def server(api, image_id):
    sid = api.boot(image_id)
    assert api.wait(sid)["status"] == "ACTIVE"
    yield sid
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def _wait_task_done(api, sid, *statuses, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = api.server(sid)
        if s["status"] in statuses and s["OS-EXT-STS:task_state"] is None:
            return s
        time.sleep(0.02)
    raise AssertionError(f"{sid}: {s['status']}/{s['OS-EXT-STS:task_state']}")


# --- 2.80: migrations carry and filter by user_id / project_id -----------------------------

def test_280_migrations_user_and_project(cloud, api, member, server):
    r = api.post(f"/servers/{server}/action", {"resize": {"flavorRef": "84"}})
    assert r.status_code == 202, r.text
    _wait_task_done(api, server, "VERIFY_RESIZE")
    assert api.post(f"/servers/{server}/action", {"confirmResize": None}).status_code == 204
    _wait_task_done(api, server, "ACTIVE")
    admin = _at(cloud, cloud.session(), "2.80")
    mine = admin.get(f"/os-migrations?instance_uuid={server}").json()["migrations"]
    assert mine and mine[0]["user_id"] == member["id"]
    assert mine[0]["project_id"] == member["project_id"]
    by_user = admin.get(f"/os-migrations?user_id={member['id']}").json()["migrations"]
    assert {m["instance_uuid"] for m in by_user} == {server}
    by_project = admin.get(f"/os-migrations?project_id={member['project_id']}"
                           ).json()["migrations"]
    assert {m["instance_uuid"] for m in by_project} == {server}
    assert admin.get("/os-migrations?user_id=nobody").json()["migrations"] == []
    old = _at(cloud, cloud.session(), "2.79")
    listed = old.get(f"/os-migrations?instance_uuid={server}").json()["migrations"]
    assert "user_id" not in listed[0] and "project_id" not in listed[0]
