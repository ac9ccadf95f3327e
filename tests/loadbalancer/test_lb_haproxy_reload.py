"""A change on the haproxy data plane reloads HAProxy seamlessly: a request that is in
flight at the backend while a listener change reloads the load balancer still gets its
whole answer through the VIP, and requests after the reload are served by the new
process. Needs what test_lb_haproxy needs."""
from __future__ import annotations

import os
import subprocess
import sys

from helpers.cloud import wait_for
from helpers.guestnet import unique
from lb_helpers import active, http_pool, needs_haproxy, plug_backends, remove_backends

from pocketstack.common import processes

pytestmark = needs_haproxy

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


def test_a_reload_keeps_the_request_in_flight(cloud, host_agent, haproxy_plane,
                                              tmp_path):
    user = cloud.make_user()
    conn, admin = cloud.user_sdk(user), cloud.sdk()
    net = conn.network.create_network(name=unique("lbreload"))
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.63.0.0/24")
    guests, server, slow, lb = [], None, None, None
    try:
        plug_backends(conn, admin, user, host_agent, subnet,
                      [f"10.63.0.{20 + i}" for i in range(2)], tmp_path, guests)
        backend, client = guests
        server = subprocess.Popen(["ip", "netns", "exec", backend.ns, sys.executable, "-c",
                                   SLOW_SERVER, "8080", str(tmp_path)])
        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
        active(conn, lb.id)
        listener, pool = http_pool(conn, lb.id)
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
        wait_for(lambda: not processes.running(before), 30, "the old HAProxy gone",
                 interval=0.05)
    finally:
        for proc in (server, slow):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        remove_backends(conn, admin, net, lb, guests)
