"""The host networking agent: real guest networking on this host (neutron's linuxbridge
and DHCP agents, in small), off unless ``[network] host_networking`` is set or
``[DEFAULT] compute_driver`` is libvirt.

Per network that has a port bound to a bridge host (``[network] bridge_hosts``, default
this host: ``[DEFAULT] host`` and ``[network] host``): a Linux bridge
``brq<network id[:11]>`` with no host address, a namespace ``qdhcp-<network id>`` joined
to it by a veth pair that carries the DHCP port's MAC and addresses, dnsmasq inside
serving the network service's files (dhcp.py), and the metadata proxy listening on
169.254.169.254:80 in the namespace (metadata_proxy.py), which forwards to compute's
metadata API; on the network node each router namespace (l3.py) gets a metadata proxy
too, for subnets whose DHCP routes 169.254.169.254 to their router. Security groups become nftables
rules (firewall.py). Guests plug a tap
``tap<port id[:11]>`` into the bridge (libvirt).

Each host's agent (agent.py) asks the network service over RPC what to plumb; it runs
inside the network service's process (the all-in-one: its ports' hosts are the bridge
hosts) or as `pocketstack service network-agent` on a compute host. The network service
calls ``port_bound`` (before a bound port's events go out, so the bridge exists when
compute plugs the tap: an RPC call to that host's agent) and ``changed`` (anything else:
a cast to every agent); both do nothing when no agent runs.
"""
from __future__ import annotations

import logging

from pocketstack.common import config, runtime

LOG = logging.getLogger(__name__)


class _Slot:
    agent = None  # this cloud's HostAgent once started (agent.py)


def _slot() -> _Slot:
    return runtime.current().slot(__name__, _Slot)


def running():
    """The HostAgent of the current cloud, or None."""
    return _slot().agent


def enabled() -> bool:
    conf = config.CONF
    if conf.network.host_networking:
        return True
    try:
        return conf.compute_driver == "libvirt" or conf.libvirt.enabled
    except AttributeError:  # no libvirt driver in this build: the option does not exist
        return False


def host() -> str:
    """This machine's name in port bindings, as compute names it ([network] host; on a
    libvirt host by default the libvirt compute host's name, as compute derives it)."""
    conf = config.CONF
    if conf.network.host:
        return conf.network.host
    return config.libvirt_host_name() if enabled() else conf.host


def bridge_hosts() -> set[str]:
    if config.CONF.network.bridge_hosts:
        return set(config.CONF.network.bridge_hosts)
    return {config.CONF.host, host()}


def is_bridge_host(host: str | None, session=None) -> bool:
    """Ports bound to ``host`` are plugged into a bridge by an agent: this process's
    (its bridge hosts), or a host whose Linux bridge agent reports (``session``: the
    caller's database session, if it holds one)."""
    if not host:
        return False
    return _served_here(host) or host in agent_hosts(session)


def _served_here(host: str) -> bool:
    """Ports bound to ``host`` are this process's agent's."""
    return enabled() and host in bridge_hosts()


def maps_physnet(host: str, physnet: str, session) -> bool:
    """``host``'s agent has an interface for physical network ``physnet``: this
    process's from its configuration, another host's from its heartbeats."""
    if _served_here(host):
        from pocketstack.network.agent import provider_links  # noqa: PLC0415

        return physnet in provider_links.mappings()
    from pocketstack.network import agent_hosts  # noqa: PLC0415 (the database models)

    return physnet in agent_hosts.interface_mappings(host, session)


def agent_hosts(session=None) -> set[str]:
    """The hosts whose networking agent is alive (from its heartbeats)."""
    from pocketstack.network import agent_hosts  # noqa: PLC0415 (the database models)

    return agent_hosts.bridge_agent_hosts(session)


def bridge_name(network_id: str) -> str:
    return "brq" + network_id[:11]


def tap_name(port_id: str) -> str:
    return "tap" + port_id[:11]


def namespace(network_id: str) -> str:
    return "qdhcp-" + network_id


def vif_details(network_id: str) -> dict:
    return {"port_filter": True, "connectivity": "l2",
            "bridge_name": bridge_name(network_id)}


def _agent_client(host_name: str, timeout: float = 60):
    from pocketstack.common import rpc  # noqa: PLC0415

    return rpc.RPCClient("network-agent", server=host_name, timeout=timeout)


def port_bound(network_id: str, host_name: str) -> None:
    """A port on the network was bound to ``host_name``: its agent plumbs the network
    now. The binding is committed already: a failure here is logged and retried in the
    background (compute's wait for the port then says what went wrong), never the API's
    error."""
    from pocketstack.common.context import RequestContext  # noqa: PLC0415

    try:
        _agent_client(host_name).call(RequestContext.admin(), "plumb_network",
                                      network_id=network_id)
    except Exception as error:  # noqa: BLE001
        LOG.warning("Plumbing network %s on %s failed (%s); retrying in the background",
                    network_id, host_name, error)
        _refresh(host_name)


def changed(also=(), skip=()) -> None:
    """Ports, DHCP files or security groups changed: every agent reconciles soon (in the
    background); ``also``: hosts to tell that may not be listed yet (a first heartbeat),
    ``skip``: hosts that are up to date already."""
    hosts, skip = set(agent_hosts()) | set(also), set(skip)
    in_process = running()
    if in_process is not None:
        hosts.update(in_process.hosts)  # the names it listens under
        if skip & set(in_process.hosts):
            skip.update(in_process.hosts)  # one agent: up to date under all its names
    for host_name in sorted(hosts - skip):
        _refresh(host_name)


def dhcp_changed(network_id: str) -> None:
    """The network service rewrote a network's DHCP files: a network node whose agent
    runs in another process (``[network] dhcp_agent_host`` not served here) fetches them
    over RPC and has its dnsmasq re-read them."""
    node = config.CONF.network.dhcp_agent_host
    in_process = running()
    if not node or (in_process is not None and node in in_process.hosts):
        return
    from pocketstack.common.context import RequestContext  # noqa: PLC0415

    try:
        _agent_client(node).cast(RequestContext.admin(), "dhcp_changed",
                                 network_id=network_id)
    except Exception as error:  # noqa: BLE001 - its next reconcile fetches them
        LOG.debug("No DHCP notice for the agent on %s: %s", node, error)


def _refresh(host_name: str) -> None:
    from pocketstack.common.context import RequestContext  # noqa: PLC0415

    try:
        _agent_client(host_name).cast(RequestContext.admin(), "refresh")
    except Exception as error:  # noqa: BLE001 - a dead agent reconciles when it starts
        LOG.debug("No refresh for the agent on %s: %s", host_name, error)
