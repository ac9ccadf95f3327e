"""Backups of rbd volumes with ``[volume] backup_driver = swift`` on a Ceph cloud whose
object store is its RADOS Gateway: cinder's chunked swift driver reads the RBD image
through librbd, the objects land in the user's account on the gateway, a full and an
incremental backup restore byte for byte into a new volume and over the old one."""
from __future__ import annotations

import hashlib
import os

import ceph_helpers as _ceph
import pytest
import swiftclient
from helpers.cloud import own_cloud

GiB = 1 << 30
WAIT = {"wait": 180, "interval": 0.2}


@pytest.fixture(scope="module")
def cloud(ceph):
    with own_cloud("ceph-rbd-swift-backups", **_ceph.ceph_overrides(ceph),
                   **{"objectstore.backend": "rgw", "volume.enabled_backends": ["rbd"],
                      "volume.backup_driver": "swift",
                      "volume.backup_swift_object_size": 4 << 20}) as c:
        yield c


@pytest.fixture(scope="module")
def volumes(ceph):
    conn = ceph.admin()
    yield conn.open_ioctx(ceph.names["volume_pool"])
    conn.shutdown()


def _image(ioctx, volume_id: str, **kwargs):
    import rbd

    return rbd.Image(ioctx, f"volume-{volume_id}", **kwargs)


def _write(ioctx, volume_id: str, data: bytes, offset: int) -> None:
    with _image(ioctx, volume_id) as image:
        image.write(data, offset)
        image.flush()


def _sha256(ioctx, volume_id: str) -> str:
    digest = hashlib.sha256()
    with _image(ioctx, volume_id, read_only=True) as image:
        size = image.size()
        for offset in range(0, size, 4 << 20):
            digest.update(image.read(offset, min(4 << 20, size - offset)))
    return digest.hexdigest()


def _backup_snapshots(ioctx, volume_id: str) -> list[str]:
    with _image(ioctx, volume_id, read_only=True) as image:
        return [s["name"] for s in image.list_snaps() if s["name"].startswith("backup.")]


def test_rbd_volume_backups_go_to_the_gateway_and_restore_byte_for_byte(cloud, volumes):
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    bs = conn.block_storage
    volume = bs.wait_for_status(bs.create_volume(size=1), "available",
                                failures=["error"], **WAIT)
    _write(volumes, volume.id, os.urandom(1 << 20), 0)
    _write(volumes, volume.id, os.urandom(4096), 512 << 20)
    full = bs.wait_for_status(bs.create_backup(volume_id=volume.id, container="rbd-backups"),
                              "available", failures=["error"], **WAIT)
    url = conn.session.get_endpoint(service_type="object-store", interface="public")
    assert "/swift/v1/" in url  # the gateway
    account = swiftclient.Connection(preauthurl=url, preauthtoken=conn.session.get_token(),
                                     retries=0)
    full_objects = [o["name"] for o in account.get_container("rbd-backups")[1]]
    # the written 1 MiB and 4 KiB, one object each: the rest of the image is zeros
    assert sorted(n.split("_backup_")[-1] for n in full_objects) == [
        f"{full.id}-00001", f"{full.id}-00002", f"{full.id}_metadata",
        f"{full.id}_sha256file"]
    assert _backup_snapshots(volumes, volume.id) == []  # the backup's snapshot is gone

    _write(volumes, volume.id, b"later" * 1000, 900 << 20)
    expected = _sha256(volumes, volume.id)
    incremental = bs.wait_for_status(
        bs.create_backup(volume_id=volume.id, container="rbd-backups", is_incremental=True),
        "available", failures=["error"], **WAIT)
    assert incremental.is_incremental
    names = [o["name"] for o in account.get_container("rbd-backups")[1]]
    data = [n for n in names if incremental.id in n and n[-6] == "-"]
    assert len(data) == 1  # only the changed blocks

    # lose the data, then restore into a new volume and over the old one
    _write(volumes, volume.id, bytes(1 << 20), 0)
    _write(volumes, volume.id, os.urandom(4096), 300 << 20)
    restored = bs.restore_backup(incremental, name="restored")
    new = bs.wait_for_status(bs.get_volume(restored.volume_id), "available",
                             failures=["error"], **WAIT)
    assert _sha256(volumes, new.id) == expected
    bs.wait_for_status(bs.get_backup(incremental.id), "available", **WAIT)
    bs.restore_backup(incremental, volume_id=volume.id)
    bs.wait_for_status(bs.get_volume(volume.id), "available",
                       failures=["error_restoring"], **WAIT)
    assert _sha256(volumes, volume.id) == expected

    bs.wait_for_status(bs.get_backup(incremental.id), "available", **WAIT)
    for backup in (incremental, full):
        bs.delete_backup(backup)
        bs.wait_for_delete(backup, **WAIT)
    assert account.get_container("rbd-backups")[1] == []
    for v in (volume, new):
        bs.delete_volume(v)
        bs.wait_for_delete(v, **WAIT)


def test_backup_of_an_rbd_snapshot_keeps_the_snapshots_bytes(cloud, volumes):
    user = cloud.make_user(roles=("member",))
    bs = cloud.user_sdk(user).block_storage
    volume = bs.wait_for_status(bs.create_volume(size=1), "available",
                                failures=["error"], **WAIT)
    _write(volumes, volume.id, os.urandom(3 << 20), 7 << 20)
    snapshot = bs.wait_for_status(bs.create_snapshot(volume_id=volume.id), "available",
                                  failures=["error"], **WAIT)
    expected = _sha256(volumes, volume.id)
    _write(volumes, volume.id, os.urandom(1 << 20), 7 << 20)  # after the snapshot
    backup = bs.wait_for_status(
        bs.create_backup(volume_id=volume.id, snapshot_id=snapshot.id), "available",
        failures=["error"], **WAIT)
    restored = bs.restore_backup(backup, name="from-snapshot")
    new = bs.wait_for_status(bs.get_volume(restored.volume_id), "available",
                             failures=["error"], **WAIT)
    assert _sha256(volumes, new.id) == expected != _sha256(volumes, volume.id)
    bs.delete_backup(backup)
    bs.wait_for_delete(backup, **WAIT)
    bs.delete_snapshot(snapshot)
    bs.wait_for_delete(snapshot, **WAIT)
    for v in (volume, new):
        bs.delete_volume(v)
        bs.wait_for_delete(v, **WAIT)
