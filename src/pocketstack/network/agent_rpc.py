"""The network service's RPC interface for agents (topic ``network``), and the agent's
side of it: heartbeats.

Agents never read the network service's database: they report their state here
(``report_state``, every ``[network] report_interval`` seconds) over whatever
``[DEFAULT] transport_url`` says — in-process for the all-in-one, unix sockets for
`up --workers`, RabbitMQ for scale-out — so one code path serves all three.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

from pocketstack.common import config, exceptions, rpc, runtime
from pocketstack.common.context import RequestContext

LOG = logging.getLogger(__name__)
TOPIC = "network"
REPORT_TIMEOUT = 10.0


class NetworkRpcEndpoint:
    """What the network service answers to agents."""

    def report_state(self, ctx, agent_state: dict) -> dict:
        from pocketstack.network import agents  # noqa: PLC0415 (SQLAlchemy models)

        return agents.report_state(agent_state)

    # What a host's agent should plumb (host_plans.py); ``hosts``: the names its ports
    # are bound under.

    def host_state(self, ctx, hosts: list) -> dict:
        from pocketstack.network import host_plans  # noqa: PLC0415

        return host_plans.host_state(_host_names(hosts))

    def dhcp_files(self, ctx, network_ids: list) -> dict:
        """network id -> its DHCP files' text (None: no DHCP), for a network node's agent
        in another process."""
        from pocketstack.network import dhcp  # noqa: PLC0415

        if not isinstance(network_ids, list) or not all(
                isinstance(n, str) for n in network_ids):
            raise exceptions.BadRequest("network_ids must be a list of network ids")
        return {network_id: dhcp.contents(network_id) for network_id in network_ids}

    def network_plan(self, ctx, network_id: str, hosts: list) -> dict | None:
        from pocketstack.network import host_plans  # noqa: PLC0415

        if not isinstance(network_id, str):
            raise exceptions.BadRequest("network_id must be a string")
        return host_plans.network_plan(network_id, _host_names(hosts))

    def firewall_state(self, ctx, hosts: list) -> dict:
        from pocketstack.network import host_plans  # noqa: PLC0415

        return host_plans.firewall_state(_host_names(hosts))

    def metadata_ports(self, ctx, network_ids: list, ip_address: str) -> list[dict]:
        from pocketstack.network import host_plans  # noqa: PLC0415

        if not isinstance(network_ids, list) or not all(
                isinstance(n, str) for n in network_ids) or not isinstance(ip_address, str):
            raise exceptions.BadRequest("network_ids must be a list of network ids and "
                                        "ip_address a string")
        return host_plans.metadata_ports(network_ids, ip_address)


def _host_names(hosts) -> list[str]:
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
        raise exceptions.BadRequest("hosts must be a list of host names")
    return hosts


class _ServerHandle:
    def __init__(self, server):
        self.server = server

    def stop(self) -> None:
        self.server.stop()
        try:
            self.server.wait()
        except Exception:  # noqa: BLE001 - shutting down anyway
            pass


def start_server() -> _ServerHandle:
    server = rpc.get_server(TOPIC, [NetworkRpcEndpoint()], workers=4)
    server.start()
    return _ServerHandle(server)


class NetworkServiceClient:
    """An agent's calls to the network service."""

    def __init__(self, timeout: float = REPORT_TIMEOUT):
        self.client = rpc.RPCClient(TOPIC, timeout=timeout)

    def report_state(self, agent_state: dict) -> dict:
        return self.client.call(RequestContext.admin(), "report_state",
                                agent_state=agent_state)


    # --- what to plumb, rebuilt as the agent's plans --------------------------------

    def host_state(self, hosts: list[str]):
        """(network plans, router plans, whether the hosts are the network node) for a
        full reconcile."""
        state = self.client.call(RequestContext.admin(), "host_state", hosts=hosts)
        return ([_network_plan(p) for p in state["networks"]],
                {r["router_id"]: _router_plan(r) for r in state["routers"]},
                state["network_node"])

    def network_plan(self, network_id: str, hosts: list[str]):
        plan = self.client.call(RequestContext.admin(), "network_plan",
                                network_id=network_id, hosts=hosts)
        return _network_plan(plan) if plan is not None else None

    def dhcp_files(self, network_ids: list[str]) -> dict:
        return self.client.call(RequestContext.admin(), "dhcp_files", network_ids=network_ids)

    def metadata_ports(self, network_ids: list[str], ip_address: str) -> list[dict]:
        """The servers' ports on ``network_ids`` holding ``ip_address`` (id, device_id,
        project_id, network_id)."""
        return self.client.call(RequestContext.admin(), "metadata_ports",
                                network_ids=network_ids, ip_address=ip_address)

    def firewall_state(self, hosts: list[str]):
        """(ports, rules, members, dhcp_taps, address_groups, down_taps) for
        firewall.layout."""
        from pocketstack.network.agent import firewall  # noqa: PLC0415

        state = self.client.call(RequestContext.admin(), "firewall_state", hosts=hosts)
        return ([firewall.GuestPort(**p) for p in state["ports"]],
                [firewall.Rule(**r) for r in state["rules"]], state["members"],
                state["dhcp_taps"], state["address_groups"], state.get("down_taps", []))


def _network_plan(plan: dict):
    from pocketstack.network.agent import plumbing  # noqa: PLC0415

    return plumbing.NetworkPlan(**{**plan, **{key: [tuple(pair) for pair in plan[key]]
                                              for key in ("dhcp_subnets", "fdb")
                                              if key in plan}})


def _router_port(port: dict | None):
    from pocketstack.network.agent import l3  # noqa: PLC0415

    if port is None:
        return None
    return l3.RouterPort(**{**port, "addresses": tuple(port["addresses"])})


def _router_plan(plan: dict):
    from pocketstack.network.agent import l3  # noqa: PLC0415

    return l3.RouterPlan(
        plan["router_id"], tuple(_router_port(p) for p in plan["interfaces"]),
        _router_port(plan["gateway"]), plan["gateway_ip"], plan["snat"],
        *(tuple(tuple(x) for x in plan[key])
          for key in ("routes", "floating_ips", "forwardings")))


class StateReporter:
    """Report ``states()`` (a list of agent states) now and every report_interval
    seconds on a daemon thread, until stop(). A report that fails is logged and retried
    at the next interval; the first successful one carries start_flag (started_at)."""

    def __init__(self, name: str, states: Callable[[], list[dict]],
                 client: NetworkServiceClient | None = None):
        self.name, self.states = name, states
        self.client = client or NetworkServiceClient()
        self.started: set[tuple[str, str]] = set()  # (host, type) reported since start
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=runtime.bind(self._run),
                                       name=f"heartbeat-{name}", daemon=True)

    def start(self) -> "StateReporter":
        self.report()  # agents are listed as soon as their process is up
        self.thread.start()
        return self

    def report(self) -> None:
        for state in self.states():
            key = (state["host"], state["agent_type"])
            try:
                self.client.report_state({**state, "start_flag": key not in self.started})
                self.started.add(key)
            except Exception as error:  # noqa: BLE001 - the next interval retries
                LOG.warning("Heartbeat of %s on %s failed: %s", state["agent_type"],
                            state["host"], error)

    def _run(self) -> None:
        while not self.stopping.wait(config.CONF.network.report_interval):
            try:
                self.report()
            except Exception:  # noqa: BLE001 - a heartbeat must keep beating
                LOG.exception("Heartbeat %s failed", self.name)

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout=5)
