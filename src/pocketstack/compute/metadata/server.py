"""The metadata service over HTTP, for guests (nova's metadata API with neutron's isolated
metadata in front).

One ``MetadataServer`` listens per network, on a socket the network agent opened on
169.254.169.254:80 inside the network's ``qdhcp-`` namespace. A request's network is the
server's and its source address is the guest's fixed IP, so the instance is found as
neutron's metadata agent finds it: (network, source IP) -> port -> device_id. Guests
cannot name another instance: nothing in the request is trusted for that, except on a
server made with ``trust_forwarded=True`` (a proxy in front that sets
``X-Forwarded-For`` and ``X-Neutron-Network-ID``, as neutron's haproxy does; tests).
"""
from __future__ import annotations

import http.server
import logging
import socket
import threading

import sqlalchemy as sa

from pocketstack.common import db, runtime
from pocketstack.compute.metadata import content

LOG = logging.getLogger(__name__)


def find_instance(network_id: str, ip_address: str) -> str | None:
    """The uuid of the server whose port on ``network_id`` has ``ip_address``."""
    from pocketstack.common.context import RequestContext
    from pocketstack.network import api as network_api

    ports = network_api.list_ports(RequestContext.admin(), network_id=network_id,
                                   fixed_ips=[f"ip_address={ip_address}"])
    for port in ports:
        if port["device_owner"].startswith("compute:") and port["device_id"]:
            return port["device_id"]
    return None


def _store_password(uuid: str, password: str) -> bool:
    """Keep the password a guest posts, once (nova: a second post is refused with 409
    until an admin clears it). False if one is set already."""
    from pocketstack.compute.models import Instance

    with db.transaction() as s:
        inst = s.scalar(sa.select(Instance).where(Instance.uuid == uuid).with_for_update())
        if inst is None:
            return False
        system = dict(inst.system_metadata or {})
        if any(system.get(f"password_{i}") for i in range(content.PASSWORD_CHUNKS)):
            return False
        for i in range(content.PASSWORD_CHUNKS):
            system[f"password_{i}"] = password[i * 255:(i + 1) * 255]
        inst.system_metadata = system
    return True


def respond(method: str, path: str, network_id: str, remote_ip: str,
            body: bytes = b"") -> tuple[int, str, bytes]:
    """(status, content type, body) for one request from ``remote_ip`` on the network."""
    path = path.split("?", 1)[0]
    uuid = find_instance(network_id, remote_ip)
    if uuid is None:
        LOG.info("Metadata request from %s on network %s: no instance has that address",
                 remote_ip, network_id)
        return 404, content.TEXT, b"No instance has this address on this network.\n"
    md = content.InstanceMetadata.for_instance(uuid)
    if md is None:
        return 404, content.TEXT, b"The instance is gone.\n"
    if method == "POST":
        if not path.rstrip("/").endswith("/password") or not path.startswith("/openstack/"):
            return 405, content.TEXT, b"Only the password can be posted.\n"
        if len(body) > content.PASSWORD_MAX_BYTES:
            return 400, content.TEXT, b"The password is longer than 256 bytes.\n"
        if not _store_password(uuid, body.decode(errors="replace")):
            return 409, content.TEXT, b"A password is set already.\n"
        return 200, content.TEXT, b""
    if method not in ("GET", "HEAD"):
        return 405, content.TEXT, b"Method not allowed.\n"
    try:
        ctype, data = md.lookup(path)
    except content.NotFound:
        return 404, content.TEXT, b"Not found.\n"
    return 200, ctype, data


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "pocketstack-metadata"
    protocol_version = "HTTP/1.0"

    def _answer(self, method: str) -> None:
        network_id, remote_ip = self.server.network_id, self.client_address[0]
        if self.server.trust_forwarded:
            network_id = self.headers.get("X-Neutron-Network-ID") or network_id
            remote_ip = self.headers.get("X-Forwarded-For", remote_ip).split(",")[0].strip()
        body = b""
        if method == "POST":
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= 4096:
                return self._send(400, content.TEXT, b"Bad Content-Length.\n", method)
            body = self.rfile.read(length)
        try:
            status, ctype, data = respond(method, self.path, network_id, remote_ip, body)
        except Exception:  # noqa: BLE001 - a guest gets a 500, the log gets the traceback
            LOG.exception("Metadata request %s %s failed", method, self.path)
            status, ctype, data = 500, content.TEXT, b"Internal error.\n"
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


class MetadataServer(http.server.ThreadingHTTPServer):
    """The metadata API for one network, on a socket given (already bound and listening,
    e.g. inside a namespace) or bound here to ``address``; serves on a daemon thread."""

    daemon_threads = True

    def __init__(self, network_id: str, sock: socket.socket | None = None,
                 address: tuple[str, int] = ("127.0.0.1", 0), trust_forwarded: bool = False):
        self.runtime = runtime.current()  # the cloud whose guests this server answers
        self.network_id = network_id
        self.trust_forwarded = trust_forwarded
        super().__init__(address, _Handler, bind_and_activate=sock is None)
        if sock is not None:
            self.socket.close()
            self.socket = sock
            self.server_address = sock.getsockname()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.2},
                                       name=f"metadata-{network_id[:8]}", daemon=True)
        self.thread.start()

    def process_request_thread(self, request, client_address):
        with self.runtime.activated():  # each request runs on a thread of its own
            super().process_request_thread(request, client_address)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(timeout=5)
