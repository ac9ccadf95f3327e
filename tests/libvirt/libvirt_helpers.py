"""Helpers shared by the libvirt driver tests: skip reasons and disk images, and what the
real guests' tests share (their libvirt host, their boot timeout, a guest's console).
(A module of its own: ``from conftest import`` can resolve to another test directory's
conftest.)"""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid

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


def real_guests_missing(tools: tuple[str, ...]) -> str | None:
    """Why real guests with host networking (root, ``tools``, libvirt) cannot run here."""
    if os.geteuid() != 0:
        return "real guests need root (bridges, namespaces, QEMU as root)"
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        return f"real guest networking needs {', '.join(missing)}"
    return real_libvirt_missing()


def make_qcow2(path: str, size: str = "64M") -> None:
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", path, size], check=True)


# --- real guests (test_libvirt_guests and the tests that boot the tiny guest too) -----------

GUEST_TOOLS = ("ip", "dnsmasq", "nft")
NFT_TABLE = f"lvt_{uuid.uuid4().hex[:8]}"  # its own: runs may share a host
BOOT_TIMEOUT = 120.0  # QEMU's software emulation on a loaded 2-core machine


class RealHost:
    def __init__(self, cloud, name, service):
        self.cloud, self.name, self.service = cloud, name, service
        self.driver = service.manager.driver

    def domain_names(self) -> set[str]:
        return {d.name() for d in self.driver.host.conn().listAllDomains(0)}


def console(conn, server_id) -> str:
    return conn.compute.get_server_console_output(server_id)["output"]
