"""File volumes exported over iSCSI by tgt (`[volume] target_helper = tgtadm`, issue 23), as
cinder's LVM driver does for hosts that cannot open the volume's file: a server's attachment
gets cinder's iscsi connection_info, the LUN carries the volume's bytes both ways (QEMU's
own initiator, qemu-io, reads and writes it), and detach, delete and restarts leave exactly
the targets of attached volumes."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest

from cloud_helpers import free_tgt_port, own_cloud
from pocketstack.common.image_formats import qcow2_header

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("tgtd", "tgtadm", "qemu-io")),
    reason="iSCSI exports need root, tgt (apt-get install tgt) and qemu-io (qemu-utils)")

WAIT = {"wait": 60, "interval": 0.05}
MV = {"OpenStack-API-Version": "volume 3.27"}


@pytest.fixture(scope="module")
def cloud():
    port = free_tgt_port()
    with own_cloud("iscsi", **{"volume.target_helper": "tgtadm",
                               "volume.target_port": port}) as c:
        c.iscsi_port = port
        try:
            yield c
        finally:
            with c.cloud.runtime.activated():
                from pocketstack.volume import iscsi_target

                iscsi_target.stop_daemon()


@pytest.fixture(scope="module")
def conn(cloud):
    return cloud.user_sdk(cloud.make_user())


@pytest.fixture(scope="module")
def server(cloud, conn):
    admin = cloud.session()
    image = admin.post(cloud.url + "/image/v2/images", json={
        "name": "iscsi-img", "disk_format": "qcow2", "container_format": "bare",
        "visibility": "public"}).json()
    admin.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=qcow2_header(1 << 20),
              headers={"Content-Type": "application/octet-stream"})
    flavor = conn.compute.find_flavor("m1.nano") or next(iter(conn.compute.flavors()))
    s = conn.compute.create_server(name="iscsi-srv", image_id=image["id"],
                                   flavor_id=flavor.id, networks="none")
    return conn.compute.wait_for_server(s, wait=60, interval=0.1)


def _targets(cloud) -> dict[str, int]:
    with cloud.cloud.runtime.activated():
        from pocketstack.volume import iscsi_target

        return iscsi_target.targets()


def _attachment(cloud, volume_id: str) -> dict:
    r = cloud.session().get(cloud.url + "/volume/v3/attachments/detail",
                            params={"volume_id": volume_id, "all_tenants": 1}, headers=MV)
    found = r.json()["attachments"]
    assert len(found) == 1, found
    return found[0]


def _volume_file(cloud, volume_id: str) -> str:
    with cloud.cloud.runtime.activated():
        from pocketstack.volume import backends

        return backends.get("file").path(volume_id)


def _qemu_io(url: str, command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["qemu-io", "-f", "raw", "-c", command, url], capture_output=True,
                          text=True, timeout=60)


def test_attached_volume_is_an_iscsi_lun_with_its_bytes(cloud, conn, server):
    volume = conn.block_storage.create_volume(size=1, name=f"iv-{uuid.uuid4().hex[:6]}")
    volume = conn.block_storage.wait_for_status(volume, "available", **WAIT)
    path = _volume_file(cloud, volume.id)
    with open(path, "r+b") as f:  # what the volume holds before anyone attaches it
        f.write(b"\xab" * 65536)

    conn.compute.create_volume_attachment(server, volume=volume)
    conn.block_storage.wait_for_status(volume, "in-use", **WAIT)
    info = _attachment(cloud, volume.id)["connection_info"]
    iqn = f"iqn.2010-10.org.openstack:volume-{volume.id}"
    assert info["driver_volume_type"] == "iscsi", info
    data = info["data"]
    assert data["target_iqn"] == iqn and data["target_lun"] == 1
    assert data["target_portal"] == f"127.0.0.1:{cloud.iscsi_port}"
    assert data["volume_id"] == volume.id and data["access_mode"] == "rw"
    assert iqn in _targets(cloud)

    url = f"iscsi://{data['target_portal']}/{iqn}/1"
    info = subprocess.run(["qemu-img", "info", url], capture_output=True, text=True,
                          timeout=60)
    assert "virtual size: 1 GiB" in info.stdout, info.stdout + info.stderr
    read = _qemu_io(url, "read -P 0xab 0 64k")
    assert read.returncode == 0 and "Pattern verification failed" not in read.stdout, \
        read.stdout + read.stderr
    written = _qemu_io(url, "write -P 0xcd 1M 64k")
    assert written.returncode == 0, written.stdout + written.stderr
    with open(path, "rb") as f:
        f.seek(1 << 20)
        assert f.read(65536) == b"\xcd" * 65536

    # detach: the target goes with the last attachment
    conn.compute.delete_volume_attachment(server, volume.id)
    conn.block_storage.wait_for_status(volume, "available", **WAIT)
    assert iqn not in _targets(cloud)
    conn.block_storage.delete_volume(volume)
    conn.block_storage.wait_for_delete(volume, **WAIT)
    assert iqn not in _targets(cloud)


def test_a_restarted_tgtd_gets_the_attached_volumes_back(cloud, conn, server):
    kept = conn.block_storage.create_volume(size=1, name="kept")
    loose = conn.block_storage.create_volume(size=1, name="loose")
    for v in (kept, loose):
        conn.block_storage.wait_for_status(v, "available", **WAIT)
    conn.compute.create_volume_attachment(server, volume=kept)
    conn.block_storage.wait_for_status(kept, "in-use", **WAIT)
    with cloud.cloud.runtime.activated():
        from pocketstack.volume import iscsi_target, service

        iscsi_target.stop_daemon()  # tgtd forgets every target
        iscsi_target.export(loose.id, _volume_file(cloud, loose.id))  # a stale export
        service.reexport()  # what the volume service does when it starts
    targets = _targets(cloud)
    assert f"iqn.2010-10.org.openstack:volume-{kept.id}" in targets
    assert f"iqn.2010-10.org.openstack:volume-{loose.id}" not in targets
    conn.compute.delete_volume_attachment(server, kept.id)
    conn.block_storage.wait_for_status(kept, "available", **WAIT)
    for v in (kept, loose):
        conn.block_storage.delete_volume(v)
    assert not [n for n in _targets(cloud) if n.endswith((kept.id, loose.id))]


def test_deleting_an_exported_volume_removes_its_target(cloud, conn):
    """An export the API made without a server (legacy os-initialize_connection) goes with
    the volume."""
    volume = conn.block_storage.create_volume(size=1, name="legacy")
    conn.block_storage.wait_for_status(volume, "available", **WAIT)
    r = conn.block_storage.post(f"/volumes/{volume.id}/action", json={
        "os-initialize_connection": {"connector": {"host": "elsewhere", "ip": "127.0.0.1",
                                                   "initiator": "iqn.1993-08.org.debian:x"}}})
    assert r.status_code == 200, r.text
    info = r.json()["connection_info"]
    assert info["driver_volume_type"] == "iscsi"
    assert info["data"]["target_iqn"] in _targets(cloud)
    conn.block_storage.delete_volume(volume)
    conn.block_storage.wait_for_delete(volume, **WAIT)
    assert info["data"]["target_iqn"] not in _targets(cloud)
