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

from pocketstack.common import config, rpc, runtime
from pocketstack.common.context import RequestContext

LOG = logging.getLogger(__name__)
TOPIC = "network"
REPORT_TIMEOUT = 10.0


class NetworkRpcEndpoint:
    """What the network service answers to agents."""

    def report_state(self, ctx, agent_state: dict) -> dict:
        from pocketstack.network import agents  # noqa: PLC0415 (SQLAlchemy models)

        return agents.report_state(agent_state)


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
