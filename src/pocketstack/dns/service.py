"""The DNS service's background part, in the cloud's main process: the embedded
authoritative server ([dns] listen) and the publisher that feeds it what the API holds.
The server's address goes to ``<data dir>/dns/listen`` for `pocketstack dns server`."""
from __future__ import annotations

import logging
import os

from pocketstack.common import config

LOG = logging.getLogger(__name__)


def listen_file(data_dir: str) -> str:
    return os.path.join(data_dir, "dns", "listen")


class _Handle:
    def __init__(self, server, publisher, path):
        self.server, self.publisher, self.path = server, publisher, path

    def stop(self) -> None:
        self.publisher.stop()
        self.server.stop()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def start(cloud) -> list:
    listen = config.CONF.dns.listen
    if getattr(cloud, "api_worker", False) or not listen:
        return []
    from pocketstack.dns import authority, publisher, server

    host, port = server.parse_listen(listen)
    auth = authority.Authority()
    try:
        dns_server = server.DNSServer(auth, host, port).start()
    except OSError as error:
        # Another cloud on this machine has the port: answer on a free one (printed by
        # `pocketstack dns server`) rather than not at all.
        LOG.warning("DNS server cannot listen on %s (%s); using a free port", listen, error)
        dns_server = server.DNSServer(auth, host, 0).start()
    path = listen_file(cloud.data_dir)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(dns_server.address + "\n")
    os.replace(path + ".tmp", path)
    pub = publisher.Publisher(auth, dns_server.address).start()
    return [_Handle(dns_server, pub, path)]
