"""Volume backups in the object store ([volume] backup_driver = swift, cinder's swift
backup driver): chunked objects, a sha256file and a metadata object in the user's own
account, incremental by sha256 blocks, restored byte for byte, deleted with the backup."""
from __future__ import annotations

import hashlib
import os

import pytest
import swiftclient
from helpers.cloud import own_cloud

WAIT = {"wait": 120, "interval": 0.2}
MiB = 1 << 20


@pytest.fixture(scope="module")
def cloud():
    with own_cloud("swift-backups", **{"volume.backup_driver": "swift",
                                       "volume.backup_swift_object_size": 4 * MiB}) as c:
        yield c


def _volume_file(cloud, volume_id):
    return os.path.join(cloud.data_dir, "volumes", f"volume-{volume_id}")


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(8 * MiB):
            digest.update(chunk)
    return digest.hexdigest()


def test_full_and_incremental_backups_restore_byte_for_byte_and_delete(cloud):
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    account = swiftclient.Connection(
        preauthurl=conn.session.get_endpoint(service_type="object-store"),
        preauthtoken=conn.session.get_token(), retries=0)
    volume = conn.block_storage.wait_for_status(
        conn.block_storage.create_volume(size=1, name="precious"), "available", **WAIT)
    path = _volume_file(cloud, volume.id)
    with open(path, "r+b") as f:
        f.write(b"boot sector" * 100)
        f.seek(5 * MiB + 100)
        f.write(os.urandom(70_000))
    # The user's flow: `openstack volume backup create --container ...`.
    created = cloud.cli("volume", "backup", "create", "--container", "my-backups",
                        "--name", "full", volume.id, "-f", "json", user=user)
    full = conn.block_storage.wait_for_status(conn.block_storage.get_backup(created["id"]),
                                              "available", **WAIT)
    assert full.container == "my-backups"
    names = [o["name"] for o in account.get_container("my-backups")[1]]
    prefix = f"volume_{volume.id}/"
    assert all(n.startswith(prefix) and full.id in n for n in names)
    data = sorted(n for n in names if n[-6:-5] == "-")
    assert len(data) == 2  # the two 4 MiB objects with data; the zeros are not stored
    assert sum(n.endswith("_metadata") for n in names) == 1
    assert sum(n.endswith("_sha256file") for n in names) == 1
    full_state = _sha256(path)

    with open(path, "r+b") as f:  # one 32 KiB block changes
        f.seek(5 * MiB + 200)
        f.write(b"changed since the full backup")
    incremental = conn.block_storage.create_backup(volume_id=volume.id, name="incr",
                                                   container="my-backups",
                                                   is_incremental=True)
    incremental = conn.block_storage.wait_for_status(incremental, "available", **WAIT)
    assert incremental.is_incremental
    new = [o for o in account.get_container("my-backups")[1] if incremental.id in o["name"]]
    stored = [o for o in new if o["name"][-6:-5] == "-"]
    assert [o["bytes"] for o in stored] == [32768]
    incremental_state = _sha256(path)
    assert incremental_state != full_state

    with open(path, "r+b") as f:
        f.write(b"ruined" * 1000)
    restored = conn.block_storage.restore_backup(incremental, name="from-incr")
    new_volume = conn.block_storage.wait_for_status(
        conn.block_storage.get_volume(restored.volume_id), "available", **WAIT)
    assert _sha256(_volume_file(cloud, new_volume.id)) == incremental_state
    conn.block_storage.restore_backup(full, volume_id=volume.id)
    conn.block_storage.wait_for_status(conn.block_storage.get_volume(volume), "available",
                                       **WAIT)
    assert _sha256(path) == full_state

    conn.block_storage.wait_for_status(conn.block_storage.get_backup(full), "available",
                                       **WAIT)
    conn.block_storage.delete_backup(incremental)
    conn.block_storage.wait_for_delete(incremental, **WAIT)
    assert not [o for o in account.get_container("my-backups")[1]
                if incremental.id in o["name"]]
    conn.block_storage.delete_backup(full)
    conn.block_storage.wait_for_delete(full, **WAIT)
    assert account.get_container("my-backups")[1] == []


def test_a_backup_without_a_container_goes_to_volumebackups(cloud):
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    volume = conn.block_storage.wait_for_status(
        conn.block_storage.create_volume(size=1), "available", **WAIT)
    backup = conn.block_storage.wait_for_status(
        conn.block_storage.create_backup(volume_id=volume.id), "available", **WAIT)
    assert backup.container == "volumebackups"
    account = swiftclient.Connection(
        preauthurl=conn.session.get_endpoint(service_type="object-store"),
        preauthtoken=conn.session.get_token(), retries=0)
    names = [o["name"] for o in account.get_container("volumebackups")[1]]
    assert sorted(n.rsplit("_", 1)[-1] for n in names) == ["metadata", "sha256file"]
    conn.block_storage.delete_backup(backup)
    conn.block_storage.wait_for_delete(backup, **WAIT)
    assert account.get_container("volumebackups")[1] == []
