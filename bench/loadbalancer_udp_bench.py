"""The haproxy data plane's UDP listeners (the userspace balancer, udp_balancer.py):
datagram round trips per second through a load balancer's VIP against the same client
talking to the backend directly, the create time (fully populated create -> ACTIVE) of
a UDP load balancer and the balancer process's memory.

    sudo .venv/bin/python bench/loadbalancer_udp_bench.py [--datagrams 40000] [--seconds 10]

Runs `pocketstack up` (host networking, data_plane = haproxy) on a temporary data dir in
a child process. A backend namespace on the load balancer's network echoes datagrams
(a Python loop); a client namespace there runs the load: 4 processes, each one flow (a
socket) sending a datagram and waiting for its answer, bounded by --datagrams in all
and by --seconds. Needs what loadbalancer_haproxy_bench.py needs. Prints the figures
and the load average, and appends them to bench/results/loadbalancer_udp_bench.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

from loadbalancer_haproxy_bench import conf, guest_network, rss_kb, sh, wait

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
from helpers.up_process import UpProcess  # noqa: E402

ECHO = """
import socket
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("0.0.0.0", 5353))
while True:
    data, peer = sock.recvfrom(65535)
    sock.sendto(data, peer)
"""
# Round trips from several processes, one flow each: the round trips done, the seconds.
LOAD = """
import multiprocessing, socket, sys, time
host, port, total, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
def worker(n, out):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(1)
    done, deadline = 0, time.monotonic() + seconds
    while done < n and time.monotonic() < deadline:
        sock.sendto(b"x" * 64, (host, port))
        try:
            sock.recv(65535)
            done += 1
        except OSError:
            pass
    out.put(done)
if __name__ == "__main__":
    out, procs = multiprocessing.Queue(), []
    start = time.monotonic()
    for _ in range(4):
        p = multiprocessing.Process(target=worker, args=(total // 4, out))
        p.start()
        procs.append(p)
    done = sum(out.get(timeout=seconds + 30) for _ in procs)
    for p in procs:
        p.join(10)
    print(done, time.monotonic() - start)
"""


def load(client_ns: str, host: str, port: int, total: int, seconds: float) -> float:
    out = sh("ip", "netns", "exec", client_ns, sys.executable, "-c", LOAD, host, str(port),
             str(total), str(seconds)).stdout.split()
    return int(out[0]) / float(out[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datagrams", type=int, default=40000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="lbub-")
    table = f"lbudp_{uuid.uuid4().hex[:8]}"
    up = UpProcess(os.path.join(tmp, "data"), conf=conf(table),
                   args=("--admin-password", "bench")).start(timeout=120)
    namespaces, lb = [], None
    figures = {"load_before": os.getloadavg()}
    conn = up.sdk(password="bench")
    echo = None
    try:
        subnet, guests = guest_network(conn, "lbudpbench", "10.66", "udp", 5353,
                                       namespaces)
        echo = subprocess.Popen(["ip", "netns", "exec", guests["backend"], sys.executable,
                                 "-c", ECHO])
        start = time.monotonic()
        lb = conn.load_balancer.create_load_balancer(
            vip_subnet_id=subnet.id, name="udp", listeners=[{
                "protocol": "UDP", "protocol_port": 53, "default_pool": {
                    "protocol": "UDP", "lb_algorithm": "ROUND_ROBIN",
                    "members": [{"address": "10.66.255.20", "protocol_port": 5353}]}}])
        wait(lambda: conn.load_balancer.get_load_balancer(
            lb.id).provisioning_status == "ACTIVE", 60, "the load balancer ACTIVE")
        figures["create_s"] = round(time.monotonic() - start, 3)
        with open(os.path.join(up.data_dir, "loadbalancer", lb.id, "udp.pid")) as f:
            figures["udp_balancer_rss_kb"] = rss_kb(int(f.read().split()[0]))
        wait(lambda: load(guests["client"], lb.vip_address, 53, 4, 2) > 0, 30,
             "the VIP answering")
        figures["direct_rtps"] = round(load(guests["client"], "10.66.255.20", 5353,
                                            args.datagrams, args.seconds))
        figures["vip_rtps"] = round(load(guests["client"], lb.vip_address, 53,
                                         args.datagrams, args.seconds))
        figures["ratio"] = round(figures["vip_rtps"] / figures["direct_rtps"], 3)
    finally:
        figures["load_after"] = os.getloadavg()
        if lb is not None:
            conn.load_balancer.delete_load_balancer(lb.id, cascade=True, ignore_missing=True)
        try:
            wait(lambda: not list(conn.load_balancer.load_balancers()), 120, "the delete")
        finally:
            if echo is not None:
                echo.kill()
                echo.wait(10)
            for ns in namespaces:
                sh("ip", "netns", "del", ns, check=False)
            for port in conn.network.ports(device_owner="compute:nova"):
                conn.network.delete_port(port)
            for network in conn.network.networks(name="lbudpbench"):
                conn.network.delete_network(network)
            up.stop()
            for family in ("inet", "bridge"):
                sh("nft", "delete", "table", family, table, check=False)
    print(json.dumps(figures, indent=1))
    with open(os.path.join(HERE, "results", "loadbalancer_udp_bench.json"), "a") as f:
        f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **figures}) + "\n")


if __name__ == "__main__":
    main()
