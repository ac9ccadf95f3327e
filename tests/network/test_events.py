"""Events to compute: the real notifier POSTs os-server-external-events with a valid
service token, in order, and survives a compute that is absent or failing."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from network_helpers import unique


class FakeCompute:
    """A tiny HTTP server standing in for nova's os-server-external-events."""

    def __init__(self, status: int = 200):
        self.requests: list[tuple[str, dict, str]] = []
        self.status = status
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body, self.headers.get("X-Auth-Token")))
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps({"events": body["events"]}).encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/compute/v2.1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def nova(cloud):
    from pocketstack.identity import tokens
    from pocketstack.network import notifier

    compute = FakeCompute()
    real = notifier.NovaNotifier(url=compute.url, timeout=2)
    previous = notifier.set_notifier(real)
    try:
        yield compute, real, tokens
    finally:
        notifier.set_notifier(previous)
        real.stop()
        compute.close()


def test_plugged_and_deleted_reach_compute_with_a_service_token(admin_conn, nova):
    compute, real, tokens = nova
    net = admin_conn.network.create_network(name=unique("ev"))
    admin_conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.0.0.0/24")
    server = "7e8b1c4f-2a3d-4e5f-8a9b-0c1d2e3f4a5b"
    ports = [admin_conn.network.create_port(network_id=net.id, device_id=server,
                                            device_owner="compute:nova") for _ in range(3)]
    for port in ports:
        admin_conn.network.update_port(port, binding_host_id="compute-1")
    for port in ports:
        admin_conn.network.delete_port(port)
    other = admin_conn.network.create_port(network_id=net.id)  # not a server's: no event
    admin_conn.network.update_port(other, binding_host_id="compute-1")
    assert real.flush(10)
    events = [e for _, body, _ in compute.requests for e in body["events"]]
    assert events == ([{"name": "network-vif-plugged", "server_uuid": server, "tag": p.id,
                        "status": "completed"} for p in ports] +
                      [{"name": "network-vif-deleted", "server_uuid": server, "tag": p.id,
                        "status": "completed"} for p in ports])
    path, _, token = compute.requests[0]
    assert path == "/compute/v2.1/os-server-external-events"
    ctx = tokens.validate_to_context(token)  # the neutron service user's, from Keystone
    assert {"admin", "service"} <= set(ctx.roles)
    assert ctx.user_id == admin_conn.identity.find_user("neutron").id


def test_absent_or_failing_compute_does_not_fail_the_port(admin_conn, cloud):
    from pocketstack.network import notifier

    compute = FakeCompute(status=500)
    dead = notifier.NovaNotifier(url="http://127.0.0.1:9/compute/v2.1",
                                 timeout=1)
    failing = notifier.NovaNotifier(url=compute.url, timeout=1)
    try:
        net = admin_conn.network.create_network(name=unique("ev2"))
        for real in (dead, failing):
            previous = notifier.set_notifier(real)
            try:
                port = admin_conn.network.create_port(network_id=net.id, device_id="srv",
                                                      device_owner="compute:nova")
                bound = admin_conn.network.update_port(port, binding_host_id="h")
                assert bound.status == "ACTIVE"
                admin_conn.network.delete_port(port)
                assert real.flush(10)
            finally:
                notifier.set_notifier(previous)
        assert len(compute.requests) >= 1
        admin_conn.network.delete_network(net)
    finally:
        dead.stop()
        failing.stop()
        compute.close()
