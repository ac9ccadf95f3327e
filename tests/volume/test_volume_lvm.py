"""The LVM backend for real — a volume group on a loop device (made and removed
here), thick and thin volumes, connection_info on the LV's block device, snapshot, volume
from snapshot, extend, delete with no LV left behind. Needs root, lvm2 and a kernel with
device-mapper; skips with the reason otherwise."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid

import pytest

from volume_helpers import Raw, create, wait_gone, wait_status


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "the LVM backend test needs root (losetup, pvcreate, vgcreate)"
    for tool in ("losetup", "pvcreate", "vgcreate", "lvcreate", "dmsetup"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package lvm2 / util-linux)"
    if subprocess.run(["dmsetup", "version"], capture_output=True).returncode != 0:
        return "the kernel's device-mapper is not available (dmsetup version fails): LVs " \
               "cannot be activated"
    return None


def _thin_missing() -> bool:
    subprocess.run(["modprobe", "dm-thin-pool"], capture_output=True)
    targets = subprocess.run(["dmsetup", "targets"], capture_output=True, text=True).stdout
    return "thin-pool" not in targets


needs_lvm = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


@pytest.fixture(params=[False, True], ids=["thick", "thin"])
def lvm_backend(request, cloud):
    from pocketstack.common import config
    from pocketstack.volume import backends, service

    thin = request.param
    if thin and _thin_missing():
        pytest.skip("the kernel has no dm-thin-pool target")
    vg = f"vol-service-{uuid.uuid4().hex[:8]}"
    tmp = tempfile.mkdtemp(prefix="vol-service-lvm-")
    image, device = os.path.join(tmp, "pv.img"), None
    conf = config.CONF
    try:
        subprocess.run(["truncate", "-s", "1G", image], check=True)
        device = subprocess.run(["losetup", "-f", "--show", image], check=True,
                                capture_output=True, text=True).stdout.strip()
        subprocess.run(["pvcreate", "-q", device], check=True, capture_output=True)
        subprocess.run(["vgcreate", "-q", vg, device], check=True, capture_output=True)
        conf.set_override("enabled_backends", ["file", "lvm"], group="volume")
        conf.set_override("lvm_volume_group", vg, group="volume")
        conf.set_override("lvm_thin", thin, group="volume")
        backends.reset()
        service.heartbeat()
        yield vg
    finally:
        for name in ("enabled_backends", "lvm_volume_group", "lvm_thin"):
            conf.clear_override(name, group="volume")
        backends.reset()
        subprocess.run(["vgremove", "-y", "-f", vg], capture_output=True)
        if device:
            subprocess.run(["pvremove", "-q", "-y", device], capture_output=True)
            subprocess.run(["losetup", "-d", device], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def _lvs(vg: str) -> set[str]:
    out = subprocess.run(["lvs", "--noheadings", "-o", "lv_name", vg], capture_output=True,
                         text=True).stdout
    return {line.strip() for line in out.splitlines() if line.strip()}


@needs_lvm
def test_lvm_volumes_snapshots_and_cleanup(cloud, lvm_backend):
    vg = lvm_backend
    admin = Raw(cloud.session())
    type_name = f"lvm-{uuid.uuid4().hex[:6]}"
    status, body, _ = admin("POST", "/types", {"volume_type": {
        "name": type_name, "extra_specs": {"volume_backend_name": "lvm"}}})
    assert status == 200, body
    member = cloud.make_user()
    raw = Raw(cloud.user_session(member))
    volume = wait_status(raw, create(raw, volume_type=type_name)["id"], ("available", "error"))
    assert volume["status"] == "available", raw("GET", "/messages")[1]
    assert f"volume-{volume['id']}" in _lvs(vg)
    device = f"/dev/{vg}/volume-{volume['id']}"
    with open(device, "r+b") as f:
        f.write(b"data on an LV")
    info = raw("POST", f"/volumes/{volume['id']}/action", {
        "os-initialize_connection": {"connector": {"host": "h"}}})[1]["connection_info"]
    assert info["driver_volume_type"] == "local" and info["data"]["device_path"] == device

    snap = raw("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"]}})[1]["snapshot"]
    for _ in range(600):
        snap = raw("GET", f"/snapshots/{snap['id']}")[1]["snapshot"]
        if snap["status"] != "creating":
            break
    assert snap["status"] == "available"
    clone = wait_status(raw, create(raw, snapshot_id=snap["id"])["id"], ("available", "error"))
    assert clone["status"] == "available"
    with open(f"/dev/{vg}/volume-{clone['id']}", "rb") as f:
        assert f.read(13) == b"data on an LV"

    assert raw("POST", f"/volumes/{clone['id']}/action",
               {"os-extend": {"new_size": 2}})[0] == 202
    assert wait_status(raw, clone["id"], ("available", "error_extending"))["size"] == 2

    for made in (clone, volume):
        assert raw("DELETE", f"/volumes/{made['id']}?cascade=true")[0] == 202
        wait_gone(raw, made["id"])
    left = {n for n in _lvs(vg) if n.startswith(("volume-", "snapshot-"))}
    assert left == set()
    assert admin("DELETE", f"/types/{type_name}")[0] in (202, 404)


def _vg_missing() -> str | None:
    if os.geteuid() != 0:
        return "making a volume group needs root"
    for tool in ("losetup", "pvcreate", "vgcreate", "vgs"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package lvm2 / mount)"
    return None


@pytest.mark.skipif(_vg_missing() is not None, reason=_vg_missing() or "")
def test_lab_volume_group_on_a_loop_file(cloud):
    """[volume] lvm_loop_file_gb: start-up makes the VG on a sparse file, once."""
    from pocketstack.common import config
    from pocketstack.volume import backends

    vg = f"vol-service-{uuid.uuid4().hex[:8]}"
    conf = config.CONF
    conf.set_override("lvm_volume_group", vg, group="volume")
    conf.set_override("lvm_loop_file_gb", 1, group="volume")
    backend = backends.get("lvm")
    path = backend.loop_file()
    try:
        backend.ensure_volume_group()
        assert backend.vg_exists() and os.path.getsize(path) == 1 << 30
        backend.ensure_volume_group()  # idempotent: the same group, no second device
        devices = subprocess.run(["losetup", "-j", path], capture_output=True,
                                 text=True).stdout.strip().splitlines()
        assert len(devices) == 1
        total, free = backend.capacity()
        assert total in (0, 1) and free in (0, 1)
    finally:
        conf.clear_override("lvm_volume_group", group="volume")
        conf.clear_override("lvm_loop_file_gb", group="volume")
        backends.reset()
        subprocess.run(["vgremove", "-y", "-f", vg], capture_output=True)
        attached = subprocess.run(["losetup", "-j", path], capture_output=True,
                                  text=True).stdout
        for line in attached.splitlines():
            device = line.split(":", 1)[0]
            subprocess.run(["pvremove", "-q", "-y", device], capture_output=True)
            subprocess.run(["losetup", "-d", device], capture_output=True)
        if os.path.exists(path):
            os.unlink(path)
