"""Quotas (race-safe), limits, extensions, availability zones, os-services,
volume types with extra specs and backend routing, snapshots, volume actions."""
from __future__ import annotations

import concurrent.futures
import os
import uuid

import pytest

from volume_helpers import Raw, create, wait_gone, wait_status


@pytest.fixture(scope="module")
def admin_raw(cloud):
    return Raw(cloud.session())


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def raw(cloud, member):
    return Raw(cloud.user_session(member))


def test_extensions_zones_services_limits(admin_raw, raw):
    aliases = {e["alias"] for e in raw("GET", "/extensions")[1]["extensions"]}
    assert {"os-quota-sets", "os-volume-actions", "os-types-manage",
            "os-vol-host-attr"} <= aliases
    zones = raw("GET", "/os-availability-zone")[1]["availabilityZoneInfo"]
    assert zones == [{"zoneName": "nova", "zoneState": {"available": True}}]
    status, body, _ = admin_raw("GET", "/os-services")
    assert status == 200
    by_binary = {s["binary"]: s for s in body["services"]}
    assert by_binary["cinder-volume"]["host"].endswith("@file")
    assert by_binary["cinder-volume"]["state"] == "up"
    assert by_binary["cinder-scheduler"]["status"] == "enabled"
    assert raw("GET", "/os-services")[0] == 403
    absolute = raw("GET", "/limits")[1]["limits"]["absolute"]
    assert absolute["maxTotalVolumes"] == 10 and absolute["totalVolumesUsed"] == 0


def test_quota_sets_and_over_limit(cloud, admin_raw, raw, member):
    project = member["project_id"]
    status, body, _ = raw("GET", f"/os-quota-sets/{project}")
    assert status == 200 and body["quota_set"]["volumes"] == 10
    assert body["quota_set"]["volumes___DEFAULT__"] == -1
    assert raw("PUT", f"/os-quota-sets/{project}", {"quota_set": {"volumes": 1}})[0] == 403
    status, body, _ = admin_raw("PUT", f"/os-quota-sets/{project}",
                                {"quota_set": {"volumes": 1, "gigabytes": 3}})
    assert status == 200 and body["quota_set"]["volumes"] == 1
    for bad in ({"volumes": "x"}, {"volumes": -2}, {"bogus": 1}):
        assert admin_raw("PUT", f"/os-quota-sets/{project}", {"quota_set": bad})[0] == 400
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 4}})
    assert status == 413 and "overLimit" in body and "gigabytes" in body["overLimit"]["message"]
    create(raw, size=2)
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1}})
    assert status == 413 and "overLimit" in body
    usage = raw("GET", f"/os-quota-sets/{project}?usage=true")[1]["quota_set"]
    assert usage["volumes"] == {"limit": 1, "in_use": 1, "reserved": 0, "allocated": 0}
    assert usage["gigabytes"]["in_use"] == 2
    sdk = cloud.user_sdk(member)
    quota = sdk.block_storage.get_quota_set(project, usage=True)
    assert quota.volumes == 1 and quota.usage["volumes"] == 1
    admin_raw("PUT", f"/os-quota-sets/{project}", {"quota_set": {
        "volumes": 10, "gigabytes": 100, "volumes___DEFAULT__": 1}})
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1}})
    assert status == 413 and "volumes___DEFAULT__" in body["overLimit"]["message"]
    assert admin_raw("DELETE", f"/os-quota-sets/{project}")[0] == 200
    assert raw("GET", f"/os-quota-sets/{project}")[1]["quota_set"]["volumes"] == 10


def test_concurrent_creates_respect_quota(cloud, admin_raw, member):
    project = member["project_id"]
    admin_raw("PUT", f"/os-quota-sets/{project}", {"quota_set": {"volumes": 10}})

    def one(_):
        return Raw(cloud.user_session(member))("POST", "/volumes",
                                               {"volume": {"size": 1}})[0]

    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        statuses = list(pool.map(one, range(20)))
    assert sorted(statuses) == [202] * 10 + [413] * 10
    raw = Raw(cloud.user_session(member))
    assert len(raw("GET", "/volumes")[1]["volumes"]) == 10


def test_volume_types_route_to_backends(cloud, admin_raw, raw):
    name = f"fast-{uuid.uuid4().hex[:6]}"
    status, body, _ = admin_raw("POST", "/types", {"volume_type": {
        "name": name, "extra_specs": {"volume_backend_name": "file"}}})
    assert status == 200, body
    vt = body["volume_type"]
    assert vt["extra_specs"] == {"volume_backend_name": "file"} and vt["is_public"] is True
    assert raw("POST", "/types", {"volume_type": {"name": "mine"}})[0] == 403
    assert admin_raw("POST", "/types", {"volume_type": {"name": name}})[0] == 409
    names = {t["name"] for t in raw("GET", "/types")[1]["volume_types"]}
    assert {"__DEFAULT__", name} <= names
    assert raw("GET", "/types/default")[1]["volume_type"]["name"] == "__DEFAULT__"
    status, body, _ = admin_raw("POST", f"/types/{vt['id']}/extra_specs",
                                {"extra_specs": {"k": "v"}})
    assert status == 200 and body["extra_specs"]["k"] == "v"
    assert admin_raw("GET", f"/types/{vt['id']}/extra_specs/k")[1] == {"k": "v"}
    assert admin_raw("DELETE", f"/types/{vt['id']}/extra_specs/k")[0] == 202
    volume = wait_status(raw, create(raw, volume_type=name)["id"], "available")
    assert volume["volume_type"] == name
    assert admin_raw("DELETE", f"/types/{vt['id']}")[0] == 400  # in use

    lvm_type = f"lvm-{uuid.uuid4().hex[:6]}"
    admin_raw("POST", "/types", {"volume_type": {
        "name": lvm_type, "extra_specs": {"volume_backend_name": "lvm"}}})
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1,
                                                          "volume_type": lvm_type}})
    assert status == 400 and "No valid backend" in body["badRequest"]["message"]
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 10**6}})
    assert status in (400, 413)

    raw("DELETE", f"/volumes/{volume['id']}")
    wait_gone(raw, volume["id"])
    assert admin_raw("DELETE", f"/types/{vt['id']}")[0] == 202


def test_private_type_access(cloud, admin_raw, raw, member):
    name = f"private-{uuid.uuid4().hex[:6]}"
    vt = admin_raw("POST", "/types", {"volume_type": {
        "name": name, "os-volume-type-access:is_public": False}})[1]["volume_type"]
    assert raw("POST", "/volumes", {"volume": {"size": 1, "volume_type": name}})[0] == 404
    assert admin_raw("POST", f"/types/{vt['id']}/action",
                     {"addProjectAccess": {"project": member["project_id"]}})[0] == 202
    assert admin_raw("GET", f"/types/{vt['id']}/os-volume-type-access")[1][
        "volume_type_access"] == [{"volume_type_id": vt["id"],
                                   "project_id": member["project_id"]}]
    create(raw, volume_type=name)


def test_volume_actions(cloud, admin_raw, raw):
    volume = wait_status(raw, create(raw, name="act")["id"], "available")
    act = lambda body, who=raw: who("POST", f"/volumes/{volume['id']}/action", body)  # noqa
    assert act({"os-extend": {"new_size": 1}})[0] == 400  # not larger
    assert act({"os-extend": {"new_size": "x"}})[0] == 400
    assert act({"os-extend": {"new_size": 2}})[0] == 202
    extended = wait_status(raw, volume["id"], "available")
    assert extended["size"] == 2
    path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume['id']}")
    assert os.path.getsize(path) == 2 << 30
    assert act({"os-set_bootable": {"bootable": True}})[0] == 200
    assert raw("GET", f"/volumes/{volume['id']}")[1]["volume"]["bootable"] == "true"
    assert act({"os-set_bootable": {"bootable": "maybe"}})[0] == 400
    assert act({"os-update_readonly_flag": {"readonly": True}})[0] == 202
    status, body, _ = act({"os-initialize_connection": {"connector": {"host": "h"}}})
    assert body["connection_info"]["data"]["access_mode"] == "ro"
    assert act({"os-reset_status": {"status": "error"}})[0] == 403
    assert act({"os-reset_status": {"status": "nonsense"}}, admin_raw)[0] == 400
    assert act({"os-reset_status": {"status": "error"}}, admin_raw)[0] == 202
    assert raw("GET", f"/volumes/{volume['id']}")[1]["volume"]["status"] == "error"
    assert act({"os-force_delete": None})[0] == 403
    assert act({"os-force_delete": None}, admin_raw)[0] == 202
    wait_gone(raw, volume["id"])
    assert not os.path.exists(path)


def test_summary_and_paging(raw):
    ids = [create(raw, name=f"p{i}", metadata={"n": str(i)})["id"] for i in range(3)]
    status, body, _ = raw("GET", "/volumes/summary")
    assert body["volume-summary"]["total_count"] == 3
    assert body["volume-summary"]["total_size"] == 3
    assert sorted(body["volume-summary"]["metadata"]["n"]) == ["0", "1", "2"]
    assert raw("GET", "/volumes/summary", version="3.11")[0] == 404
    page = raw("GET", "/volumes?limit=2&sort=name:asc")[1]
    assert [v["name"] for v in page["volumes"]] == ["p0", "p1"]
    assert "marker=" in page["volumes_links"][0]["href"]
    rest = raw("GET", f"/volumes?limit=2&sort=name:asc&marker={page['volumes'][1]['id']}")[1]
    assert [v["name"] for v in rest["volumes"]] == ["p2"] and "volumes_links" not in rest
    assert raw("GET", "/volumes/detail?with_count=true")[1]["count"] == 3
    assert raw("GET", "/volumes?sort=colour")[0] == 400
    assert raw("GET", "/volumes?limit=x")[0] == 400
    assert raw("GET", f"/volumes?marker={uuid.uuid4()}")[0] == 400
    assert len(ids) == 3


def test_metadata_routes(raw):
    volume = create(raw, metadata={"a": "1"})
    base = f"/volumes/{volume['id']}/metadata"
    assert raw("POST", base, {"metadata": {"b": "2"}})[1]["metadata"] == {"a": "1", "b": "2"}
    assert raw("PUT", base, {"metadata": {"c": "3"}})[1]["metadata"] == {"c": "3"}
    assert raw("GET", f"{base}/c")[1] == {"meta": {"c": "3"}}
    assert raw("PUT", f"{base}/c", {"meta": {"c": "4"}})[1] == {"meta": {"c": "4"}}
    assert raw("PUT", f"{base}/c", {"meta": {"d": "4"}})[0] == 400
    assert raw("DELETE", f"{base}/c")[0] == 200
    assert raw("GET", f"{base}/c")[0] == 404
    assert raw("POST", base, {"metadata": {"k": 1}})[0] == 400


def test_snapshots_and_volumes_from_them(cloud, raw):
    volume = wait_status(raw, create(raw, name="src")["id"], "available")
    path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume['id']}")
    with open(path, "r+b") as f:
        f.write(b"hello volume")
        f.seek(512 << 20)
        f.write(b"middle")
    status, body, _ = raw("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"],
                                                              "name": "snap1"}})
    assert status == 202, body
    snap = body["snapshot"]
    assert snap["status"] == "creating" and snap["size"] == 1
    for _ in range(600):
        snap = raw("GET", f"/snapshots/{snap['id']}")[1]["snapshot"]
        if snap["status"] != "creating":
            break
    assert snap["status"] == "available"
    assert [s["name"] for s in raw("GET", "/snapshots")[1]["snapshots"]] == ["snap1"]
    assert raw("POST", "/volumes", {"volume": {"snapshot_id": snap["id"],
                                               "size": 1}})[0] == 202
    status, body, _ = raw("DELETE", f"/volumes/{volume['id']}")
    assert status == 400  # has snapshots
    clone = wait_status(raw, create(raw, snapshot_id=snap["id"], size=2)["id"], "available")
    assert clone["snapshot_id"] == snap["id"] and clone["size"] == 2
    copy = wait_status(raw, create(raw, source_volid=volume["id"], size=None)["id"],
                       "available")
    assert copy["source_volid"] == volume["id"] and copy["size"] == 1
    for made in (clone, copy):
        with open(os.path.join(cloud.data_dir, "volumes", f"volume-{made['id']}"), "rb") as f:
            assert f.read(12) == b"hello volume"
            f.seek(512 << 20)
            assert f.read(6) == b"middle"
    assert raw("POST", "/volumes", {"volume": {"snapshot_id": snap["id"], "size": 0}})[0] == 400
    # in-use volume: snapshot needs force
    server = str(uuid.uuid4())
    att = raw("POST", "/attachments", {"attachment": {"volume_uuid": copy["id"],
                                                      "instance_uuid": server,
                                                      "connector": {"host": "h"}}})[1]
    raw("POST", f"/attachments/{att['attachment']['id']}/action", {"os-complete": None})
    assert raw("POST", "/snapshots", {"snapshot": {"volume_id": copy["id"]}})[0] == 400
    assert raw("POST", "/snapshots", {"snapshot": {"volume_id": copy["id"],
                                                   "force": True}})[0] == 202
    assert raw("PUT", f"/snapshots/{snap['id']}", {"snapshot": {"name": "s2"}})[1][
        "snapshot"]["name"] == "s2"
    assert raw("DELETE", f"/volumes/{volume['id']}?cascade=true")[0] == 202
    wait_gone(raw, volume["id"])
    assert raw("GET", f"/snapshots/{snap['id']}")[0] == 404
    assert not os.path.exists(os.path.join(cloud.data_dir, "volumes", f"snapshot-{snap['id']}"))


def test_full_backend_leaves_an_error_with_a_reason(cloud, raw):
    from pocketstack.common import config, db
    from pocketstack.volume import scheduler

    import time

    import sqlalchemy as sa

    from pocketstack.volume.models import Volume

    for _ in range(300):  # deletes still under way would free space mid-test
        with db.reader() as s:
            busy = s.scalar(sa.select(sa.func.count()).select_from(Volume)
                            .where(Volume.status.in_(("deleting", "creating"))))
            used = scheduler.allocated(s, "file")
        if not busy:
            break
        time.sleep(0.1)
    config.CONF.set_override("file_capacity_gb", used + 2, group="volume")
    try:
        status, body, _ = raw("POST", "/volumes", {"volume": {"size": used + 3}})
        assert status == 400 and "larger than any backend" in body["badRequest"]["message"]
        fits = wait_status(raw, create(raw, size=2)["id"], "available")
        volume = wait_status(raw, create(raw, size=1)["id"], "error")
        message = raw("GET", f"/messages?resource_uuid={volume['id']}")[1]["messages"]
        assert "not enough free space" in message[0]["user_message"]
        assert raw("DELETE", f"/volumes/{volume['id']}")[0] == 202
        assert raw("DELETE", f"/volumes/{fits['id']}")[0] == 202
    finally:
        config.CONF.clear_override("file_capacity_gb", group="volume")


def test_snapshot_metadata_and_admin_actions(admin_raw, raw):
    volume = wait_status(raw, create(raw)["id"], "available")
    snap = raw("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"],
                                                   "metadata": {"a": "1"}}})[1]["snapshot"]
    base = f"/snapshots/{snap['id']}"
    for _ in range(600):
        if raw("GET", base)[1]["snapshot"]["status"] != "creating":
            break
    assert raw("POST", f"{base}/metadata", {"metadata": {"b": "2"}})[1]["metadata"] == {
        "a": "1", "b": "2"}
    assert raw("GET", f"{base}/metadata/b")[1] == {"meta": {"b": "2"}}
    assert raw("DELETE", f"{base}/metadata/a")[0] == 200
    assert raw("GET", f"{base}/metadata")[1]["metadata"] == {"b": "2"}
    shown = admin_raw("GET", base)[1]["snapshot"]
    assert shown["os-extended-snapshot-attributes:progress"] == "100%"
    mine = raw("GET", base)[1]["snapshot"]  # cinder's schema requires both for members too
    assert mine["os-extended-snapshot-attributes:project_id"] == shown[
        "os-extended-snapshot-attributes:project_id"]
    assert mine["os-extended-snapshot-attributes:progress"] == "100%"
    assert raw("POST", f"{base}/action", {"os-reset_status": {"status": "error"}})[0] == 403
    assert admin_raw("POST", f"{base}/action", {"os-reset_status": {"status": "creating"}}
                     )[0] == 202
    assert raw("DELETE", base)[0] == 400  # creating
    assert admin_raw("POST", f"{base}/action", {"os-force_delete": {}})[0] == 202
    for _ in range(600):
        if raw("GET", base)[0] == 404:
            break
    assert raw("GET", base)[0] == 404
    assert raw("DELETE", f"/volumes/{volume['id']}")[0] == 202
