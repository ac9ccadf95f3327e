"""`pocketstack service network-agent --host NAME`: the host networking agent as a process
of its own on a compute host (per-host agents).

It needs the shared config's ``[DEFAULT] transport_url`` (RabbitMQ, or ``unix://DIR`` on
one machine) and nothing else of the cloud's: no database (what to plumb comes from the
network service over RPC, agent_rpc.py), no Fernet keys, no API. It plugs the ports bound
to NAME: a bridge per network with such a port and their security groups (the DHCP
namespaces, metadata and routers are the network node's, ``[network] dhcp_agent_host``),
and reports a Linux bridge agent on NAME every ``[network] report_interval``.

On the network node, its metadata proxies (DHCP and router namespaces) look guests' ports
up over RPC too, and forward to compute's metadata API at ``[network] metadata_url``,
signed with ``[service_user] metadata_proxy_shared_secret`` (the API host's).
"""
from __future__ import annotations

import logging
import os
import threading
import time

from pocketstack.common import config, rpc

LOG = logging.getLogger(__name__)
START_TIMEOUT = 60.0  # seconds to wait for the network service at start-up


class NetworkAgentProcess:
    def __init__(self, data_dir: str, config_file: str | None, host: str | None,
                 debug: bool = False):
        self.data_dir = os.path.abspath(data_dir)
        self.config_file = config_file or os.path.join(self.data_dir, "pocketstack.conf")
        self.config_file_given = config_file is not None
        self.overrides: dict = {"debug": True} if debug else {}
        if host:
            # its ports are the ones bound to this name, whatever the shared file says
            self.overrides.update({"host": host, "network.host": host,
                                   "network.bridge_hosts": [host]})
        self.running = None
        self.stopping = threading.Event()

    def prepare(self) -> None:
        from pocketstack.cloud import make_private_dir, require_message_bus  # noqa: PLC0415

        if self.config_file_given and not os.path.isfile(self.config_file):
            raise config.ConfigError(f"Config file {self.config_file} does not exist.")
        make_private_dir(self.data_dir)
        config.load(self.data_dir, self.config_file, self.overrides)
        config.check()
        require_message_bus(self.config_file)
        rpc.preload()  # on the main thread: see rpc.preload
        if not config.CONF.network.host:
            config.CONF.set_override("host", config.CONF.host, group="network")
        config.CONF.set_override("host_networking", True, group="network")

    @property
    def host(self) -> str:
        return config.CONF.network.host

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start the agent; while the network service does not answer yet (started
        alongside), retry for up to ``timeout`` seconds."""
        from pocketstack.network.agent import agent  # noqa: PLC0415

        deadline, said = time.monotonic() + timeout, None
        while True:
            try:
                self.running = agent.start(files_over_rpc=True)
                return
            except (rpc.MessagingTimeout, rpc.MessagingUnavailable) as error:
                if time.monotonic() > deadline or self.stopping.is_set():
                    raise
                if str(error) != said:
                    LOG.info("Waiting up to %gs for the network service (%s)", timeout, error)
                    said = str(error)
                self.stopping.wait(1.0)

    def request_stop(self) -> None:
        self.stopping.set()

    def serve_forever(self) -> None:
        while not self.stopping.wait(1.0):
            pass
        self.close()

    def close(self) -> None:
        """Stop listening and reporting; bridges and rules stay for the guests."""
        from pocketstack.network.agent import agent  # noqa: PLC0415

        if self.running is not None:
            agent.stop(self.running)
            self.running = None
        rpc.cleanup()
