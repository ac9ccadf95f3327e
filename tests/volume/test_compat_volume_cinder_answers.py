"""Block storage: answers as cinder gives them where clients and tempest look -
the snapshot's extended attributes for members, an empty id, unknown filters and markers,
the update's answer and the read-only flag in the metadata. Through openstacksdk and
keystoneauth as a user would."""
from __future__ import annotations

import uuid

import pytest
from openstack import exceptions as sdk_exc

from volume_helpers import Raw, create, wait_status

WAIT = {"wait": 60, "interval": 0.1}


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def conn(cloud, member):
    return cloud.user_sdk(member)


@pytest.fixture
def raw(cloud, member):
    return Raw(cloud.user_session(member))


def test_snapshot_extended_attributes_for_members(conn, raw, member):
    volume = conn.block_storage.create_volume(size=1)
    volume = conn.block_storage.wait_for_status(volume, "available", **WAIT)
    snap = conn.block_storage.create_snapshot(volume_id=volume.id)
    snap = conn.block_storage.wait_for_status(snap, "available", **WAIT)
    shown = conn.block_storage.get_snapshot(snap)
    assert shown.project_id == member["project_id"] and shown.progress == "100%"
    listed = list(conn.block_storage.snapshots(details=True))
    assert [(s.project_id, s.progress) for s in listed] == [(member["project_id"], "100%")]
    body = raw("GET", f"/snapshots/{snap.id}")[1]["snapshot"]
    assert body["os-extended-snapshot-attributes:project_id"] == member["project_id"]
    assert body["os-extended-snapshot-attributes:progress"] == "100%"
    # the plain list stays the summary, without the extension's attributes
    plain = raw("GET", "/snapshots")[1]["snapshots"]
    assert [s["id"] for s in plain] == [snap.id]
    conn.block_storage.delete_snapshot(snap)
    conn.block_storage.wait_for_delete(snap, **WAIT)
    conn.block_storage.delete_volume(volume)


def test_empty_volume_id_is_404(conn, raw):
    volume = create(raw, name="kept")
    for method, body in (("GET", None), ("PUT", {"volume": {"name": "x"}}),
                         ("DELETE", None)):
        status, answer, _ = raw(method, "/volumes/", body)
        assert status == 404 and "itemNotFound" in answer, (method, answer)
    # the good paths are unchanged: the list without the slash, create, show, 405 on PUT
    assert [v["id"] for v in raw("GET", "/volumes")[1]["volumes"]] == [volume["id"]]
    assert [v.id for v in conn.block_storage.volumes(details=False)] == [volume["id"]]
    assert raw("GET", f"/volumes/{volume['id']}/")[1]["volume"]["name"] == "kept"
    status, _, headers = raw("PUT", "/volumes", {"volume": {"name": "x"}})
    assert status == 405 and headers["Allow"] == "GET, POST"
    assert raw("GET", "/volumes/detail/")[0] == 200
    wait_status(raw, volume["id"], "available")
    conn.block_storage.delete_volume(volume["id"])


def test_unknown_status_filter_lists_nothing(conn, raw):
    volume = conn.block_storage.create_volume(size=1)
    conn.block_storage.wait_for_status(volume, "available", **WAIT)
    for status in ("null", "bogus"):
        assert list(conn.block_storage.volumes(status=status)) == []
        answer = raw("GET", f"/volumes?status={status}")
        assert answer[0] == 200 and answer[1]["volumes"] == []
    # a known status still filters
    assert [v.id for v in conn.block_storage.volumes(status="available")] == [volume.id]
    assert list(conn.block_storage.volumes(status="error")) == []
    conn.block_storage.delete_volume(volume)


def test_snapshot_null_volume_and_unknown_marker_are_404(conn, raw):
    status, answer, _ = raw("POST", "/snapshots", {"snapshot": {"volume_id": None}})
    assert status == 404 and "itemNotFound" in answer, answer
    # the other bad volume ids keep their answers: a missing key is a 400, an unknown id
    # a 404
    assert raw("POST", "/snapshots", {"snapshot": {"name": "s"}})[0] == 400
    assert raw("POST", "/snapshots", {"snapshot": {"volume_id": "nope"}})[0] == 404
    assert raw("POST", "/snapshots", {"snapshot": {"volume_id": str(uuid.uuid4())}}
               )[0] == 404
    with pytest.raises(sdk_exc.NotFoundException):
        list(conn.block_storage.snapshots(marker=str(uuid.uuid4())))
    assert raw("GET", f"/snapshots/detail?marker={uuid.uuid4()}")[0] == 404

    volume = conn.block_storage.create_volume(size=1)
    volume = conn.block_storage.wait_for_status(volume, "available", **WAIT)
    snaps = [conn.block_storage.wait_for_status(
        conn.block_storage.create_snapshot(volume_id=volume.id, name=f"s{i}"),
        "available", **WAIT) for i in range(2)]
    listed = [s.id for s in conn.block_storage.snapshots()]
    assert sorted(listed) == sorted(s.id for s in snaps)
    after = raw("GET", f"/snapshots?marker={listed[0]}")[1]["snapshots"]
    assert [s["id"] for s in after] == listed[1:]  # a known marker still pages
    # volumes keep their 400 for an unknown marker (not part of this change)
    assert raw("GET", f"/volumes?marker={uuid.uuid4()}")[0] == 400
    for snap in snaps:
        conn.block_storage.delete_snapshot(snap)
        conn.block_storage.wait_for_delete(snap, **WAIT)
    conn.block_storage.delete_volume(volume)


def test_update_answers_the_core_view(cloud, conn, raw):
    image = conn.image.create_image(name=f"img-{uuid.uuid4().hex[:6]}", data=b"x" * 4096,
                                    disk_format="raw", container_format="bare")
    volume = wait_status(raw, create(raw, imageRef=image.id, size=1)["id"],
                         ("available", "error"))
    assert volume["status"] == "available", volume
    assert volume["volume_image_metadata"]["image_id"] == image.id
    updated = conn.block_storage.update_volume(volume["id"], name="renamed")
    assert updated.name == "renamed"
    status, body, _ = raw("PUT", f"/volumes/{volume['id']}",
                          {"volume": {"description": "d"}})
    assert status == 200 and body["volume"]["description"] == "d"
    assert "volume_image_metadata" not in body["volume"]
    # an admin's update answer has none of the os-vol-* extension attributes either
    admin = Raw(cloud.session())
    answer = admin("PUT", f"/volumes/{volume['id']}", {"volume": {"name": "again"}})[1]
    assert not [k for k in answer["volume"] if k.startswith("os-vol-")]
    assert "volume_image_metadata" not in answer["volume"]
    # show and list keep them
    shown = raw("GET", f"/volumes/{volume['id']}")[1]["volume"]
    assert shown["volume_image_metadata"]["image_id"] == image.id
    assert shown["name"] == "again" and shown["description"] == "d"
    assert conn.block_storage.get_volume(volume["id"]).volume_image_metadata[
        "image_id"] == image.id
    assert "os-vol-tenant-attr:tenant_id" in admin(
        "GET", f"/volumes/{volume['id']}")[1]["volume"]
    conn.block_storage.delete_volume(volume["id"])
    conn.image.delete_image(image)


def test_readonly_flag_shows_in_metadata(conn, raw):
    volume = conn.block_storage.create_volume(size=1, metadata={"a": "1"})
    volume = conn.block_storage.wait_for_status(volume, "available", **WAIT)
    assert volume.metadata == {"a": "1"}  # never set: not shown, as cinder
    conn.block_storage.set_volume_readonly(volume, True)
    assert conn.block_storage.get_volume(volume).metadata == {"a": "1", "readonly": "True"}
    listed = raw("GET", "/volumes/detail")[1]["volumes"]
    assert listed[0]["metadata"] == {"a": "1", "readonly": "True"}
    conn.block_storage.set_volume_readonly(volume, False)
    assert conn.block_storage.get_volume(volume).metadata == {"a": "1", "readonly": "False"}
    # the metadata API holds the user's metadata only, as cinder's
    assert raw("GET", f"/volumes/{volume.id}/metadata")[1]["metadata"] == {"a": "1"}
    assert raw("POST", f"/volumes/{volume.id}/action",
               {"os-update_readonly_flag": {"readonly": "maybe"}})[0] == 400
    conn.block_storage.delete_volume(volume)
