"""web-download never reaches the cloud host's own services or the metadata address: IPv6
forms that carry an IPv4 address (mapped, NAT64, IPv4-compatible) count as that address,
in the URL a member sends and in every redirect hop, and only an address the operator
lists in [import_filtering_opts] allowed_hosts is let through."""
from __future__ import annotations

import http.server
import ipaddress
import socket
import threading
import time

import pytest

from image_helpers import assert_error

SECRET = b"answer of a service that listens on loopback only"


class _Internal(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.server.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", str(len(SECRET)))
        self.end_headers()
        self.wfile.write(SECRET)

    def log_message(self, *args):
        pass


class _Redirector(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(302)
        self.send_header("Location", self.server.redirect_to)
        self.end_headers()

    def log_message(self, *args):
        pass


def _serve(address, handler):
    server = http.server.ThreadingHTTPServer((address, 0), handler)
    server.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _outside_address() -> str | None:
    """This host's own address on its default route, if it has one web-download may
    reach (not loopback, not link-local)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent for a UDP connect
        except OSError:
            return None
        address = probe.getsockname()[0]
    ip = ipaddress.ip_address(address)
    return None if ip.is_loopback or ip.is_link_local else address


@pytest.fixture(scope="module")
def internal():
    server = _serve("127.0.0.1", _Internal)
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def redirector():
    address = _outside_address()
    if address is None:
        pytest.skip("this host has no address besides loopback to serve a redirect from")
    server = _serve(address, _Redirector)
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def ports_open(internal):
    """The operator opened the ports the test servers listen on (allowed_hosts stays
    empty: any host, but never a local-only address)."""
    from pocketstack.common import config

    def allow(*servers):
        config.CONF.set_override("allowed_ports", [s.server_address[1] for s in servers],
                                 group="import_filtering_opts")

    yield allow
    config.CONF.clear_override("allowed_ports", group="import_filtering_opts")
    config.CONF.clear_override("allowed_hosts", group="import_filtering_opts")


def _import(caller, image_id, uri):
    return caller.post(f"/v2/images/{image_id}/import",
                       json={"method": {"name": "web-download", "uri": uri}})


def _settled(caller, image_id, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        image = caller.show(image_id)
        if image["status"] in ("queued", "active"):
            return image
        assert time.monotonic() < deadline, image
        time.sleep(0.1)


@pytest.mark.parametrize("host", [
    "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]", "[::127.0.0.1]",
    "[::ffff:169.254.169.254]", "[64:ff9b::a9fe:a9fe]", "255.255.255.255",
    "[::ffff:255.255.255.255]", "0.0.0.0", "[::]", "[::1]"])
def test_member_cannot_import_from_a_local_address(as_user, internal, ports_open, host):
    ports_open(internal)
    member = as_user()
    image = member.create()
    assert_error(_import(member, image["id"], f"http://{host}:{internal.server_address[1]}/"
                                              "secret"), 400, "does not pass filtering")
    assert member.show(image["id"])["status"] == "queued"
    assert internal.seen == []


def test_metadata_address_is_refused_in_its_mapped_form_on_the_default_port(as_user):
    member = as_user()
    image = member.create()
    assert_error(_import(member, image["id"], "http://[::ffff:169.254.169.254]/latest"),
                 400, "does not pass filtering")


@pytest.mark.parametrize("target", ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "127.0.0.1"])
def test_redirect_to_a_local_address_is_not_followed(as_user, internal, redirector,
                                                     ports_open, target):
    ports_open(internal, redirector)
    redirector.redirect_to = f"http://{target}:{internal.server_address[1]}/secret"
    start = f"http://{redirector.server_address[0]}:{redirector.server_address[1]}/image"
    member = as_user()
    image = member.create()
    assert _import(member, image["id"], start).status_code == 202
    assert _settled(member, image["id"])["status"] == "queued"
    task = member.get(f"/v2/images/{image['id']}/tasks").json()["tasks"][-1]
    assert task["status"] == "failure"
    assert "Redirect to disallowed URL" in task["message"]
    assert internal.seen == []


def test_operator_listed_address_is_fetched_in_any_form(as_user, internal, ports_open):
    from pocketstack.common import config

    ports_open(internal)
    config.CONF.set_override("allowed_hosts", ["127.0.0.1"], group="import_filtering_opts")
    member = as_user()
    image = member.create()
    uri = f"http://[::ffff:127.0.0.1]:{internal.server_address[1]}/listed"
    assert _import(member, image["id"], uri).status_code == 202
    assert _settled(member, image["id"])["status"] == "active"
    assert member.get(f"/v2/images/{image['id']}/file").content == SECRET
    internal.seen.clear()
