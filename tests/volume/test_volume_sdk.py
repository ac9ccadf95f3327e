"""The volume API through openstacksdk's block_storage proxy, as Ansible and Terraform users'
tools call it: types, volumes and their actions, snapshots, the attachments API, limits,
availability zones, services and extensions."""
from __future__ import annotations

import time
import uuid

import pytest
from openstack import exceptions as sdk_exc

WAIT = {"wait": 60, "interval": 0.1}


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def conn(cloud, member):
    return cloud.user_sdk(member)


def test_sdk_volumes_types_snapshots(cloud, conn):
    admin = cloud.sdk()
    name = f"gold-{uuid.uuid4().hex[:6]}"
    vt = admin.block_storage.create_type(name=name, extra_specs={"volume_backend_name": "file"})
    admin.block_storage.update_type_extra_specs(vt, tier="gold")
    assert admin.block_storage.get_type(vt.id).extra_specs == {
        "volume_backend_name": "file", "tier": "gold"}

    volume = conn.block_storage.create_volume(size=1, name="v", volume_type=name,
                                              metadata={"a": "1"})
    volume = conn.block_storage.wait_for_status(volume, "available", **WAIT)
    assert volume.volume_type == name and volume.metadata == {"a": "1"}
    conn.block_storage.set_volume_metadata(volume, b="2")
    assert conn.block_storage.fetch_volume_metadata(volume).metadata == {"a": "1", "b": "2"}
    conn.block_storage.delete_volume_metadata(volume, keys=["a"])
    assert conn.block_storage.get_volume(volume).metadata == {"b": "2"}
    conn.block_storage.extend_volume(volume, 2)
    assert conn.block_storage.get_volume(volume).status in ("extending", "available")
    volume = conn.block_storage.wait_for_status(conn.block_storage.get_volume(volume),
                                                "available", **WAIT)
    for _ in range(600):  # extend is asynchronous, as cinder's
        if conn.block_storage.get_volume(volume).size == 2:
            break
        time.sleep(0.05)
    assert conn.block_storage.get_volume(volume).size == 2
    conn.block_storage.set_volume_bootable_status(volume, True)
    assert conn.block_storage.get_volume(volume).is_bootable is True
    conn.block_storage.set_volume_readonly(volume, False)
    conn.block_storage.retype_volume(volume, "__DEFAULT__")
    assert conn.block_storage.get_volume(volume).volume_type == "__DEFAULT__"
    summary = conn.block_storage.summary(False)
    assert summary.total_count == 1 and summary.total_size == 2

    snap = conn.block_storage.create_snapshot(volume_id=volume.id, name="s1")
    snap = conn.block_storage.wait_for_status(snap, "available", **WAIT)
    assert snap.size == 2 and [s.id for s in conn.block_storage.snapshots()] == [snap.id]
    conn.block_storage.update_snapshot(snap, name="s2")
    assert conn.block_storage.get_snapshot(snap).name == "s2"
    with pytest.raises(sdk_exc.BadRequestException):
        conn.block_storage.delete_volume(volume)  # it has a snapshot
    conn.block_storage.delete_snapshot(snap)
    conn.block_storage.wait_for_delete(snap, **WAIT)
    conn.block_storage.delete_volume(volume)
    conn.block_storage.wait_for_delete(volume, **WAIT)
    admin.block_storage.delete_type(vt)


def test_sdk_attachments_api(cloud, conn):
    volume = conn.block_storage.create_volume(size=1)
    volume = conn.block_storage.wait_for_status(volume, "available", **WAIT)
    server = str(uuid.uuid4())
    attachment = conn.block_storage.create_attachment(volume, instance=server)
    assert attachment.status == "reserved"
    attachment = conn.block_storage.update_attachment(
        attachment, connector={"host": "cmp-2", "mountpoint": "/dev/vdb"})
    info = attachment.connection_info
    assert info["driver_volume_type"] == "local"
    assert info["data"]["device_path"].endswith(f"volume-{volume.id}")
    conn.block_storage.complete_attachment(attachment)
    volume = conn.block_storage.get_volume(volume)
    assert volume.status == "in-use" and volume.attachments[0]["server_id"] == server
    assert [a.id for a in conn.block_storage.attachments(volume_id=volume.id)] == [
        attachment.id]
    conn.block_storage.delete_attachment(attachment)
    assert conn.block_storage.get_volume(volume).status == "available"
    conn.block_storage.delete_volume(volume)


def test_sdk_limits_zones_services_extensions(cloud, conn):
    limits = conn.block_storage.get_limits()
    assert limits.absolute.max_total_volumes == 10
    assert [z.name for z in conn.block_storage.availability_zones()] == ["nova"]
    services = list(cloud.sdk().block_storage.services())
    assert {s.binary for s in services} == {"cinder-scheduler", "cinder-volume"}
    assert all(s.state == "up" for s in services)
    assert "os-volume-actions" in {e.alias for e in conn.block_storage.extensions()}


def test_sdk_backups_and_restore(cloud, conn, member):
    import os

    volume = conn.block_storage.create_volume(size=1, name="to-back-up")
    volume = conn.block_storage.wait_for_status(volume, "available", **WAIT)
    path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume.id}")
    with open(path, "r+b") as f:
        f.write(b"backed up bytes")
    backup = conn.block_storage.create_backup(volume_id=volume.id, name="b1")
    backup = conn.block_storage.wait_for_status(backup, "available", **WAIT)
    assert backup.size == 1 and backup.volume_id == volume.id
    assert [b.name for b in conn.block_storage.backups()] == ["b1"]
    assert conn.block_storage.get_volume(volume).status == "available"
    assert conn.block_storage.get_limits().absolute.total_backups_used == 1
    with open(path, "r+b") as f:
        f.write(b"overwritten....")
    restored = conn.block_storage.restore_backup(backup, name="restored")
    new = conn.block_storage.wait_for_status(
        conn.block_storage.get_volume(restored.volume_id), "available", **WAIT)
    assert new.name == "restored"
    with open(os.path.join(cloud.data_dir, "volumes", f"volume-{new.id}"), "rb") as f:
        assert f.read(15) == b"backed up bytes"
    conn.block_storage.restore_backup(backup, volume_id=volume.id)
    conn.block_storage.wait_for_status(conn.block_storage.get_backup(backup), "available",
                                       **WAIT)
    conn.block_storage.wait_for_status(conn.block_storage.get_volume(volume), "available",
                                       **WAIT)
    with open(path, "rb") as f:
        assert f.read(15) == b"backed up bytes"
    conn.block_storage.delete_backup(backup)
    conn.block_storage.wait_for_delete(backup, **WAIT)
    assert not os.listdir(os.path.join(cloud.data_dir, "volume-backups"))
