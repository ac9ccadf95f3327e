"""What real guest networking adds to binding a port (issue 9): PUT /v2.0/ports/{id} with
binding:host_id, on a bridge host (the API plumbs the network before it answers) next to
the same request on a simulated host, in the same run; and how long a pretend guest
(namespace + veth with the port's MAC, busybox udhcpc) takes to lease its address.

    sudo .venv/bin/python bench/guestnet_bench.py [--networks 5] [--ports 20]
    sudo .venv/bin/python bench/guestnet_bench.py --nft-only

``--nft-only``: what one more port costs the security-group tables, applied as the
agent does it now (that port's chains and map/set elements) next to swapping the whole
tables (before), with 1, 25 and 100 ports already on the host; no cloud is started.

Runs the cloud in this process on a temporary data dir with [network] host_networking
(root, iproute2, dnsmasq, nftables, busybox). Bounded in count; everything it makes
(gb*/qdhcp-*/brq* and the nft tables guestnet_bench) is removed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

BRIDGE_HOST = "gb-realhost"


def ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms " \
           f"(n={len(values)})"


def lease(mac: str, bridge: str, tap: str) -> float:
    """Seconds from a pretend guest's first DHCPDISCOVER to its lease."""
    ns = "gb" + uuid.uuid4().hex[:10]
    run = lambda *a: subprocess.run(a, check=True, capture_output=True, timeout=60)  # noqa: E731
    run("ip", "netns", "add", ns)
    try:
        run("ip", "link", "add", tap, "type", "veth", "peer", "name", "eth0", "netns", ns)
        run("ip", "link", "set", tap, "master", bridge, "up")
        run("ip", "-n", ns, "link", "set", "eth0", "address", mac, "up")
        started = time.monotonic()
        run("ip", "netns", "exec", ns, "busybox", "udhcpc", "-i", "eth0", "-n", "-q", "-f",
            "-t", "20", "-T", "1", "-s", "/bin/true")
        return time.monotonic() - started
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=60)


def nft_figures(reps: int = 10) -> dict:
    """One port added to tables already holding n ports: incremental vs whole swap."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    from pocketstack.common import config
    from pocketstack.network.agent import firewall

    config.CONF([], project="pocketstack", default_config_files=[])
    config.CONF.set_override("nft_table", "guestnet_bench_nft", group="network")
    rules = [firewall.Rule("sg", "ingress", "IPv4", "tcp", 22, 22, "0.0.0.0/0", None),
             firewall.Rule("sg", "ingress", "IPv4", None, None, None, None, "sg"),
             firewall.Rule("sg", "egress", "IPv4", None, None, None, None, None)]

    def port(i):
        return firewall.GuestPort(str(uuid.UUID(int=i)), "5e0b8a2c-1111-4222-8333-944455556666",
                                  [f"10.{i // 250}.{i % 250}.10"], ["sg"],
                                  f"fa:16:3e:00:{i // 250:02x}:{i % 250:02x}")

    def plan(n):
        ports = [port(i) for i in range(1, n + 1)]
        return firewall.layout(ports, rules, {"sg": [p.ips[0] for p in ports]}, [])

    out = {}
    try:
        for n in (1, 25, 100):
            before, after = plan(n), plan(n + 1)
            whole, changes = [], []
            for _ in range(reps):
                firewall.apply_layout(None, before)
                t0 = time.monotonic()
                firewall.apply_layout(None, after)
                whole.append(time.monotonic() - t0)
                firewall.apply_layout(None, before)
                t0 = time.monotonic()
                firewall.apply_layout(before, after)
                changes.append(time.monotonic() - t0)
            out[f"{n} ports + 1"] = {"whole tables swapped": ms(whole),
                                     "that port's changes only": ms(changes)}
    finally:
        firewall.apply_layout(None, None)
    out["load average"] = os.getloadavg()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", type=int, default=5)
    parser.add_argument("--ports", type=int, default=20, help="ports bound per kind")
    parser.add_argument("--leases", type=int, default=3)
    parser.add_argument("--nft-only", action="store_true")
    args = parser.parse_args()
    if args.nft_only:
        print(json.dumps(nft_figures(), indent=2))
        return 0
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "dnsmasq", "nft",
                                                                   "busybox")):
        print("needs root, iproute2, dnsmasq, nftables and busybox", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    from keystoneauth1 import session as ks_session
    from keystoneauth1.identity import v3

    from pocketstack.cloud import Cloud

    data_dir = tempfile.mkdtemp(prefix="guestnet-bench-")
    cloud = Cloud(data_dir, admin_password="bench", overrides={
        "network.host_networking": True, "network.bridge_hosts": [BRIDGE_HOST],
        "network.nft_table": "guestnet_bench", "identity.password_hash_rounds": 4})
    cloud.start(port=0)
    try:
        auth = v3.Password(auth_url=cloud.auth_url, username="admin", password="bench",
                           project_name="admin", user_domain_id="default",
                           project_domain_id="default")
        s = ks_session.Session(auth=auth)
        net_url = cloud.url + "/network/v2.0"

        def call(method, path, body=None):
            r = s.request(net_url + path, method, json=body, raise_exc=False)
            assert r.status_code < 300, r.text
            return r.json() if r.content else None

        def port_on(network_id):
            return call("POST", "/ports", {"port": {
                "network_id": network_id, "device_owner": "compute:nova",
                "device_id": str(uuid.uuid4())}})["port"]

        def bind(port_id, host):
            started = time.monotonic()
            port = call("PUT", f"/ports/{port_id}", {"port": {"binding:host_id": host}})
            return time.monotonic() - started, port["port"]

        networks = []
        for i in range(args.networks):
            net = call("POST", "/networks", {"network": {"name": f"gb-{i}"}})["network"]
            call("POST", "/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                 "cidr": f"10.77.{i}.0/24"}})
            networks.append(net["id"])
        first = [bind(port_on(n)["id"], BRIDGE_HOST)[0] for n in networks]
        again, simulated, bound = [], [], []
        for i in range(args.ports):
            network_id = networks[i % len(networks)]
            took, port = bind(port_on(network_id)["id"], BRIDGE_HOST)
            again.append(took)
            bound.append(port)
            simulated.append(bind(port_on(network_id)["id"], "cmp-1")[0])
        leases = [lease(p["mac_address"], p["binding:vif_details"]["bridge_name"],
                        "tap" + p["id"][:11]) for p in bound[:args.leases]]
        result = {
            "load_average": os.getloadavg(),
            "bind_simulated_host": ms(simulated),
            "bind_first_port_of_network": ms(first),
            "bind_port_on_plumbed_network": ms(again),
            "guest_dhcp_lease": ms(leases),
        }
        print(json.dumps(result, indent=2))
        for network_id in networks:  # the networks' ports go with them
            for port in call("GET", f"/ports?network_id={network_id}")["ports"]:
                if port["device_owner"] == "compute:nova":
                    call("DELETE", f"/ports/{port['id']}")
            call("DELETE", f"/networks/{network_id}")
    finally:
        from pocketstack.network import agent
        from pocketstack.network.agent import agent as host_agent

        running = agent.running()
        if running is not None:  # while the cloud still runs: its config says what to remove
            host_agent.stop(running, teardown=True)
        cloud.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
