"""The agent's loop: ask the network service over RPC what this host should have
(agent_rpc.py; the service plans it from its database, host_plans.py: the agent never
reads the database), make the host match (plumbing.py, firewall.py, l3.py), and proxy
metadata requests from each DHCP and router namespace to compute's metadata API
(metadata_proxy.py).

The agent listens on RPC topic ``network-agent`` with ``server=<host>`` for each host
name its ports are bound under: ``plumb_network`` (a call: the API waits, so the bridge
exists before compute plugs the tap) and ``refresh`` (a cast: anything else changed).
``ensure(network_id)`` plumbs one network at once; ``mark()`` asks for a full reconcile
on the agent's thread (changes are coalesced); start-up reconciles everything, including
what a crash left behind. It runs in the network service's process (all-in-one) or as
`pocketstack service network-agent` on a compute host: the same code either way.
"""
from __future__ import annotations

import logging
import os
import shutil
import threading

from pocketstack.common import config, rpc, runtime
from pocketstack.network import agent, agent_rpc, dhcp
from pocketstack.network.agent import firewall, l3, overlay, plumbing, provider_links
from pocketstack.network.agent.metadata_proxy import MetadataProxy, RouterMetadataProxy
from pocketstack.network.agent import ip as host

LOG = logging.getLogger(__name__)
TOPIC = "network-agent"
RESYNC_INTERVAL = 60.0  # seconds between full reconciles without a change notice
_NOTHING_YET = object()


class HostAgentEndpoint:
    """What the network service asks of this host's agent."""

    def __init__(self, host_agent: "HostAgent"):
        self.host_agent = host_agent

    def plumb_network(self, ctx, network_id: str) -> None:
        self.host_agent.ensure(network_id)

    def refresh(self, ctx) -> None:
        LOG.debug("Refresh asked")
        self.host_agent.mark()

    def dhcp_changed(self, ctx, network_id: str) -> None:
        self.host_agent.fetch_dhcp([network_id])


# --- the agent -----------------------------------------------------------------------

class HostAgent:
    def __init__(self, files_over_rpc: bool = False):
        self.lock = threading.RLock()  # one change to the host at a time
        # A network node in a process of its own (no database) gets the DHCP files from
        # the network service over RPC; in its process they are on this disk already.
        self.files_over_rpc = files_over_rpc
        self.dhcp_lock = threading.Lock()  # one writer of the received files
        self.cond = threading.Condition()
        self.dirty = False
        self.stopping = False
        self.metadata: dict[str, MetadataProxy] = {}  # network id -> its proxy
        self.router_metadata: dict[str, RouterMetadataProxy] = {}  # router id -> its proxy
        self.plans: dict[str, plumbing.NetworkPlan] = {}  # what each network was plumbed as
        self.routers: dict[str, l3.RouterPlan] = {}  # what each router was plugged as
        self.rules_applied = _NOTHING_YET  # the firewall.Layout applied (None: no tables)
        # Binds waiting for the lock share one firewall pass: each takes a ticket (its
        # binding is committed by then); a pass that asked the network service for the
        # firewall state after ticket n was taken covers every bind up to n.
        self.tickets = 0
        self.rules_cover = 0
        self.ticket_lock = threading.Lock()
        # A bind on a network this host already has does not wait for a plumbing pass
        # (seconds while ten guests boot): it runs its own firewall pass beside it. The
        # pass that read the host's state before that bind must then not unplug its
        # network: each network's latest bind ticket says so.
        self.fw_lock = threading.Lock()  # one firewall pass at a time
        self.bound: dict[str, int] = {}  # network id -> ticket of its latest bind
        self.thread = threading.Thread(target=runtime.bind(self._run),
                                       name="network-host-agent", daemon=True)
        self.hosts = sorted(agent.bridge_hosts())  # the names its ports are bound under
        self.service = agent_rpc.NetworkServiceClient(timeout=30)
        self.servers: list = []  # its RPC servers, one per host name
        self.devices = 0  # guest ports in the last firewall pass (heartbeats)
        self.network_node = False  # DHCP, metadata and routers are plumbed here too
        self.reporter = None  # its heartbeats (agent_rpc.StateReporter) once started
        self.overlay_checked = False  # stale VXLAN devices looked for since start

    def start(self) -> "HostAgent":
        # what this data dir's agent plumbed before: its tables may carry another name
        firewall.forget_previous_table(made_before=bool(self._plumbed() or l3.managed()))
        os.makedirs(self._root(), exist_ok=True)
        self.reconcile()
        self.thread.start()
        for name in self.hosts:
            server = rpc.get_server(TOPIC, [HostAgentEndpoint(self)], server=name, workers=4)
            server.start()
            self.servers.append(server)
        # a change notice sent between the first pass and now found no one listening
        # (lost, not queued): one more pass covers it
        self.mark()
        return self

    @staticmethod
    def _root() -> str:
        return os.path.join(config.data_dir(), "network", "agent")

    def states(self) -> list[dict]:
        """This host's heartbeats: the Linux bridge agent (bridges, taps, security
        groups) and on the network node the Metadata agent (the proxies in the DHCP
        namespaces)."""
        me = agent.host()
        tunnel = overlay.local_ip()
        # as neutron's linuxbridge agent: the network service learns this host's VTEP
        # (tunneling_ip) from here, for every other host's forwarding entries
        bridge = [
            {"agent_type": "Linux bridge agent", "host": me, "configurations": {
                "bridge_mappings": {}, "interface_mappings": provider_links.mappings(),
                "devices": self.devices, "networks": len(self.plans), "extensions": [],
                "l2_population": bool(tunnel), "tunnel_types": ["vxlan"] if tunnel else [],
                **({"tunneling_ip": tunnel} if tunnel else {}),
                "log_agent_heartbeats": False}}]
        if not self.network_node:
            return bridge
        return bridge + [
            {"agent_type": "Metadata agent", "host": me, "configurations": {
                "log_agent_heartbeats": False, "metadata_proxy_socket": "",
                "nova_metadata_host": config.CONF.network.metadata_url or "",
                "proxies": len(self.metadata) + len(self.router_metadata)}}]

    def mark(self) -> None:
        with self.cond:
            self.dirty = True
            self.cond.notify_all()

    def _run(self) -> None:
        while True:
            with self.cond:
                # a change notice (a cast) can be lost: the agent started after it was
                # sent, or its process restarted; a full pass now and then catches up
                if not self.dirty and not self.stopping:
                    self.cond.wait(timeout=RESYNC_INTERVAL)
                if self.stopping:
                    return
                self.dirty = False
            try:
                self.reconcile()
            except Exception:  # noqa: BLE001 - the next change retries
                LOG.exception("Host networking reconcile failed")

    # --- work ---------------------------------------------------------------------

    def ensure(self, network_id: str) -> None:
        """Plumb one network now (bridge, namespace, dnsmasq, metadata) and its rules."""
        with self.ticket_lock:
            self.tickets += 1
            ticket = self.bound[network_id] = self.tickets
        # The usual bind: another port on a network plumbed here, maybe by the pass that
        # holds the lock now (the first boots of a burst on a network new to the host).
        while not self._plumbed_here(network_id):
            if self.lock.acquire(timeout=0.02):
                try:
                    plan = self.service.network_plan(network_id, self.hosts)
                    if plan is not None:
                        self._plug(plan)
                finally:
                    self.lock.release()
                break
        self._firewall(ticket)

    def _plumbed_here(self, network_id: str) -> bool:
        return network_id in self.plans and os.path.isdir(
            f"/sys/class/net/{agent.bridge_name(network_id)}")

    def reconcile(self) -> None:
        with self.lock:
            asked_at = self.tickets  # binds after this may be missing from the answer
            plans, routers, self.network_node = self.service.host_state(self.hosts)
            networks = {plan.network_id for plan in plans}
            for plan in plans:
                self._plug(plan)
            # catches a lost notice (dhcp_changed is a cast)
            self.fetch_dhcp([p.network_id for p in plans if p.dhcp_subnets])
            if overlay.local_ip() or not self.overlay_checked:
                # what a crash or an earlier config left: VXLAN devices no plan wants
                # (without an overlay only at start: no `ip` process per pass)
                overlay.remove_stale({overlay.device_name(plan.segmentation_id)
                                      for plan in plans if overlay.wanted(plan)},
                                     {agent.bridge_name(n) for n in self._plumbed()})
                self.overlay_checked = True
            self._firewall()
            # routers after their networks' bridges exist, and gone before them
            for router_id in sorted(l3.managed() - set(routers)):
                self._unplug_router(router_id)
            for plan in routers.values():
                self._plug_router(plan)
            for network_id in sorted(self._plumbed() - networks):
                if self._may_unplug(network_id, asked_at):
                    self._unplug(network_id)

    def _may_unplug(self, network_id: str, asked_at: int) -> bool:
        """No bind since the state was read wants the network; from here on a bind
        takes the slow path (it waits for the lock and plumbs the network again)."""
        with self.ticket_lock:
            if self.bound.get(network_id, 0) > asked_at:
                return False
            self.bound.pop(network_id, None)
            self.plans.pop(network_id, None)
            return True

    def _plug_router(self, plan: l3.RouterPlan) -> None:
        old = self.routers.get(plan.router_id)
        if old == plan and l3.intact(plan) and (
                plan.router_id in self.router_metadata or not plan.interfaces):
            return
        try:
            l3.plug(plan, old if old is not None and l3.intact(old) else None)
            self.routers[plan.router_id] = plan
            self._serve_router_metadata(plan)
        except Exception:  # noqa: BLE001 - one router's failure does not stop the others
            self.routers.pop(plan.router_id, None)
            LOG.exception("Plugging router %s failed; retrying in a second", plan.router_id)
            retry = threading.Timer(1.0, self.mark)
            retry.daemon = True
            retry.start()

    def _unplug_router(self, router_id: str) -> None:
        self.routers.pop(router_id, None)
        self._stop_router_metadata(router_id)
        l3.unplug(router_id)

    def _serve_router_metadata(self, plan: l3.RouterPlan) -> None:
        """The router's proxy on 169.254.169.254:80 in its namespace (as neutron's L3
        agent runs one per router), for the guests of its interfaces' networks; made
        anew when the namespace is (a socket stays in the namespace it was made in)."""
        router_id = plan.router_id
        if not plan.interfaces:
            self._stop_router_metadata(router_id)
            return
        ns = l3.namespace(router_id)
        ns_id = os.stat(f"/run/netns/{ns}").st_ino
        running = self.router_metadata.get(router_id)
        if running is not None and running.ns_id == ns_id:
            return
        self._stop_router_metadata(router_id)

        def networks() -> list[str]:
            now = self.routers.get(router_id, plan)
            return [p.network_id for p in now.interfaces]

        sock = host.listening_socket(ns, l3.METADATA_ADDRESS, 80)
        self.router_metadata[router_id] = RouterMetadataProxy(router_id, networks, sock=sock,
                                                              ns_id=ns_id)

    def _stop_router_metadata(self, router_id: str) -> None:
        proxy = self.router_metadata.pop(router_id, None)
        if proxy is not None:
            proxy.stop()

    def _plumbed(self) -> set[str]:
        """Networks this agent plumbed (another cloud on this host keeps its own)."""
        root = self._root()
        return set(os.listdir(root)) if os.path.isdir(root) else set()

    def _plug(self, plan: plumbing.NetworkPlan) -> None:
        if self.plans.get(plan.network_id) == plan and plumbing.intact(plan) and (
                plan.network_id in self.metadata or not plan.dhcp_subnets) and \
                overlay.intact(plan) and provider_links.intact(plan):
            return  # as plumbed before (the usual case: another port on the network)
        if plan.dhcp_subnets:
            self.fetch_dhcp([plan.network_id], reload=False)  # dnsmasq starts with them
        plumbing.plug(plan)
        if plan.dhcp_port_id and plan.dhcp_subnets:
            self._serve_metadata(plan.network_id)
        else:
            self._stop_metadata(plan.network_id)
        try:  # the bridge reaches the network's other hosts
            if overlay.wanted(plan):
                overlay.plug(plan)
            provider_links.plug(plan)
        except host.CommandFailed:
            # the guests still meet on this host; the plan is not recorded, so the next
            # pass tries again, and the other networks are plumbed meanwhile
            LOG.exception("Network %s gets no uplink on this host", plan.network_id)
            self.plans.pop(plan.network_id, None)
            return
        self.plans[plan.network_id] = plan

    def _unplug(self, network_id: str) -> None:
        self.plans.pop(network_id, None)
        self._stop_metadata(network_id)
        plumbing.unplug(network_id)
        if self.files_over_rpc:
            shutil.rmtree(dhcp.network_dir(network_id), ignore_errors=True)

    def fetch_dhcp(self, network_ids: list[str], reload: bool = True) -> None:
        """Write the networks' DHCP files as the network service renders them, and have
        each network's dnsmasq re-read what changed (files_over_rpc only)."""
        if not self.files_over_rpc or not network_ids:
            return
        with self.dhcp_lock:
            for network_id, texts in self.service.dhcp_files(network_ids).items():
                if texts is None:  # gone, or no DHCP any more
                    shutil.rmtree(dhcp.network_dir(network_id), ignore_errors=True)
                elif dhcp.write_received(network_id, texts) and reload:
                    plumbing.reload(network_id)

    def _serve_metadata(self, network_id: str) -> None:
        if network_id in self.metadata:
            return
        sock = host.listening_socket(agent.namespace(network_id),
                                     plumbing.METADATA_ADDRESS, 80)
        self.metadata[network_id] = MetadataProxy(network_id, sock=sock)

    def _stop_metadata(self, network_id: str) -> None:
        server = self.metadata.pop(network_id, None)
        if server is not None:
            server.stop()

    def _firewall(self, ticket: int | None = None) -> None:
        with self.fw_lock:
            # a pass since bind ``ticket`` was taken has its port: nothing to do
            if ticket is None or self.rules_cover < ticket:
                self._firewall_pass()

    def _firewall_pass(self) -> None:
        covers = self.tickets  # binds committed before this question are in the answer
        ports, rules, members, dhcp_taps, address_groups, down_taps = \
            self.service.firewall_state(self.hosts)
        self.devices = len(ports)
        wanted = (firewall.layout(ports, rules, members, dhcp_taps, address_groups,
                                  down_taps)
                  if ports or dhcp_taps or down_taps else None)
        if self.rules_applied is _NOTHING_YET:  # first run: whatever a crash left goes
            firewall.apply_layout(None, wanted)
        elif wanted != self.rules_applied:
            # a bind adds one port's chains and map entries, not a new table
            firewall.apply_layout(self.rules_applied, wanted)
        self.rules_applied = wanted
        self.rules_cover = max(self.rules_cover, covers)

    def files_written(self, network_id: str) -> None:
        """The DHCP writer replaced the network's files: dnsmasq re-reads them, and the
        network's ports may have changed (bound, unbound, gone)."""
        plumbing.reload(network_id)
        self.mark()

    def stop(self, teardown: bool = False) -> None:
        """Stop the thread and the metadata listeners; ``teardown`` also removes every
        bridge, namespace and dnsmasq this agent made, and its rules (tests)."""
        if self.reporter is not None:
            self.reporter.stop()
        for server in self.servers:
            server.stop()
            server.wait()
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        if self.thread.is_alive():
            self.thread.join(timeout=10)
        with self.lock:
            for network_id in list(self.metadata):
                self._stop_metadata(network_id)
            for router_id in list(self.router_metadata):
                self._stop_router_metadata(router_id)
            if teardown:
                for router_id in sorted(l3.managed()):
                    self._unplug_router(router_id)
                for network_id in sorted(self._plumbed()):
                    plumbing.unplug(network_id)
                firewall.remove()


PACKAGES = {"ip": "iproute2", "dnsmasq": "dnsmasq-base", "nft": "nftables"}


def preflight() -> None:
    """Say plainly what is missing, before anything is half made."""
    if os.geteuid() != 0:
        raise config.ConfigError(
            "Host networking ([network] host_networking, or a libvirt host) makes bridges, "
            "namespaces and nftables rules and needs root: run pocketstack as root, or "
            "turn it off.")
    missing = [tool for tool in PACKAGES if shutil.which(tool) is None]
    if missing:
        raise config.ConfigError(
            f"Host networking needs {', '.join(missing)}: apt-get install "
            f"{' '.join(PACKAGES[t] for t in missing)}")


def start(files_over_rpc: bool = False) -> HostAgent:
    """``files_over_rpc``: this process has no database (`pocketstack service
    network-agent`): a network node's DHCP files come from the network service."""
    preflight()
    running = HostAgent(files_over_rpc)
    agent._slot().agent = running
    dhcp.add_listener(running.files_written)
    try:
        running.start()
        running.reporter = agent_rpc.StateReporter("network-host-agent",
                                                   running.states).start()
        return running
    except Exception:
        stop(running)
        raise


def stop(running: HostAgent, teardown: bool = False) -> None:
    dhcp.remove_listener(running.files_written)
    if agent.running() is running:
        agent._slot().agent = None
    running.stop(teardown=teardown)
