"""Fixtures for the libvirt driver tests (helpers are in libvirt_helpers.py): [libvirt]
options for a test, and for the real guests' tests a libvirt host in the test cloud, the
tiny image and a member project."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from helpers.cloud import wait_for
from libvirt_helpers import NFT_TABLE, RealHost


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


@pytest.fixture(scope="module")
def real_host(cloud):
    """A libvirt compute host in the test cloud, and the guest networking agent."""
    from pocketstack.common import config
    from pocketstack.compute import service as compute_service
    from pocketstack.network.agent import agent as host_agent

    conf = config.CONF
    name = f"lvt-{uuid.uuid4().hex[:6]}"
    overrides = [("host_networking", True, "network"), ("bridge_hosts", [name], "network"),
                 ("nft_table", NFT_TABLE, "network"), ("periodic_interval", 1.0, "compute")]
    for opt, value, group in overrides:
        conf.set_override(opt, value, group=group)
    running = service = None
    try:
        running = host_agent.start()
        service = compute_service.start_compute(name, cloud.data_dir, "libvirt")
        host = RealHost(cloud, name, service)
        wait_for(lambda: any(h.name == name for h in cloud.sdk().compute.hypervisors()),
                 30, "the libvirt host in the hypervisor list")
        yield host
    finally:
        if service is not None:
            service.stop()
            admin = cloud.sdk()
            for svc in admin.compute.services(host=name):
                admin.compute.delete_service(svc, ignore_missing=True)
        if running is not None:
            host_agent.stop(running, teardown=True)
        for opt, _, group in overrides:
            conf.clear_override(opt, group=group)


@pytest.fixture(scope="module")
def tiny_image(cloud, real_host):
    """`pocketstack image tiny` against the test cloud (the command the README names)."""
    name = f"lvt-tiny-{uuid.uuid4().hex[:6]}"
    exe = os.path.join(os.path.dirname(sys.executable), "pocketstack")
    proc = subprocess.run([exe, "image", "tiny", "--data-dir", cloud.data_dir, "--name", name],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    admin = cloud.sdk()
    try:
        image = admin.image.find_image(name)
        assert image.hypervisor_type == "qemu" and image.kernel_id and image.ramdisk_id
        yield image
    finally:
        for suffix in ("", "-kernel", "-ramdisk"):
            found = admin.image.find_image(name + suffix)
            if found is not None:
                admin.image.delete_image(found, ignore_missing=True)


@pytest.fixture(scope="module")
def member(cloud, real_host):
    """A member project with a network; everything it made is deleted afterwards."""
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    try:
        yield user, conn
    finally:
        for server in conn.compute.servers():
            conn.compute.delete_server(server)
        wait_for(lambda: not list(conn.compute.servers()), 60, "servers deleted",
                 interval=0.2)
        for net in conn.network.networks(project_id=user["project_id"]):
            conn.network.delete_network(net)
