"""createImage as nova does it: the server's state is checked before any image is made
(a refused request leaves no image behind), and a volume-backed server's image is made of
volume snapshots (nova's snapshot_volume_backed): zero bytes of data, its
block_device_mapping property naming a snapshot per volume, and a server booted from it
gets new volumes made from those snapshots."""
from __future__ import annotations

import json
import time
import uuid

import pytest

from compute_rest import Compute, Volumes


@pytest.fixture
def member(cloud):
    """A fresh project per test: its images and volumes are the test's alone."""
    return cloud.make_user(roles=("member",))


@pytest.fixture
def api(cloud, member):
    return Compute(cloud, cloud.user_session(member), version="2.45")


@pytest.fixture
def vols(cloud, member):
    return Volumes(cloud.user_session(member))


@pytest.fixture(scope="module")
def raw_image(cloud):
    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images",
                   json={"name": f"raw-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
                         "container_format": "bare", "visibility": "public",
                         "hw_disk_bus": "virtio"}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"boot" * 1024,
          headers={"Content-Type": "application/octet-stream"})
    yield image["id"]
    s.delete(cloud.url + f"/image/v2/images/{image['id']}", raise_exc=False)


def _images(cloud, member) -> dict:
    s = cloud.user_session(member)
    r = s.get(cloud.url + f"/image/v2/images?limit=1000&owner={member['project_id']}")
    return {i["id"]: i for i in r.json()["images"]}


def _image(cloud, member, image_id) -> dict:
    r = cloud.user_session(member).get(cloud.url + f"/image/v2/images/{image_id}",
                                       raise_exc=False)
    return r.json() if r.status_code == 200 else None


def _wait_snapshot(vols, snapshot_id, timeout=30.0) -> dict:
    deadline = time.monotonic() + timeout
    while (snap := vols.req("GET", f"/snapshots/{snapshot_id}").json()["snapshot"])[
            "status"] != "available":
        assert time.monotonic() < deadline, snap
        time.sleep(0.05)
    return snap


def test_a_refused_create_image_leaves_no_image(cloud, member, api, image_id):
    sid = api.boot(image_id)
    assert api.wait(sid)["status"] == "ACTIVE"
    admin = Compute(cloud, cloud.session())
    r = admin.post(f"/servers/{sid}/action", {"os-resetState": {"state": "error"}})
    assert r.status_code == 202, r.text
    for action in ({"createImage": {"name": "refused"}},
                   {"createBackup": {"name": "refused", "backup_type": "daily",
                                     "rotation": 1}}):
        r = api.post(f"/servers/{sid}/action", action)
        assert r.status_code == 409, r.text
        assert "vm_state error" in r.json()["conflictingRequest"]["message"]
    assert [i["name"] for i in _images(cloud, member).values()] == []
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_a_host_that_cannot_snapshot_leaves_no_queued_image(cloud, member, api, image_id,
                                                          faults):
    sid = api.boot(image_id)
    assert api.wait(sid)["status"] == "ACTIVE"
    host = Compute(cloud, cloud.session()).server(sid)["OS-EXT-SRV-ATTR:host"]
    faults.add(host=host, operation="snapshot", action="fail", times=1)
    r = api.post(f"/servers/{sid}/action", {"createImage": {"name": "fails-on-host"}})
    assert r.status_code == 202, r.text
    image_id_ = r.json()["image_id"]
    deadline = time.monotonic() + 20
    while _image(cloud, member, image_id_) is not None:
        assert time.monotonic() < deadline, _image(cloud, member, image_id_)
        time.sleep(0.05)
    assert api.wait(sid)["status"] == "ACTIVE"
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_snapshot_of_a_volume_backed_server_and_a_boot_from_it(cloud, member, api, vols,
                                                             raw_image):
    r = api.post("/servers", {"server": {
        "name": "bfv", "flavorRef": "42", "networks": "none",
        "block_device_mapping_v2": [
            {"source_type": "image", "uuid": raw_image, "destination_type": "volume",
             "boot_index": 0, "volume_size": 1, "delete_on_termination": True},
            {"source_type": "blank", "destination_type": "volume", "boot_index": -1,
             "volume_size": 2}]}})
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    server = api.wait(sid)
    assert server["status"] == "ACTIVE", server
    root_id, data_id = (a["id"] for a in server["os-extended-volumes:volumes_attached"])

    r = api.post(f"/servers/{sid}/action", {"createImage": {
        "name": "bfv-snap", "metadata": {"purpose": "test"}}})
    assert r.status_code == 202, r.text
    image = _image(cloud, member, r.json()["image_id"])
    # no data: the image is a list of volume snapshots, active at once
    assert (image["status"], image["size"], image["name"]) == ("active", 0, "bfv-snap")
    assert image["purpose"] == "test"
    assert image["root_device_name"] == "/dev/vda" and image["bdm_v2"] == "True"
    mapping = json.loads(image["block_device_mapping"])
    assert [(m["source_type"], m["destination_type"], m["boot_index"], m["device_name"],
             m["volume_size"], m["delete_on_termination"]) for m in mapping] == [
        ("snapshot", "volume", 0, "/dev/vda", 1, True),
        ("snapshot", "volume", -1, "/dev/vdb", 2, False)]
    snaps = [_wait_snapshot(vols, m["snapshot_id"]) for m in mapping]
    assert [s["volume_id"] for s in snaps] == [root_id, data_id]
    assert all(s["name"] == "snapshot for bfv-snap" for s in snaps)
    assert api.wait(sid)["status"] == "ACTIVE"  # the server never left ACTIVE

    # booted as the CLI does (imageRef only): new volumes from the snapshots
    copy = api.boot(image["id"], name="from-bfv-snap")
    server = api.wait(copy)
    assert server["status"] == "ACTIVE", server
    new = [vols.get(a["id"]) for a in server["os-extended-volumes:volumes_attached"]]
    assert [(v["snapshot_id"], v["size"], v["status"]) for v in new] == [
        (snaps[0]["id"], 1, "in-use"), (snaps[1]["id"], 2, "in-use")]
    assert {a["device"] for v in new for a in v["attachments"]} == {"/dev/vda", "/dev/vdb"}
    assert not {root_id, data_id} & {v["id"] for v in new}

    for server_id in (copy, sid):
        api.delete(f"/servers/{server_id}")
        api.wait_gone(server_id)
    vols.wait(new[0]["id"], "deleted")  # delete_on_termination, as the original root's
    for volume in (new[1], vols.get(data_id)):
        vols.wait(volume["id"], "available")
    for snap in snaps:
        vols.req("DELETE", f"/snapshots/{snap['id']}")


def test_create_image_of_a_volume_backed_server_over_snapshot_quota(cloud, member, api,
                                                                  vols, raw_image):
    root = vols.create(imageRef=raw_image)
    r = api.post("/servers", {"server": {
        "name": "bfv", "flavorRef": "42", "networks": "none", "block_device_mapping_v2": [
            {"source_type": "volume", "uuid": root["id"], "destination_type": "volume",
             "boot_index": 0}]}})
    sid = r.json()["server"]["id"]
    assert api.wait(sid)["status"] == "ACTIVE"
    admin = Volumes(cloud.session())
    project = member["project_id"]
    r = admin.req("PUT", f"/os-quota-sets/{project}",
                  {"quota_set": {"snapshots": 0}})
    assert r.status_code == 200, r.text
    r = api.post(f"/servers/{sid}/action", {"createImage": {"name": "over"}})
    assert r.status_code == 403, r.text
    assert "snapshots" in r.json()["forbidden"]["message"]
    assert _images(cloud, member) == {}
    assert vols.req("GET", "/snapshots").json()["snapshots"] == []
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


@pytest.mark.parametrize("mapping, message", [
    ("not json", "is not JSON"),
    ('{"a": 1}', "is not a list of mappings"),
    ('[{"source_type": "snapshot", "destination_type": "volume", "boot_index": 0}]',
     "Missing device UUID"),
    (f'[{{"source_type": "snapshot", "snapshot_id": "{uuid.UUID(int=0)}", '
     '"destination_type": "volume", "boot_index": 0}]', "failed to get snapshot"),
])
def test_a_bad_image_defined_mapping_is_a_400(cloud, member, api, mapping, message):
    s = cloud.user_session(member)
    image = s.post(cloud.url + "/image/v2/images", json={
        "name": "bad-bdm", "disk_format": "raw", "container_format": "bare",
        "bdm_v2": "True", "block_device_mapping": mapping}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"",
          headers={"Content-Type": "application/octet-stream"})
    r = api.post("/servers", {"server": {"name": "x", "imageRef": image["id"],
                                         "flavorRef": "42", "networks": "none"}})
    assert r.status_code == 400, r.text
    assert message in r.json()["badRequest"]["message"]
    assert api.get("/servers").json()["servers"] == []


def test_metadata_naming_the_images_own_fields_is_no_500(cloud, member, api, vols,
                                                        image_id, raw_image):
    """Metadata keys that are the image's own fields (name, disk_format) do not override
    them, on either kind of server."""
    local = api.boot(image_id)
    r = api.post("/servers", {"server": {
        "name": "bfv", "flavorRef": "42", "networks": "none", "block_device_mapping_v2": [
            {"source_type": "image", "uuid": raw_image, "destination_type": "volume",
             "boot_index": 0, "volume_size": 1, "delete_on_termination": True}]}})
    assert r.status_code == 202, r.text
    bfv = r.json()["server"]["id"]
    for sid, disk_format in ((local, "qcow2"), (bfv, "raw")):
        assert api.wait(sid)["status"] == "ACTIVE"
        r = api.post(f"/servers/{sid}/action", {"createImage": {
            "name": "mine", "metadata": {"name": "other", "disk_format": "iso"}}})
        assert r.status_code == 202, r.text
        image = _image(cloud, member, r.json()["image_id"])
        assert (image["name"], image["disk_format"]) == ("mine", disk_format)
        api.wait(sid)  # the snapshot done
        deadline = time.monotonic() + 20
        while api.server(sid)["OS-EXT-STS:task_state"] is not None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    for sid in (local, bfv):
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
