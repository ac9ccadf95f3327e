"""Answers shaped as cinder's own: the snapshot views (create and update carry the detail
view without the extended attributes, which only show and the detail list add), an
unmanaged volume's file managed again by its original name, and `bootable` where cinder's
schemas take or refuse it. Through keystoneauth1 (Tempest's request shapes: no
microversion header), openstacksdk and the `openstack` CLI."""
from __future__ import annotations

import os

import pytest

from test_volume_api import Raw, wait_gone, wait_status

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
