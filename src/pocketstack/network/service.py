"""Start-up of the network service inside the cloud process: where the DHCP files live,
the notifier that tells compute about ports, and a rewrite of every network's DHCP files
(they may predate a crash)."""
from __future__ import annotations

import os

from pocketstack.common import config
from pocketstack.network import dhcp, notifier


class _DhcpWriterHandle:
    def stop(self) -> None:
        dhcp.writer().stop()  # what is pending is written first


class _NotifierHandle:
    def __init__(self, nova: notifier.NovaNotifier):
        self.nova = nova

    def stop(self) -> None:
        if notifier.get() is self.nova:
            notifier.set_notifier(notifier.NullNotifier())
        self.nova.stop()


def start(cloud) -> list:
    conf = config.CONF
    from pocketstack.network import networks

    networks.vni_ranges()  # a malformed [network] vni_ranges stops start-up, not a create
    # A default, so a dhcp_dir in the config file still wins.
    conf.set_default("dhcp_dir", os.path.join(cloud.data_dir, "network", "dhcp"),
                     group="network")
    nova = notifier.NovaNotifier()
    notifier.set_notifier(nova)
    handles = [_DhcpWriterHandle(), _NotifierHandle(nova)]
    if getattr(cloud, "api_worker", False):  # the main process does the rest (workers.py)
        return handles
    dhcp.resync_all()
    from pocketstack.network import agent_rpc, agents

    # Agents talk to this service over RPC only (heartbeats, what to plumb): agent_rpc.py.
    handles.append(agent_rpc.start_server())
    from pocketstack.network import agent

    # the host name this machine's Linux bridge and Metadata agents report (compute's
    # name for it on a libvirt host), so that the network node shows as one host
    host = agent.host()
    handles.append(agent_rpc.StateReporter(
        "network-node", lambda: agents.network_node_states(host)).start())

    if agent.enabled():  # real guest networking on this host (needs root)
        from pocketstack.network.agent import agent as host_agent

        handles.append(_HostAgentHandle(host_agent.start()))
    return handles


class _HostAgentHandle:
    def __init__(self, running):
        self.running = running

    def stop(self) -> None:
        from pocketstack.network.agent import agent as host_agent

        host_agent.stop(self.running)  # bridges and namespaces stay for guests still running
