"""Generic volume groups, group types and group snapshots (cinder 3.11-3.38), through
openstacksdk as a user and an admin would, and keystoneauth for the error cases."""
from __future__ import annotations

import os
import shutil
import uuid

import pytest
from openstack import exceptions as sdk_exc

from volume_helpers import Raw, wait_gone, wait_status

WAIT = {"wait": 60, "interval": 0.1}


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def kinds(cloud):
    """A public group type with a spec and a volume type for the groups."""
    admin = cloud.sdk()
    suffix = uuid.uuid4().hex[:6]
    gtype = admin.block_storage.create_group_type(
        name=f"gt-{suffix}", description="grouped", group_specs={"consistent": "true"})
    vtype = admin.block_storage.create_type(name=f"vt-{suffix}")
    yield gtype, vtype
    admin_raw = Raw(cloud.session())
    admin_raw("DELETE", f"/group_types/{gtype.id}", version="3.11")
    admin_raw("DELETE", f"/types/{vtype.id}")


def test_group_types_and_specs(cloud, member, kinds):
    gtype, vtype = kinds
    admin, user = cloud.sdk(), cloud.user_sdk(member)
    assert admin.block_storage.get_group_type(gtype.id).group_specs == {"consistent": "true"}
    seen = {g.id: g for g in user.block_storage.group_types()}
    assert gtype.id in seen and not seen[gtype.id].group_specs  # specs: admins only
    assert user.block_storage.find_group_type(gtype.name).id == gtype.id
    admin.block_storage.create_group_type_group_specs(gtype, {"k": "v"})
    fetched = admin.block_storage.fetch_group_type_group_specs(gtype)
    assert fetched.group_specs == {"consistent": "true", "k": "v"}
    assert admin.block_storage.get_group_type_group_specs_property(gtype, "k") == "v"
    admin.block_storage.update_group_type_group_specs_property(gtype, "k", "w")
    admin.block_storage.delete_group_type_group_specs_property(gtype, "k")
    assert admin.block_storage.get_group_type(gtype.id).group_specs == {"consistent": "true"}
    updated = admin.block_storage.update_group_type(gtype, description="changed")
    assert updated.description == "changed"
    raw, admin_raw = Raw(cloud.user_session(member)), Raw(cloud.session())
    assert raw("POST", "/group_types", {"group_type": {"name": "x"}}, version="3.11")[0] == 403
    assert admin_raw("GET", "/group_types", version="3.10")[0] == 404
    status, body, _ = admin_raw("POST", "/group_types", {"group_type": {"name": gtype.name}},
                                version="3.11")
    assert status == 409 and "conflictingRequest" in body
    for bad in (None, {}, {"group_type": {}}, {"group_type": {"name": 5}},
                {"group_type": {"name": " "}}, {"group_type": {"name": "x", "y": 1}},
                {"group_type": {"name": "x", "group_specs": {"a": 1}}},
                {"group_type": {"name": "x", "is_public": "maybe"}}):
        status, body, _ = admin_raw("POST", "/group_types", bad, version="3.11")
        assert status == 400 and "badRequest" in body, (bad, body)
    assert admin_raw("GET", f"/group_types/{uuid.uuid4()}", version="3.11")[0] == 404
    assert admin_raw("GET", "/group_types/default", version="3.11")[0] == 404


def test_group_lifecycle_with_snapshots(cloud, member, kinds):
    gtype, vtype = kinds
    conn, raw = cloud.user_sdk(member), Raw(cloud.user_session(member))
    group = conn.block_storage.create_group(name="g1", group_type=gtype.id,
                                            volume_types=[vtype.name])
    group = conn.block_storage.get_group(group.id)
    assert group.status == "available" and group.volume_types == [vtype.id]
    assert group.group_type == gtype.id
    # a volume joins at create (3.13) or through the group's update
    status, body, _ = raw("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": vtype.name, "group_id": group.id}}, version="3.13")
    assert status == 202 and body["volume"]["group_id"] == group.id
    first = wait_status(raw, body["volume"]["id"], "available")
    second = conn.block_storage.wait_for_status(conn.block_storage.create_volume(
        size=1, volume_type=vtype.name), "available", **WAIT)
    conn.block_storage.update_group(group, add_volumes=second.id, name="g1b")
    shown = raw("GET", f"/groups/{group.id}?list_volume=true", version="3.25")[1]["group"]
    assert shown["name"] == "g1b" and sorted(shown["volumes"]) == sorted(
        [first["id"], second.id])
    assert sorted(v.id for v in conn.block_storage.volumes(group_id=group.id)) == sorted(
        [first["id"], second.id])
    assert raw("GET", f"/volumes?group_id={uuid.uuid4()}", version="3.13")[1][
        "volumes"] == []
    # a grouped volume is deleted with its group only, and neither offered nor unmanaged
    assert raw("DELETE", f"/volumes/{second.id}")[0] == 400
    status, body, _ = raw("POST", "/os-volume-transfer", {"transfer": {
        "volume_id": second.id}})
    assert status == 400 and "part of a group" in body["badRequest"]["message"]
    status, body, _ = Raw(cloud.session())("POST", f"/volumes/{second.id}/action",
                                           {"os-unmanage": None})
    assert status == 400 and "in group" in body["badRequest"]["message"]
    # a group snapshot snapshots every volume; members go with it only
    gsnap = conn.block_storage.create_group_snapshot(group_id=group.id, name="gs")
    gsnap = conn.block_storage.wait_for_status(gsnap, "available", **WAIT)
    members = [s for s in conn.block_storage.snapshots(details=True)
               if s.group_snapshot_id == gsnap.id]
    assert sorted(s.volume_id for s in members) == sorted([first["id"], second.id])
    status, body, _ = raw("DELETE", f"/snapshots/{members[0].id}")
    assert status == 400 and "group snapshot" in body["badRequest"]["message"]
    # a group from the group snapshot, and a group from the group
    copy = conn.block_storage.create_group_from_source(group_snapshot_id=gsnap.id,
                                                        source_group_id=None,
                                                        name="from-snap")
    clone = conn.block_storage.create_group_from_source(group_snapshot_id=None,
                                                         source_group_id=group.id,
                                                         name="from-group")
    for made in (copy, clone):
        # available once its volumes are, as cinder's
        conn.block_storage.wait_for_status(made, "available", **WAIT)
        shown = raw("GET", f"/groups/{made.id}?list_volume=true", version="3.25")[1]["group"]
        assert len(shown["volumes"]) == 2 and shown["status"] == "available", shown
        for volume_id in shown["volumes"]:
            assert raw("GET", f"/volumes/{volume_id}")[1]["volume"]["status"] == "available"
    # delete: refused while group snapshots or volumes remain, then with its volumes
    status, body, _ = raw("POST", f"/groups/{group.id}/action",
                          {"delete": {"delete-volumes": True}}, version="3.13")
    assert status == 400 and "group snapshots" in body["badRequest"]["message"]
    conn.block_storage.delete_group_snapshot(gsnap)
    for snap in members:
        conn.block_storage.wait_for_delete(snap, **WAIT)
    with pytest.raises(sdk_exc.BadRequestException, match="delete-volumes"):
        conn.block_storage.delete_group(group)
    conn.block_storage.update_group(group, remove_volumes=second.id)
    assert conn.block_storage.get_volume(second.id).group_id is None
    for made in (group, copy, clone):
        conn.block_storage.delete_group(made, delete_volumes=True)
        with pytest.raises(sdk_exc.NotFoundException):
            conn.block_storage.get_group(made.id)
    wait_gone(raw, first["id"])
    conn.block_storage.delete_volume(second)
    assert list(conn.block_storage.groups()) == []


def test_group_errors_are_cinders(cloud, member, kinds):
    gtype, vtype = kinds
    conn, raw = cloud.user_sdk(member), Raw(cloud.user_session(member))
    admin_raw = Raw(cloud.session())
    assert raw("GET", "/groups", version="3.12")[0] == 404
    assert raw("GET", "/group_snapshots", version="3.13")[0] == 404
    missing = str(uuid.uuid4())
    for path in (f"/groups/{missing}", f"/group_snapshots/{missing}"):
        status, body, _ = raw("GET", path, version="3.14")
        assert status == 404 and "itemNotFound" in body
    good = {"group_type": gtype.id, "volume_types": [vtype.id]}
    for bad in (None, {}, {"group": {}}, {"group": {"group_type": gtype.id}},
                {"group": dict(good, volume_types=[])},
                {"group": dict(good, volume_types=[vtype.id, vtype.id])},
                {"group": dict(good, volume_types="x")},
                {"group": dict(good, volume_types=[5])},
                {"group": dict(good, name=5)}, {"group": dict(good, other=1)},
                {"group": dict(good, availability_zone="mars")}):
        status, body, _ = raw("POST", "/groups", bad, version="3.13")
        assert status == 400 and "badRequest" in body, (bad, body)
    for bad in ({"group": dict(good, group_type="nope")},
                {"group": dict(good, volume_types=["nope"])}):
        assert raw("POST", "/groups", bad, version="3.13")[0] == 404
    group = conn.block_storage.create_group(**good)
    path = f"/groups/{group.id}"
    for bad in ({"group": {}}, {"group": {"add_volumes": missing}},
                {"group": {"remove_volumes": missing}}, {"group": {"add_volumes": 5}},
                {"group": {"x": 1}}, None):
        status, body, _ = raw("PUT", path, bad, version="3.13")
        assert status == 400 and "badRequest" in body, (bad, body)
    # a volume of another type cannot join; group_id of a create must exist
    other = conn.block_storage.wait_for_status(conn.block_storage.create_volume(size=1),
                                               "available", **WAIT)
    status, body, _ = raw("PUT", path, {"group": {"add_volumes": other.id}},
                          version="3.13")
    assert status == 400 and "not supported" in body["badRequest"]["message"]
    assert raw("POST", "/volumes", {"volume": {"size": 1, "group_id": missing}},
               version="3.13")[0] == 404
    assert raw("POST", "/volumes", {"volume": {"size": 1, "group_id": group.id}},
               version="3.13")[0] == 400  # the default type is not the group's
    for bad in ({"delete": {"delete-volumes": "maybe"}}, {"delete": None},
                {"bogus": {}}, {"reset_status": {"status": "available"}}, {}):
        status, body, _ = raw("POST", f"{path}/action", bad, version="3.38")
        assert status in (400, 403) and body, (bad, body)
    assert raw("POST", f"{path}/action", {"reset_status": {"status": "error"}},
               version="3.20")[0] == 403
    assert admin_raw("POST", f"{path}/action", {"reset_status": {"status": "bogus"}},
                     version="3.20")[0] == 400
    with pytest.raises(sdk_exc.BadRequestException, match="replication"):
        conn.block_storage.enable_group_replication(group)
    for bad in (None, {}, {"group_snapshot": {}}, {"group_snapshot": {"group_id": 5}},
                {"group_snapshot": {"group_id": group.id, "x": 1}}):
        status, body, _ = raw("POST", "/group_snapshots", bad, version="3.14")
        assert status == 400 and "badRequest" in body, (bad, body)
    assert raw("POST", "/group_snapshots", {"group_snapshot": {"group_id": missing}},
               version="3.14")[0] == 404
    for bad in ({"create-from-src": {}}, {"create-from-src": {
            "group_snapshot_id": missing, "source_group_id": group.id}}, None):
        assert raw("POST", "/groups/action", bad, version="3.14")[0] == 400
    assert raw("POST", "/groups/action", {"create-from-src": {"source_group_id": missing}},
               version="3.14")[0] == 404
    for query in ("limit=x", "sort=bogus", f"marker={missing}"):
        assert raw("GET", f"/groups?{query}", version="3.13")[0] in (400, 404)
    conn.block_storage.delete_group(group)
    conn.block_storage.delete_volume(other)
    # the group type is in use while a group has it, then may go
    assert admin_raw("GET", f"/group_types/{gtype.id}", version="3.11")[0] == 200


def test_a_group_snapshot_whose_member_fails_to_delete_is_error_deleting(cloud, member, kinds):
    """A member snapshot the backend cannot remove (its file made a non-empty directory)
    leaves it and the group snapshot error_deleting, as cinder's; once the cause is gone,
    an admin resets both and the delete goes through."""
    gtype, vtype = kinds
    conn, raw = cloud.user_sdk(member), Raw(cloud.user_session(member))
    admin_raw = Raw(cloud.session())
    group = conn.block_storage.create_group(name="gd", group_type=gtype.id,
                                            volume_types=[vtype.name])
    status, body, _ = raw("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": vtype.name, "group_id": group.id}}, version="3.13")
    volume = wait_status(raw, body["volume"]["id"], "available")
    gsnap = conn.block_storage.create_group_snapshot(group_id=group.id, name="gs")
    gsnap = conn.block_storage.wait_for_status(gsnap, "available", **WAIT)
    [snap] = list(conn.block_storage.snapshots(volume_id=volume["id"]))
    stuck = os.path.join(cloud.data_dir, "volumes", f"snapshot-{snap.id}")
    os.unlink(stuck)
    os.makedirs(os.path.join(stuck, "in-the-way"))
    try:
        conn.block_storage.delete_group_snapshot(gsnap)
        conn.block_storage.wait_for_status(gsnap, "error_deleting", **WAIT)
        assert conn.block_storage.get_snapshot(snap.id).status == "error_deleting"
        status, body, _ = raw("POST", f"/groups/{group.id}/action",
                              {"delete": {"delete-volumes": True}}, version="3.13")
        assert status == 400 and "group snapshots" in body["badRequest"]["message"]
    finally:
        shutil.rmtree(stuck)
    assert admin_raw("POST", f"/group_snapshots/{gsnap.id}/action",
                     {"reset_status": {"status": "error"}}, version="3.19")[0] == 202
    assert admin_raw("POST", f"/snapshots/{snap.id}/action",
                     {"os-reset_status": {"status": "error"}})[0] == 202
    conn.block_storage.delete_group_snapshot(gsnap)
    conn.block_storage.wait_for_delete(gsnap, **WAIT)
    assert list(conn.block_storage.snapshots(volume_id=volume["id"])) == []
    conn.block_storage.delete_group(group, delete_volumes=True)
    wait_gone(raw, volume["id"])
