"""The volume service's rbd backend against the real cluster: volumes are RBD
images, snapshots RBD snapshots, volumes from snapshots, volumes and images copy-on-write
clones, backups cinder's ceph backup driver; over real HTTP (openstacksdk/keystoneauth)."""
from __future__ import annotations

import os
import time
import uuid

import pytest

from helpers import cloud as root
from ceph_helpers import ceph_overrides
from helpers.cloud import own_cloud

GiB = 1 << 30
WAIT = {"wait": 120, "interval": 0.05}


@pytest.fixture(scope="module")
def rcloud(ceph):
    with own_cloud("ceph-volumes", **ceph_overrides(ceph),
                   **{"volume.enabled_backends": ["rbd"]}) as c:
        yield c


@pytest.fixture(scope="module")
def admin_conn(rcloud):
    return rcloud.sdk()


@pytest.fixture(scope="module")
def rados_admin(ceph):
    conn = ceph.admin()
    yield conn
    conn.shutdown()


@pytest.fixture(scope="module")
def vols(ceph, rados_admin):
    return rados_admin.open_ioctx(ceph.names["volume_pool"])


@pytest.fixture(scope="module")
def bkps(ceph, rados_admin):
    return rados_admin.open_ioctx(ceph.names["backup_pool"])


def names(ioctx) -> set[str]:
    import rbd

    return set(rbd.RBD().list(ioctx))


def write(ioctx, name, data: bytes, offset: int = 0):
    import rbd

    with rbd.Image(ioctx, name) as image:
        image.write(data, offset)
        image.flush()


def read(ioctx, name, length: int, offset: int = 0, snapshot=None) -> bytes:
    import rbd

    with rbd.Image(ioctx, name, snapshot=snapshot, read_only=True) as image:
        return image.read(offset, length)


def wait_gone(conn, volume):
    for _ in range(1200):
        if conn.block_storage.find_volume(volume.id, ignore_missing=True) is None:
            return
        time.sleep(0.05)
    raise AssertionError(f"volume {volume.id} was not deleted")


def create(conn, **kwargs):
    volume = conn.block_storage.create_volume(**kwargs)
    return conn.block_storage.wait_for_status(volume, "available", failures=["error"], **WAIT)


def test_create_extend_delete_leaves_no_image(admin_conn, vols, ceph):
    volume = create(admin_conn, size=1, name="plain")
    name = f"volume-{volume.id}"
    assert name in names(vols)
    assert volume.host.endswith("@rbd#rbd")
    import rbd

    with rbd.Image(vols, name, read_only=True) as image:
        assert image.size() == GiB
    admin_conn.block_storage.extend_volume(volume, 2)
    for _ in range(400):
        if admin_conn.block_storage.get_volume(volume).size == 2:
            break
        time.sleep(0.05)
    with rbd.Image(vols, name, read_only=True) as image:
        assert image.size() == 2 * GiB
    admin_conn.block_storage.delete_volume(volume)
    wait_gone(admin_conn, volume)
    assert not any(volume.id in n for n in names(vols))


def test_snapshot_clone_round_trips_bytes(admin_conn, vols):
    import rbd

    volume = create(admin_conn, size=1, name="origin")
    payload = os.urandom(1 << 20)
    write(vols, f"volume-{volume.id}", payload, 4096)
    snap = admin_conn.block_storage.create_snapshot(volume_id=volume.id, name="s1")
    snap = admin_conn.block_storage.wait_for_status(snap, "available", **WAIT)
    with rbd.Image(vols, f"volume-{volume.id}", read_only=True) as image:
        assert image.is_protected_snap(f"snapshot-{snap.id}")
    write(vols, f"volume-{volume.id}", b"\xff" * 4096, 4096)  # after the snapshot

    clone = create(admin_conn, snapshot_id=snap.id, size=2, name="from-snap")
    assert read(vols, f"volume-{clone.id}", len(payload), 4096) == payload
    with rbd.Image(vols, f"volume-{clone.id}", read_only=True) as image:
        assert image.parent_info() == (vols.get_pool_name(), f"volume-{volume.id}",
                                       f"snapshot-{snap.id}")
        assert image.size() == 2 * GiB

    # a volume from a volume: cinder's snapshot + clone
    copy = create(admin_conn, source_volid=volume.id, name="from-volume")
    assert read(vols, f"volume-{copy.id}", 4096, 4096) == b"\xff" * 4096
    with rbd.Image(vols, f"volume-{copy.id}", read_only=True) as image:
        assert image.parent_info()[2] == f"volume-{copy.id}.clone_snap"

    # deleting the snapshot flattens its clone; deleting the source keeps it as .deleted
    admin_conn.block_storage.delete_snapshot(snap)
    for _ in range(600):
        if admin_conn.block_storage.find_snapshot(snap.id, ignore_missing=True) is None:
            break
        time.sleep(0.05)
    with rbd.Image(vols, f"volume-{clone.id}", read_only=True) as image:
        with pytest.raises(rbd.ImageNotFound):
            image.parent_info()
    assert read(vols, f"volume-{clone.id}", len(payload), 4096) == payload
    admin_conn.block_storage.delete_volume(volume)
    wait_gone(admin_conn, volume)
    assert f"volume-{volume.id}.deleted" in names(vols)
    assert read(vols, f"volume-{copy.id}", 4096, 4096) == b"\xff" * 4096
    admin_conn.block_storage.delete_volume(copy)  # the last clone takes its parent along
    admin_conn.block_storage.delete_volume(clone)
    wait_gone(admin_conn, copy)
    wait_gone(admin_conn, clone)
    left = {n for n in names(vols) if any(i in n for i in (volume.id, copy.id, clone.id))}
    assert left == set()


def test_clone_depth_flattens(rcloud, admin_conn, vols):
    import rbd

    from pocketstack.common import config

    depth = config.CONF.volume.rbd_max_clone_depth
    chain = [create(admin_conn, size=1, name="depth-0")]
    for i in range(depth + 1):
        chain.append(create(admin_conn, source_volid=chain[-1].id, name=f"depth-{i + 1}"))

    def has_parent(volume):
        with rbd.Image(vols, f"volume-{volume.id}", read_only=True) as image:
            try:
                image.parent_info()
                return True
            except rbd.ImageNotFound:
                return False

    assert all(has_parent(v) for v in chain[1:depth + 1])
    assert not has_parent(chain[depth + 1])  # past rbd_max_clone_depth: flattened
    for volume in reversed(chain):
        admin_conn.block_storage.delete_volume(volume)
        wait_gone(admin_conn, volume)
    assert not {n for n in names(vols) if any(v.id in n for v in chain)}


def _rbd_image(rcloud, ceph, rados_admin, monkeypatch, size: int):
    """A raw image whose direct_url is an RBD snapshot in the images pool, as glance's rbd
    store makes it (stand-in until the image service's store lands: the image's bytes are
    uploaded to the file store too, and the volume service is told the rbd location)."""
    import rbd

    from pocketstack.clients import image as image_client

    conn = rcloud.sdk()
    image = conn.image.create_image(name=f"rbd-{size}", disk_format="raw",
                                    container_format="bare", data=b"\x01" * 4096)
    pool = ceph.names["image_pool"]
    ioctx = rados_admin.open_ioctx(pool)
    rbd.RBD().create(ioctx, image.id, size, old_format=False)
    with rbd.Image(ioctx, image.id) as img:
        img.write(b"\x01" * 4096, 0)
        img.write(b"\x02" * 4096, size - 4096)
        img.create_snap("snap")
        img.protect_snap("snap")
    url = f"rbd://{rados_admin.get_fsid()}/{pool}/{image.id}/snap"
    original = image_client.ImageClient.get
    urls = getattr(image_client.ImageClient, "_test_urls", {})
    urls[image.id] = (url, size)
    image_client.ImageClient._test_urls = urls

    def get(self, image_id):
        found = original(self, image_id)
        if found is not None and image_id in urls:
            found = dict(found, direct_url=urls[image_id][0], size=urls[image_id][1])
        return found

    monkeypatch.setattr(image_client.ImageClient, "get", get)
    return image, ioctx


def _drop_rbd_image(ioctx, name):
    import rbd

    with rbd.Image(ioctx, name) as img:
        img.unprotect_snap("snap")
        img.remove_snap("snap")
    rbd.RBD().remove(ioctx, name)


def test_volume_from_image_is_a_clone(rcloud, ceph, rados_admin, admin_conn, vols,
                                      monkeypatch):
    import rbd

    timings = {}
    for size in (64 << 20, GiB):
        image, images = _rbd_image(rcloud, ceph, rados_admin, monkeypatch, size)
        start = time.monotonic()
        volume = create(admin_conn, image_id=image.id, size=2, name="from-image")
        timings[size] = time.monotonic() - start
        with rbd.Image(vols, f"volume-{volume.id}", read_only=True) as clone:
            assert clone.parent_info() == (ceph.names["image_pool"], image.id, "snap")
            assert clone.size() == 2 * GiB
            assert clone.read(0, 4096) == b"\x01" * 4096
            assert clone.read(size - 4096, 4096) == b"\x02" * 4096
        assert admin_conn.block_storage.get_volume(volume).is_bootable
        admin_conn.block_storage.delete_volume(volume)
        wait_gone(admin_conn, volume)
        _drop_rbd_image(images, image.id)
    # a clone: no bytes copied, so the time does not grow with the image (16x here)
    assert timings[GiB] < max(4 * timings[64 << 20], 1.0), timings


def test_volume_from_image_elsewhere_copies(rcloud, admin_conn, vols):
    """An image without an rbd location (the file store): its bytes are written in."""
    conn = rcloud.sdk()
    data = os.urandom(3 << 20)
    image = conn.image.create_image(name="file-image", disk_format="raw",
                                    container_format="bare", data=data)
    volume = create(admin_conn, image_id=image.id, size=1, name="copied")
    assert read(vols, f"volume-{volume.id}", len(data)) == data
    import rbd

    with rbd.Image(vols, f"volume-{volume.id}", read_only=True) as img:
        with pytest.raises(rbd.ImageNotFound):
            img.parent_info()
    # and back: volume to image from rbd
    bs = admin_conn.block_storage
    resp = bs.post(f"/volumes/{volume.id}/action", json={"os-volume_upload_image": {
        "image_name": "from-rbd", "disk_format": "raw", "container_format": "bare"}},
        microversion="3.1")
    assert resp.status_code == 202, resp.text
    image_id = resp.json()["os-volume_upload_image"]["image_id"]
    for _ in range(600):
        if conn.image.get_image(image_id).status == "active":
            break
        time.sleep(0.05)
    body = b"".join(conn.image.download_image(image_id, stream=True).iter_content(1 << 20))
    assert body[:len(data)] == data and len(body) == GiB
    admin_conn.block_storage.wait_for_status(volume, "available", **WAIT)
    admin_conn.block_storage.delete_volume(volume)
    wait_gone(admin_conn, volume)


def test_backup_restore_round_trips_and_incremental(admin_conn, vols, bkps):
    bs = admin_conn.block_storage
    volume = create(admin_conn, size=1, name="backed-up")
    first = os.urandom(1 << 20)
    write(vols, f"volume-{volume.id}", first, 0)
    full = bs.create_backup(volume_id=volume.id, name="full")
    full = bs.wait_for_status(full, "available", failures=["error"], **WAIT)
    base = f"volume-{volume.id}.backup.{full.id}"
    assert base in names(bkps)
    assert not full.is_incremental

    second = os.urandom(4096)
    write(vols, f"volume-{volume.id}", second, 512 << 20)
    incr = bs.create_backup(volume_id=volume.id, name="incr", is_incremental=True)
    incr = bs.wait_for_status(incr, "available", failures=["error"], **WAIT)
    assert incr.is_incremental and bs.get_backup(full.id).has_dependent_backups
    assert names(bkps) >= {base}  # the increment went onto the full backup's base
    write(vols, f"volume-{volume.id}", b"\0" * (1 << 20), 0)  # lose the data

    # restore the full one into a new volume, the incremental one over the original
    restored = bs.restore_backup(full.id, name="restored")
    new = bs.wait_for_status(bs.get_volume(restored.volume_id), "available",
                             failures=["error"], **WAIT)
    assert read(vols, f"volume-{new.id}", len(first)) == first
    assert read(vols, f"volume-{new.id}", 4096, 512 << 20) == b"\0" * 4096
    bs.wait_for_status(bs.get_backup(full.id), "available", **WAIT)
    bs.restore_backup(incr.id, volume_id=volume.id)
    bs.wait_for_status(bs.get_volume(volume.id), "available", failures=["error_restoring"],
                       **WAIT)
    assert read(vols, f"volume-{volume.id}", len(first)) == first
    assert read(vols, f"volume-{volume.id}", 4096, 512 << 20) == second

    # the full one cannot go while the incremental one builds on it (cinder's 400)
    resp = bs.delete(f"/backups/{full.id}")
    assert resp.status_code == 400, resp.text
    bs.wait_for_status(bs.get_backup(incr.id), "available", **WAIT)
    for backup in (incr, full):
        bs.delete_backup(backup)
        for _ in range(600):
            if bs.find_backup(backup.id, ignore_missing=True) is None:
                break
            time.sleep(0.05)
    assert base not in names(bkps)
    import rbd

    with rbd.Image(vols, f"volume-{volume.id}", read_only=True) as image:
        assert not [s for s in image.list_snaps() if s["name"].startswith("backup.")]
    for v in (volume, new):
        bs.delete_volume(v)
        wait_gone(admin_conn, v)


def test_connection_info_through_attachments(rcloud, admin_conn, ceph):
    volume = create(admin_conn, size=1, name="attach-me")
    session = rcloud.session()
    connector = {"host": "cmp-1", "ip": "127.0.0.1", "initiator": None, "mode": "rw",
                 "platform": "x86_64", "os_type": "linux", "multipath": False}
    resp = session.post(f"{_volume_url(rcloud)}/attachments",
                        json={"attachment": {"volume_uuid": volume.id,
                                             "connector": connector}},
                        headers={"OpenStack-API-Version": "volume 3.54"})
    assert resp.status_code == 200, resp.text
    info = resp.json()["attachment"]["connection_info"]
    from pocketstack.common import ceph_cluster

    assert info["driver_volume_type"] == "rbd"
    data = info["data"]
    assert data["name"] == f"{ceph.names['volume_pool']}/volume-{volume.id}"
    assert data["hosts"] == ["127.0.0.1"] and len(data["ports"]) == 1
    assert data["auth_enabled"] is True and data["auth_username"] == ceph.names["volume_user"]
    assert data["secret_type"] == "ceph" and data["secret_uuid"]
    assert data["cluster_name"] == "ceph" and data["discard"] is True
    assert data["volume_id"] == volume.id and data["access_mode"] == "rw"
    assert set(data) == {"name", "hosts", "ports", "cluster_name", "auth_enabled",
                         "auth_username", "secret_type", "secret_uuid", "volume_id",
                         "discard", "qos_specs", "access_mode", "encrypted", "cacheable"}
    assert ceph_cluster  # imported for its presence: the cluster module is on main
    attachment_id = resp.json()["attachment"]["id"]
    resp = session.delete(f"{_volume_url(rcloud)}/attachments/{attachment_id}",
                          headers={"OpenStack-API-Version": "volume 3.54"})
    assert resp.status_code == 200, resp.text
    admin_conn.block_storage.wait_for_status(volume, "available", **WAIT)
    admin_conn.block_storage.delete_volume(volume)
    wait_gone(admin_conn, volume)


def _volume_url(rcloud) -> str:
    return rcloud.session().get_endpoint(service_type="block-storage", interface="public")


def test_services_and_pools_show_the_backend(rcloud, ceph):
    session = rcloud.session()
    url = _volume_url(rcloud)
    services = session.get(f"{url}/os-services").json()["services"]
    assert any(s["binary"] == "cinder-volume" and s["host"].endswith("@rbd")
               and s["state"] == "up" for s in services)
    pools = session.get(f"{url}/scheduler-stats/get_pools?detail=true").json()["pools"]
    assert len(pools) == 1 and pools[0]["name"].endswith("@rbd#rbd")
    caps = pools[0]["capabilities"]
    assert caps["volume_backend_name"] == "rbd" and caps["storage_protocol"] == "ceph"
    assert caps["pool_name"] == ceph.names["volume_pool"]
    assert caps["total_capacity_gb"] > 0 and 0 < caps["free_capacity_gb"] <= \
        caps["total_capacity_gb"]
    listed = rcloud.cli("volume", "backend", "pool", "list", "--long", "-f", "json")
    assert listed[0]["Name"].endswith("@rbd#rbd")


def test_audit_finds_orphans_and_bad_input_is_4xx(rcloud, admin_conn, vols):
    import rbd

    from pocketstack.common import db
    from pocketstack.volume import audit

    bs = admin_conn.block_storage
    resp = bs.post("/volumes", json={"volume": {"size": "x"}})
    assert resp.status_code == 400
    resp = bs.post("/volumes", json={"volume": {"size": 1, "snapshot_id": str(uuid.uuid4())}})
    assert resp.status_code == 404
    stray = f"volume-{uuid.uuid4()}"
    rbd.RBD().create(vols, stray, 1 << 20)
    try:
        with rcloud.cloud.runtime.activated(), db.reader() as s:
            found = audit.problems(s)
        assert any(stray in p for p in found), found
    finally:
        rbd.RBD().remove(vols, stray)
    with rcloud.cloud.runtime.activated(), db.reader() as s:
        assert audit.problems(s) == []


def test_unreachable_cluster_is_an_error_with_a_reason(ceph, tmp_path):
    """A cluster whose monitor does not answer: the volume goes to error saying so (no
    500, no volume stuck in creating), and the pool list shows the backend down."""
    import re

    from pocketstack.cloud import Cloud

    with open(ceph.conf) as f:
        text = re.sub(r"(?m)^mon host = .*$", "mon host = v2:127.0.0.1:1", f.read())
    conf = tmp_path / "ceph.conf"
    conf.write_text(text)
    c = Cloud(str(tmp_path / "data"), admin_password=root.ADMIN_PASSWORD, overrides={
        **root.TEST_OVERRIDES, **ceph_overrides(ceph), "ceph.conf": str(conf),
        "ceph.connect_timeout": 1.0, "volume.enabled_backends": ["rbd"]})
    c.start(port=0)
    try:
        handle = root.CloudHandle(c)
        conn = handle.sdk()
        volume = conn.block_storage.create_volume(size=1, name="nowhere")
        volume = conn.block_storage.wait_for_status(volume, "error", **WAIT)
        reason = conn.block_storage.get("/messages", microversion="3.3").json()
        text = str(reason)
        assert "rbd is unavailable" in text and "Ceph" in text, text
        url = handle.session().get_endpoint(service_type="block-storage",
                                            interface="public")
        pools = handle.session().get(f"{url}/scheduler-stats/get_pools?detail=true")
        assert pools.json()["pools"][0]["capabilities"]["backend_state"] == "down"
        conn.block_storage.delete_volume(volume)
        wait_gone(conn, volume)
    finally:
        c.stop()


def test_volume_from_an_image_of_the_rbd_store(ceph, tmp_path, vols):
    """End to end with the image service's rbd store: upload a raw
    image, the volume from it is a clone of its snapshot 'snap'."""
    pytest.importorskip("pocketstack.image.rbd_store",
                        reason="the image service's rbd store is not on this branch yet")
    import rbd

    from pocketstack.cloud import Cloud

    c = Cloud(str(tmp_path / "data"), admin_password=root.ADMIN_PASSWORD, overrides={
        **root.TEST_OVERRIDES, **ceph_overrides(ceph), "volume.enabled_backends": ["rbd"],
        "image.default_store": "rbd", "image.show_image_direct_url": True})
    c.start(port=0)
    try:
        conn = root.CloudHandle(c).sdk()
        data = os.urandom(5 << 20)
        image = conn.image.create_image(name="on-rbd", disk_format="raw",
                                        container_format="bare", data=data)
        image = conn.image.get_image(image.id)
        assert image.direct_url.startswith("rbd://")
        volume = create(conn, image_id=image.id, size=1, name="cow")
        with rbd.Image(vols, f"volume-{volume.id}", read_only=True) as clone:
            assert clone.parent_info() == (ceph.names["image_pool"], image.id, "snap")
            assert clone.read(0, len(data)) == data
        conn.block_storage.delete_volume(volume)
        wait_gone(conn, volume)
        conn.image.delete_image(image)
    finally:
        c.stop()


def test_a_volume_of_2_gib_or_more_backs_up_and_restores(admin_conn, vols):
    """librbd cannot zero 2 GiB in one call: the full backup of a volume with 2 GiB or more
    of nothing written (the README's `volume set --size 2` on an empty volume, then
    `volume backup create`) went to error."""
    bs = admin_conn.block_storage
    volume = create(admin_conn, size=1, name="grown")
    bs.extend_volume(volume, 3)
    for _ in range(1200):
        if bs.get_volume(volume.id).status == "available":
            break
        time.sleep(0.05)
    data = os.urandom(4096)
    write(vols, f"volume-{volume.id}", data, 2 * GiB + (512 << 20))
    backup = bs.create_backup(volume_id=volume.id, name="two-gib-of-zeros")
    backup = bs.wait_for_status(backup, "available", failures=["error"], **WAIT)
    restored = bs.restore_backup(backup.id, name="two-gib-restored")
    new = bs.wait_for_status(bs.get_volume(restored.volume_id), "available",
                             failures=["error"], **WAIT)
    assert new.size == 3
    assert read(vols, f"volume-{new.id}", 4096, 2 * GiB + (512 << 20)) == data
    assert read(vols, f"volume-{new.id}", 4096, 0) == b"\0" * 4096


def test_encrypted_volume_from_an_image_is_luks_in_the_cluster(rcloud, ceph, admin_conn, vols):
    """A volume of a LUKS type from an image: the RBD image is LUKS (no copy-on-write
    clone, no plaintext), and through its key (nova's passphrase: its hex) the payload is
    the image's bytes; qemu-img writes it through librbd."""
    import json
    import subprocess

    bs = admin_conn.block_storage
    vtype = bs.create_type(name=f"luks-{uuid.uuid4().hex[:6]}")
    bs.create_type_encryption(vtype, provider="luks", cipher="aes-xts-plain64", key_size=256,
                              control_location="front-end")
    data = os.urandom(1 << 20) + b"the image's last words"
    image = admin_conn.image.create_image(name="luks-src", disk_format="raw",
                                          container_format="bare", data=data)
    volume = create(admin_conn, image_id=image.id, size=1, volume_type=vtype.id,
                    name="luks")
    try:
        name = f"volume-{volume.id}"
        head = read(vols, name, 4 << 20)
        assert head[:6] == b"LUKS\xba\xbe" and data[:4096] not in head
        key_id = bs.get(f"/volumes/{volume.id}", microversion="3.64").json()["volume"][
            "encryption_key_id"]
        key = admin_conn.session.get(f"/v1/secrets/{key_id}/payload", endpoint_filter={
            "service_type": "key-manager"}, headers={"Accept": "application/octet-stream"}
            ).content
        target = f"rbd:{ceph.names['volume_pool']}/{name}:id=admin:conf={ceph.conf}"
        read_end, write_end = os.pipe()
        os.write(write_end, key.hex().encode())
        os.close(write_end)
        try:
            info = subprocess.run(
                ["qemu-img", "info", "--output=json", "--object",
                 f"secret,id=sec0,file=/dev/fd/{read_end}", "--image-opts",
                 f"driver=luks,key-secret=sec0,file.driver=rbd,file.filename={target}"],
                check=True, pass_fds=(read_end,), capture_output=True, text=True).stdout
        finally:
            os.close(read_end)
        assert 0 < GiB - json.loads(info)["virtual-size"] <= 16 << 20
        # the payload starts after the header: find the image's bytes through the key
        # by writing the decrypted start out (qemu-img dd)
        out = os.path.join(rcloud.data_dir, f"plain-{volume.id}")
        read_end, write_end = os.pipe()
        os.write(write_end, key.hex().encode())
        os.close(write_end)
        try:
            subprocess.run(["qemu-img", "dd", "--object",
                            f"secret,id=sec0,file=/dev/fd/{read_end}", "--image-opts",
                            f"if=driver=luks,key-secret=sec0,file.driver=rbd,"
                            f"file.filename={target}",
                            "-O", "raw", f"of={out}", "bs=1M", "count=2"],
                           check=True, pass_fds=(read_end,), capture_output=True)
            with open(out, "rb") as f:
                assert f.read(len(data)) == data
        finally:
            os.close(read_end)
            if os.path.exists(out):
                os.unlink(out)
    finally:
        bs.delete_volume(volume)
        wait_gone(admin_conn, volume)
        admin_conn.image.delete_image(image)
        bs.delete_type(vtype)
