"""Issue 24: cross-host guest ping RTT over the VXLAN overlay next to references in the
same run: two guests on the same host's bridge, a plain veth pair between two
namespaces, and the underlay itself (host to host through the test switch, no
encapsulation). The target: cross-host within 2x of same-host.

    sudo .venv/bin/python bench/overlay_rtt.py [--count 200] [--interval 0.02] [--rounds 3]

A controller cloud in this process (RPC over unix sockets) and two "hosts", each a network
namespace on a test switch running `pocketstack service network-agent` with [network]
local_ip (tests/helpers/overlay_hosts.py); guests are stand-in namespaces on veths named as
libvirt's taps. Rounds alternate the three pings so load drifts hit all of them; the
load average is printed with the figures. Everything lives in namespaces removed at
the end.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from helpers.cloud import own_cloud  # noqa: E402
from helpers.overlay_hosts import Fabric, Guest, sh, wait  # noqa: E402

RTT = re.compile(r"min/avg/max = ([\d.]+)/([\d.]+)/([\d.]+)")


def rtt(proc) -> tuple[float, float, float]:
    found = RTT.search(proc.stdout)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"ping failed: {proc.stdout}{proc.stderr}")
    return tuple(float(x) for x in found.groups())


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class VethPair:
    """The reference: two namespaces joined by one veth pair, nothing else."""

    def __init__(self):
        tag = "ovr" + uuid.uuid4().hex[:6]
        self.left, self.right = tag + "l", tag + "r"
        for ns in (self.left, self.right):
            sh("ip", "netns", "add", ns)
        sh("ip", "-n", self.left, "link", "add", "eth0", "type", "veth", "peer", "name",
           "eth0", "netns", self.right)
        for ns, address in ((self.left, "10.97.0.1/24"), (self.right, "10.97.0.2/24")):
            sh("ip", "-n", ns, "addr", "add", address, "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")

    def ping(self, count: int, interval: float):
        return sh("ip", "netns", "exec", self.left, "busybox", "ping", "-c", str(count),
                  "-i", str(interval), "-W", "2", "10.97.0.2", check=False,
                  timeout=30 + count * interval)

    def close(self):
        for ns in (self.left, self.right):
            sh("ip", "netns", "del", ns, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="pings per round and path")
    parser.add_argument("--interval", type=float, default=0.02)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="pocketstack-overlay-bench-")
    url = "unix://" + os.path.join(tmp, "rpc")
    print(f"load average at start: {loadavg()}")
    with own_cloud("overlay-bench", transport_url=url) as cloud:
        fabric, veth = Fabric(os.path.join(tmp, "hosts"), url), None
        try:
            admin = cloud.sdk()
            host_a, host_b = fabric.add_host(fabric.tag + "-a"), fabric.add_host(
                fabric.tag + "-b")
            for host in (host_a, host_b):
                host.start()
            wait(lambda: host_a.alive() and host_b.alive() and {
                a.host for a in admin.network.agents(agent_type="Linux bridge agent")
                if a.configuration.get("tunneling_ip")} >= {host_a.name, host_b.name}, 60,
                 "both agents' VTEPs")
            net = admin.network.create_network(name=fabric.tag, provider_network_type="vxlan")
            admin.network.create_subnet(network_id=net.id, ip_version=4,
                                        cidr="10.98.0.0/24", enable_dhcp=False)
            ports = [admin.network.create_port(network_id=net.id, binding_host_id=h.name)
                     for h in (host_a, host_a, host_b)]
            guest_a, same_host, other_host = (Guest(h, p, 24, net.mtu) for h, p in zip(
                (host_a, host_a, host_b), ports))
            for guest in (same_host, other_host):
                wait(lambda: guest_a.ping(guest.address).returncode == 0, 30,
                     f"{guest.address} to answer")
            veth = VethPair()
            paths = {
                "cross-host (VXLAN)": lambda: guest_a.ping(other_host.address, args.count,
                                                          args.interval),
                "same host (bridge)": lambda: guest_a.ping(same_host.address, args.count,
                                                          args.interval),
                "plain veth pair": lambda: veth.ping(args.count, args.interval),
                # the underlay the overlay rides on: host to host through the test switch
                "underlay host-host": lambda: host_a.run(
                    "busybox", "ping", "-c", str(args.count), "-i", str(args.interval),
                    "-W", "2", host_b.address, check=False),
            }
            avgs: dict[str, list[float]] = {name: [] for name in paths}
            mins: dict[str, list[float]] = {name: [] for name in paths}
            for _ in range(args.rounds):
                for name, ping in paths.items():
                    low, avg, _high = rtt(ping())
                    avgs[name].append(avg)
                    mins[name].append(low)
            print(f"{args.rounds} rounds x {args.count} pings at {args.interval}s; "
                  f"load average at end: {loadavg()}")
            for name in paths:
                print(f"  {name:20s} avg RTT median {statistics.median(avgs[name]):.3f} ms "
                      f"(rounds {', '.join(f'{x:.3f}' for x in avgs[name])}), "
                      f"min {min(mins[name]):.3f} ms")
            cross = statistics.median(avgs["cross-host (VXLAN)"])
            for ref in ("same host (bridge)", "plain veth pair", "underlay host-host"):
                print(f"  cross-host / {ref}: {cross / statistics.median(avgs[ref]):.2f}x")
        finally:
            if veth is not None:
                veth.close()
            fabric.close(show_logs=False)


if __name__ == "__main__":
    main()
