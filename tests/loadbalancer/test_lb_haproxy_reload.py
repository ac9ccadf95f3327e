"""A change on the haproxy data plane reloads HAProxy seamlessly: a request that is in
flight at the backend while a listener change reloads the load balancer still gets its
whole answer through the VIP, and requests after the reload are served by the new
process. Needs what test_lb_haproxy needs."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

from helpers.cloud import wait_for
from helpers.guestnet import Guest, unique
from lb_helpers import active, gone
from test_lb_haproxy import (  # noqa: F401
    BRIDGE_HOST,
    NAMED_SERVER,
    haproxy_plane,
    host_agent,
    pytestmark,
)

# /slow answers once the file argv[2]/release exists (argv[2]/arrived tells the test the
# request is in); anything else answers at once.
SLOW_SERVER = """
import http.server, os, sys, time
folder = sys.argv[2]
class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/slow":
            open(os.path.join(folder, "arrived"), "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(os.path.join(folder, "release")) and \\
                    time.monotonic() < deadline:
                time.sleep(0.05)
        body = b"whole answer" if self.path == "/slow" else b"quick"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("0.0.0.0", int(sys.argv[1])), Slow).serve_forever()
"""


def _pid(cloud, lb_id: str) -> int:
    with open(os.path.join(cloud.data_dir, "loadbalancer", lb_id, "haproxy.pid")) as f:
        return int(f.read().split()[0])


def test_a_reload_keeps_the_request_in_flight(cloud, host_agent, haproxy_plane,  # noqa: F811
                                              tmp_path):
    user = cloud.make_user()
    conn, admin = cloud.user_sdk(user), cloud.sdk()
    net = conn.network.create_network(name=unique("lbreload"))
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.63.0.0/24")
    guests, server, slow, lb = [], None, None, None
    try:
        ports = [admin.network.create_port(
            network_id=net.id, project_id=user["project_id"], binding_host_id=BRIDGE_HOST,
            device_owner="compute:nova", device_id=str(uuid.uuid4()),
            fixed_ips=[{"subnet_id": subnet.id, "ip_address": f"10.63.0.{20 + i}"}])
            for i in range(2)]
        default = next(conn.network.security_groups(name="default",
                                                    project_id=user["project_id"]))
        conn.network.create_security_group_rule(
            security_group_id=default.id, direction="ingress", ethertype="IPv4",
            protocol="tcp", port_range_min=8080, port_range_max=8080)
        host_agent.reconcile()
        for port in ports:
            port = admin.network.get_port(port.id)
            guest = Guest(port, tmp_path)
            guests.append(guest)
            guest.run("ip", "addr", "add", f"{port.fixed_ips[0]['ip_address']}/24", "dev",
                      "eth0")
        backend, client = guests
        server = subprocess.Popen(["ip", "netns", "exec", backend.ns, sys.executable, "-c",
                                   SLOW_SERVER, "8080", str(tmp_path)])
        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
        active(conn, lb.id)
        listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                                      protocol_port=80)
        active(conn, lb.id)
        pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                              lb_algorithm="ROUND_ROBIN")
        active(conn, lb.id)
        conn.load_balancer.create_member(pool, address="10.63.0.20", protocol_port=8080,
                                         subnet_id=subnet.id)
        active(conn, lb.id)

        def get(path):
            proc = client.run("timeout", "10", "busybox", "wget", "-q", "-O", "-",
                              f"http://{lb.vip_address}{path}", check=False)
            return proc.stdout.strip() if proc.returncode == 0 else None

        wait_for(lambda: get("/") == "quick", 30, "the VIP serving", interval=0.2)
        slow = subprocess.Popen(["ip", "netns", "exec", client.ns, "timeout", "60",
                                 "busybox", "wget", "-q", "-O", "-",
                                 f"http://{lb.vip_address}/slow"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: (tmp_path / "arrived").exists(), 30, "the slow request at the backend",
                 interval=0.05)
        before = _pid(cloud, lb.id)
        conn.load_balancer.update_listener(listener.id, connection_limit=1000)
        active(conn, lb.id)
        assert _pid(cloud, lb.id) != before  # a new HAProxy serves now
        assert get("/") == "quick"
        (tmp_path / "release").touch()
        out, err = slow.communicate(timeout=60)
        assert (slow.returncode, out.strip()) == (0, "whole answer"), err
        # The old process went once its last connection was done.
        wait_for(lambda: not os.path.exists(f"/proc/{before}"), 30, "the old HAProxy gone",
                 interval=0.05)
    finally:
        for proc in (server, slow):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        if lb is not None:
            conn.load_balancer.delete_load_balancer(lb.id, cascade=True, ignore_missing=True)
            gone(conn, lb.id)
        for guest in guests:
            guest.remove()
        for port in admin.network.ports(network_id=net.id, device_owner="compute:nova"):
            admin.network.delete_port(port)
        conn.network.delete_network(net)
