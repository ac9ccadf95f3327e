"""The haproxy data plane: HTTP requests/s through a load balancer's VIP against the same
HAProxy configuration started by hand in the same namespace (target: >= 80 %), and N
load balancers on one network node: HAProxy memory per load balancer and the create
time (fully populated create -> ACTIVE) of the last against the first (target: within
1.5x).

    sudo .venv/bin/python bench/loadbalancer_haproxy_bench.py [--count 100] \\
        [--requests 20000] [--seconds 20]

Runs `pocketstack up` (host networking, data_plane = haproxy) on a temporary data dir in
a child process. A backend namespace on the load balancers' network serves a small file
with busybox httpd; a client namespace there runs the load: 4 keep-alive connections,
bounded by --requests in all and by --seconds. Only namespace addresses are used.
Needs root, iproute2, dnsmasq, nftables, busybox and haproxy. Prints the figures and
the load average, and appends them to bench/results/loadbalancer_haproxy_bench.json.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
from helpers.up_process import UpProcess  # noqa: E402

HOST = "lb-bench-host"
# Keep-alive GETs from several processes: the requests done and the seconds taken.
LOAD = """
import http.client, multiprocessing, sys, time
vip, port, total, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
def worker(n, out):
    conn = http.client.HTTPConnection(vip, port, timeout=5)
    done, deadline = 0, time.monotonic() + seconds
    while done < n and time.monotonic() < deadline:
        conn.request("GET", "/index.html")
        conn.getresponse().read()
        done += 1
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


def sh(*args, check=True):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=check)


def conf(table: str) -> str:
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
"""


def netns(port, ip: str) -> str:
    ns, tap = "gb" + uuid.uuid4().hex[:10], "tap" + port.id[:11]
    sh("ip", "netns", "add", ns)
    sh("ip", "link", "add", tap, "type", "veth", "peer", "name", "eth0", "netns", ns)
    sh("ip", "link", "set", tap, "master", port.binding_vif_details["bridge_name"], "up")
    sh("ip", "-n", ns, "link", "set", "eth0", "address", port.mac_address, "up")
    sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "-n", ns, "addr", "add", f"{ip}/16", "dev", "eth0")
    return ns


def wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def load(client_ns: str, vip: str, port: int, total: int, seconds: float) -> float:
    out = sh("ip", "netns", "exec", client_ns, sys.executable, "-c", LOAD, vip, str(port),
             str(total), str(seconds)).stdout.split()
    return int(out[0]) / float(out[1])


def plugged(conn, port_id):
    port = conn.network.get_port(port_id)
    return port if (port.binding_vif_details or {}).get("bridge_name") else None


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def guest_network(conn, name: str, prefix: str, protocol: str, port: int,
                  namespaces: list) -> tuple:
    """A network ``<prefix>.0.0/16`` open to ``protocol``/``port``, with a "backend" and a
    "client" port plugged into namespaces (appended to ``namespaces`` as they are made,
    for the caller's clean-up): the subnet and {name: namespace}."""
    net = conn.network.create_network(name=name)
    subnet = conn.network.create_subnet(network_id=net.id, cidr=f"{prefix}.0.0/16",
                                        ip_version=4)
    group = next(conn.network.security_groups(name="default",
                                              project_id=conn.current_project_id))
    conn.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv4",
        protocol=protocol, port_range_min=port, port_range_max=port)
    guests = {}
    for role, ip in (("backend", f"{prefix}.255.20"), ("client", f"{prefix}.255.21")):
        created = conn.network.create_port(
            network_id=net.id, binding_host_id=HOST, device_owner="compute:nova",
            device_id=str(uuid.uuid4()), fixed_ips=[{"subnet_id": subnet.id,
                                                     "ip_address": ip}])
        created = wait(lambda p=created: plugged(conn, p.id), 30, "port plugged")
        guests[role] = netns(created, ip)
        namespaces.append(guests[role])
    return subnet, guests


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="lbhb-")
    table = f"lbbench_{uuid.uuid4().hex[:8]}"
    up = UpProcess(os.path.join(tmp, "data"), conf=conf(table),
                   args=("--admin-password", "bench")).start(timeout=120)
    namespaces, lb_ids = [], []
    figures = {"load_before": os.getloadavg(), "count": args.count}
    conn = up.sdk(password="bench")
    try:
        subnet, guests = guest_network(conn, "lbbench", "10.65", "tcp", 8080, namespaces)
        www = os.path.join(tmp, "www")
        os.makedirs(www)
        with open(os.path.join(www, "index.html"), "w") as f:
            f.write("x" * 512)
        sh("ip", "netns", "exec", guests["backend"], "busybox", "httpd", "-p", "8080",
           "-h", www)

        create_times = []
        for i in range(args.count):
            start = time.monotonic()
            lb = conn.load_balancer.create_load_balancer(
                vip_subnet_id=subnet.id, name=f"b{i}", listeners=[{
                    "protocol": "HTTP", "protocol_port": 80, "default_pool": {
                        "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                        "members": [{"address": "10.65.255.20", "protocol_port": 8080}]}}])
            lb_ids.append(lb.id)
            wait(lambda lb_id=lb.id: conn.load_balancer.get_load_balancer(
                lb_id).provisioning_status == "ACTIVE", 60, f"load balancer {i} ACTIVE")
            create_times.append(time.monotonic() - start)
            if i == 0:
                first = lb
        figures["create_first_s"] = round(create_times[0], 3)
        figures["create_last_s"] = round(create_times[-1], 3)
        figures["create_median_s"] = round(sorted(create_times)[len(create_times) // 2], 3)
        data = os.path.join(up.data_dir, "loadbalancer")
        pids = []
        for lb_id in lb_ids:
            with open(os.path.join(data, lb_id, "haproxy.pid")) as f:
                pids.append(int(f.read().split()[0]))
        figures["haproxy_rss_kb_per_lb"] = round(sum(rss_kb(p) for p in pids) / len(pids))

        vip = first.vip_address
        wait(lambda: sh("ip", "netns", "exec", guests["client"], "busybox", "wget", "-q",
                        "-O", "/dev/null", f"http://{vip}/index.html",
                        check=False).returncode == 0, 30, "the VIP serving")
        figures["vip_rps"] = round(load(guests["client"], vip, 80, args.requests,
                                        args.seconds))
        # The same configuration by hand in the same namespace, the managed one stopped.
        managed = pids[0]
        cfg = os.path.join(data, first.id, "haproxy.cfg")
        os.kill(managed, signal.SIGTERM)
        wait(lambda: not os.path.exists(f"/proc/{managed}"), 10, "the managed HAProxy gone")
        pidfile = os.path.join(tmp, "by-hand.pid")
        qns = next(n.split()[0] for n in sh("ip", "netns", "list").stdout.splitlines()
                   if n.split()[0].endswith(first.id))
        sh("ip", "netns", "exec", qns, "haproxy", "-D", "-f", cfg, "-p", pidfile)
        try:
            figures["by_hand_rps"] = round(load(guests["client"], vip, 80, args.requests,
                                                args.seconds))
        finally:
            with open(pidfile) as f:
                os.kill(int(f.read().split()[0]), signal.SIGTERM)
        figures["ratio"] = round(figures["vip_rps"] / figures["by_hand_rps"], 3)
    finally:
        figures["load_after"] = os.getloadavg()
        for lb_id in lb_ids:
            conn.load_balancer.delete_load_balancer(lb_id, cascade=True, ignore_missing=True)
        try:
            wait(lambda: not list(conn.load_balancer.load_balancers()), 600, "deletes")
        finally:
            for ns in namespaces:
                for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                    os.kill(int(pid), signal.SIGKILL)
                sh("ip", "netns", "del", ns, check=False)
            for port in conn.network.ports(device_owner="compute:nova"):
                conn.network.delete_port(port)
            for network in conn.network.networks(name="lbbench"):
                conn.network.delete_network(network)
            up.stop()
            for family in ("inet", "bridge"):
                sh("nft", "delete", "table", family, table, check=False)
    print(json.dumps(figures, indent=1))
    with open(os.path.join(HERE, "results", "loadbalancer_haproxy_bench.json"), "a") as f:
        f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **figures}) + "\n")


if __name__ == "__main__":
    main()
