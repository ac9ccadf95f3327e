"""Block storage microversions 3.61-3.71 (cinder's maximum): what each changes in answers
and requests, through openstacksdk (which now negotiates 3.65+) and keystoneauth."""
from __future__ import annotations

import datetime as dt
import uuid

import httpx
import pytest
from openstack import exceptions as sdk_exc

from volume_helpers import Raw, create, wait_gone, wait_status

WAIT = {"wait": 60, "interval": 0.1}


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def raw(cloud, member):
    return Raw(cloud.user_session(member))


@pytest.fixture(scope="module")
def admin_raw(cloud):
    return Raw(cloud.session())


def test_versions_document_says_3_71(cloud, raw):
    for path in ("/volume/", "/volume/v3/"):
        doc = httpx.get(cloud.url + path).json()["versions"][0]
        assert (doc["min_version"], doc["version"]) == ("3.0", "3.71")
    status, _, headers = raw("GET", "/volumes", version="3.71")
    assert status == 200 and headers["OpenStack-API-Version"] == "volume 3.71"
    assert raw("GET", "/volumes", version="latest")[2]["OpenStack-API-Version"] == \
        "volume 3.71"
    status, body, _ = raw("GET", "/volumes", version="3.72")
    assert status == 406 and "notAcceptable" in body


def test_volume_and_snapshot_views(cloud, raw, admin_raw, member):
    volume = wait_status(raw, create(raw)["id"], "available")
    old = raw("GET", f"/volumes/{volume['id']}", version="3.62")[1]["volume"]
    assert "volume_type_id" not in old and "consumes_quota" not in old
    new = raw("GET", f"/volumes/{volume['id']}", version="3.71")[1]["volume"]
    assert new["volume_type_id"] and new["volume_type"] == "__DEFAULT__"
    assert new["consumes_quota"] is True and new["shared_targets"] is False
    assert "cluster_name" not in new and "encryption_key_id" not in new
    detail = raw("GET", "/volumes/detail", version="3.65")[1]["volumes"]
    assert [v["consumes_quota"] for v in detail] == [True]
    admin_view = admin_raw("GET", f"/volumes/{volume['id']}", version="3.61")[1]["volume"]
    assert "cluster_name" in admin_view and admin_view["cluster_name"] is None
    status, body, _ = raw("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"]}},
                          version="3.65")
    assert status == 202 and body["snapshot"]["consumes_quota"] is True
    # openstacksdk's set_snapshot_status asks for 3.65 (it got 406 before)
    conn = cloud.user_sdk(member)
    snap = conn.block_storage.wait_for_status(
        conn.block_storage.get_snapshot(body["snapshot"]["id"]), "available", **WAIT)
    admin = cloud.sdk()
    admin_raw("POST", f"/snapshots/{snap.id}/action",
              {"os-reset_status": {"status": "creating"}})
    admin.block_storage.set_snapshot_status(snap.id, "creating", "50%")
    shown = raw("GET", f"/snapshots/{snap.id}", version="3.71")[1]["snapshot"]
    assert shown["status"] == "creating" and shown["consumes_quota"] is True
    assert shown["os-extended-snapshot-attributes:progress"] == "50%"
    admin.block_storage.set_snapshot_status(snap.id, "available", "100%")
    assert "consumes_quota" not in raw("GET", f"/snapshots/{snap.id}",
                                       version="3.64")[1]["snapshot"]


def test_consumes_quota_and_time_filters(raw):
    volume = wait_status(raw, create(raw)["id"], "available")
    ids = lambda answer: [v["id"] for v in answer[1]["volumes"]]  # noqa: E731
    assert ids(raw("GET", "/volumes?consumes_quota=true", version="3.65")) == [volume["id"]]
    assert ids(raw("GET", "/volumes?consumes_quota=false", version="3.65")) == []
    # below 3.65 cinder drops the filter
    assert ids(raw("GET", "/volumes?consumes_quota=false", version="3.64")) == [volume["id"]]
    assert raw("GET", "/volumes?consumes_quota=maybe", version="3.65")[0] == 400
    assert raw("GET", "/snapshots?consumes_quota=false", version="3.65")[1][
        "snapshots"] == []
    past = (dt.datetime.utcnow() - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    future = (dt.datetime.utcnow() + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert ids(raw("GET", f"/volumes?created_at=gt:{past}", version="3.60")) == [
        volume["id"]]
    assert ids(raw("GET", f"/volumes/detail?created_at=gt:{past},lt:{future}",
                   version="3.60")) == [volume["id"]]
    assert ids(raw("GET", f"/volumes?created_at=lte:{past}", version="3.60")) == []
    assert ids(raw("GET", f"/volumes?updated_at=gt:{future}", version="3.71")) == []
    summary = raw("GET", f"/volumes/summary?created_at=lt:{past}", version="3.60")
    assert summary[1]["volume-summary"]["total_count"] == 0
    # below 3.60 the filter is dropped; bad operators and times are 400s, never 500s
    assert ids(raw("GET", f"/volumes?created_at=lt:{past}", version="3.59")) == [
        volume["id"]]
    for bad in ("bogus:2020-01-01T00:00:00", "gt:yesterday", "2020", "gt:",
                "gt:9999999-01-01", "gt:" + "9" * 5000):
        status, body, _ = raw("GET", f"/volumes?created_at={bad}", version="3.60")
        assert status == 400 and "badRequest" in body, (bad, body)


def test_snapshot_of_in_use_volume_needs_no_force_from_3_66(raw):
    volume = wait_status(raw, create(raw)["id"], "available")
    att = raw("POST", "/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4()),
        "connector": {"host": "h"}}}, version="3.44")[1]["attachment"]
    raw("POST", f"/attachments/{att['id']}/action", {"os-complete": None}, version="3.44")
    wait_status(raw, volume["id"], "in-use")
    body = {"snapshot": {"volume_id": volume["id"]}}
    assert raw("POST", "/snapshots", body, version="3.65")[0] == 400
    status, answer, _ = raw("POST", "/snapshots", body, version="3.66")
    assert status == 202, answer
    status, answer, _ = raw("POST", "/snapshots", {"snapshot": {
        "volume_id": volume["id"], "force": False}}, version="3.66")
    assert status == 400 and "'force' flag is invalid" in answer["badRequest"]["message"]
    assert raw("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"],
                                                   "force": True}}, version="3.66")[0] == 202
    assert raw("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"],
                                                   "force": "x"}}, version="3.66")[0] == 400


def test_reimage_needs_3_68_and_extend_completion(raw, admin_raw):
    volume = wait_status(raw, create(raw)["id"], "available")
    action = f"/volumes/{volume['id']}/action"
    status, body, _ = raw("POST", action, {"os-reimage": {"image_id": str(uuid.uuid4())}},
                          version="3.67")
    assert status == 404 and "itemNotFound" in body
    status, body, _ = raw("POST", action, {"os-reimage": {"image_id": str(uuid.uuid4())}},
                          version="3.68")
    assert status == 404 and "Image" in body["itemNotFound"]["message"]
    # os-extend_volume_completion: admin only; nothing here waits for nova's answer
    done = {"os-extend_volume_completion": {"error": False}}
    assert raw("POST", action, done, version="3.71")[0] == 403
    status, body, _ = admin_raw("POST", action, done, version="3.71")
    assert status == 400 and body["badRequest"]["message"] == (
        "Invalid volume: Volume is not being extended.")
    for bad in ({"os-extend_volume_completion": {"error": 5}},
                {"os-extend_volume_completion": {"other": True}},
                {"os-extend_volume_completion": []}):
        status, body, _ = admin_raw("POST", action, bad, version="3.71")
        assert status == 400 and "badRequest" in body, bad
    assert admin_raw("POST", f"/volumes/{uuid.uuid4()}/action", done,
                     version="3.71")[0] == 404


def test_project_default_types(cloud, member, raw, admin_raw):
    admin = cloud.sdk()
    vtype = admin.block_storage.create_type(name=f"dt-{uuid.uuid4().hex[:6]}")
    project = member["project_id"]
    try:
        made = admin.block_storage.set_default_type(project, vtype)
        assert (made.project_id, made.volume_type_id) == (project, vtype.id)
        shown = admin.block_storage.show_default_type(project)
        assert shown.volume_type_id == vtype.id
        assert (project, vtype.id) in [(d.project_id, d.volume_type_id)
                                       for d in admin.block_storage.default_types()]
        # the project's volumes get its default type when the create names none
        volume = create(raw)
        assert volume["volume_type"] == vtype.name
        wait_status(raw, volume["id"], "available")
        raw("DELETE", f"/volumes/{volume['id']}")
        wait_gone(raw, volume["id"])
        # a project's default cannot be deleted
        status, body, _ = admin_raw("DELETE", f"/types/{vtype.id}")
        assert status == 400 and "default volume type" in body["badRequest"]["message"]
        # by name too; a type that does not exist is a 400; members may not
        path = f"/default-types/{project}"
        assert admin_raw("PUT", path, {"default_type": {"volume_type": vtype.name}},
                         version="3.62")[0] == 200
        for bad in ({"default_type": {"volume_type": "nope"}}, {"default_type": {}},
                    {"default_type": {"volume_type": 5}}, {}, None,
                    {"default_type": {"volume_type": "x", "y": 1}}):
            status, body, _ = admin_raw("PUT", path, bad, version="3.62")
            assert status == 400 and "badRequest" in body, (bad, body)
        assert raw("GET", path, version="3.62")[0] == 403
        assert admin_raw("GET", path, version="3.61")[0] == 404
        admin.block_storage.unset_default_type(project)
        with pytest.raises(sdk_exc.NotFoundException):
            admin.block_storage.show_default_type(project)
        status, body, _ = admin_raw("DELETE", path, version="3.62")
        assert status == 204
    finally:
        admin_raw("DELETE", f"/default-types/{project}", version="3.62")
        admin.block_storage.delete_type(vtype)
