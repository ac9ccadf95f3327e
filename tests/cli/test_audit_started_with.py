"""`pocketstack audit` of a cloud started with a flag its config file lacks, as a user runs
both: `pocketstack up --compute-driver libvirt` turns host networking on, so the DHCP files
of a network without a router route 169.254.169.254 to its DHCP port, and audit (which
reads the cloud from outside) must expect what that cloud writes. Needs root, a running
libvirtd (`make libvirt`) and host networking's tools."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from helpers.cloud import wait_for
from helpers.up_process import EXE, UpProcess

TOOLS = ("ip", "dnsmasq", "nft")
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in TOOLS)
    or not os.path.exists("/var/run/libvirt/libvirt-sock"),
    reason="a libvirt cloud needs root, a running libvirtd and ip, dnsmasq, nft")


def _opts(data_dir: str, network_id: str) -> str:
    try:
        with open(os.path.join(data_dir, "network", "dhcp", network_id, "opts")) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def test_audit_of_a_cloud_up_with_compute_driver_libvirt_finds_nothing(tmp_path):
    data_dir = str(tmp_path / "data")
    up = UpProcess(data_dir, args=("--compute-driver", "libvirt")).start()
    try:
        sdk = up.sdk()
        net = sdk.network.create_network(name="audit-flags")
        try:
            sdk.network.create_subnet(network_id=net.id, cidr="10.65.0.0/24", ip_version=4)
            wait_for(lambda: "169.254.169.254/32" in _opts(data_dir, net.id), 30,
                     "the metadata route in the network's DHCP options")
            audit = subprocess.run([EXE, "audit", "--data-dir", data_dir],
                                   capture_output=True, text=True, timeout=120)
            assert audit.returncode == 0, audit.stdout + audit.stderr
        finally:
            sdk.network.delete_network(net)
    finally:
        up.stop()
