"""The metadata proxies (neutron's metadata agent and the L3 agent's proxy, in small):
guests ask 169.254.169.254, compute's metadata API answers.

A ``MetadataProxy`` listens per network, on a socket the agent opened on
169.254.169.254:80 inside the network's ``qdhcp-`` namespace (isolated subnets: DHCP
routes 169.254.169.254 to the DHCP port). A ``RouterMetadataProxy`` listens per router, on
169.254.169.254:80 inside its ``qrouter-`` namespace (subnets with a router: DHCP routes
169.254.169.254 to the router), for the guests of every network the router has an
interface on; it plays neutron's haproxy that adds ``X-Neutron-Router-ID``, the agent then
looking the instance up among the router's networks. Either way a request's source
address is the guest's fixed IP, and the instance is found as neutron's agent finds it,
through the network service (over RPC, as neutron's agent asks its server): (networks,
source IP) -> port -> device_id and project (a router's subnets never overlap, so the
address names one port). The request then goes on
to compute's metadata API with the instance and project named and signed
(``X-Instance-ID-Signature``, the shared secret), and the answer comes back to the guest.
Guests cannot name another instance: nothing in a request is trusted for that, except on
a proxy made with ``trust_forwarded=True`` (the guest's address from
``X-Forwarded-For``; tests).
"""
from __future__ import annotations

import http.server
import ipaddress
import logging
import posixpath
import socket
import threading
from typing import Callable
from urllib.parse import parse_qsl, unquote, urlsplit

from pocketstack.common import config, exceptions, runtime

LOG = logging.getLogger(__name__)
TEXT = "text/plain"
MAX_BODY = 4096  # a guest posts its password (256 bytes at most) and nothing else
LOOKUP_TIMEOUT = 10.0  # seconds the network service may take to name a guest's port


def find_port(network_ids: list[str], ip_address: str) -> dict | None:
    """The port of a server on one of ``network_ids`` that has ``ip_address``; None when
    none has, or (overlapping subnets) more than one. Asked of the network service over
    RPC, as neutron's metadata agent asks: a network node needs no API credentials."""
    from pocketstack.network.agent_rpc import NetworkServiceClient

    if not network_ids:
        return None
    found = NetworkServiceClient(timeout=LOOKUP_TIMEOUT).metadata_ports(list(network_ids),
                                                                        ip_address)
    if len(found) > 1:
        LOG.warning("Metadata request from %s: %d servers have that address on networks "
                    "%s; answering none of them", ip_address, len(found),
                    ", ".join(network_ids))
        return None
    return found[0] if found else None


def _clean(path: str) -> tuple[str, list]:
    """The guest's path, normalised so it stays under compute's metadata API (a trailing
    slash kept: it lists), and its query as pairs."""
    parts = urlsplit(path)
    clean = posixpath.normpath("/" + unquote(parts.path)).lstrip("/")
    if parts.path.endswith("/") and clean not in ("", "."):
        clean += "/"
    return "/" + ("" if clean == "." else clean), parse_qsl(parts.query,
                                                            keep_blank_values=True)


def forward(method: str, path: str, network_ids: list[str], remote_ip: str,
            body: bytes = b"") -> tuple[int, str, bytes]:
    """(status, content type, body) for one guest request from ``remote_ip`` on one of
    ``network_ids``."""
    from pocketstack.clients.metadata import MetadataClient, sign

    where = ", ".join(network_ids) or "(none)"
    try:
        ipaddress.ip_address(remote_ip)
        port = find_port(network_ids, remote_ip)
    except ValueError:  # not an address (a forged X-Forwarded-For)
        port = None
    except Exception as error:  # noqa: BLE001 - the network API is down or refuses us
        LOG.warning("Metadata request from %s on network %s: cannot look up its port: %s",
                    remote_ip, where, error)
        return 503, TEXT, b"The metadata service is unavailable.\n"
    if port is None:
        LOG.info("Metadata request from %s on network %s: no instance has that address",
                 remote_ip, where)
        return 404, TEXT, b"No instance has this address on this network.\n"
    instance_id = port["device_id"]
    path, params = _clean(path)
    try:
        headers = {"X-Instance-ID": instance_id,
                   "X-Tenant-ID": port.get("project_id") or port.get("tenant_id") or "",
                   "X-Instance-ID-Signature": sign(instance_id),
                   "X-Forwarded-For": remote_ip}
        client = MetadataClient(caller="network",
                                endpoint=config.CONF.network.metadata_url or None)
        resp = client.forward(method, path, params, headers, body)
    except exceptions.ServiceUnavailable as error:
        LOG.warning("Metadata request %s %s of instance %s: %s", method, path, instance_id,
                    error)
        return 503, TEXT, b"The metadata service is unavailable.\n"
    except Exception as error:  # noqa: BLE001 - no secret, an unexpected answer
        LOG.warning("Metadata request %s %s of instance %s failed: %s", method, path,
                    instance_id, error)
        return 502, TEXT, b"The metadata service failed.\n"
    if resp.status_code == 403:
        LOG.warning("Compute's metadata API refused the request of instance %s: does it "
                    "share this host's metadata_proxy_shared_secret?", instance_id)
    return resp.status_code, resp.headers.get("content-type") or TEXT, resp.content


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "pocketstack-metadata"
    protocol_version = "HTTP/1.0"

    def _answer(self, method: str) -> None:
        remote_ip = self.client_address[0]
        if self.server.trust_forwarded:
            remote_ip = self.headers.get("X-Forwarded-For", remote_ip).split(",")[0].strip()
        body = b""
        if method in ("POST", "PUT"):
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                return self._send(400, TEXT, b"Bad Content-Length.\n", method)
            body = self.rfile.read(length)
        try:
            status, ctype, data = forward(method, self.path, self.server.networks(),
                                          remote_ip, body)
        except Exception:  # noqa: BLE001 - a guest gets a 500, the log gets the traceback
            LOG.exception("Metadata request %s %s failed", method, self.path)
            status, ctype, data = 500, TEXT, b"Internal error.\n"
        self._send(status, ctype, data, method)

    def _send(self, status: int, ctype: str, data: bytes, method: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - BaseHTTPRequestHandler's names
        self._answer("GET")

    def do_HEAD(self):  # noqa: N802
        self._answer("HEAD")

    def do_POST(self):  # noqa: N802
        self._answer("POST")

    def do_PUT(self):  # noqa: N802
        self._answer("PUT")

    def do_DELETE(self):  # noqa: N802
        self._answer("DELETE")

    def log_message(self, fmt, *args):
        LOG.debug("metadata %s: " + fmt, self.client_address[0], *args)


class MetadataProxy(http.server.ThreadingHTTPServer):
    """The metadata proxy of one network, on a socket given (already bound and listening,
    e.g. inside a namespace) or bound here to ``address``; serves on a daemon thread."""

    daemon_threads = True

    def __init__(self, network_id: str, sock: socket.socket | None = None,
                 address: tuple[str, int] = ("127.0.0.1", 0), trust_forwarded: bool = False):
        self.runtime = runtime.current()  # the cloud whose guests this proxy answers
        self.network_id = network_id
        self.trust_forwarded = trust_forwarded
        super().__init__(address, _Handler, bind_and_activate=sock is None)
        if sock is not None:
            self.socket.close()
            self.socket = sock
            self.server_address = sock.getsockname()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.2},
                                       name=f"metadata-{network_id[:15]}", daemon=True)
        self.thread.start()

    def process_request_thread(self, request, client_address):
        with self.runtime.activated():  # each request runs on a thread of its own
            super().process_request_thread(request, client_address)

    def networks(self) -> list[str]:
        """The networks whose guests this proxy answers."""
        return [self.network_id]

    @property
    def port(self) -> int:
        return self.server_address[1]

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(timeout=5)


class RouterMetadataProxy(MetadataProxy):
    """The metadata proxy of one router, answering the guests of the networks its
    interfaces are on (``networks()``: as the router is plugged now)."""

    def __init__(self, router_id: str, networks: Callable[[], list[str]],
                 sock: socket.socket | None = None,
                 address: tuple[str, int] = ("127.0.0.1", 0), trust_forwarded: bool = False,
                 ns_id: int | None = None):
        self.router_id = router_id
        self.ns_id = ns_id  # the namespace its socket is in (its inode)
        self._networks = networks
        super().__init__(f"router-{router_id}", sock=sock, address=address,
                         trust_forwarded=trust_forwarded)

    def networks(self) -> list[str]:
        return sorted(self._networks())
