"""The per-host image cache fetches through the real image service once per
image (also when boots race), checks the data against os_hash_value, keeps the
metadata so a cached image costs no call, and brings kernel and ramdisk along."""
from __future__ import annotations

import hashlib
import os
import subprocess
import threading
import uuid

import pytest

from libvirt_helpers import libvirt_python_missing, qemu_img_missing

pytestmark = pytest.mark.skipif(bool(libvirt_python_missing() or qemu_img_missing()),
                                reason=libvirt_python_missing() or qemu_img_missing() or "")


@pytest.fixture
def driver(libvirt_conf, tmp_path):
    from pocketstack.compute.virt.libvirt.driver import LibvirtDriver

    libvirt_conf("connection_uri", "test:///default")
    return LibvirtDriver(f"lvt-{uuid.uuid4().hex[:6]}", str(tmp_path))


@pytest.fixture
def images(cloud, tmp_path):
    admin = cloud.sdk()
    made = []

    def upload(data: bytes, **props):
        props = {"disk_format": "qcow2", "container_format": "bare", **props}
        image = admin.image.create_image(name=f"lvt-{uuid.uuid4().hex[:6]}", data=data,
                                         **props)
        made.append(image)
        return image

    yield upload
    for image in made:
        admin.image.delete_image(image, ignore_missing=True)


def qcow2_bytes(tmp_path) -> bytes:
    path = tmp_path / f"{uuid.uuid4().hex}.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(path), "8M"], check=True)
    return path.read_bytes()


def test_racing_boots_download_once_and_later_boots_ask_nothing(cloud, driver, images, tmp_path,
                                                                 monkeypatch):
    from pocketstack.clients import image as image_client

    kernel = images(b"kernel bytes", disk_format="aki", container_format="aki")
    ramdisk = images(b"ramdisk bytes", disk_format="ari", container_format="ari")
    machine = images(qcow2_bytes(tmp_path), kernel_id=kernel.id, ramdisk_id=ramdisk.id,
                     os_command_line="console=ttyS0")
    calls = {"get": 0, "download": 0}
    real_get, real_download = image_client.ImageClient.get, image_client.ImageClient.download

    def counting_get(self, image_id):
        calls["get"] += 1
        return real_get(self, image_id)

    def counting_download(self, image_id, path):
        calls["download"] += 1
        return real_download(self, image_id, path)

    monkeypatch.setattr(image_client.ImageClient, "get", counting_get)
    monkeypatch.setattr(image_client.ImageClient, "download", counting_download)
    metas = [{"id": machine.id} for _ in range(4)]
    results = []
    threads = [threading.Thread(target=lambda m=m: results.append(
        driver.cache_image(None, m, "unused"))) for m in metas]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert calls["download"] == 3  # machine, kernel, ramdisk: once each
    assert sorted(results).count(False) >= 1
    for meta in metas:
        assert (meta["kernel_id"], meta["ramdisk_id"]) == (kernel.id, ramdisk.id)
        assert meta["os_command_line"] == "console=ttyS0"
    with open(driver.cache.path(machine.id), "rb") as f:
        assert hashlib.sha512(f.read()).hexdigest() == \
            cloud.sdk().image.get_image(machine.id).hash_value
    before = dict(calls)
    meta = {"id": machine.id}
    assert driver.cache_image(None, meta, "unused") is True
    assert calls == before and meta["kernel_id"] == kernel.id
    assert not [n for n in os.listdir(driver.cache.base_dir) if ".part" in n]


def test_data_that_does_not_match_its_hash_is_refused(tmp_path):
    from pocketstack.compute.virt.libvirt import imagecache

    path = tmp_path / "data"
    path.write_bytes(b"what arrived")
    good = hashlib.sha512(b"what arrived").hexdigest()
    imagecache.verify(str(path), {"id": "i", "os_hash_algo": "sha512", "os_hash_value": good})
    with pytest.raises(imagecache.ImageError, match="does not match its sha512"):
        imagecache.verify(str(path), {"id": "i", "os_hash_algo": "sha512",
                                      "os_hash_value": "0" * 128})
    with pytest.raises(imagecache.ImageError, match="does not match its md5"):
        imagecache.verify(str(path), {"id": "i", "checksum": "0" * 32})


def test_an_image_with_a_backing_file_or_odd_format_cannot_back_a_guest(tmp_path):
    from pocketstack.compute.virt.libvirt import imagecache

    base = tmp_path / "base.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(base), "8M"], check=True)
    sneaky = tmp_path / "sneaky.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(base),
                    str(sneaky)], check=True)
    with pytest.raises(imagecache.ImageError, match="backing file"):
        imagecache.create_root_disk(str(sneaky), str(tmp_path / "disk"), 1, "qcow2")
    vdi = tmp_path / "disk.vdi"
    subprocess.run(["qemu-img", "create", "-q", "-f", "vdi", str(vdi), "8M"], check=True)
    with pytest.raises(imagecache.ImageError, match="cannot back a guest"):
        imagecache.create_root_disk(str(vdi), str(tmp_path / "disk2"), 1, "qcow2")
    imagecache.create_root_disk(str(base), str(tmp_path / "raw"), 1, "raw")
    assert os.path.getsize(tmp_path / "raw") == 1 << 30
