"""Helpers for the libvirt driver tests: skip reasons, a driver on libvirt's own
test:///default hypervisor, and the real host when libvirtd and QEMU are present."""
from __future__ import annotations

import shutil
import subprocess

import pytest


def libvirt_python_missing() -> str | None:
    try:
        import libvirt  # noqa: F401
    except ImportError:
        return "libvirt-python is not installed (pip install 'pocketstack[libvirt]')"
    return None


def qemu_img_missing() -> str | None:
    return None if shutil.which("qemu-img") else "qemu-img is not installed (make libvirt)"


def real_libvirt_missing() -> str | None:
    """Why real guests cannot run here, or None."""
    reason = libvirt_python_missing() or qemu_img_missing()
    if reason:
        return reason
    if not shutil.which("qemu-system-x86_64"):
        return "qemu-system-x86 is not installed (make libvirt)"
    import libvirt

    try:
        libvirt.open("qemu:///system").close()
    except libvirt.libvirtError as error:
        return f"libvirtd is not reachable at qemu:///system ({error}); run make libvirt"
    return None


@pytest.fixture
def libvirt_conf(cloud):
    """[libvirt] options set for one test (the session cloud has loaded the config)."""
    from pocketstack.common import config

    changed = []

    def set_(name, value):
        config.CONF.set_override(name, value, group="libvirt")
        changed.append(name)

    yield set_
    for name in changed:
        config.CONF.clear_override(name, group="libvirt")


def make_qcow2(path: str, size: str = "64M") -> None:
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", path, size], check=True)
