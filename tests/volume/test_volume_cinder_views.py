"""Answers shaped as cinder's own: the snapshot views (create and update carry the detail
view without the extended attributes, which only show and the detail list add), an
unmanaged volume's file managed again by its original name, and `bootable` where cinder's
schemas take or refuse it. Through keystoneauth1 (Tempest's request shapes: no
microversion header), openstacksdk and the `openstack` CLI."""
from __future__ import annotations

import os

import pytest

from volume_helpers import Raw, wait_gone, wait_status

WAIT = {"wait": 60, "interval": 0.1}
# cinder's snapshot summary view (cinder/api/views/snapshots.py), which is also its
# detail view at 3.0; the extension adds the two extended attributes on show and detail
SUMMARY = {"id", "created_at", "updated_at", "name", "description", "volume_id", "status",
           "size", "metadata"}
EXTENDED = {"os-extended-snapshot-attributes:project_id",
            "os-extended-snapshot-attributes:progress"}


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def operator(cloud):
    return cloud.make_user(roles=("admin", "member"))


def _wait_snapshot(raw, snap_id, wanted="available", timeout=30):
    import time

    deadline = time.monotonic() + timeout
    while (shown := raw("GET", f"/snapshots/{snap_id}")[1]["snapshot"])["status"] != wanted:
        assert time.monotonic() < deadline, shown
        time.sleep(0.05)
    return shown


def test_snapshot_views_match_cinder(cloud, member):
    raw = Raw(cloud.user_session(member), version="3.0")
    volume = wait_status(raw, raw("POST", "/volumes", {"volume": {"size": 1}})[1]["volume"][
        "id"], "available")
    status, body, _ = raw("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"],
                                                              "name": "s1"}})
    assert status == 202 and set(body) == {"snapshot"}
    assert set(body["snapshot"]) == SUMMARY, sorted(body["snapshot"])
    snap_id = body["snapshot"]["id"]
    shown = _wait_snapshot(raw, snap_id)
    assert set(shown) == SUMMARY | EXTENDED
    assert shown["os-extended-snapshot-attributes:project_id"] == member["project_id"]
    status, body, _ = raw("PUT", f"/snapshots/{snap_id}", {"snapshot": {"name": "s2"}})
    assert status == 200 and set(body["snapshot"]) == SUMMARY
    assert body["snapshot"]["name"] == "s2"
    # the lists: the summary without, the detail with the extension's attributes
    assert [set(s) for s in raw("GET", "/snapshots")[1]["snapshots"]] == [SUMMARY]
    assert [set(s) for s in raw("GET", "/snapshots/detail")[1]["snapshots"]] == [
        SUMMARY | EXTENDED]
    # later microversions add their fields to the detail view, never to the summary
    later = Raw(cloud.user_session(member), version="3.65")
    status, body, _ = later("PUT", f"/snapshots/{snap_id}", {"snapshot": {"name": "s3"}})
    assert set(body["snapshot"]) == SUMMARY | {"group_snapshot_id", "user_id",
                                               "consumes_quota"}
    assert [set(s) for s in later("GET", "/snapshots")[1]["snapshots"]] == [SUMMARY]
    # openstacksdk still reads the extended attributes from show
    conn = cloud.user_sdk(member)
    got = conn.block_storage.get_snapshot(snap_id)
    assert (got.project_id, got.progress, got.name) == (member["project_id"], "100%", "s3")
    conn.block_storage.delete_snapshot(snap_id)
    conn.block_storage.wait_for_delete(got, **WAIT)
    conn.block_storage.delete_volume(volume["id"])
    wait_gone(raw, volume["id"])


def _file_host(conn) -> str:
    return next(s.host for s in conn.block_storage.services(binary="cinder-volume")
                if s.host.endswith("@file"))


def test_unmanaged_volume_is_managed_again_by_its_name(cloud, operator):
    """As cinder's LVM driver leaves the LV volume-<id>: the file keeps its name, the
    manageable list offers it, a start does not remove it, and both manage APIs take it
    back by that name."""
    from pocketstack.volume import service

    conn, raw = cloud.user_sdk(operator), Raw(cloud.user_session(operator))
    host = _file_host(conn)
    directory = os.path.join(cloud.data_dir, "volumes")
    for manage_url, version in (("/manageable_volumes", "3.8"), ("/os-volume-manage", "3.0")):
        volume = conn.block_storage.wait_for_status(
            conn.block_storage.create_volume(size=1), "available", **WAIT)
        with open(os.path.join(directory, f"volume-{volume.id}"), "r+b") as f:
            f.write(b"kept bytes")
        conn.block_storage.unmanage_volume(volume)
        wait_gone(raw, volume.id)
        name = f"volume-{volume.id}"
        offered = {v.reference["source-name"]: v
                   for v in conn.block_storage.manageable_volumes(host=host)}
        assert offered[name].safe_to_manage is True and offered[name].size == 1
        service.recover()  # what the volume service's start does with unowned files
        assert os.path.exists(os.path.join(directory, name))
        status, body, _ = raw("POST", manage_url, {"volume": {
            "host": host, "ref": {"source-name": name}, "name": "back"}}, version=version)
        assert status == 202, body
        again = conn.block_storage.wait_for_status(conn.block_storage.get_volume(
            body["volume"]["id"]), "available", **WAIT)
        assert (again.name, again.size) == ("back", 1)
        with open(os.path.join(directory, f"volume-{again.id}"), "rb") as f:
            assert f.read(10) == b"kept bytes"
        assert not os.path.exists(os.path.join(directory, name))
        assert name not in {v.reference["source-name"]
                            for v in conn.block_storage.manageable_volumes(host=host)}
        conn.block_storage.delete_volume(again)
        wait_gone(raw, again.id)
    # a file that is still a volume's is not offered, and managing it fails
    owned = conn.block_storage.wait_for_status(conn.block_storage.create_volume(size=1),
                                               "available", **WAIT)
    assert f"volume-{owned.id}" not in {
        v.reference["source-name"] for v in conn.block_storage.manageable_volumes(host=host)}
    made = conn.block_storage.manage_volume(host=host, ref={"source-name":
                                                            f"volume-{owned.id}"})
    conn.block_storage.wait_for_status(made, "error", **WAIT)
    assert conn.block_storage.get_volume(owned).status == "available"
    for gone in (made, owned):
        conn.block_storage.delete_volume(gone)
        wait_gone(raw, gone.id)


@pytest.mark.cli
def test_bootable_where_cinder_takes_or_refuses_it(cloud, operator):
    """cinder's volume create schema has no `bootable`: before 3.53 other keys pass
    unread, from 3.53 they are refused; its manage schema takes a boolean or a boolean
    string and refuses null, which `openstack volume create --remote-source` sends when
    neither --bootable nor --non-bootable is given."""
    conn, raw = cloud.user_sdk(operator), Raw(cloud.user_session(operator))
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1, "bootable": None}},
                          version="3.0")
    assert status == 202, body
    made = wait_status(raw, body["volume"]["id"], "available")
    assert made["bootable"] == "false"
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1, "bootable": None}},
                          version="3.53")
    assert status == 400
    assert body["badRequest"]["message"].startswith(
        "Additional properties are not allowed ('bootable' was unexpected)")
    conn.block_storage.delete_volume(made["id"])
    host = _file_host(conn)
    path = os.path.join(cloud.data_dir, "volumes", "remote-disk")
    with open(path, "wb") as f:
        f.truncate(1 << 30)
    user = operator
    failed = cloud.cli("volume", "create", "--remote-source", "source-name=remote-disk",
                       "--host", host, "adopted", user=user, check=False)
    assert failed.returncode != 0
    assert ("Invalid input for field/attribute bootable. Value: None. None is not of type "
            "'boolean', 'string'") in failed.stderr
    assert [v.name for v in conn.block_storage.volumes() if v.name == "adopted"] == []
    created = cloud.cli("volume", "create", "--remote-source", "source-name=remote-disk",
                        "--host", host, "--bootable", "adopted", "-f", "json", user=user)
    adopted = conn.block_storage.wait_for_status(conn.block_storage.get_volume(
        created["id"]), "available", **WAIT)
    assert adopted.is_bootable is True and adopted.name == "adopted"
    conn.block_storage.delete_volume(adopted)
    wait_gone(raw, adopted.id)
    wait_gone(raw, made["id"])


def test_snapshot_manage_answers_cinders_plain_view(cloud, operator):
    """cinder's snapshot manage uses the v2 view builder: the summary fields at any
    microversion (openstacksdk's manage_snapshot asks for its highest)."""
    conn, raw = cloud.user_sdk(operator), Raw(cloud.user_session(operator))
    volume = conn.block_storage.wait_for_status(conn.block_storage.create_volume(size=1),
                                                "available", **WAIT)
    name = "legacy-snap-view"
    with open(os.path.join(cloud.data_dir, "volumes", name), "wb") as f:
        f.truncate(1 << 30)
    status, body, _ = raw("POST", "/manageable_snapshots", {"snapshot": {
        "volume_id": volume.id, "ref": {"source-name": name}}}, version="3.65")
    assert status == 202 and set(body["snapshot"]) == SUMMARY, body
    snap = conn.block_storage.wait_for_status(conn.block_storage.get_snapshot(
        body["snapshot"]["id"]), "available", **WAIT)
    conn.block_storage.delete_snapshot(snap)
    conn.block_storage.wait_for_delete(snap, **WAIT)
    conn.block_storage.delete_volume(volume)
    wait_gone(raw, volume.id)
