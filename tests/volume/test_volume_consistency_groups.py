"""cinder's deprecated consistency-group API, which openstacksdk still offers: views over
generic groups (a reserved group type) and group snapshots, through openstacksdk."""
from __future__ import annotations

import uuid

import pytest
from openstack import exceptions as sdk_exc

from helpers.cloud import wait_for
from volume_helpers import Raw, wait_gone

WAIT = {"wait": 60, "interval": 0.1}


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


def test_consistency_groups_through_the_sdk(cloud, member):
    admin = cloud.sdk()
    vtype = admin.block_storage.create_type(name=f"cg-{uuid.uuid4().hex[:6]}")
    conn, raw = cloud.user_sdk(member), Raw(cloud.user_session(member))
    try:
        cg = conn.block_storage.create_consistency_group(name="cg1",
                                                         volume_types=[vtype.id])
        cg = conn.block_storage.get_consistency_group(cg.id)
        assert cg.status == "available" and cg.volume_types == [vtype.id]
        # as cinder's API: a comma-separated string of types is taken as well
        status, body, _ = raw("POST", "/consistencygroups", {"consistencygroup": {
            "name": "cg2", "volume_types": f"{vtype.name},"}})
        assert status == 202, body
        other = body["consistencygroup"]["id"]
        status, body, _ = raw("POST", "/volumes", {"volume": {
            "size": 1, "volume_type": vtype.id, "consistencygroup_id": cg.id}})
        assert status == 202, body
        volume = conn.block_storage.wait_for_status(
            conn.block_storage.get_volume(body["volume"]["id"]), "available", **WAIT)
        assert volume.group_id == cg.id
        conn.block_storage.update_consistency_group(cg, name="cg1b")
        assert conn.block_storage.get_consistency_group(cg.id).name == "cg1b"
        assert {c.id for c in conn.block_storage.consistency_groups()} == {cg.id, other}
        snap = conn.block_storage.create_consistency_group_snapshot(
            consistencygroup_id=cg.id, name="cgs")
        snap = conn.block_storage.wait_for_status(snap, "available", **WAIT)
        assert snap.consistencygroup_id == cg.id
        assert [s.id for s in conn.block_storage.consistency_group_snapshots()] == [snap.id]
        made = conn.block_storage.create_consistency_group_from_source(
            consistency_group_snapshot=snap, name="from-cgs")
        # available once its volumes are, as cinder's (the snapshot can go after that)
        made = conn.block_storage.wait_for_status(made, "available", **WAIT)
        for bad in (None, {}, {"consistencygroup": {}},
                    {"consistencygroup": {"volume_types": [], "name": "x"}},
                    {"consistencygroup": {"volume_types": "x", "other": 1}}):
            status, body, _ = raw("POST", "/consistencygroups", bad)
            assert status == 400 and "badRequest" in body, (bad, body)
        assert raw("POST", "/consistencygroups/create_from_src", {
            "consistencygroup-from-src": {"cgsnapshot_id": snap.id,
                                          "source_cgid": cg.id}})[0] == 400
        assert raw("POST", f"/consistencygroups/{cg.id}/delete",
                   {"consistencygroup": {"force": "maybe"}})[0] == 400
        assert raw("GET", f"/cgsnapshots/{uuid.uuid4()}")[0] == 404
        conn.block_storage.delete_consistency_group_snapshot(snap)
        # deleting until its last member snapshot is gone (asynchronously), then gone
        status, body, _ = raw("GET", f"/cgsnapshots/{snap.id}")
        assert status == 404 or body["cgsnapshot"]["status"] == "deleting", body
        wait_for(lambda: raw("GET", f"/cgsnapshots/{snap.id}")[0] == 404, 30,
                 "the group snapshot to go")
        with pytest.raises(sdk_exc.NotFoundException):
            conn.block_storage.get_consistency_group_snapshot(snap.id)
        assert not list(conn.block_storage.snapshots(volume_id=volume.id))
        conn.block_storage.delete_consistency_group(cg, force=True)
        conn.block_storage.delete_consistency_group(made, force=True)
        assert raw("POST", f"/consistencygroups/{other}/delete")[0] == 202
        wait_gone(raw, volume.id)
        assert list(conn.block_storage.consistency_groups()) == []
    finally:
        for group in raw("GET", "/groups", version="3.13")[1]["groups"]:
            raw("POST", f"/groups/{group['id']}/action",
                {"delete": {"delete-volumes": True}}, version="3.13")
        for left in raw("GET", "/volumes")[1]["volumes"]:
            wait_gone(raw, left["id"])
        admin.block_storage.delete_type(vtype)
