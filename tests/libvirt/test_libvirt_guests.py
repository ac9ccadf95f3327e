"""Real guests: the tiny guest booted under libvirt/QEMU (software emulation)
through the cloud's API, proving from its own serial console what the cloud gave it.

The test cloud gets one libvirt compute host (lvt-<random>) next to its simulated ones,
with this host's guest networking agent (bridge, qdhcp namespace, dnsmasq, metadata
proxy) serving it; the tiny image carries hypervisor_type=qemu, so the scheduler's
ImagePropertiesFilter sends it there. Needs root, libvirtd on qemu:///system, QEMU,
qemu-img, the Debian cloud kernel, busybox-static, dnsmasq, nftables and iproute2
(`make libvirt`); skips with the reason otherwise. Everything is removed in finally
blocks: servers, networks, images, the compute service record, the agent's bridges.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid

import pytest

from helpers.cloud import free_tgt_port, wait_for
from libvirt_helpers import (BOOT_TIMEOUT, GUEST_TOOLS, NFT_TABLE, console,
                             real_guests_missing)

SKIP = real_guests_missing(GUEST_TOOLS)
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")


def status(conn, server_id) -> str | None:
    server = conn.compute.get_server(server_id)
    return None if server.task_state else server.status


def instance_dir(real_host, server_id) -> str:
    return os.path.join(real_host.driver.instances_path, server_id)


def test_boot_lifecycle_and_delete_through_the_cli(cloud, real_host, tiny_image, member,
                                                   tmp_path):
    """The real-guest flow: the console shows the uuid, hostname and the same address the
    API lists, the metadata service and the config drive answered, the user data ran;
    stop/start/reboot; delete leaves no domain, disk or tap."""
    user, conn = member
    # setup through the SDK (each CLI call costs seconds); the server's flow through the CLI
    net = f"lvt-net-{uuid.uuid4().hex[:4]}"
    network = conn.network.create_network(name=net)
    conn.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.77.0.0/26")
    conn.compute.create_keypair(name="lvt-k1", public_key=_public_key())
    user_data = tmp_path / "hello.sh"
    user_data.write_text("#!/bin/sh\necho hello from user data\n")
    server = cloud.cli("server", "create", "--flavor", "m1.nano", "--image", tiny_image.name,
                       "--network", net, "--key-name", "lvt-k1", "--user-data",
                       str(user_data), "--config-drive", "true", "--wait", "tiny1",
                       "-f", "json", user=user)
    sid = server["id"]
    assert server["status"] == "ACTIVE"
    address = re.search(r"(\d+\.\d+\.\d+\.\d+)", str(server["addresses"])).group(1)

    wait_for(lambda: "pocketstack-tiny: up" in console(conn, sid), BOOT_TIMEOUT,
             "the guest to finish booting")
    log = cloud.cli("console", "log", "show", "tiny1", user=user)
    assert f"eth0 leased {address}/26" in log
    assert f"config-drive /dev/sr0 uuid={sid} hostname=tiny1" in log
    assert f"metadata-service uuid={sid} hostname=tiny1" in log
    assert "key=lvt-k1" in log
    assert "hello from user data" in log and "user-data exited 0" in log
    domain = f"instance-{sid[:8]}"
    assert domain in real_host.domain_names()
    tap = "tap" + conn.network.ports(device_id=sid).__next__().id[:11]
    assert os.path.exists(f"/sys/class/net/{tap}")

    cloud.cli("server", "stop", "tiny1", user=user)
    wait_for(lambda: status(conn, sid) == "SHUTOFF", 90, "SHUTOFF")
    assert real_host.driver.get_power_state(sid) == 4
    cloud.cli("server", "start", "tiny1", user=user)
    wait_for(lambda: status(conn, sid) == "ACTIVE", 90, "ACTIVE after start")
    # A soft reboot presses the power button: the guest must be up to hear it (else the
    # reboot falls back to a hard one after [libvirt] shutdown_timeout, as nova's does).
    wait_for(lambda: console(conn, sid).count("pocketstack-tiny: up") >= 2, BOOT_TIMEOUT,
             "the guest up again after start")
    cloud.cli("server", "reboot", "--wait", "tiny1", user=user)
    assert status(conn, sid) == "ACTIVE"
    log = wait_for(lambda: (lambda out: out if out.count("pocketstack-tiny: up") >= 3
                            else None)(console(conn, sid)), BOOT_TIMEOUT,
                   "the guest up a third time (start, reboot)")
    assert log.count("power button pressed, powering off") >= 2  # stop, soft reboot

    cloud.cli("server", "delete", "--wait", "tiny1", user=user)
    assert domain not in real_host.domain_names()
    assert not os.path.exists(instance_dir(real_host, sid))
    assert not os.path.exists(f"/sys/class/net/{tap}")


def test_corrupt_image_ends_in_error_and_leaves_nothing(cloud, real_host, member):
    from pocketstack.common import config

    user, conn = member
    admin = cloud.sdk()
    # The image service now refuses such bytes at upload; a cloud that has the check off
    # (or images uploaded before it) can still hand one to the hypervisor.
    config.CONF.set_override("require_image_format_match", False, group="image")
    try:
        image = admin.image.create_image(
            name=f"lvt-corrupt-{uuid.uuid4().hex[:6]}", disk_format="qcow2",
            container_format="bare", visibility="public", hypervisor_type="qemu",
            data=b"QFI\xfb" + os.urandom(4096))
    finally:
        config.CONF.clear_override("require_image_format_match", group="image")
    try:
        server = conn.compute.create_server(name="lvt-corrupt", image_id=image.id,
                                            flavor_id="42", networks="none")
        server = conn.compute.wait_for_server(server, status="ERROR", failures=["ACTIVE"],
                                              interval=0.2, wait=120)
        assert server.fault and server.fault.get("message"), server
        assert real_host.driver.get_power_state(server.id) is None
        assert not os.path.exists(instance_dir(real_host, server.id))
        assert f"instance-{server.id[:8]}" not in real_host.domain_names()
        conn.compute.delete_server(server)
    finally:
        admin.image.delete_image(image, ignore_missing=True)


def test_guests_on_one_network_reach_each_other_not_another(cloud, real_host, tiny_image,
                                                             member):
    """Two guests on one network ping each other (the default group admits its members);
    a guest on another network is out of reach. The pings run in the guest's user data."""
    import base64

    user, conn = member
    nets = []
    for cidr in ("10.78.1.0/28", "10.78.2.0/28"):
        net = conn.network.create_network(name=f"lvt-ping-{uuid.uuid4().hex[:4]}")
        conn.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr)
        nets.append(net)

    def boot(net, user_data=None):
        kwargs = {"user_data": base64.b64encode(user_data.encode()).decode()} \
            if user_data else {}
        return conn.compute.create_server(name=f"lvt-ping-{uuid.uuid4().hex[:4]}",
                                          image_id=tiny_image.id, flavor_id="42",
                                          networks=[{"uuid": net.id}], **kwargs)

    def address(server):
        server = conn.compute.wait_for_server(server, interval=0.2, wait=BOOT_TIMEOUT)
        return next(iter(server.addresses.values()))[0]["addr"]

    a, c = boot(nets[0]), boot(nets[1])
    a_ip, c_ip = address(a), address(c)
    wait_for(lambda: f"leased {a_ip}/" in console(conn, a.id), BOOT_TIMEOUT, "A's lease")
    script = (f"#!/bin/sh\n"
              f"ping -c 3 -W 2 {a_ip} >/dev/null && echo PING-A-OK || echo PING-A-FAILED\n"
              f"ping -c 2 -W 2 {c_ip} >/dev/null && echo PING-C-OK || echo PING-C-FAILED\n")
    b = boot(nets[0], script)
    address(b)
    log = wait_for(lambda: (lambda out: out if "user-data exited" in out else None)(
        console(conn, b.id)), BOOT_TIMEOUT, "B's user data")
    assert "PING-A-OK" in log, log
    assert "PING-C-FAILED" in log, log
    for server in (a, b, c):
        conn.compute.delete_server(server)
    for server in (a, b, c):
        conn.compute.wait_for_delete(server, interval=0.2, wait=60)


def test_guest_behind_a_router_gets_its_metadata_without_a_config_drive(
        cloud, real_host, tiny_image, member):
    """A subnet with a router (the usual tenant layout): DHCP routes 169.254.169.254 to
    the router, whose namespace's metadata proxy answers; the guest, with no config
    drive, gets its uuid, key and user data from the metadata service."""
    import base64

    user, conn = member
    net = conn.network.create_network(name=f"lvt-routed-{uuid.uuid4().hex[:4]}")
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4,
                                        cidr="10.78.3.0/28")
    router = conn.network.create_router(name=f"lvt-r-{uuid.uuid4().hex[:4]}")
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    key = conn.compute.create_keypair(name=f"lvt-k-{uuid.uuid4().hex[:4]}",
                                      public_key=_public_key())
    server = conn.compute.create_server(
        name="routed1", image_id=tiny_image.id, flavor_id="42", key_name=key.name,
        networks=[{"uuid": net.id}],
        user_data=base64.b64encode(b"#!/bin/sh\necho routed user data\n").decode())
    try:
        conn.compute.wait_for_server(server, interval=0.2, wait=BOOT_TIMEOUT)
        log = wait_for(lambda: (lambda out: out if "pocketstack-tiny: up" in out else None)(
            console(conn, server.id)), BOOT_TIMEOUT, "the guest to finish booting")
        assert "config-drive none" in log, log
        facts = re.search(r"metadata-service (.*)", log)
        assert facts and f"uuid={server.id} hostname=routed1" in facts.group(1), log
        assert f"key={key.name}" in facts.group(1), log
        assert "routed user data" in log and "user-data exited 0" in log, log
    finally:
        conn.compute.delete_server(server)
        conn.compute.wait_for_delete(server, interval=0.2, wait=60)
        conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
        conn.network.delete_router(router)


def last_console_line(conn, server_id, what: str) -> str:
    """The rest of the guest's latest "pocketstack-tiny: <what> ..." line."""
    lines = [line for line in console(conn, server_id).splitlines()
             if line.startswith(f"pocketstack-tiny: {what} ")]
    return lines[-1].split(" ", 2)[2] if lines else ""


def nft_listing() -> str:
    return "".join(subprocess.run(["nft", "list", "table", family, NFT_TABLE],
                                  capture_output=True, text=True).stdout
                   for family in ("inet", "bridge"))


def test_interface_hot_plug_shows_in_the_guest_and_leaves_nothing(cloud, real_host,
                                                                  tiny_image, member):
    """`openstack server add port`: the guest sees a new NIC and leases the port's
    address on it; `server remove port`: the NIC leaves the guest, and its tap and
    nftables rules leave the host."""
    user, conn = member
    nets = []
    for cidr in ("10.78.3.0/28", "10.78.4.0/28"):
        net = conn.network.create_network(name=f"lvt-hot-{uuid.uuid4().hex[:4]}")
        conn.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr)
        nets.append(net)
    name = f"lvt-hot-{uuid.uuid4().hex[:4]}"
    server = conn.compute.create_server(name=name, image_id=tiny_image.id, flavor_id="42",
                                        networks=[{"uuid": nets[0].id}])
    port = conn.network.create_port(network_id=nets[1].id)
    address = port.fixed_ips[0]["ip_address"]
    tap, chain = "tap" + port.id[:11], "in_" + port.id.replace("-", "")
    try:
        conn.compute.wait_for_server(server, interval=0.2, wait=BOOT_TIMEOUT)
        wait_for(lambda: "pocketstack-tiny: up" in console(conn, server.id), BOOT_TIMEOUT,
                 "the guest to finish booting")
        assert last_console_line(conn, server.id, "net-devices").split() == ["eth0", "lo"]

        cloud.cli("server", "add", "port", name, port.id, user=user)
        wait_for(lambda: f"eth1 leased {address}/28" in console(conn, server.id), 60,
                 "the guest to lease the new port's address on eth1")
        assert last_console_line(conn, server.id, "net-devices").split() == \
            ["eth0", "eth1", "lo"]
        assert os.path.exists(f"/sys/class/net/{tap}")
        assert chain in nft_listing()
        assert conn.network.get_port(port.id).device_id == server.id

        cloud.cli("server", "remove", "port", name, port.id, user=user)
        wait_for(lambda: last_console_line(conn, server.id, "net-devices").split()
                 == ["eth0", "lo"], 60, "eth1 to leave the guest")
        wait_for(lambda: not os.path.exists(f"/sys/class/net/{tap}"), 30, "the tap to go")
        wait_for(lambda: chain not in nft_listing(), 30, "the port's rules to go")
        assert not conn.network.get_port(port.id).device_id  # the user's port stays
    finally:
        conn.compute.delete_server(server, ignore_missing=True)
        conn.compute.wait_for_delete(server, interval=0.2, wait=60)
        conn.network.delete_port(port, ignore_missing=True)
        for net in nets:
            conn.network.delete_network(net, ignore_missing=True)


@pytest.fixture(scope="module")
def plain_guest(cloud, real_host, tiny_image, member):
    """A tiny guest without networks (volumes and power sync need none)."""
    user, conn = member
    server = conn.compute.create_server(name="lvt-plain", image_id=tiny_image.id,
                                        flavor_id="42", networks="none")
    server = conn.compute.wait_for_server(server, interval=0.2, wait=BOOT_TIMEOUT)
    wait_for(lambda: "pocketstack-tiny: up" in console(conn, server.id), BOOT_TIMEOUT,
             "the guest to finish booting")
    yield server
    conn.compute.delete_server(server, ignore_missing=True)


def last_block_devices(conn, server_id) -> str:
    lines = [line for line in console(conn, server_id).splitlines()
             if line.startswith("pocketstack-tiny: block-devices ")]
    return lines[-1].split(" ", 2)[2] if lines else ""


def test_volume_hot_plug_shows_in_the_guest(cloud, real_host, member, plain_guest):
    user, conn = member
    volume = conn.block_storage.create_volume(size=1, name="lvt-data1")
    conn.block_storage.wait_for_status(volume, "available", interval=0.2, wait=60)
    try:
        conn.compute.create_volume_attachment(plain_guest, volume_id=volume.id)
        conn.block_storage.wait_for_status(volume, "in-use", interval=0.2, wait=60)
        wait_for(lambda: "vdb" in last_block_devices(conn, plain_guest.id).split(), 60,
                 "the guest to see vdb")
        assert "vdb" in real_host.driver.devices(plain_guest.id)["disks"]
        # in-use extend (volume 3.42): QEMU's disk grows with the volume
        r = conn.block_storage.post(f"/volumes/{volume.id}/action",
                                    json={"os-extend": {"new_size": 2}},
                                    headers={"OpenStack-API-Version": "volume 3.42"})
        assert r.status_code == 202, r.text
        dom = real_host.driver._dom(plain_guest.id)
        wait_for(lambda: dom.blockInfo("vdb")[0] == 2 << 30, 60,
                 "QEMU to see vdb at 2 GiB")
        conn.compute.delete_volume_attachment(plain_guest, volume.id)
        conn.block_storage.wait_for_status(volume, "available", interval=0.2, wait=60)
        wait_for(lambda: "vdb" not in last_block_devices(conn, plain_guest.id).split(), 60,
                 "vdb to leave the guest")
        assert "vdb" not in real_host.driver.devices(plain_guest.id)["disks"]
    finally:
        conn.block_storage.delete_volume(volume, ignore_missing=True)


@pytest.mark.skipif(not shutil.which("tgtd"), reason="iSCSI exports need tgt (make ceph)")
def test_iscsi_volume_hot_plug_shows_in_the_guest(cloud, real_host, member, plain_guest):
    """With `[volume] target_helper = tgtadm` the file volume is an iSCSI LUN of tgt that
    requires CHAP; QEMU's own initiator logs in with the credentials of connection_info
    (a private libvirt secret of usage iscsi): the guest sees vdb all the same, and the
    secret goes with the detach."""
    from pocketstack.common import config
    from pocketstack.volume import iscsi_target

    user, conn = member
    port = free_tgt_port()
    config.CONF.set_override("target_helper", "tgtadm", group="volume")
    config.CONF.set_override("target_port", port, group="volume")
    volume = conn.block_storage.create_volume(size=1, name="lvt-iscsi")
    try:
        conn.block_storage.wait_for_status(volume, "available", interval=0.2, wait=60)
        conn.compute.create_volume_attachment(plain_guest, volume_id=volume.id)
        conn.block_storage.wait_for_status(volume, "in-use", interval=0.2, wait=60)
        iqn = iscsi_target.iqn(volume.id)
        assert real_host.driver.devices(plain_guest.id)["disks"]["vdb"] == f"{iqn}/1"
        wait_for(lambda: "vdb" in last_block_devices(conn, plain_guest.id).split(), 60,
                 "the guest to see the iSCSI volume as vdb")
        lv, lconn = real_host.driver.host.libvirt, real_host.driver.host.conn()
        secret = lconn.secretLookupByUsage(lv.VIR_SECRET_USAGE_TYPE_ISCSI, f"{iqn}/1")
        xml = real_host.driver.host.lookup(plain_guest.id).XMLDesc(0)
        assert f"<secret type='iscsi' uuid='{secret.UUIDString()}'/>" in xml, xml
        conn.compute.delete_volume_attachment(plain_guest, volume.id)
        conn.block_storage.wait_for_status(volume, "available", interval=0.2, wait=60)
        wait_for(lambda: "vdb" not in last_block_devices(conn, plain_guest.id).split(), 60,
                 "vdb to leave the guest")
        with pytest.raises(lv.libvirtError):  # the CHAP secret went with the disk
            lconn.secretLookupByUsage(lv.VIR_SECRET_USAGE_TYPE_ISCSI, f"{iqn}/1")
        assert iqn not in iscsi_target.targets()
    finally:
        conn.block_storage.delete_volume(volume, ignore_missing=True)
        iscsi_target.stop_daemon()
        for name in ("target_helper", "target_port"):
            config.CONF.clear_override(name, group="volume")


def test_snapshot_then_rebuild_from_it(cloud, real_host, member, plain_guest, tiny_image):
    """The snapshot holds the root disk as qcow2 and inherits the kernel, ramdisk and
    hypervisor_type, so the guest rebuilt from it boots again."""
    user, conn = member
    admin = cloud.sdk()
    image = conn.compute.create_server_image(plain_guest, name="lvt-snap", wait=True,
                                             timeout=120)
    try:
        image = admin.image.get_image(image)
        assert image.status == "active" and image.disk_format == "qcow2"
        assert (image.kernel_id, image.ramdisk_id) == (tiny_image.kernel_id,
                                                       tiny_image.ramdisk_id)
        assert image.hypervisor_type == "qemu"
        wait_for(lambda: status(conn, plain_guest.id) == "ACTIVE", 60, "snapshot done")
        conn.compute.rebuild_server(plain_guest, image=image.id)
        wait_for(lambda: status(conn, plain_guest.id) == "ACTIVE", BOOT_TIMEOUT,
                 "ACTIVE after rebuild")
        wait_for(lambda: "pocketstack-tiny: up" in console(conn, plain_guest.id),
                 BOOT_TIMEOUT, "the rebuilt guest to boot")
    finally:
        admin.image.delete_image(image, ignore_missing=True)


GIB_SECTORS = 1024 ** 3 // 512


def booted_with(conn, server_id) -> tuple[int, int] | None:
    """(cpus, sectors of vda) of the guest's latest boot once that boot is up."""
    out = console(conn, server_id)
    start = out.rfind("pocketstack-tiny: hardware ")
    match = re.match(r"pocketstack-tiny: hardware cpus=(\d+) .*vda=(\d+)", out[start:])
    if start < 0 or not match or "pocketstack-tiny: up" not in out[start:]:
        return None
    return int(match.group(1)), int(match.group(2))


def boots(conn, server_id) -> int:
    return console(conn, server_id).count("pocketstack-tiny: hardware ")


def wait_booted(conn, server_id, expected: tuple[int, int], what: str,
                count: int | None = None) -> None:
    """Until the latest boot is up with ``expected``; with ``count``, only once the
    console shows that many boots (a console can start with an older boot's lines)."""
    try:
        wait_for(lambda: (count is None or boots(conn, server_id) == count)
                 and booted_with(conn, server_id) == expected, BOOT_TIMEOUT, what)
    except AssertionError as error:  # say what the guest showed instead
        tail = "\n".join(console(conn, server_id).splitlines()[-12:])
        raise AssertionError(f"{error}; the console ends:\n{tail}") from None


def test_cold_resize_revert_and_confirm(cloud, real_host, member, plain_guest):
    """Resize on the guest's own host: the guest boots with the new flavor's vCPUs and a
    root disk grown to it; revert brings the old guest back (1 vCPU, 1 GiB); confirm
    keeps the new one and drops what was kept. A cold migration finds no other host of
    real guests (simulated hosts cannot take its disks): the guest stays, running."""

    user, conn = member
    admin = cloud.sdk()
    sid = plain_guest.id
    kept = instance_dir(real_host, sid) + "_resize"
    admin.compute.migrate_server(plain_guest)
    wait_for(lambda: (lambda s: s.status == "ACTIVE" and s.task_state is None)(
        admin.compute.get_server(sid)), 60, "the migration to give up")
    assert admin.compute.get_server(sid).hypervisor_hostname == real_host.name
    assert real_host.driver.get_power_state(sid) == 1
    flavor = admin.compute.create_flavor(name=f"lvt-resize-{uuid.uuid4().hex[:4]}", ram=256,
                                         vcpus=2, disk=2)
    try:
        wait_for(lambda: booted_with(conn, sid), BOOT_TIMEOUT, "the guest up")
        assert booted_with(conn, sid) == (1, GIB_SECTORS)
        for finish in ("revert", "confirm"):
            conn.compute.resize_server(plain_guest, flavor.id)
            wait_for(lambda: status(conn, sid) == "VERIFY_RESIZE", BOOT_TIMEOUT,
                     "VERIFY_RESIZE")
            assert os.path.isdir(kept)
            assert real_host.driver.host.lookup(sid).info()[1:4] == [256 * 1024,
                                                                     256 * 1024, 2]
            if finish == "revert":
                # the guest itself saw it (the confirm round skips this wait: time)
                wait_booted(conn, sid, (2, 2 * GIB_SECTORS),
                            "the resized guest up with 2 vCPUs and a 2 GiB root disk")
                # the resized guest's console continued the old one: the old guest's
                # console, restored, shows as many boots once it booted again
                count = boots(conn, sid)
                conn.compute.revert_server_resize(plain_guest)
                wait_for(lambda: status(conn, sid) == "ACTIVE", 60, "ACTIVE after revert")
                wait_booted(conn, sid, (1, GIB_SECTORS), "the old guest up again", count)
            else:
                conn.compute.confirm_server_resize(plain_guest)
                wait_for(lambda: status(conn, sid) == "ACTIVE", 60, "ACTIVE after confirm")
            assert not os.path.isdir(kept)
        server = conn.compute.get_server(sid)
        assert (server.flavor.original_name or server.flavor.id) == flavor.name
        assert real_host.driver.get_power_state(sid) == 1
    finally:
        admin.compute.delete_flavor(flavor, ignore_missing=True)


def test_killed_qemu_shows_shutoff(cloud, real_host, member, plain_guest):
    """Power-state sync: the hypervisor is the truth for a guest that died on its own."""
    user, conn = member
    pid_file = f"/run/libvirt/qemu/instance-{plain_guest.id[:8]}.pid"
    with open(pid_file) as f:
        os.kill(int(f.read().strip()), 9)
    wait_for(lambda: status(conn, plain_guest.id) == "SHUTOFF", 30,
             "SHUTOFF after the QEMU process was killed")
    conn.compute.delete_server(plain_guest)
    conn.compute.wait_for_delete(plain_guest, interval=0.2, wait=60)
    assert not os.path.exists(instance_dir(real_host, plain_guest.id))


def _public_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH,
                            serialization.PublicFormat.OpenSSH).decode() + " lvt@test"


LUKS_SCRIPT = """#!/bin/sh
i=0
while [ ! -e /sys/block/vdb ] && [ $i -lt 240 ]; do sleep 1; i=$((i+1)); done
[ -b /dev/vdb ] || mknod /dev/vdb b $(tr ':' ' ' < /sys/block/vdb/dev)
printf '%s' '{marker}' > /tmp/marker
dd if=/tmp/marker of=/dev/vdb bs=512 seek=2048 conv=fsync 2>/dev/null
echo 3 > /proc/sys/vm/drop_caches
echo "luks-readback $(dd if=/dev/vdb bs=512 skip=2048 count=1 2>/dev/null | head -c {length})"
echo "luks-sectors $(cat /sys/block/vdb/size)"
"""


def _decrypted(path: str, key: bytes, offset: int, length: int) -> bytes:
    """``length`` bytes at ``offset`` of a LUKS file's payload, opened with nova's
    passphrase (the key's hex) through a pipe."""
    out = path + ".plain"
    read_end, write_end = os.pipe()
    os.write(write_end, key.hex().encode())
    os.close(write_end)
    try:
        subprocess.run(["qemu-img", "dd", "--object",
                        f"secret,id=sec0,file=/dev/fd/{read_end}", "--image-opts",
                        f"if=driver=luks,key-secret=sec0,file.filename={path}", "-O", "raw",
                        f"of={out}", "bs=1M", f"count={(offset + length) // (1 << 20) + 1}"],
                       check=True, pass_fds=(read_end,), capture_output=True)
        with open(out, "rb") as f:
            f.seek(offset)
            return f.read(length)
    finally:
        os.close(read_end)
        if os.path.exists(out):
            os.unlink(out)


def test_encrypted_volume_is_luks_under_the_guest(cloud, real_host, tiny_image, member):
    """A volume of a LUKS type (cinder's volume type encryption, its key from the key
    manager) attached to a real guest through QEMU's native LUKS: the guest writes a
    marker to vdb and reads it back; the volume's file holds LUKS bytes only (the marker
    is not in it, but is there through the key), the guest's disk is the volume less the
    LUKS header (also once grown in use), the key sits in an ephemeral private libvirt
    secret of usage volume while attached (in no file of the instance), defined again
    when the server starts without it (libvirtd restarted), and goes with the detach."""
    import base64
    import xml.etree.ElementTree as ET

    import libvirt

    user, conn = member
    admin = cloud.sdk()
    vtype = admin.block_storage.create_type(name=f"lvt-luks-{uuid.uuid4().hex[:6]}")
    admin.block_storage.create_type_encryption(
        vtype, provider="luks", cipher="aes-xts-plain64", key_size=256,
        control_location="front-end")
    marker = f"pocketstack-luks-marker-{uuid.uuid4().hex}"
    script = LUKS_SCRIPT.format(marker=marker, length=len(marker))
    server = volume = None
    lv = real_host.driver.host.conn()

    def our_secrets():
        return [s for s in lv.listAllSecrets()
                if s.usageType() == libvirt.VIR_SECRET_USAGE_TYPE_VOLUME
                and volume.id in (s.usageID() or "")]
    try:
        volume = conn.block_storage.create_volume(size=1, name="lvt-luks", volume_type=vtype.id)
        volume = conn.block_storage.wait_for_status(volume, "available", interval=0.2, wait=60)
        assert volume.is_encrypted
        session = cloud.user_session(user)
        key_id = session.get(f"/volumes/{volume.id}", endpoint_filter={
            "service_type": "block-storage"}, headers={"OpenStack-API-Version":
                                                        "volume 3.64"}).json()["volume"][
            "encryption_key_id"]
        key = session.get(f"/v1/secrets/{key_id}/payload",
                          endpoint_filter={"service_type": "key-manager"},
                          headers={"Accept": "application/octet-stream"}).content
        path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume.id}")
        with open(path, "rb") as f:
            assert f.read(6) == b"LUKS\xba\xbe"

        server = conn.compute.create_server(
            name="lvt-luks", image_id=tiny_image.id, flavor_id="42", networks="none",
            config_drive=True, user_data=base64.b64encode(script.encode()).decode())
        server = conn.compute.wait_for_server(server, interval=0.2, wait=BOOT_TIMEOUT)
        conn.compute.create_volume_attachment(server, volume_id=volume.id)
        conn.block_storage.wait_for_status(volume, "in-use", interval=0.2, wait=60)

        secrets = our_secrets()
        assert len(secrets) == 1
        secret_xml = secrets[0].XMLDesc(0)
        assert "ephemeral='yes'" in secret_xml and "private='yes'" in secret_xml
        with pytest.raises(libvirt.libvirtError):
            secrets[0].value()  # private: libvirt never gives it back
        domain = ET.fromstring(real_host.driver._dom(server.id).XMLDesc(0))
        disk = next(d for d in domain.iter("disk") if d.findtext("serial") == volume.id)
        encryption = disk.find("encryption")
        assert encryption.get("format") == "luks"
        assert encryption.find("secret").attrib == {"type": "passphrase",
                                                    "uuid": secrets[0].UUIDString()}

        log = wait_for(lambda: (lambda out: out if "luks-sectors" in out else None)(
            console(conn, server.id)), BOOT_TIMEOUT, "the guest to write to vdb")
        assert f"luks-readback {marker}" in log, log
        sectors = int(re.search(r"luks-sectors (\d+)", log).group(1))
        header = (1 << 30) - sectors * 512
        assert 0 < header <= 16 << 20, sectors  # the guest's disk: the volume less its header
        print(f"\nLUKS header {header} bytes; the guest sees {sectors * 512} bytes")

        with open(path, "rb") as f:
            data = f.read()
        assert marker.encode() not in data
        assert _decrypted(path, key, 2048 * 512, len(marker)) == marker.encode()
        for root, _, files in os.walk(instance_dir(real_host, server.id)):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    content = f.read()
                assert key.hex().encode() not in content and key not in content, name

        # libvirtd forgets ephemeral secrets when it restarts: a start defines it again
        conn.compute.stop_server(server)
        conn.compute.wait_for_server(server, status="SHUTOFF", interval=0.2, wait=120)
        our_secrets()[0].undefine()
        conn.compute.start_server(server)
        conn.compute.wait_for_server(server, interval=0.2, wait=BOOT_TIMEOUT)
        wait_for(lambda: console(conn, server.id).count("luks-sectors") >= 2, BOOT_TIMEOUT,
                 "the guest, started again, to read vdb")
        assert console(conn, server.id).count(f"luks-readback {marker}") >= 2
        assert len(our_secrets()) == 1

        # in-use extend: the guest's disk grows to the new size less the header, the
        # volume's file to the new size exactly
        r = conn.block_storage.post(f"/volumes/{volume.id}/action",
                                    json={"os-extend": {"new_size": 2}},
                                    headers={"OpenStack-API-Version": "volume 3.42"})
        assert r.status_code == 202, r.text
        dom = real_host.driver._dom(server.id)
        wait_for(lambda: dom.blockInfo("vdb")[0] == (2 << 30) - header, 60,
                 "QEMU to see vdb at 2 GiB less the LUKS header")
        assert os.path.getsize(path) == 2 << 30

        conn.compute.delete_volume_attachment(server, volume.id)
        conn.block_storage.wait_for_status(volume, "available", interval=0.2, wait=60)
        assert our_secrets() == []
    finally:
        if server is not None:
            conn.compute.delete_server(server, ignore_missing=True)
            conn.compute.wait_for_delete(server, interval=0.2, wait=60)
        if volume is not None:
            conn.block_storage.delete_volume(volume, ignore_missing=True)
            conn.block_storage.wait_for_delete(volume, interval=0.2, wait=60)
        admin.block_storage.delete_type(vtype)
        if volume is not None:
            assert our_secrets() == []
