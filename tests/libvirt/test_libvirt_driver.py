"""LibvirtDriver's whole lifecycle against libvirt's own test:///default
hypervisor (no QEMU, no root): disks on the real filesystem with qemu-img, domains, power
operations, snapshot, destroy and start-up reconciliation. Hot-plug, which that driver
lacks, is tested on real guests (test_libvirt_guests.py)."""
from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest

from libvirt_helpers import libvirt_python_missing, make_qcow2, qemu_img_missing
from pocketstack.compute import states

pytestmark = pytest.mark.skipif(bool(libvirt_python_missing() or qemu_img_missing()),
                                reason=libvirt_python_missing() or qemu_img_missing() or "")

FLAVOR = {"name": "m1.test", "memory_mb": 128, "vcpus": 1, "root_gb": 1, "ephemeral_gb": 1,
          "swap": 16}


@pytest.fixture
def driver(libvirt_conf, tmp_path):
    from pocketstack.compute.virt.libvirt.driver import LibvirtDriver

    libvirt_conf("connection_uri", "test:///default")
    libvirt_conf("shutdown_timeout", 2.0)
    drv = LibvirtDriver(f"lvt-{uuid.uuid4().hex[:6]}", str(tmp_path))
    make_qcow2(drv.cache.path("image-1"))
    for name in ("kernel-1", "ramdisk-1"):
        with open(drv.cache.path(name), "wb") as f:
            f.write(b"not really a kernel")
    yield drv
    for uuid_ in drv.list_instance_uuids():
        drv.destroy({"uuid": uuid_})


def instance(**extra) -> dict:
    return dict({"uuid": str(uuid.uuid4()), "flavor": dict(FLAVOR), "display_name": "vm1",
                 "project_id": "p-1", "user_id": "u-1", "config_drive": ""}, **extra)


VIF = {"port_id": "93121330-58aa-4bbb-8ccc-000000000001", "network_id": "8165bc3d-400a-48a0",
       "mac_address": "fa:16:3e:12:34:56",
       "fixed_ips": [{"ip_address": "10.0.0.5", "version": 4}]}
IMAGE = {"id": "image-1", "kernel_id": "kernel-1", "ramdisk_id": "ramdisk-1",
         "os_command_line": "console=ttyS0"}


def qemu_info(path: str) -> dict:
    return json.loads(subprocess.run(["qemu-img", "info", "-U", "--output=json", path],
                                     capture_output=True, text=True, check=True).stdout)


def test_spawn_builds_disks_and_a_running_domain(driver):
    inst = instance()
    driver.spawn(inst, dict(IMAGE), [VIF], None)
    assert driver.get_power_state(inst["uuid"]) == states.RUNNING
    assert inst["uuid"] in driver.list_instance_uuids()
    inst_dir = os.path.join(driver.instances_path, inst["uuid"])
    root = qemu_info(os.path.join(inst_dir, "disk"))
    assert root["format"] == "qcow2" and root["virtual-size"] == 1 << 30
    assert root["backing-filename"] == driver.cache.path("image-1")
    assert qemu_info(os.path.join(inst_dir, "disk.eph0"))["virtual-size"] == 1 << 30
    assert os.path.getsize(os.path.join(inst_dir, "disk.swap")) == 16 << 20
    devices = driver.devices(inst["uuid"])
    assert sorted(devices["disks"]) == ["vda", "vdb", "vdc"]
    assert devices["macs"] == {"fa:16:3e:12:34:56": "tap93121330-58"}
    with open(os.path.join(inst_dir, "libvirt.xml")) as f:
        xml = f.read()
    assert "<kernel>" + driver.cache.path("kernel-1") + "</kernel>" in xml
    assert "<cmdline>console=ttyS0</cmdline>" in xml
    assert '<source bridge="brq8165bc3d-40" />' in xml
    assert "instance-" in xml and 'address="10.0.0.5"' in xml


def test_power_operations_follow_libvirt(driver):
    inst = instance()
    driver.spawn(inst, dict(IMAGE), [], None)
    uuid_ = inst["uuid"]
    for op, expected in (("pause", states.PAUSED_POWER), ("unpause", states.RUNNING),
                         ("suspend", states.SUSPENDED_POWER), ("resume", states.RUNNING),
                         ("power_off", states.SHUTDOWN), ("power_on", states.RUNNING)):
        getattr(driver, op)(inst)
        assert driver.get_power_state(uuid_) == expected, op
    for kind in ("SOFT", "HARD"):
        driver.reboot(inst, kind)
        assert driver.get_power_state(uuid_) == states.RUNNING


def test_snapshot_console_and_destroy(driver):
    inst = instance()
    driver.spawn(inst, dict(IMAGE), [VIF], None)
    data = driver.snapshot(inst)
    assert data[:4] == b"QFI\xfb"
    assert driver.get_power_state(inst["uuid"]) == states.RUNNING
    log = os.path.join(driver.instances_path, inst["uuid"], "console.log")
    with open(log, "w") as f:
        f.write("x" * 200000 + "\nlast line\n")
    out = driver.get_console_output(inst["uuid"])
    assert out.endswith("last line\n") and len(out) <= 100 * 1024
    driver.destroy(inst)
    assert driver.get_power_state(inst["uuid"]) is None
    assert inst["uuid"] not in driver.list_instance_uuids()
    assert not os.path.exists(os.path.join(driver.instances_path, inst["uuid"]))
    assert driver.get_console_output(inst["uuid"]) == ""
    driver.destroy(inst)  # idempotent


def test_resize_on_the_host_then_revert_or_confirm(driver):
    """Cold resize: the old guest kept as <uuid>_resize, the new one with the flavor's
    memory, vCPUs and a grown root disk; revert brings the old one back, confirm and
    delete drop what was kept; shrinking is refused before anything changes."""
    from pocketstack.common import exceptions

    inst = instance()
    uuid_ = inst["uuid"]
    inst_dir = os.path.join(driver.instances_path, uuid_)
    driver.spawn(inst, dict(IMAGE), [VIF], None)
    bigger = dict(FLAVOR, name="m1.bigger", memory_mb=256, vcpus=2, root_gb=2)
    with pytest.raises(exceptions.BadRequest, match="Unable to resize disk down"):
        driver.migrate_disk_and_power_off(inst, dict(FLAVOR, root_gb=0))
    assert driver.get_power_state(uuid_) == states.RUNNING

    for finish in ("revert", "confirm"):
        driver.migrate_disk_and_power_off(inst, bigger)
        assert driver.get_power_state(uuid_) is None  # undefined; its XML is kept
        assert os.path.isdir(inst_dir + "_resize")
        driver.finish_migration(dict(inst, flavor=bigger), [VIF], True)
        assert driver.get_power_state(uuid_) == states.RUNNING
        xml = driver.host.lookup(uuid_).XMLDesc(0)
        assert "<memory unit='KiB'>262144</memory>" in xml and ">2</vcpu>" in xml
        assert '<nova:flavor name="m1.bigger">' in xml
        assert qemu_info(os.path.join(inst_dir, "disk"))["virtual-size"] == 2 << 30
        assert sorted(driver.devices(uuid_)["disks"]) == ["vda", "vdb", "vdc"]
        if finish == "revert":
            driver.destroy(dict(inst, keep_resize_source=True))  # the destination's part
            driver.finish_revert_migration(inst, [VIF], True)
            xml = driver.host.lookup(uuid_).XMLDesc(0)
            assert "<memory unit='KiB'>131072</memory>" in xml
            assert qemu_info(os.path.join(inst_dir, "disk"))["virtual-size"] == 1 << 30
        else:
            driver.confirm_migration(inst)
        assert not os.path.exists(inst_dir + "_resize")

    driver.migrate_disk_and_power_off(dict(inst, flavor=bigger), bigger)
    driver.destroy({"uuid": uuid_})  # deleted while resizing: nothing stays
    assert not os.path.exists(inst_dir) and not os.path.exists(inst_dir + "_resize")


def _shared_host(name: str, instances: str, data_dir: str):
    from pocketstack.compute.virt.libvirt.driver import LibvirtDriver

    drv = LibvirtDriver(f"{name}-{uuid.uuid4().hex[:6]}", data_dir)
    assert drv.instances_path == instances
    return drv


def test_cold_migration_and_evacuation_between_hosts_sharing_instance_storage(
        driver, libvirt_conf, tmp_path):
    """Two hosts on one libvirt (as a lab's), one instances path: a cold migration keeps
    the guest's disk content (grown to the new flavor) and hands the guest to the
    destination; revert gives it back; the source's start-up reconciliation leaves the
    other host's guest alone; an evacuation defines the same disk as the new host's
    once the old guest is dead. A host with an instances path of its own refuses before
    anything moves."""
    from pocketstack.compute.virt.libvirt.host import GuestError

    shared = str(tmp_path / "shared")
    libvirt_conf("instances_path", shared)
    one, two = (_shared_host(n, shared, str(tmp_path / n)) for n in ("lva", "lvb"))
    make_qcow2(one.cache.path("image-1"))
    for name in ("kernel-1", "ramdisk-1"):
        with open(one.cache.path(name), "wb") as f:
            f.write(b"not really a kernel")
    inst = instance()
    uuid_ = inst["uuid"]
    disk = os.path.join(shared, uuid_, "disk")
    bigger = dict(FLAVOR, name="m1.bigger", memory_mb=256, root_gb=2)
    one.spawn(inst, dict(IMAGE), [VIF], None)
    try:
        subprocess.run(["qemu-io", "-f", "qcow2", "-c", "write -P 0x5a 1M 64k", disk],
                       check=True, capture_output=True)
        with pytest.raises(GuestError, match="needs shared instance storage"):
            driver.prep_resize(dict(inst, source_host=one.host_name))  # its own path
        assert one.get_power_state(uuid_) == states.RUNNING

        moved = dict(inst, flavor=bigger, source_host=one.host_name)
        for finish in ("revert", "confirm"):
            two.prep_resize(moved)
            one.migrate_disk_and_power_off(inst, bigger)
            two.finish_migration(moved, [VIF], True)
            assert (one.get_power_state(uuid_), two.get_power_state(uuid_)) == (
                None, states.RUNNING)
            one.init_host(one.host_name, [])  # a restart meanwhile keeps what revert needs
            assert os.path.isdir(disk.rsplit("/", 1)[0] + "_resize")
            assert qemu_info(disk)["virtual-size"] == 2 << 30
            if finish == "revert":
                two.destroy(dict(moved, keep_resize_source=True))
                one.finish_revert_migration(inst, [VIF], True)
                assert (one.get_power_state(uuid_), two.get_power_state(uuid_)) == (
                    states.RUNNING, None)
                assert qemu_info(disk)["virtual-size"] == 1 << 30
            else:
                one.confirm_migration(inst)
        assert not os.path.exists(disk.rsplit("/", 1)[0] + "_resize")
        read = subprocess.run(["qemu-io", "-U", "-f", "qcow2", "-c", "read -P 0x5a 1M 64k",
                               disk], capture_output=True, text=True)
        assert "Pattern verification failed" not in read.stdout + read.stderr, read.stdout

        one.init_host(one.host_name, [])  # the guest is two's now
        assert two.get_power_state(uuid_) == states.RUNNING and os.path.exists(disk)

        evacuee = dict(inst, flavor=bigger, evacuated_from=two.host_name)
        with pytest.raises(GuestError, match="still runs"):
            one.spawn(evacuee, dict(IMAGE), [VIF], None)
        before = os.stat(disk).st_ino
        two.host.lookup(uuid_).destroy()  # its host died
        one.spawn(evacuee, dict(IMAGE), [VIF], None)
        assert (one.get_power_state(uuid_), two.get_power_state(uuid_)) == (
            states.RUNNING, None)
        assert os.stat(disk).st_ino == before  # the same disk, not a new one
    finally:
        for drv in (one, two):
            drv.destroy({"uuid": uuid_})


def test_flavor_too_small_for_the_image_leaves_nothing(driver):
    from pocketstack.compute.virt.libvirt.imagecache import ImageError

    make_qcow2(driver.cache.path("image-big"), "3G")
    inst = instance()
    with pytest.raises(ImageError, match="too small"):
        driver.spawn(inst, {"id": "image-big"}, [], None)
    driver.destroy(inst)  # what the manager's cleanup does
    assert driver.get_power_state(inst["uuid"]) is None
    assert not os.path.exists(os.path.join(driver.instances_path, inst["uuid"]))


def test_init_host_removes_leftovers_of_this_host_only(driver, libvirt_conf, tmp_path):
    from pocketstack.compute.virt.libvirt.driver import LibvirtDriver

    keep, gone = instance(), instance()
    driver.spawn(keep, dict(IMAGE), [], None)
    driver.spawn(gone, dict(IMAGE), [], None)
    other = LibvirtDriver("lvt-other", str(tmp_path / "other"))
    make_qcow2(other.cache.path("image-1"))
    foreign = instance()
    other.spawn(foreign, {"id": "image-1"}, [], None)
    stray = os.path.join(driver.instances_path, str(uuid.uuid4()))
    os.makedirs(stray)
    try:
        driver.init_host(driver.host_name, [{"uuid": keep["uuid"], "power_state": 1}])
        assert driver.list_instance_uuids() == [keep["uuid"]]
        assert not os.path.exists(os.path.join(driver.instances_path, gone["uuid"]))
        assert not os.path.exists(stray)
        assert other.get_power_state(foreign["uuid"]) == states.RUNNING
        assert driver.get_power_state(foreign["uuid"]) is None  # not ours to see
    finally:
        other.destroy(foreign)


def test_resources_come_from_libvirt_and_the_instances_dir(driver):
    res = driver.resources()
    assert res["hypervisor_type"] == "QEMU"
    assert res["vcpus"] == 16 and res["memory_mb"] == 3072  # test:///default's node
    assert res["local_gb"] >= 1


def test_hosts_sharing_an_instances_path_report_the_same_storage(driver, libvirt_conf,
                                                                  tmp_path):
    """The storage a host reports with its node: the same for hosts of one instances path
    (the first to start names it in the path), another for a host of its own path; a
    configured [libvirt] shared_storage_id wins."""
    mine = driver.resources()["shared_storage"]
    assert mine and driver.resources()["shared_storage"] == mine
    shared = str(tmp_path / "shared")
    libvirt_conf("instances_path", shared)
    one, two = (_shared_host(n, shared, str(tmp_path / n)) for n in ("lva", "lvb"))
    assert one.resources()["shared_storage"] == two.resources()["shared_storage"] != mine
    assert sorted(os.listdir(shared)) == [".pocketstack-storage-id", "_base"]
    libvirt_conf("shared_storage_id", "nfs-a")
    assert one.resources()["shared_storage"] == "nfs-a"
