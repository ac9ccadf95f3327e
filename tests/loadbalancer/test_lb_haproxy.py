"""The haproxy data plane on this host: one HAProxy per load balancer in its own namespace
on the VIP network's bridge. Pretend guests (namespaces gn… on the project network's
bridge, as in the guest networking tests) run two HTTP backends and a client; the client
reaches the backends through the VIP in turn; a stopped backend turns ERROR in the status
tree; a delete leaves no namespace, process, port or security group behind.

Needs root, iproute2, dnsmasq, nftables, busybox and haproxy (Debian's `haproxy`).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from helpers.cloud import wait_for
from helpers.guestnet import namespaces, sh, unique
from lb_helpers import (NAMED_SERVER, active, gone, haproxy_pids, http_pool, namespace_of,
                        needs_haproxy, plug_backends, remove_backends)

pytestmark = needs_haproxy


def _status_tree(conn, lb_id):
    return conn.load_balancer.get(f"/lbaas/loadbalancers/{lb_id}/status").json()[
        "statuses"]["loadbalancer"]


def _members(conn, lb_id) -> dict[str, str]:
    tree = _status_tree(conn, lb_id)
    return {m["address"]: m["operating_status"]
            for li in tree["listeners"] for pool in li["pools"] for m in pool["members"]}


def test_http_through_the_vip_alternates_backends_and_a_stopped_one_turns_error(
        cloud, host_agent, haproxy_plane, tmp_path):
    user = cloud.make_user()
    conn, admin = cloud.user_sdk(user), cloud.sdk()
    net = conn.network.create_network(name=unique("lbnet"))
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.61.0.0/24")
    guests, servers, lb = [], [], None
    try:
        plug_backends(conn, admin, user, host_agent, subnet,
                      [f"10.61.0.{20 + i}" for i in range(3)], tmp_path, guests)
        for name, guest in zip(("one", "two"), guests[:2]):
            servers.append(subprocess.Popen(["ip", "netns", "exec", guest.ns, sys.executable,
                                             "-c", NAMED_SERVER, "8080", name]))
        client = guests[2]

        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
        active(conn, lb.id)
        pool = http_pool(conn, lb.id)[1]
        for address in ("10.61.0.20", "10.61.0.21"):
            conn.load_balancer.create_member(pool, address=address, protocol_port=8080,
                                             subnet_id=subnet.id)
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
        for pid in haproxy_pids(lb.id):
            os.kill(pid, signal.SIGKILL)
        sh("ip", "netns", "del", namespace_of(lb.id))
        wait_for(lambda: not haproxy_pids(lb.id), 10, "the HAProxy gone", interval=0.05)
        assert fetch() is None
        [driver] = [w for w in cloud.cloud.workers if type(w).__name__ == "Driver"]
        assert driver.restore() == 1
        assert fetch() == "two" and namespace_of(lb.id) in namespaces()

        vip_port = lb.vip_port_id
        conn.load_balancer.delete_load_balancer(lb.id, cascade=True)
        gone(conn, lb.id)
        deleted, lb = lb, None
        assert namespace_of(deleted.id) not in namespaces()
        assert haproxy_pids(deleted.id) == []
        assert admin.network.find_port(vip_port) is None
        assert list(admin.network.security_groups(name=f"lb-{deleted.id}")) == []
    finally:
        for server in servers:
            server.kill()
            server.wait(10)
        remove_backends(conn, admin, net, lb, guests)
