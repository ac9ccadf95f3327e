"""Manage / unmanage on the file backend, as cinder's os-volume-manage, /manageable_volumes
and os-unmanage: a plain file in the backend's directory becomes a volume (renamed, sized
to whole GiB, counted in quota) and an unmanaged volume's data stays on disk under its
name, which the next start does not remove. Through openstacksdk and keystoneauth."""
from __future__ import annotations

import os
import uuid

import pytest
from openstack import exceptions as sdk_exc

from volume_helpers import Raw, wait_gone

WAIT = {"wait": 60, "interval": 0.1}
GiB = 1 << 30


@pytest.fixture
def operator(cloud):
    """An admin in a project of its own (its quota can change without touching others)."""
    return cloud.make_user(roles=("admin", "member"))


def _file_host(conn) -> str:
    hosts = [s.host for s in conn.block_storage.services(binary="cinder-volume")
             if s.host.endswith("@file")]
    assert hosts, "the test cloud runs the file backend"
    return hosts[0]


def _legacy_file(cloud, size_bytes: int, payload: bytes) -> str:
    name = f"legacy-{uuid.uuid4().hex[:8]}"
    with open(os.path.join(cloud.data_dir, "volumes", name), "wb") as f:
        f.write(payload)
        f.truncate(size_bytes)
    return name


def test_manage_and_unmanage_a_file(cloud, operator):
    conn, raw = cloud.user_sdk(operator), Raw(cloud.user_session(operator))
    host = _file_host(conn)
    name = _legacy_file(cloud, GiB + GiB // 2, b"legacy data")
    listed = {v.reference["source-name"]: v for v in conn.block_storage.manageable_volumes(
        host=host)}
    assert listed[name].size == 2 and listed[name].safe_to_manage is True
    detail = {v.reference["source-name"]: v for v in conn.block_storage.manageable_volumes(
        host=host, details=True)}
    assert detail[name].reason_not_safe is None and detail[name].cinder_id is None
    volume = conn.block_storage.manage_volume(host=host, ref={"source-name": name},
                                              name="adopted", metadata={"from": "disk"})
    assert volume.status == "creating" and volume.name == "adopted"
    volume = conn.block_storage.wait_for_status(volume, "available", **WAIT)
    assert volume.size == 2 and volume.metadata == {"from": "disk"}
    path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume.id}")
    with open(path, "rb") as f:
        assert f.read(11) == b"legacy data"
    assert os.path.getsize(path) == 2 * GiB
    assert not os.path.exists(os.path.join(cloud.data_dir, "volumes", name))
    assert name not in {v.reference["source-name"]
                        for v in conn.block_storage.manageable_volumes(host=host)}
    assert conn.block_storage.get_limits().absolute.total_gigabytes_used == 2
    # unmanage: the volume is gone, its data is kept and can be managed again
    conn.block_storage.unmanage_volume(volume)
    wait_gone(raw, volume.id)
    kept = f"volume-{volume.id}"
    with open(os.path.join(cloud.data_dir, "volumes", kept), "rb") as f:
        assert f.read(11) == b"legacy data"
    assert kept in {v.reference["source-name"]
                    for v in conn.block_storage.manageable_volumes(host=host)}
    again = conn.block_storage.manage_volume(host=host + "#file",
                                             ref={"source-name": kept})
    again = conn.block_storage.wait_for_status(again, "available", **WAIT)
    conn.block_storage.delete_volume(again)
    wait_gone(raw, again.id)
    assert not os.path.exists(os.path.join(cloud.data_dir, "volumes", kept))


def test_manage_failures_are_error_volumes_not_500s(cloud, operator):
    conn, raw = cloud.user_sdk(operator), Raw(cloud.user_session(operator))
    host = _file_host(conn)
    # a file that is not there: the volume ends in error (cinder's error_managing)
    missing = conn.block_storage.manage_volume(host=host, ref={"source-name": "nothing"})
    shown = conn.block_storage.wait_for_status(missing, "error", **WAIT)
    assert shown.status == "error"
    conn.block_storage.delete_volume(missing)
    wait_gone(raw, missing.id)
    # over quota: the volume ends in error and the file keeps its name
    assert Raw(cloud.session())("PUT", f"/os-quota-sets/{operator['project_id']}",
                                {"quota_set": {"gigabytes": 1}})[0] == 200
    name = _legacy_file(cloud, 2 * GiB, b"x")
    big = conn.block_storage.manage_volume(host=host, ref={"source-name": name})
    conn.block_storage.wait_for_status(big, "error", **WAIT)
    assert os.path.exists(os.path.join(cloud.data_dir, "volumes", name))
    conn.block_storage.delete_volume(big)
    os.unlink(os.path.join(cloud.data_dir, "volumes", name))
    for bad in (None, {}, {"volume": {}}, {"volume": {"host": host}},
                {"volume": {"host": host, "ref": {}}},
                {"volume": {"host": host, "ref": "x"}},
                {"volume": {"host": host, "ref": {"source-id": "x"}}},
                {"volume": {"host": host, "ref": {"source-name": 5}}},
                {"volume": {"host": "elsewhere@file", "ref": {"source-name": "x"}}},
                {"volume": {"host": 5, "ref": {"source-name": "x"}}},
                {"volume": {"host": host, "ref": {"source-name": "x"}, "size": 1}},
                {"volume": {"host": host, "ref": {"source-name": "x"},
                            "volume_type": "no-such-type"}},
                {"volume": {"host": host, "ref": {"source-name": "x"},
                            "availability_zone": "mars"}},
                {"volume": {"host": host, "ref": {"source-name": "x"}, "bootable": "x"}}):
        status, body, _ = raw("POST", "/os-volume-manage", bad)
        assert 400 <= status < 500 and status != 403 and body, (bad, status, body)
    # names that are volumes' own files, or paths, are refused when managed
    for ref in ("../etc", "volume-" + str(uuid.uuid4()), ".hidden"):
        made = conn.block_storage.manage_volume(host=host, ref={"source-name": ref})
        conn.block_storage.wait_for_status(made, "error", **WAIT)
        conn.block_storage.delete_volume(made)
    # the list needs a host and 3.8; members may not manage or list
    assert raw("GET", "/manageable_volumes", version="3.8")[0] == 400
    assert raw("GET", "/manageable_volumes?host=nohost", version="3.8")[0] == 400
    assert raw("GET", f"/manageable_volumes?host={host}&sort=bogus",
               version="3.8")[0] == 400
    # cinder lists from 3.8 on; openstacksdk's manageable_volumes() sends no microversion
    assert raw("GET", f"/manageable_volumes?host={host}", version="3.0")[0] == 200
    assert raw("POST", "/manageable_volumes", {"volume": {
        "host": host, "ref": {"source-name": "x"}}}, version="3.7")[0] == 404
    member = Raw(cloud.user_session(cloud.make_user(roles=("member",))))
    assert member("GET", f"/manageable_volumes?host={host}", version="3.8")[0] == 403
    assert member("POST", "/os-volume-manage", {"volume": {
        "host": host, "ref": {"source-name": "x"}}})[0] == 403


def test_unmanage_refusals(cloud, operator):
    conn, raw = cloud.user_sdk(operator), Raw(cloud.user_session(operator))
    volume = conn.block_storage.wait_for_status(conn.block_storage.create_volume(size=1),
                                                "available", **WAIT)
    snap = conn.block_storage.wait_for_status(
        conn.block_storage.create_snapshot(volume_id=volume.id), "available", **WAIT)
    action = f"/volumes/{volume.id}/action"
    status, body, _ = raw("POST", action, {"os-unmanage": None})
    assert status == 400 and "dependent snapshots" in body["badRequest"]["message"]
    assert raw("POST", action, {"os-unmanage": {"x": 1}})[0] == 400
    member = cloud.make_user(roles=("member",))
    other = cloud.user_sdk(member).block_storage.create_volume(size=1)
    assert Raw(cloud.user_session(member))("POST", f"/volumes/{other.id}/action",
                                           {"os-unmanage": None})[0] == 403
    assert raw("POST", f"/volumes/{uuid.uuid4()}/action", {"os-unmanage": None})[0] == 404
    conn.block_storage.delete_snapshot(snap)
    conn.block_storage.wait_for_delete(snap, **WAIT)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.block_storage.get_snapshot(snap.id)
    conn.block_storage.unmanage_volume(volume)
    wait_gone(raw, volume.id)
    for left in (f"volume-{volume.id}", f".unmanaged-volume-{volume.id}"):
        os.unlink(os.path.join(cloud.data_dir, "volumes", left))


def test_manage_and_unmanage_a_snapshot(cloud, operator):
    conn, raw = cloud.user_sdk(operator), Raw(cloud.user_session(operator))
    host = _file_host(conn)
    volume = conn.block_storage.wait_for_status(conn.block_storage.create_volume(size=1),
                                                "available", **WAIT)
    name = _legacy_file(cloud, GiB, b"point in time")
    snap = conn.block_storage.manage_snapshot(volume_id=volume.id,
                                              ref={"source-name": name}, name="adopted")
    snap = conn.block_storage.wait_for_status(snap, "available", **WAIT)
    assert snap.volume_id == volume.id and snap.name == "adopted" and snap.size == 1
    path = os.path.join(cloud.data_dir, "volumes", f"snapshot-{snap.id}")
    with open(path, "rb") as f:
        assert f.read(13) == b"point in time"
    # a volume made from it has its bytes
    copy = conn.block_storage.wait_for_status(conn.block_storage.create_volume(
        snapshot_id=snap.id), "available", **WAIT)
    with open(os.path.join(cloud.data_dir, "volumes", f"volume-{copy.id}"), "rb") as f:
        assert f.read(13) == b"point in time"
    conn.block_storage.delete_volume(copy)
    # unmanage keeps the file, which the manageable list shows (not as a volume)
    conn.block_storage.unmanage_snapshot(snap)
    conn.block_storage.wait_for_delete(snap, **WAIT)
    kept = f"unmanaged-snapshot-{snap.id}"
    listed = {s.reference["source-name"]: s for s in conn.block_storage.manageable_snapshots(
        host=host)}
    assert listed[kept].safe_to_manage is True and listed[kept].size == 1
    assert kept not in {v.reference["source-name"]
                        for v in conn.block_storage.manageable_volumes(host=host)}
    detail = raw("GET", f"/manageable_snapshots/detail?host={host}", version="3.8")[1]
    assert {"reason_not_safe", "cinder_id", "extra_info", "source_reference"} <= set(
        detail["manageable-snapshots"][0])
    again = conn.block_storage.manage_snapshot(volume_id=volume.id, ref={"source-name": kept})
    again = conn.block_storage.wait_for_status(again, "available", **WAIT)
    # errors: a file that is not there, bad bodies, members, no such volume
    missing = conn.block_storage.manage_snapshot(volume_id=volume.id,
                                                 ref={"source-name": "nothing"})
    conn.block_storage.wait_for_status(missing, "error", **WAIT)
    conn.block_storage.delete_snapshot(missing)
    for bad in (None, {}, {"snapshot": {}}, {"snapshot": {"volume_id": volume.id}},
                {"snapshot": {"volume_id": volume.id, "ref": {"x": 1}}},
                {"snapshot": {"volume_id": 5, "ref": {"source-name": "x"}}},
                {"snapshot": {"volume_id": volume.id, "ref": {"source-name": "x"},
                              "other": 1}}):
        status, body, _ = raw("POST", "/os-snapshot-manage", bad)
        assert status == 400 and "badRequest" in body, (bad, body)
    assert raw("POST", "/os-snapshot-manage", {"snapshot": {
        "volume_id": str(uuid.uuid4()), "ref": {"source-name": "x"}}})[0] == 404
    member = Raw(cloud.user_session(cloud.make_user(roles=("member",))))
    assert member("POST", "/os-snapshot-manage", {"snapshot": {
        "volume_id": volume.id, "ref": {"source-name": "x"}}})[0] == 403
    assert raw("POST", f"/snapshots/{again.id}/action", {"os-unmanage": {"x": 1}})[0] == 400
    conn.block_storage.delete_snapshot(again)
    conn.block_storage.wait_for_delete(again, **WAIT)
    assert not os.path.exists(os.path.join(cloud.data_dir, "volumes", f"snapshot-{again.id}"))
    conn.block_storage.delete_volume(volume)
