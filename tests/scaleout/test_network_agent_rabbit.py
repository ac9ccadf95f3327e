"""Per-host network agents over RabbitMQ: `pocketstack service network-agent --host net-a` next to
the
scale-out cloud heartbeats into the agents API, and a port bound to net-a is plumbed by
it (the API's call to network-agent.net-a, the agent's calls back to the network
service) before the port's answer. Needs root for the bridge."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest

HOST = "net-a"
NFT_TABLE = f"scaleout_netagent_{uuid.uuid4().hex[:8]}"  # its own: runs may share a host

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "nft")),
    reason="needs root, iproute2 and nftables")


def _links() -> str:
    return subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                          check=True).stdout


def test_network_agent_over_rabbitmq(scaleout):
    node = scaleout.node(HOST, "network-agent", "--host", HOST)
    config_file = node.command[node.command.index("--config-file") + 1]
    with open(config_file, "a") as f:
        f.write(f"[network]\nreport_interval = 0.5\nnft_table = {NFT_TABLE}\n")
    node.spawn()
    admin = scaleout.sdk()
    network = None
    try:
        agents = scaleout.wait_for("the network agent's heartbeat", lambda: [
            a for a in admin.network.agents(host=HOST) if a.is_alive], timeout=60)
        assert [a.agent_type for a in agents] == ["Linux bridge agent"]
        # the api's own roles report over the same RPC path
        controller = {a.agent_type for a in admin.network.agents(host="controller")
                      if a.is_alive}
        assert {"DHCP agent", "L3 agent"} <= controller
        network = admin.network.create_network(name="netagent-rabbit")
        admin.network.create_subnet(network_id=network.id, ip_version=4,
                                    cidr="10.232.0.0/24")
        port = admin.network.create_port(network_id=network.id, binding_host_id=HOST)
        assert port.binding_vif_type == "bridge"
        assert f"brq{network.id[:11]}:" in _links()
        assert node.stop() == 0  # SIGTERM: a clean stop
        assert f"{HOST} stopped" in node.output()
    finally:
        if network is not None:
            for p in admin.network.ports(network_id=network.id):
                admin.network.delete_port(p)
            admin.network.delete_network(network)
            subprocess.run(["ip", "link", "del", f"brq{network.id[:11]}"],
                           capture_output=True)
        subprocess.run(["nft", "delete", "table", "inet", NFT_TABLE], capture_output=True)
        subprocess.run(["nft", "delete", "table", "bridge", NFT_TABLE], capture_output=True)
