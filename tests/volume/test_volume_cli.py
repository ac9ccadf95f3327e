"""The block storage user flow with the real `openstack` CLI (volume parts; the server parts are
compute's): create, from image, snapshot and volume from it, list/show/set --size, image
from a volume, quota show/set, a volume type routed to a backend."""
from __future__ import annotations

import time
import uuid

import pytest

pytestmark = pytest.mark.cli


def _wait(conn, name_or_id, wanted="available", timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        volume = conn.block_storage.find_volume(name_or_id, ignore_missing=False)
        if volume.status == wanted:
            return volume
        assert volume.status not in ("error", "error_extending"), volume
        assert time.monotonic() < deadline, volume
        time.sleep(0.1)


def test_openstack_volume_cli_flow(cloud):
    conn = cloud.sdk()
    suffix = uuid.uuid4().hex[:6]
    data1, root1, snap1, c1 = (f"{n}-{suffix}" for n in ("data1", "root1", "snap1", "c1"))
    image = conn.image.create_image(name=f"cirros-{suffix}", data=b"\x7fELF" * 4096,
                                    disk_format="raw", container_format="bare")
    try:
        created = cloud.cli("volume", "create", "--size", "1", data1, "-f", "json")
        assert created["size"] == 1 and created["name"] == data1
        _wait(conn, data1)
        cloud.cli("volume", "create", "--image", image.id, "--size", "1", "--bootable",
                  root1, "-f", "json")
        root = _wait(conn, root1)
        assert root.is_bootable and root.volume_image_metadata["image_id"] == image.id

        cloud.cli("volume", "snapshot", "create", "--volume", data1, snap1, "-f", "json")
        snap = conn.block_storage.find_snapshot(snap1, ignore_missing=False)
        conn.block_storage.wait_for_status(snap, "available", wait=60, interval=0.1)
        cloud.cli("volume", "create", "--snapshot", snap1, c1, "-f", "json")
        assert _wait(conn, c1).snapshot_id == snap.id

        listed = cloud.cli("volume", "list", "--long", "-f", "json")
        names = {v["Name"]: v for v in listed}
        assert {data1, root1, c1} <= set(names)
        assert names[root1]["Bootable"] in (True, "true")
        cloud.cli("volume", "set", "--size", "2", data1)
        deadline = time.monotonic() + 60
        while (shown := cloud.cli("volume", "show", data1, "-f", "json"))["size"] != 2:
            assert time.monotonic() < deadline, shown
            time.sleep(0.2)
        assert shown["status"] == "available" and shown["type"] == "__DEFAULT__"

        cloud.cli("image", "create", "--volume", root1, f"root1-img-{suffix}", "-f", "json")
        img = conn.image.find_image(f"root1-img-{suffix}", ignore_missing=False)
        conn.image.wait_for_status(img, "active", wait=120, interval=0.2)
        _wait(conn, root1)

        cloud.cli("volume", "backup", "create", "--name", f"b1-{suffix}", data1, "-f", "json")
        backup = conn.block_storage.find_backup(f"b1-{suffix}", ignore_missing=False)
        conn.block_storage.wait_for_status(backup, "available", wait=60, interval=0.1)
        cloud.cli("volume", "backup", "restore", f"b1-{suffix}", f"c2-{suffix}", "-f", "json")
        _wait(conn, f"c2-{suffix}")
        conn.block_storage.delete_backup(backup)

        user = cloud.make_user()
        cloud.cli("quota", "set", "--volumes", "5", "--gigabytes", "20", user["project_id"])
        quota = cloud.cli("quota", "show", user["project_id"], "-f", "json")
        values = {q["Resource"]: q["Limit"] for q in quota} if isinstance(quota, list) \
            else quota
        assert values["volumes"] == 5 and values["gigabytes"] == 20
        assert cloud.cli("quota", "show", "-f", "json")  # every service answers

        cloud.cli("volume", "type", "create", "--property", "volume_backend_name=lvm",
                  f"fast-{suffix}", "-f", "json")
        vt = conn.block_storage.find_type(f"fast-{suffix}", ignore_missing=False)
        assert vt.extra_specs == {"volume_backend_name": "lvm"}
    finally:
        for name in (c1, root1, f"c2-{suffix}"):
            volume = conn.block_storage.find_volume(name)
            if volume is not None:
                conn.block_storage.delete_volume(volume)
        snap = conn.block_storage.find_snapshot(snap1)
        if snap is not None:
            conn.block_storage.delete_snapshot(snap)
            conn.block_storage.wait_for_delete(snap, wait=60, interval=0.1)
        volume = conn.block_storage.find_volume(data1)
        if volume is not None:
            conn.block_storage.delete_volume(volume)
