"""Per-host agents: `pocketstack service network-agent --host NAME` as a process
of its own next to a cloud whose RPC goes over unix sockets (as `up --workers`). It has
no database (its config names one that does not exist), learns what to plumb from the
network service over RPC, heartbeats into `openstack network agent list`, and shows dead
once killed. Needs root (bridges, nftables), like the other guestnet tests."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

from helpers.cloud import own_cloud
from helpers.guestnet import links, sh, unique

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")
NFT_TABLE = f"netagent_proc_{uuid.uuid4().hex[:8]}"  # its own: runs may share a host
DOWN_TIME = 3.0

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "nft")),
    reason="needs root, iproute2 and nftables")


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.fixture
def unix_cloud():
    tmp = tempfile.mkdtemp(prefix="pocketstack-netagent-")
    try:
        url = "unix://" + os.path.join(tmp, "rpc")
        with own_cloud("netagent", transport_url=url,
                       **{"network.agent_down_time": DOWN_TIME}) as cloud:
            yield cloud, url, tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _spawn_agent(tmp: str, url: str, host: str):
    data_dir = os.path.join(tmp, "agent")
    os.makedirs(data_dir, mode=0o700)
    conf = os.path.join(data_dir, "agent.conf")
    with open(conf, "w") as f:
        f.write(f"[DEFAULT]\ntransport_url = {url}\n"
                # no database for this process: any use of one would fail loudly
                "[database]\nconnection = postgresql+psycopg://nobody@127.0.0.1:9/none\n"
                f"[network]\nreport_interval = 0.3\nnft_table = {NFT_TABLE}\n")
    log = open(os.path.join(tmp, "agent.log"), "wb")
    proc = subprocess.Popen([EXE, "service", "network-agent", "--host", host,
                             "--data-dir", data_dir, "--config-file", conf],
                            stdout=log, stderr=subprocess.STDOUT)
    return proc, data_dir, os.path.join(tmp, "agent.log")


def test_network_agent_process(unix_cloud):
    cloud, url, tmp = unix_cloud
    host = unique("cmp")
    admin = cloud.sdk()
    proc, data_dir, log = _spawn_agent(tmp, url, host)
    network = bridge = None
    try:
        def listed():
            assert proc.poll() is None, open(log).read()
            return [a for a in admin.network.agents(host=host) if a.is_alive]

        agents = _wait(listed, 30, "the agent's first heartbeat")
        # a compute host's agent: bridges and security groups, no DHCP or metadata
        assert [(a.agent_type, a.binary) for a in agents] == [
            ("Linux bridge agent", "neutron-linuxbridge-agent")]
        rows = cloud.cli("network", "agent", "list", "--host", host, "-f", "json")
        assert [(r["Agent Type"], r["Host"], r["Alive"]) for r in rows] == [
            ("Linux bridge agent", host, True)]

        network = admin.network.create_network(name=unique("net"))
        admin.network.create_subnet(network_id=network.id, ip_version=4,
                                    cidr="10.231.0.0/24")
        port = admin.network.create_port(network_id=network.id, binding_host_id=host)
        # bound to a host with a live agent: a bridge port, plumbed before the answer
        assert port.binding_vif_type == "bridge"
        bridge = "brq" + network.id[:11]
        assert bridge in links()
        assert f"qdhcp-{network.id}" not in os.listdir("/run/netns") if os.path.isdir(
            "/run/netns") else True  # DHCP is the network node's
        address = port.fixed_ips[0]["ip_address"]
        _wait(lambda: address in sh("nft", "list", "table", "inet", NFT_TABLE,
                                check=False).stdout, 10, "the port's security group rules")
        assert _wait(lambda: admin.network.get_agent(agents[0].id).configuration.get(
            "devices") == 1, 10, "the heartbeat counting the port")
        # it never opened a database (the configured one does not exist) nor made one
        assert not [f for f in os.listdir(data_dir) if "sqlite" in f or f.endswith(".db")]
        assert "database" not in open(log).read().lower()

        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        _wait(lambda: not admin.network.get_agent(agents[0].id).is_alive, DOWN_TIME + 5,
              "the killed agent to show dead")
        admin.network.delete_agent(agents[0])  # dead: an admin may remove it
        assert list(admin.network.agents(host=host)) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        if network is not None:
            for p in admin.network.ports(network_id=network.id):
                admin.network.delete_port(p)
            admin.network.delete_network(network)
        if bridge:
            sh("ip", "link", "del", bridge, check=False)
        for family in ("inet", "bridge"):
            sh("nft", "delete", "table", family, NFT_TABLE, check=False)
