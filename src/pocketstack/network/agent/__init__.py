"""The host networking agent: real guest networking on this host (neutron's linuxbridge
and DHCP agents, in small), off unless ``[network] host_networking`` is set or
``[DEFAULT] compute_driver`` is libvirt.

Per network that has a port bound to a bridge host (``[network] bridge_hosts``, default
this host: ``[DEFAULT] host`` and ``[network] host``): a Linux bridge
``brq<network id[:11]>`` with no host address, a namespace ``qdhcp-<network id>`` joined
to it by a veth pair that carries the DHCP port's MAC and addresses, dnsmasq inside
serving the network service's files (dhcp.py), and the metadata proxy listening on
169.254.169.254:80 in the namespace (metadata_proxy.py), which forwards to compute's
metadata API. Security groups become nftables rules (firewall.py). Guests plug a tap
``tap<port id[:11]>`` into the bridge (libvirt).

The network service calls ``port_bound`` (before a bound port's events go out, so the
bridge exists when compute plugs the tap) and ``changed`` (anything else); both do
nothing when the agent does not run.
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


def is_bridge_host(host: str | None) -> bool:
    """Ports bound to ``host`` are plugged into this host's bridges."""
    return bool(host) and enabled() and host in bridge_hosts()


def bridge_name(network_id: str) -> str:
    return "brq" + network_id[:11]


def tap_name(port_id: str) -> str:
    return "tap" + port_id[:11]


def namespace(network_id: str) -> str:
    return "qdhcp-" + network_id


def vif_details(network_id: str) -> dict:
    return {"port_filter": True, "connectivity": "l2",
            "bridge_name": bridge_name(network_id)}


def port_bound(network_id: str) -> None:
    """A port on the network was bound to a bridge host: plumb the network now. The
    binding is committed already: a failure here is logged and retried in the background
    (compute's wait for the port then says what went wrong), never the API's error."""
    host_agent = running()
    if host_agent is None:
        return
    try:
        host_agent.ensure(network_id)
    except Exception:  # noqa: BLE001
        LOG.exception("Plumbing network %s failed; retrying in the background", network_id)
        host_agent.mark()


def changed() -> None:
    """Ports, DHCP files or security groups changed: reconcile soon (in the background)."""
    host_agent = running()
    if host_agent is not None:
        host_agent.mark()
