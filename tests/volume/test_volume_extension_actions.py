"""Block storage: the image-metadata volume actions and os-update_snapshot_status,
with cinder's answers and errors, through keystoneauth as a client (openstacksdk's
volume.set_image_metadata / delete_image_metadata) calls them."""
from __future__ import annotations

import pytest

from volume_helpers import Raw, create, wait_status

WAIT = {"wait": 60, "interval": 0.1}


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def raw(cloud, member):
    return Raw(cloud.user_session(member))


def act(raw, volume_id, body):
    return raw("POST", f"/volumes/{volume_id}/action", body)


def test_image_metadata_actions(cloud, raw, member):
    volume = create(raw, name="img-meta")
    wait_status(raw, volume["id"], "available")
    vid = volume["id"]
    assert act(raw, vid, {"os-show_image_metadata": None})[:2] == (200, {"metadata": {}})
    status, body, _ = act(raw, vid, {"os-set_image_metadata": {
        "metadata": {"hw_disk_bus": "scsi", "os_distro": "cirros"}}})
    assert status == 200 and body == {"metadata": {"hw_disk_bus": "scsi",
                                                   "os_distro": "cirros"}}
    # a second set merges and answers the whole of it
    body = act(raw, vid, {"os-set_image_metadata": {"metadata": {"hw_disk_bus": "virtio"}}})[1]
    assert body == {"metadata": {"hw_disk_bus": "virtio", "os_distro": "cirros"}}
    shown = raw("GET", f"/volumes/{vid}")[1]["volume"]
    assert shown["volume_image_metadata"] == body["metadata"]
    status, body, _ = act(raw, vid, {"os-unset_image_metadata": {"key": "os_distro"}})
    assert status == 200
    assert act(raw, vid, {"os-show_image_metadata": {}})[1] == {
        "metadata": {"hw_disk_bus": "virtio"}}
    # openstacksdk's calls
    conn = cloud.user_sdk(member)
    conn.block_storage.set_volume_image_metadata(vid, hw_qemu_guest_agent="yes")
    assert conn.block_storage.get_volume(vid).volume_image_metadata == {
        "hw_disk_bus": "virtio", "hw_qemu_guest_agent": "yes"}
    conn.block_storage.delete_volume_image_metadata(vid, keys=["hw_qemu_guest_agent"])
    assert act(raw, vid, {"os-show_image_metadata": None})[1] == {
        "metadata": {"hw_disk_bus": "virtio"}}
    # cinder's errors
    status, body, _ = act(raw, vid, {"os-unset_image_metadata": {"key": "missing"}})
    assert status == 404 and "itemNotFound" in body
    assert "Glance metadata for volume/snapshot" in body["itemNotFound"]["message"]
    for bad in ({"os-set_image_metadata": {}},
                {"os-set_image_metadata": {"metadata": {"k": 1}}},
                {"os-set_image_metadata": {"metadata": {"bad*key": "v"}}},
                {"os-set_image_metadata": {"metadata": {}, "extra": 1}},
                {"os-set_image_metadata": "x"},
                {"os-unset_image_metadata": {}},
                {"os-unset_image_metadata": {"key": ""}}):
        status, body, _ = act(raw, vid, bad)
        assert status == 400 and body["badRequest"]["code"] == 400, (bad, body)
    assert act(raw, "no-such-volume", {"os-show_image_metadata": None})[0] == 404
    raw("DELETE", f"/volumes/{vid}")


def test_image_metadata_policy(cloud, raw, member):
    volume = create(raw)
    wait_status(raw, volume["id"], "available")
    other = Raw(cloud.user_session(cloud.make_user(roles=("member",))))
    # another project's volume is not found, as cinder hides it
    status, body, _ = act(other, volume["id"], {"os-show_image_metadata": None})
    assert status == 404 and "itemNotFound" in body
    admin = Raw(cloud.session())
    status, body, _ = act(admin, volume["id"], {"os-set_image_metadata": {
        "metadata": {"a": "b"}}})
    assert status == 200 and body == {"metadata": {"a": "b"}}
    raw("DELETE", f"/volumes/{volume['id']}")


def test_update_snapshot_status(cloud, raw, member):
    volume = create(raw)
    wait_status(raw, volume["id"], "available")
    status, body, _ = raw("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"]}})
    assert status == 202, body
    sid = body["snapshot"]["id"]
    conn = cloud.sdk()
    conn.block_storage.wait_for_status(conn.block_storage.get_snapshot(sid), "available",
                                       **WAIT)
    # only a snapshot being created or deleted takes a status from a service
    status, body, _ = raw("POST", f"/snapshots/{sid}/action",
                          {"os-update_snapshot_status": {"status": "error"}})
    assert status == 400
    assert body["badRequest"]["message"] == ("Snapshot status available not allowed for "
                                             "update_snapshot_status")
    admin = Raw(cloud.session())
    assert admin("POST", f"/snapshots/{sid}/action",
                 {"os-reset_status": {"status": "creating"}})[0] == 202
    status, body, _ = raw("POST", f"/snapshots/{sid}/action",
                          {"os-update_snapshot_status": {"status": "deleting"}})
    assert status == 400 and body["badRequest"]["message"] == (
        "Provided snapshot status deleting not allowed for snapshot with status creating.")
    for bad in ({"progress": "50%"}, {"status": "creating", "progress": "150%"},
                {"status": "creating", "progress": "x%"},
                {"status": "creating", "other": 1}, {"status": 5}):
        status, body, _ = raw("POST", f"/snapshots/{sid}/action",
                              {"os-update_snapshot_status": bad})
        assert status == 400 and "badRequest" in body, (bad, body)
    # the body openstacksdk's set_snapshot_status sends (at 3.65: test_volume_microversions)
    status, _, _ = raw("POST", f"/snapshots/{sid}/action",
                       {"os-update_snapshot_status": {"status": "creating",
                                                      "progress": "40%"}})
    assert status == 202
    shown = raw("GET", f"/snapshots/{sid}")[1]["snapshot"]
    assert shown["status"] == "creating"
    assert shown["os-extended-snapshot-attributes:progress"] == "40%"
    assert raw("POST", f"/snapshots/{sid}/action", {"os-update_snapshot_status": {
        "status": "available", "progress": "100%"}})[0] == 202
    shown = raw("GET", f"/snapshots/{sid}")[1]["snapshot"]
    assert (shown["status"], shown["os-extended-snapshot-attributes:progress"]) == (
        "available", "100%")
    # another project's snapshot is not found
    other = Raw(cloud.user_session(cloud.make_user(roles=("member",))))
    status, body, _ = other("POST", f"/snapshots/{sid}/action",
                            {"os-update_snapshot_status": {"status": "error"}})
    assert status == 404 and "itemNotFound" in body
    raw("DELETE", f"/snapshots/{sid}")
