"""Host networking is off by default — the all-in-one with simulated hosts needs
no root and creates nothing on the host (no agent, no bridge, no namespace, no metadata
route in the DHCP options), and ports keep their simulated binding."""
from __future__ import annotations

import os

import pytest

from helpers.guestnet import Project


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


def test_the_agent_plugs_the_ports_compute_binds_to_this_machine(cloud):
    """The agent names this machine from its own config ([network] host), by
    default as compute names its libvirt host, without asking compute's code."""
    from pocketstack.common import config
    from pocketstack.compute.service import libvirt_host_name
    from pocketstack.network import agent

    conf = config.CONF
    overrides = [("host_networking", "network"), ("host", "network"),
                 ("bridge_hosts", "network"), ("host_name", "libvirt")]
    try:
        conf.set_override("host_networking", True, group="network")
        assert agent.bridge_hosts() == {conf.host, libvirt_host_name()}
        conf.set_override("host_name", "kvm-7", group="libvirt")
        assert agent.host() == libvirt_host_name() == "kvm-7"
        assert agent.is_bridge_host("kvm-7") and not agent.is_bridge_host("cmp-1")
        conf.set_override("host", "net-7", group="network")
        assert agent.bridge_hosts() == {conf.host, "net-7"}
        conf.set_override("bridge_hosts", ["cmp-1"], group="network")
        assert agent.bridge_hosts() == {"cmp-1"}
    finally:
        for name, group in overrides:
            conf.clear_override(name, group=group)
    assert not agent.enabled()
