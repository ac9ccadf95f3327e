"""kill -9 of the process that runs the haproxy driver (a real `pocketstack up` on this
host, host networking on, the haproxy data plane) with 20 load balancers, some of their
changes in flight and every HAProxy killed with it, as a crash of the network node takes
them: after the restart all 20 are ACTIVE (the dead process's claims are freed at once,
not after they lapse) and each serves HTTP through its VIP again. Needs what
test_lb_haproxy needs."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.cloud import wait_for
from helpers.guestnet import Guest, sh, unique_table
from helpers.up_process import UpProcess
from lb_helpers import NAMED_SERVER, haproxy_pids, needs_haproxy

pytestmark = needs_haproxy

HOST = "lb-restart-host"
COUNT = 20


def _conf(table: str) -> str:
    return f"""
[identity]
password_hash_rounds = 4
[network]
host_networking = true
bridge_hosts = {HOST}
nft_table = {table}
[network_quotas]
quota_security_group = -1
quota_security_group_rule = -1
quota_port = -1
[loadbalancer]
data_plane = haproxy
haproxy_host = {HOST}
poll_interval = 0.2
provisioning_delay = 0.3
"""


def _haproxies(data_dir: str) -> list[int]:
    return haproxy_pids(os.path.join(data_dir, "loadbalancer"))


def _plugged(conn, port_id):
    port = conn.network.get_port(port_id)
    return port if (port.binding_vif_details or {}).get("bridge_name") else None


def test_kill_9_of_the_haproxy_driver_loses_no_load_balancer(tmp_path):
    data_dir = str(tmp_path / "data")
    table = unique_table("lb_restart")
    up = UpProcess(data_dir, conf=_conf(table), args=("--admin-password", "pw"))
    up.start(timeout=120)
    guests, server, ids = [], None, []
    try:
        conn = up.sdk(password="pw")
        net = conn.network.create_network(name="lbrestart")
        subnet = conn.network.create_subnet(network_id=net.id, cidr="10.64.0.0/24",
                                            ip_version=4)
        default = next(conn.network.security_groups(name="default",
                                                    project_id=conn.current_project_id))
        conn.network.create_security_group_rule(
            security_group_id=default.id, direction="ingress", ethertype="IPv4",
            protocol="tcp", port_range_min=8080, port_range_max=8080)
        for i in range(2):
            port = conn.network.create_port(
                network_id=net.id, binding_host_id=HOST, device_owner="compute:nova",
                device_id=f"guest-{i}",
                fixed_ips=[{"subnet_id": subnet.id, "ip_address": f"10.64.0.{20 + i}"}])
            port = wait_for(lambda p=port: _plugged(conn, p.id), 30, "port plugged",
                            interval=0.1)
            guest = Guest(port, tmp_path)
            guests.append(guest)
            guest.run("ip", "addr", "add", f"10.64.0.{20 + i}/24", "dev", "eth0")
        backend, client = guests
        server = subprocess.Popen(["ip", "netns", "exec", backend.ns, sys.executable, "-c",
                                   NAMED_SERVER, "8080", "backend"])
        for i in range(COUNT):
            ids.append(conn.load_balancer.create_load_balancer(
                vip_subnet_id=subnet.id, name=f"r{i}", listeners=[{
                    "protocol": "HTTP", "protocol_port": 80, "default_pool": {
                        "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                        "members": [{"address": "10.64.0.20", "protocol_port": 8080}]}}]).id)

        def statuses():
            return {lb.id: lb.provisioning_status for lb in conn.load_balancer.load_balancers()}

        wait_for(lambda: set(statuses().values()) == {"ACTIVE"}, 300, "all 20 ACTIVE",
                 interval=0.5)
        vips = {lb.id: lb.vip_address for lb in conn.load_balancer.load_balancers()}

        def serving(lb_id):
            proc = client.run("timeout", "5", "busybox", "wget", "-q", "-O", "-",
                              f"http://{vips[lb_id]}/", check=False)
            return proc.returncode == 0 and proc.stdout.strip() == "backend"

        wait_for(lambda: all(serving(i) for i in ids), 60, "all 20 serving", interval=0.5)

        # Changes in flight, then the crash: the process and its HAProxies.
        for listener in list(conn.load_balancer.listeners())[:5]:
            conn.load_balancer.update_listener(listener.id, connection_limit=500)
        up.stop(sig=signal.SIGKILL)
        for pid in _haproxies(data_dir):
            os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not _haproxies(data_dir), 10, "the HAProxies gone", interval=0.05)
        pending = [i for i, status in statuses_offline(data_dir).items()
                   if status.startswith("PENDING")]
        print(f"\n{len(pending)} load balancers were pending at the kill")
        assert not serving(ids[0])

        started = time.monotonic()
        up.start(timeout=120)
        conn = up.sdk(password="pw")
        wait_for(lambda: set(statuses().values()) == {"ACTIVE"} and len(statuses()) == COUNT,
                 120, "all 20 ACTIVE again", interval=0.5)
        wait_for(lambda: all(serving(i) for i in ids), 60, "all 20 serving again",
                 interval=0.5)
        print(f"all {COUNT} ACTIVE and serving {time.monotonic() - started:.1f}s after "
              f"the restart")
        assert {li.connection_limit for li in conn.load_balancer.listeners()} >= {500}
        assert len(_haproxies(data_dir)) == COUNT

        for lb_id in ids:
            conn.load_balancer.delete_load_balancer(lb_id, cascade=True)
        wait_for(lambda: not statuses(), 300, "every load balancer deleted", interval=0.5)
        assert _haproxies(data_dir) == []
        ids = []
    finally:
        if server is not None:
            server.kill()
            server.wait(10)
        for guest in guests:
            guest.remove()
        if ids and up.proc is not None and up.proc.poll() is None:
            conn = up.sdk(password="pw")
            for lb_id in ids:
                conn.load_balancer.delete_load_balancer(lb_id, cascade=True,
                                                        ignore_missing=True)
            wait_for(lambda: not list(conn.load_balancer.load_balancers()), 300,
                     "cleanup", interval=0.5)
        if up.proc is not None and up.proc.poll() is None:
            try:
                conn = up.sdk(password="pw")
                for port in conn.network.ports(device_owner="compute:nova"):
                    conn.network.delete_port(port)
                for network in conn.network.networks(name="lbrestart"):
                    conn.network.delete_network(network)
            finally:
                up.stop()
        for pid in _haproxies(data_dir):
            os.kill(pid, signal.SIGKILL)
        for family in ("inet", "bridge"):
            sh("nft", "delete", "table", family, table, check=False)


def statuses_offline(data_dir: str) -> dict[str, str]:
    """The load balancers' provisioning statuses straight from the stopped cloud's
    database (sqlite in its data dir)."""
    import sqlite3

    path = os.path.join(data_dir, "pocketstack.db")
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT id, provisioning_status FROM loadbalancer_load_balancers"))
