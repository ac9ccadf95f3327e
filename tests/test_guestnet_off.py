"""Issue 9: host networking is off by default — the all-in-one with simulated hosts needs
no root and creates nothing on the host (no agent, no bridge, no namespace, no metadata
route in the DHCP options), and ports keep their simulated binding."""
from __future__ import annotations

import os

import pytest

from guestnet_helpers import Project


@pytest.fixture(scope="module")
def project(cloud):
    p = Project(cloud)
    try:
        yield p
    finally:
        p.cleanup()


def test_default_cloud_plumbs_nothing(cloud, project):
    from pocketstack.network import agent, dhcp

    net, _ = project.network("10.50.0.0/24")
    server = project.boot(net.id)
    port = project.port_of(server.id)
    assert not agent.enabled() and agent.running() is None
    assert port.binding_vif_type == "ovs"
    assert port.binding_vif_details["bridge_name"] == "br-int"
    assert not os.path.exists(f"/run/netns/qdhcp-{net.id}")
    assert not os.path.exists(f"/sys/class/net/brq{net.id[:11]}")
    assert not os.path.exists(os.path.join(cloud.data_dir, "network", "agent", net.id))
    assert dhcp.wait(10)
    with open(os.path.join(cloud.data_dir, "network", "dhcp", net.id, "opts")) as f:
        assert "169.254.169.254" not in f.read()
