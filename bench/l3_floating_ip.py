"""Issue 24: floating IP associate -> first ping answered from outside (target <= 1 s), and
disassociate -> last ping answered, through the real L3 agent (network/agent/l3.py).

    sudo .venv/bin/python bench/l3_floating_ip.py [--rounds 10]

An in-process cloud on a temporary data dir with [network] host_networking; a router with
its gateway on an external network and an interface on a project network; a pretend guest
(namespace lb…, its port's MAC and fixed IP, default route via the router) whose security
group admits ICMP; an "outside" namespace lb… on the external network's bridge. Pings are
sent from the outside every 5 ms by a raw ICMP socket made inside that namespace, so the
figure's resolution is 5 ms (busybox ping would wait a second per lost reply).

Reference in the same run: ``ip netns exec <ns> nft add rule`` of the same DNAT, by hand,
in a scratch namespace (the process and nft cost any agent pays), and the load average
(``uptime``) before and after. Everything made (lb*/qrouter-*/qdhcp-*/brq*, the nft
tables l3_bench) is removed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid

BRIDGE_HOST = "lb-realhost"
OUTSIDE_IP = "198.51.100.1"


def sh(*args, check=True):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=check)


def uptime() -> str:
    return sh("uptime").stdout.strip()


def ns_icmp_socket(ns: str) -> socket.socket:
    """A raw ICMP socket inside namespace ``ns``."""
    from pocketstack.network.agent import ip as host

    return host.socket_in(ns, socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF


class Pinger:
    """Echo requests to ``address`` every 5 ms; remembers when replies arrived."""

    def __init__(self, sock: socket.socket, address: str):
        self.sock, self.address = sock, address
        self.ident = os.getpid() & 0xFFFF
        self.seq = 0
        sock.settimeout(0.005)

    def _send(self):
        self.seq = (self.seq + 1) & 0xFFFF
        header = struct.pack("!BBHHH", 8, 0, 0, self.ident, self.seq)
        payload = b"l3bench"
        packet = struct.pack("!BBHHH", 8, 0, _checksum(header + payload), self.ident,
                             self.seq) + payload
        try:
            self.sock.sendto(packet, (self.address, 0))
        except (socket.timeout, BlockingIOError):
            pass  # the send queue is full while the address is not resolved yet

    def _replied(self) -> bool:
        try:
            while True:
                data, (source, _) = self.sock.recvfrom(2048)
                icmp = data[20:28]
                kind, _, _, ident, _ = struct.unpack("!BBHHH", icmp)
                if kind == 0 and ident == self.ident and source == self.address:
                    return True
        except socket.timeout:
            return False

    def _ping(self) -> bool:
        """One request; whether it was answered within 5 ms. Paced at one per 5 ms even
        when answered at once (a flood would slow the agent it measures)."""
        sent = time.monotonic()
        self._send()
        replied = self._replied()
        time.sleep(max(0.0, 0.005 - (time.monotonic() - sent)))
        return replied

    def first_reply(self, since: float, limit: float = 5.0) -> float | None:
        while time.monotonic() - since < limit:
            if self._ping():
                return time.monotonic() - since
        return None

    def last_reply(self, since: float, quiet: float = 0.5, limit: float = 5.0) -> float | None:
        """Seconds from ``since`` to the last reply before ``quiet`` seconds without one."""
        last = since
        while time.monotonic() - since < limit:
            if self._ping():
                last = time.monotonic()
            elif time.monotonic() - last > quiet:
                return last - since
        return None


def nft_reference(rounds: int) -> list[float]:
    """``ip netns exec ns nft add rule`` of one DNAT, in a scratch namespace."""
    ns = "lbref" + uuid.uuid4().hex[:8]
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "netns", "exec", ns, "nft", "add table ip ref; add chain ip ref pre "
           "{ type nat hook prerouting priority -100; }")
        took = []
        for i in range(rounds):
            started = time.monotonic()
            sh("ip", "netns", "exec", ns, "nft", "add", "rule", "ip", "ref", "pre", "ip",
               "daddr", f"198.51.100.{100 + i}", "dnat", "to", "10.78.0.5")
            took.append(time.monotonic() - started)
        return took
    finally:
        sh("ip", "netns", "del", ns, check=False)


def ms(values: list[float]) -> str:
    return (f"median {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} "
            f"ms (n={len(values)})") if values else "none"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "dnsmasq", "nft")):
        print("needs root, iproute2, dnsmasq and nftables", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import openstack
    from keystoneauth1 import session as ks_session
    from keystoneauth1.identity import v3

    from pocketstack.cloud import Cloud

    load_before = uptime()
    data_dir = tempfile.mkdtemp(prefix="l3-bench-")
    cloud = Cloud(data_dir, admin_password="bench", overrides={
        "network.host_networking": True, "network.bridge_hosts": [BRIDGE_HOST],
        "network.nft_table": "l3_bench", "identity.password_hash_rounds": 4})
    cloud.start(port=0)
    made_ns: list[str] = []
    try:
        auth = v3.Password(auth_url=cloud.auth_url, username="admin", password="bench",
                           project_name="admin", user_domain_id="default",
                           project_domain_id="default")
        conn = openstack.connection.Connection(session=ks_session.Session(auth=auth),
                                               region_name="RegionOne")
        net = conn.network
        ext = net.create_network(name="lb-ext", is_router_external=True)
        net.create_subnet(network_id=ext.id, ip_version=4, cidr="198.51.100.0/24",
                          gateway_ip=OUTSIDE_IP, enable_dhcp=False)
        inner = net.create_network(name="lb-inner")
        subnet = net.create_subnet(network_id=inner.id, ip_version=4, cidr="10.78.0.0/24")
        router = net.create_router(name="lb-r", external_gateway_info={"network_id": ext.id})
        net.add_interface_to_router(router, subnet=subnet.id)
        group = net.create_security_group(name="lb-icmp")
        net.create_security_group_rule(security_group_id=group.id, direction="ingress",
                                       ethertype="IPv4", protocol="icmp")
        port = net.create_port(network_id=inner.id, device_owner="compute:nova",
                               device_id=str(uuid.uuid4()), security_groups=[group.id],
                               binding_host_id=BRIDGE_HOST)
        fixed = port.fixed_ips[0]["ip_address"]

        guest = "lbg" + uuid.uuid4().hex[:8]
        made_ns.append(guest)
        sh("ip", "netns", "add", guest)
        sh("ip", "link", "add", "tap" + port.id[:11], "type", "veth", "peer", "name", "eth0",
           "netns", guest)
        sh("ip", "link", "set", "tap" + port.id[:11], "master", "brq" + inner.id[:11], "up")
        sh("ip", "-n", guest, "link", "set", "eth0", "address", port.mac_address, "up")
        sh("ip", "-n", guest, "addr", "add", f"{fixed}/24", "dev", "eth0")
        sh("ip", "-n", guest, "route", "add", "default", "via", subnet.gateway_ip)

        deadline = time.monotonic() + 30
        while not os.path.exists("/sys/class/net/brq" + ext.id[:11]):
            assert time.monotonic() < deadline, "the router's external bridge never appeared"
            time.sleep(0.05)
        outside = "lbo" + uuid.uuid4().hex[:8]
        made_ns.append(outside)
        sh("ip", "netns", "add", outside)
        sh("ip", "link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns",
           outside)
        sh("ip", "link", "set", outside, "master", "brq" + ext.id[:11], "up")
        sh("ip", "-n", outside, "addr", "add", f"{OUTSIDE_IP}/24", "dev", "eth0")
        sh("ip", "-n", outside, "link", "set", "eth0", "up")

        fip = net.create_ip(floating_network_id=ext.id)
        pinger = Pinger(ns_icmp_socket(outside), fip.floating_ip_address)
        associate, disassociate, api = [], [], []
        for _ in range(args.rounds):
            started = time.monotonic()
            net.update_ip(fip, port_id=port.id)
            api.append(time.monotonic() - started)
            took = pinger.first_reply(started)
            if took is None:
                raise SystemExit("the floating IP never answered within 5 s")
            associate.append(took)
            started = time.monotonic()
            net.update_ip(fip, port_id=None)
            took = pinger.last_reply(started)
            if took is None:
                raise SystemExit("the floating IP kept answering for 5 s")
            disassociate.append(took)
            time.sleep(0.2)
        reference = nft_reference(args.rounds)
        print(json.dumps({
            "uptime before": load_before,
            "associate -> first ping answered from outside": ms(associate),
            "  of which the PUT /floatingips answer": ms(api),
            "disassociate -> last ping answered": ms(disassociate),
            "reference: ip netns exec nft add rule (same DNAT, by hand)": ms(reference),
            "uptime after": uptime(),
        }, indent=2))
    finally:
        for ns in made_ns:
            sh("ip", "netns", "del", ns, check=False)
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
