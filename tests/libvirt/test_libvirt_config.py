"""The guest config model renders the domain XML nova would (golden files), and
the helpers that read a live domain's XML back."""
from __future__ import annotations

import os

from pocketstack.compute.virt.libvirt import config as guest

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
UUID = "3a0c5e8e-1f2b-4c3d-8e4f-5a6b7c8d9e0f"


def tiny_guest() -> guest.GuestConfig:
    return guest.GuestConfig(
        uuid=UUID, memory_mb=192, vcpus=1, virt_type="qemu",
        kernel="/srv/instances/_base/kernel-id", initrd="/srv/instances/_base/ramdisk-id",
        cmdline="console=ttyS0 quiet",
        disks=[guest.Disk("vda", f"/srv/instances/{UUID}/disk"),
               guest.Disk("vdb", f"/srv/instances/{UUID}/disk.eph0"),
               guest.Disk("vdc", "/dev/vg0/volume-1", source_type="block", driver_type="raw",
                          serial="b1c2d3e4-0000-4000-8000-000000000001"),
               guest.Disk("hdd", f"/srv/instances/{UUID}/disk.config", driver_type="raw",
                          device="cdrom", bus="ide", readonly=True)],
        interfaces=[guest.Interface(mac="fa:16:3e:12:34:56", bridge="brq8165bc3d-40",
                                    target_dev="tap93121330-58", mtu=1450)],
        console_log=f"/srv/instances/{UUID}/console.log",
        metadata=guest.Metadata(
            name="tiny1", creation_time="2026-11-24 19:40:00", flavor_name="m1.nano",
            memory_mb=192, disk_gb=1, swap_mb=0, ephemeral_gb=1, vcpus=1,
            user_id="u-1", user_name="alice", project_id="p-1", project_name="demo",
            root_image="image-1",
            ports=[guest.Port("93121330-58aa-4bbb-8ccc-000000000001", ["10.0.0.5",
                                                                       "fd00::5"])],
            owner_host="node-1", owner_path="/srv/instances"))


def test_tiny_guest_matches_golden_xml():
    with open(os.path.join(GOLDEN, "tiny_guest.xml")) as f:
        assert tiny_guest().to_xml() == f.read()


def test_image_boot_guest_matches_golden_xml():
    """No kernel: boots from the first disk; no console log, no metadata."""
    cfg = guest.GuestConfig(uuid=UUID, memory_mb=512, vcpus=2, virt_type="kvm",
                            disks=[guest.Disk("vda", "/srv/disk", driver_type="raw")])
    with open(os.path.join(GOLDEN, "disk_boot_guest.xml")) as f:
        assert cfg.to_xml() == f.read()


def test_domain_name_is_nova_style_and_stable():
    assert guest.domain_name(UUID) == "instance-3a0c5e8e"
    assert tiny_guest().name == "instance-3a0c5e8e"


def test_owner_and_devices_read_back():
    xml = tiny_guest().to_xml()
    assert guest.read_owner(xml) == ("node-1", "/srv/instances")
    assert guest.read_owner("<domain><name>x</name></domain>") is None
    assert guest.read_owner("not xml") is None
    devices = guest.find_devices(xml)
    assert devices["disks"]["vdc"] == "/dev/vg0/volume-1"
    assert devices["macs"] == {"fa:16:3e:12:34:56": "tap93121330-58"}


def test_hotplug_device_xml():
    disk = guest.device_xml(guest.Disk("vdb", "/dev/loop7", source_type="block",
                                       driver_type="raw"))
    assert disk == ('<disk type="block" device="disk"><driver name="qemu" type="raw" />'
                    '<source dev="/dev/loop7" /><target dev="vdb" bus="virtio" /></disk>')
