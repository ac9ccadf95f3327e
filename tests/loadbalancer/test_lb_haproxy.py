"""The haproxy data plane on this host: one HAProxy per load balancer in its own namespace
on the VIP network's bridge. Pretend guests (namespaces gn… on the project network's
bridge, as in the guest networking tests) run two HTTP backends and a client; the client
reaches the backends through the VIP in turn; a stopped backend turns ERROR in the status
tree; a delete leaves no namespace, process, port or security group behind.

Needs root, iproute2, dnsmasq, nftables, busybox and haproxy (Debian's `haproxy`).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid

import pytest

from helpers.cloud import wait_for
from helpers.guestnet import Guest, namespaces, running_agent, sh, unique, unique_table
from lb_helpers import active, gone

BRIDGE_HOST = "lb-haproxy-host"
TOOLS = ("ip", "dnsmasq", "nft", "busybox", "haproxy")
missing = [t for t in TOOLS if shutil.which(t) is None]
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or bool(missing),
    reason=f"the haproxy data plane needs root and {', '.join(TOOLS)} "
           f"(missing: {', '.join(missing) or 'root'})")

# Answers every GET with its own name: which backend served the request.
NAMED_SERVER = """
import http.server, sys
class Named(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = sys.argv[2].encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("0.0.0.0", int(sys.argv[1])), Named).serve_forever()
"""


@pytest.fixture(scope="module")
def host_agent(cloud):
    with running_agent(BRIDGE_HOST, unique_table("lb_haproxy")) as handle:
        yield handle


@pytest.fixture
def haproxy_plane(cloud):
    from pocketstack.common import config

    config.CONF.set_override("data_plane", "haproxy", group="loadbalancer")
    config.CONF.set_override("haproxy_host", BRIDGE_HOST, group="loadbalancer")
    try:
        yield
    finally:
        config.CONF.clear_override("data_plane", group="loadbalancer")
        config.CONF.clear_override("haproxy_host", group="loadbalancer")


def _status_tree(conn, lb_id):
    return conn.load_balancer.get(f"/lbaas/loadbalancers/{lb_id}/status").json()[
        "statuses"]["loadbalancer"]


def _members(conn, lb_id) -> dict[str, str]:
    tree = _status_tree(conn, lb_id)
    return {m["address"]: m["operating_status"]
            for li in tree["listeners"] for pool in li["pools"] for m in pool["members"]}


def _haproxies(lb_id: str) -> list[int]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if b"haproxy" in cmdline and lb_id.encode() in cmdline:
            out.append(int(pid))
    return out


def test_http_through_the_vip_alternates_backends_and_a_stopped_one_turns_error(
        cloud, host_agent, haproxy_plane, tmp_path):
    user = cloud.make_user()
    conn, admin = cloud.user_sdk(user), cloud.sdk()
    net = conn.network.create_network(name=unique("lbnet"))
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.61.0.0/24")
    guests, servers, lb = [], [], None
    try:
        ports = [admin.network.create_port(
            network_id=net.id, project_id=user["project_id"], binding_host_id=BRIDGE_HOST,
            device_owner="compute:nova", device_id=str(uuid.uuid4()),
            fixed_ips=[{"subnet_id": subnet.id, "ip_address": f"10.61.0.{20 + i}"}])
            for i in range(3)]
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
        for name, guest in zip(("one", "two"), guests[:2]):
            servers.append(subprocess.Popen(["ip", "netns", "exec", guest.ns, sys.executable,
                                             "-c", NAMED_SERVER, "8080", name]))
        client = guests[2]

        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
        active(conn, lb.id)
        listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                                      protocol_port=80)
        active(conn, lb.id)
        pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                              lb_algorithm="ROUND_ROBIN")
        active(conn, lb.id)
        for port in ports[:2]:
            conn.load_balancer.create_member(pool, address=port.fixed_ips[0]["ip_address"],
                                             protocol_port=8080, subnet_id=subnet.id)
            active(conn, lb.id)
        conn.load_balancer.create_health_monitor(pool_id=pool.id, type="HTTP", delay=1,
                                                 timeout=1, max_retries=1,
                                                 max_retries_down=1)
        active(conn, lb.id)
        assert namespace_of(lb.id) in namespaces()
        wait_for(lambda: set(_members(conn, lb.id).values()) == {"ONLINE"}, 30,
                 "both members ONLINE", interval=0.2)

        def fetch():
            proc = client.run("timeout", "5", "busybox", "wget", "-q", "-O", "-",
                              f"http://{lb.vip_address}/", check=False)
            return proc.stdout.strip() if proc.returncode == 0 else None

        answers = [fetch() for _ in range(4)]
        assert None not in answers, answers
        assert set(answers) == {"one", "two"}
        assert answers[0] != answers[1] and answers[0] == answers[2] != answers[3], answers
        stats = conn.load_balancer.get_load_balancer_statistics(lb.id)
        assert stats.total_connections >= 4

        servers[0].kill()
        servers[0].wait(10)
        wait_for(lambda: _members(conn, lb.id) == {"10.61.0.20": "ERROR",
                                                   "10.61.0.21": "ONLINE"},
                 30, "the stopped backend ERROR", interval=0.2)
        tree = _status_tree(conn, lb.id)
        assert tree["listeners"][0]["pools"][0]["operating_status"] == "DEGRADED"
        assert {fetch() for _ in range(3)} == {"two"}

        # A host reboot takes the namespace and the HAProxy; the next start rebuilds them.
        for pid in _haproxies(lb.id):
            os.kill(pid, signal.SIGKILL)
        sh("ip", "netns", "del", namespace_of(lb.id))
        wait_for(lambda: not _haproxies(lb.id), 10, "the HAProxy gone", interval=0.05)
        assert fetch() is None
        [driver] = [w for w in cloud.cloud.workers if type(w).__name__ == "Driver"]
        assert driver.restore() == 1
        assert fetch() == "two" and namespace_of(lb.id) in namespaces()

        vip_port = lb.vip_port_id
        conn.load_balancer.delete_load_balancer(lb.id, cascade=True)
        gone(conn, lb.id)
        deleted, lb = lb, None
        assert namespace_of(deleted.id) not in namespaces()
        assert _haproxies(deleted.id) == []
        assert admin.network.find_port(vip_port) is None
        assert list(admin.network.security_groups(name=f"lb-{deleted.id}")) == []
    finally:
        for server in servers:
            server.kill()
            server.wait(10)
        if lb is not None:
            conn.load_balancer.delete_load_balancer(lb.id, cascade=True, ignore_missing=True)
            gone(conn, lb.id)
        for guest in guests:
            guest.remove()
        for port in admin.network.ports(network_id=net.id, device_owner="compute:nova"):
            admin.network.delete_port(port)
        conn.network.delete_network(net)


def namespace_of(lb_id: str) -> str:
    from pocketstack.loadbalancer import dataplane

    return dataplane.namespace(lb_id)

