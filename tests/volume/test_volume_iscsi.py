"""File volumes exported over iSCSI by tgt (`[volume] target_helper = tgtadm`), as
cinder's LVM driver does for hosts that cannot open the volume's file: a server's attachment
gets cinder's iscsi connection_info, the target requires the volume's CHAP credentials (an
initiator without them is refused), the LUN carries the volume's bytes both ways (QEMU's
own initiator, qemu-io, reads and writes it), and detach, delete and restarts leave exactly
the targets of attached volumes."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest

from helpers.cloud import free_tgt_port, own_cloud
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


def _accounts(cloud) -> list[str]:
    with cloud.cloud.runtime.activated():
        from pocketstack.volume import iscsi_target

        return iscsi_target._tgtadm("--op", "show", "--mode", "account").split()


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


def _url(data: dict, user: str | None = None, password: str | None = None) -> str:
    """QEMU's iscsi:// URL of the LUN, with CHAP credentials when given."""
    creds = f"{user}%{password}@" if user else ""
    return f"iscsi://{creds}{data['target_portal']}/{data['target_iqn']}/1"


def _qemu_img_info(url: str) -> subprocess.CompletedProcess:
    return subprocess.run(["qemu-img", "info", url], capture_output=True, text=True,
                          timeout=60)


def assert_chap_required(data: dict) -> None:
    """Without the credentials, or with a wrong password, tgt refuses the login; with
    them QEMU opens the LUN."""
    assert data["auth_method"] == "CHAP", data
    user, password = data["auth_username"], data["auth_password"]
    assert len(user) == 20 and len(password) == 16
    for url in (_url(data), _url(data, user, password[::-1]), _url(data, "x" + user, password)):
        refused = _qemu_img_info(url)
        assert refused.returncode != 0 and "Authentication failure" in refused.stderr, \
            refused.stdout + refused.stderr
    opened = _qemu_img_info(_url(data, user, password))
    assert "virtual size: 1 GiB" in opened.stdout, opened.stdout + opened.stderr


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
    assert_chap_required(data)
    # the credentials stay with the volume (cinder's provider_auth), never in its views
    shown = cloud.session().get(cloud.url + f"/volume/v3/volumes/{volume.id}",
                                headers=MV).text
    assert data["auth_password"] not in shown and data["auth_username"] not in shown

    url = _url(data, data["auth_username"], data["auth_password"])
    read = _qemu_io(url, "read -P 0xab 0 64k")
    assert read.returncode == 0 and "Pattern verification failed" not in read.stdout, \
        read.stdout + read.stderr
    written = _qemu_io(url, "write -P 0xcd 1M 64k")
    assert written.returncode == 0, written.stdout + written.stderr
    with open(path, "rb") as f:
        f.seek(1 << 20)
        assert f.read(65536) == b"\xcd" * 65536

    # detach: the target goes with the last attachment, and its CHAP account with it
    assert data["auth_username"] in _accounts(cloud)
    conn.compute.delete_volume_attachment(server, volume.id)
    conn.block_storage.wait_for_status(volume, "available", **WAIT)
    assert iqn not in _targets(cloud)
    assert data["auth_username"] not in _accounts(cloud)
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
    # exported again with the volume's own CHAP credentials, which the attachment holds
    assert_chap_required(_attachment(cloud, kept.id)["connection_info"]["data"])
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
    assert_chap_required(info["data"])
    again = conn.block_storage.post(f"/volumes/{volume.id}/action", json={
        "os-initialize_connection": {"connector": {"host": "other"}}}).json()
    assert again["connection_info"]["data"]["auth_password"] == \
        info["data"]["auth_password"]  # made once, kept with the volume
    conn.block_storage.delete_volume(volume)
    conn.block_storage.wait_for_delete(volume, **WAIT)
    assert info["data"]["target_iqn"] not in _targets(cloud)


def _qmp(sock_path: str, *commands: dict) -> list[dict]:
    """Answers of QEMU's QMP socket to ``commands`` (events skipped)."""
    import json
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(30)
        sock.connect(sock_path)
        stream = sock.makefile("rw")
        stream.readline()  # greeting
        answers = []
        for command in ({"execute": "qmp_capabilities"}, *commands):
            stream.write(json.dumps(command) + "\n")
            stream.flush()
            while "event" in (answer := json.loads(stream.readline())):
                pass
            answers.append(answer)
    return answers[1:]


def _nexus(cloud, iqn: str) -> list[str]:
    """The I_T nexus (session) numbers tgt has on the target now."""
    import re

    with cloud.cloud.runtime.activated():
        from pocketstack.volume import iscsi_target

        out = iscsi_target._tgtadm("--op", "show", "--mode", "target")
    block = re.search(rf"(?ms)^Target \d+: {re.escape(iqn)}$.*?(?=^Target |\Z)", out)
    return re.findall(r"I_T nexus: (\d+)", block.group(0)) if block else []


@pytest.mark.skipif(not shutil.which("qemu-system-x86_64"), reason="needs qemu-system-x86")
def test_in_use_extend_grows_the_lun_under_an_open_session(cloud, conn, server, tmp_path):
    """An attached iSCSI volume extends (3.42): tgt's LUN takes the new size in place, and
    a QEMU that keeps its iSCSI session open (logged in with CHAP) reads it on
    block_resize, as the libvirt driver's blockResize does for a guest."""
    import time

    volume = conn.block_storage.create_volume(size=1, name="grow")
    conn.block_storage.wait_for_status(volume, "available", **WAIT)
    conn.compute.create_volume_attachment(server, volume=volume)
    conn.block_storage.wait_for_status(volume, "in-use", **WAIT)
    data = _attachment(cloud, volume.id)["connection_info"]["data"]
    host, port = data["target_portal"].rsplit(":", 1)
    sock = str(tmp_path / "qmp.sock")
    qemu = subprocess.Popen(
        ["qemu-system-x86_64", "-machine", "none", "-nodefaults", "-display", "none", "-S",
         "-qmp", f"unix:{sock},server=on,wait=off",
         "-object", f"secret,id=chap,data={data['auth_password']}",
         "-blockdev", f"driver=iscsi,transport=tcp,portal={host}:{port},"
                      f"target={data['target_iqn']},lun=1,user={data['auth_username']},"
                      "password-secret=chap,node-name=lun"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # QEMU answers on QMP once it has logged in to the target (seconds under load); a
        # QEMU that gave up says why on its output
        deadline = time.monotonic() + 120
        while qemu.poll() is None and time.monotonic() < deadline:
            try:
                _qmp(sock)
                break
            except OSError:
                time.sleep(0.1)
        assert qemu.poll() is None, qemu.communicate()[0]

        def size() -> int:
            nodes = _qmp(sock, {"execute": "query-named-block-nodes",
                                "arguments": {"flat": True}})[0]["return"]
            return next(n["image"]["virtual-size"] for n in nodes if n["node-name"] == "lun")
        assert size() == 1 << 30
        nexus = _nexus(cloud, data["target_iqn"])
        assert nexus
        r = conn.block_storage.post(f"/volumes/{volume.id}/action",
                                    json={"os-extend": {"new_size": 2}},
                                    headers={"OpenStack-API-Version": "volume 3.42"})
        assert r.status_code == 202, r.text
        deadline = time.monotonic() + 60
        while (got := conn.block_storage.get_volume(volume)).status == "extending" \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (got.status, got.size) == ("in-use", 2), got
        grown = _qmp(sock, {"execute": "block_resize",
                            "arguments": {"node-name": "lun", "size": 2 << 30}})[0]
        assert grown == {"return": {}}, grown
        assert size() == 2 << 30
        assert _nexus(cloud, data["target_iqn"]) == nexus  # the same session all along
        read = _qemu_io(_url(data, data["auth_username"], data["auth_password"]),
                        "read -P 0 2047M 64k")  # the new gigabyte reads as zeros
        assert read.returncode == 0 and "Pattern verification failed" not in read.stdout, \
            read.stdout + read.stderr
    finally:
        qemu.kill()
        qemu.wait(10)
        conn.compute.delete_volume_attachment(server, volume.id)
        conn.block_storage.wait_for_status(volume, "available", **WAIT)
        conn.block_storage.delete_volume(volume)


def test_a_stale_pid_file_never_makes_another_tgtd_ours():
    """After a reboot the pid in <data dir>/volumes/tgt/tgtd.pid may be another cloud's
    tgtd: this cloud neither stops it nor takes it for its own, and starts its own."""
    with own_cloud("iscsi-pid", **{"volume.target_helper": "tgtadm",
                                   "volume.target_port": free_tgt_port()}) as c:
        from pocketstack.volume import iscsi_target

        stranger = subprocess.Popen(["bash", "-c", "exec -a tgtd sleep 300"])
        try:
            with c.cloud.runtime.activated():
                iscsi_target.stop_daemon()  # this cloud's, started with it
                pid_file = os.path.join(c.data_dir, "volumes", "tgt", "tgtd.pid")
                with open(pid_file, "w") as f:
                    f.write(f"{stranger.pid}\n")
                iscsi_target.stop_daemon()
                assert stranger.poll() is None  # not stopped: not ours
                iscsi_target.ensure_daemon()
                assert iscsi_target.targets() == {}  # its own tgtd answers
                ours = int(open(pid_file).read())
                assert ours != stranger.pid
                iscsi_target.stop_daemon()
        finally:
            stranger.kill()
            stranger.wait()
