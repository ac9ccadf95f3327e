"""Two clouds with real guest networking on one machine: each keeps its own nftables
tables (named after its cloud id, with [network] nft_table unset as an operator leaves it),
so one's start or change never removes or rewrites the other's rules. Also what a cloud
with host networking shows from outside: one host name for its network node's agents,
and `pocketstack audit` reading the settings the cloud was started with.

Needs root, iproute2, dnsmasq and nftables. Each cloud's agent removes what it made
(bridges, namespaces, dnsmasq, tables) before the cloud stops.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from helpers.cloud import own_cloud
from helpers.guestnet import unique, unique_table

TOOLS = ("ip", "dnsmasq", "nft")
missing = [t for t in TOOLS if shutil.which(t) is None]
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or bool(missing),
    reason=f"real guest networking needs root and {', '.join(TOOLS)} "
           f"(missing: {', '.join(missing) or 'root'})")

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")


@contextlib.contextmanager
def networked_cloud(prefix: str, **overrides):
    """A cloud of its own started with host networking on, as `pocketstack up` on a
    libvirt host has it; ports bound to its bridge host get a bridge and rules."""
    bridge_host = unique("pc-host")
    with own_cloud(prefix, **{"network.host_networking": True,
                              "network.bridge_hosts": [bridge_host], **overrides}) as cloud:
        try:
            yield cloud, bridge_host
        finally:
            from pocketstack.network import agent
            from pocketstack.network.agent import agent as host_agent

            with cloud.cloud.runtime.activated():
                running = agent.running()
                if running is not None:
                    host_agent.stop(running, teardown=True)


@pytest.fixture(scope="module")
def cloud_a():
    with networked_cloud("pca") as made:
        yield made


def table_of(cloud) -> str:
    from pocketstack.network.agent import firewall

    with cloud.cloud.runtime.activated():
        return firewall.table_name()


def listing(table: str) -> str:
    """Both tables of that name (inet and bridge), "" for one that does not exist."""
    return "".join(subprocess.run(["nft", "list", "table", family, table],
                                  capture_output=True, text=True).stdout
                   for family in ("inet", "bridge"))


def chains_of(port) -> list[str]:
    """The port's chains: its ingress and egress (inet) and its anti-spoofing (bridge)."""
    key = port.id.replace("-", "")
    return [f"chain in_{key}", f"chain out_{key}", f"chain spoof_{key}"]


def has_rules_of(table: str, port) -> bool:
    text = listing(table)
    return all(chain in text for chain in chains_of(port))


def bound_port(cloud, bridge_host: str, network_id: str):
    """A guest's port bound to the cloud's bridge host: the API answers once its rules
    are in the cloud's tables."""
    return cloud.sdk().network.create_port(
        network_id=network_id, binding_host_id=bridge_host, device_owner="compute:nova",
        device_id=str(uuid.uuid4()))


@contextlib.contextmanager
def network(cloud, cidr: str):
    sdk = cloud.sdk()
    net = sdk.network.create_network(name=unique("pc-net"))
    sdk.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr)
    try:
        yield net
    finally:
        for port in sdk.network.ports(network_id=net.id, device_owner="compute:nova"):
            sdk.network.delete_port(port)
        sdk.network.delete_network(net)


def test_two_clouds_keep_their_own_guest_firewalls(cloud_a):
    a, host_a = cloud_a
    with network(a, "10.61.0.0/24") as net_a:
        port_a = bound_port(a, host_a, net_a.id)
        table_a = table_of(a)
        assert has_rules_of(table_a, port_a), listing(table_a)

        with networked_cloud("pcb") as (b, host_b), network(b, "10.62.0.0/24") as net_b:
            # B's agent replaced its own tables whole when it started: A's stay
            assert has_rules_of(table_a, port_a), listing(table_a)
            table_b = table_of(b)
            assert table_b != table_a

            port_b = bound_port(b, host_b, net_b.id)
            assert has_rules_of(table_b, port_b), listing(table_b)
            assert has_rules_of(table_a, port_a), listing(table_a)
            assert port_b.id.replace("-", "") not in listing(table_a)

            # a change in A (another guest) leaves B's rules as they are
            port_a2 = bound_port(a, host_a, net_a.id)
            assert has_rules_of(table_a, port_a2), listing(table_a)
            assert has_rules_of(table_b, port_b), listing(table_b)
            assert port_a2.id.replace("-", "") not in listing(table_b)
        # B stopped and removed its tables; A's are untouched
        assert listing(table_b) == ""
        assert has_rules_of(table_a, port_a) and has_rules_of(table_a, port_a2)


def test_a_cloud_whose_table_was_renamed_removes_its_old_one():
    """An operator renames [network] nft_table (or the cloud moves from the shared name of
    before to its own): the restarted agent removes the tables under the old name, which
    would otherwise keep filtering with rules nobody updates."""
    from pocketstack.common import config
    from pocketstack.network import agent
    from pocketstack.network.agent import agent as host_agent

    old, new = unique_table("pc_old"), unique_table("pc_new")
    with networked_cloud("pcr", **{"network.nft_table": old}) as (c, bridge_host), \
            network(c, "10.64.0.0/24") as net:
        port = bound_port(c, bridge_host, net.id)
        assert has_rules_of(old, port), listing(old)
        with c.cloud.runtime.activated():
            host_agent.stop(agent.running())  # as the cloud's stop: bridges and rules stay
            config.CONF.set_override("nft_table", new, group="network")
            host_agent.start()
        assert has_rules_of(new, port), listing(new)
        assert listing(old) == ""


def test_network_node_agents_report_one_host_name(cloud_a):
    a, _ = cloud_a
    agents = list(a.sdk().network.agents())
    kinds = {agent.agent_type for agent in agents}
    assert {"DHCP agent", "L3 agent", "Linux bridge agent", "Metadata agent"} <= kinds, kinds
    assert len({agent.host for agent in agents}) == 1, \
        sorted((agent.agent_type, agent.host) for agent in agents)


def test_audit_reads_the_settings_the_cloud_started_with(cloud_a):
    """The cloud runs with host networking from its start's settings, not from its config
    file: the DHCP files of a network without a router route 169.254.169.254 to the DHCP
    port, and audit expects just that."""
    a, _ = cloud_a
    from pocketstack.network import dhcp

    with network(a, "10.63.0.0/24") as net:
        with a.cloud.runtime.activated():
            dhcp.wait()
            with open(os.path.join(dhcp.network_dir(net.id), "opts")) as f:
                assert "169.254.169.254/32" in f.read()
        proc = subprocess.run([EXE, "audit", "--data-dir", a.data_dir],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
