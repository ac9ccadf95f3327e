"""A volume created from an image holds exactly the image's bytes (raw and
qcow2), is bootable with volume_image_metadata, and round-trips through
os-volume_upload_image to an image with identical bytes."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import uuid

import pytest

from volume_helpers import Raw, create, wait_status

needs_qemu_img = pytest.mark.skipif(shutil.which("qemu-img") is None,
                                    reason="qemu-img is not installed (Debian: qemu-utils)")
PAYLOAD = os.urandom(3 << 20) + b"\0" * (1 << 20) + b"tail of the image"


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def raw(cloud, member):
    return Raw(cloud.user_session(member))


def _volume_bytes(cloud, volume_id: str, length: int) -> bytes:
    with open(os.path.join(cloud.data_dir, "volumes", f"volume-{volume_id}"), "rb") as f:
        return f.read(length)


def test_volume_from_raw_image_and_back(cloud, member, raw):
    conn = cloud.user_sdk(member)
    image = conn.image.create_image(name=f"img-{uuid.uuid4().hex[:6]}", data=PAYLOAD,
                                    disk_format="raw", container_format="bare",
                                    hw_disk_bus="virtio")
    volume = create(raw, imageRef=image.id, size=None, name="from-image")
    assert volume["size"] == 1  # the image's size rounded up to GiB
    volume = wait_status(raw, volume["id"], ("available", "error"))
    assert volume["status"] == "available", volume
    assert volume["bootable"] == "true"
    meta = volume["volume_image_metadata"]
    assert meta["image_id"] == image.id and meta["disk_format"] == "raw"
    assert meta["hw_disk_bus"] == "virtio"
    data = _volume_bytes(cloud, volume["id"], len(PAYLOAD) + 4096)
    assert data == PAYLOAD + b"\0" * 4096

    status, body, _ = raw("POST", f"/volumes/{volume['id']}/action", {
        "os-volume_upload_image": {"image_name": "back", "disk_format": "raw",
                                   "container_format": "bare"}})
    assert status == 202, body
    uploaded = body["os-volume_upload_image"]
    assert uploaded["status"] == "uploading"
    wait_status(raw, volume["id"], "available", timeout=120)
    copy = conn.image.wait_for_status(conn.image.get_image(uploaded["image_id"]), "active",
                                      wait=120, interval=0.2)
    with open(os.path.join(cloud.data_dir, "volumes", f"volume-{volume['id']}"), "rb") as f:
        digest = hashlib.file_digest(f, "sha512").hexdigest()
    assert copy.size == 1 << 30 and copy.hash_value == digest


@needs_qemu_img
def test_volume_from_qcow2_image(cloud, member, raw, tmp_path):
    source = tmp_path / "disk.raw"
    source.write_bytes(PAYLOAD)
    qcow = tmp_path / "disk.qcow2"
    subprocess.run(["qemu-img", "convert", "-f", "raw", "-O", "qcow2", str(source),
                    str(qcow)], check=True)
    conn = cloud.user_sdk(member)
    image = conn.image.create_image(name="q", data=qcow.read_bytes(), disk_format="qcow2",
                                    container_format="bare")
    volume = wait_status(raw, create(raw, imageRef=image.id, size=1)["id"],
                         ("available", "error"))
    assert volume["status"] == "available", volume
    assert _volume_bytes(cloud, volume["id"], len(PAYLOAD)) == PAYLOAD
    path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume['id']}")
    assert os.path.getsize(path) == 1 << 30


@needs_qemu_img
def test_volume_from_the_demo_image(cloud, member, raw):
    """The README's `openstack volume create --image cirros --size 1 --bootable root1` on
    the cirros.img `pocketstack demo` leaves (qemu-img refused it)."""
    from pocketstack.cli.demo import demo_image

    conn = cloud.user_sdk(member)
    image = conn.image.create_image(name="cirros", data=demo_image(), disk_format="qcow2",
                                    container_format="bare")
    volume = wait_status(raw, create(raw, imageRef=image.id, size=1)["id"],
                         ("available", "error"))
    assert volume["status"] == "available", volume
    assert _volume_bytes(cloud, volume["id"], 1 << 20) == b"\0" * (1 << 20)


@needs_qemu_img
def test_image_that_does_not_fit_leaves_an_error_with_a_reason(cloud, member, raw, tmp_path):
    big = tmp_path / "big.qcow2"
    subprocess.run(["qemu-img", "create", "-f", "qcow2", str(big), "3G"], check=True,
                   capture_output=True)
    conn = cloud.user_sdk(member)
    image = conn.image.create_image(name="big", data=big.read_bytes(), disk_format="qcow2",
                                    container_format="bare")
    volume = wait_status(raw, create(raw, imageRef=image.id, size=1)["id"],
                         ("available", "error"))
    assert volume["status"] == "error"
    assert not os.path.exists(os.path.join(cloud.data_dir, "volumes",
                                           f"volume-{volume['id']}"))
    messages = raw("GET", f"/messages?resource_uuid={volume['id']}")[1]["messages"]
    assert "does not fit" in messages[0]["user_message"]
    assert raw("DELETE", f"/volumes/{volume['id']}")[0] == 202
