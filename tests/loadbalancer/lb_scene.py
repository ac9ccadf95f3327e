"""A scene for traffic tests of the haproxy data plane (a helper module, not a test): a
project network behind a router on an external network, backends in pretend guests
(namespaces gn… on the project network's bridge, as in the guest networking tests) and
"outside" namespaces (gno…) at chosen addresses on the external network's bridge, from
where clients reach a load balancer through a floating IP on its VIP.

Everything made is named per test and removed when the scene closes, whatever failed.
"""
from __future__ import annotations

import contextlib
import subprocess
import sys
import uuid


from helpers.cloud import wait_for
from helpers.guestnet import EXTERNAL_CIDR, Guest, sh, unique
from lb_helpers import BRIDGE_HOST, gone, needs_haproxy  # noqa: F401 - tests take them here
from lb_helpers import NAMED_SERVER as NAMED_HTTP  # noqa: F401

# Answers every UDP datagram with its own name and the client's address as seen.
NAMED_UDP = """
import socket, sys
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("0.0.0.0", int(sys.argv[1])))
while True:
    data, peer = sock.recvfrom(65535)
    sock.sendto(sys.argv[2].encode() + b" " + peer[0].encode() + b" " + data, peer)
"""

# Sends each argument as a datagram from a new socket (a new flow) to host:port and
# prints each answer (or "-" when none came in 2 s), one a line.
UDP_CLIENT = """
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
for payload in sys.argv[3:]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(2)
        sock.sendto(payload.encode(), (host, port))
        try:
            print(sock.recv(65535).decode(), flush=True)
        except OSError:
            print("-", flush=True)
"""


class Outside:
    """A namespace on the external network's bridge at ``address``: a client from
    beyond the router."""

    def __init__(self, bridge: str, address: str):
        self.ns = self.veth = "gno" + uuid.uuid4().hex[:10]
        self.address = address
        sh("ip", "netns", "add", self.ns)
        sh("ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns",
           self.ns)
        sh("ip", "link", "set", self.veth, "master", bridge, "up")
        sh("ip", "-n", self.ns, "addr", "add", f"{address}/24", "dev", "eth0")
        sh("ip", "-n", self.ns, "link", "set", "eth0", "up")
        sh("ip", "-n", self.ns, "link", "set", "lo", "up")

    def run(self, *args, check=True):
        return sh("ip", "netns", "exec", self.ns, *args, check=check)

    def fetch(self, address: str, port: int = 80) -> str | None:
        """The HTTP answer at address:port, None if nothing answers in 3 s."""
        proc = self.run("timeout", "3", "busybox", "wget", "-q", "-O", "-",
                        f"http://{address}:{port}/", check=False)
        return proc.stdout.strip() if proc.returncode == 0 else None

    def datagrams(self, address: str, port: int, payloads: list[str]) -> list[str]:
        proc = self.run(sys.executable, "-c", UDP_CLIENT, address, str(port), *payloads)
        return proc.stdout.splitlines()

    def remove(self):
        sh("ip", "netns", "del", self.ns, check=False)


class Scene(contextlib.ExitStack):
    """A user's network 10.<n>.0.0/24 behind a router whose gateway is on a new external
    network; guests on it, outsides beyond. Use as a context manager."""

    def __init__(self, cloud, agent, tmp_path, octet: int):
        super().__init__()
        self.agent, self.tmp_path, self.octet = agent, tmp_path, octet
        self.user = cloud.make_user()
        self.conn, self.admin = cloud.user_sdk(self.user), cloud.sdk()
        self.default_group = None

    def __enter__(self):
        super().__enter__()
        conn, admin = self.conn, self.admin
        self.external = admin.network.create_network(name=unique("lbext"),
                                                     is_router_external=True)
        self.callback(admin.network.delete_network, self.external)
        admin.network.create_subnet(network_id=self.external.id, ip_version=4,
                                    cidr=EXTERNAL_CIDR, enable_dhcp=False,
                                    gateway_ip="198.51.100.1")
        self.net = conn.network.create_network(name=unique("lbnet"))
        self.callback(conn.network.delete_network, self.net)
        self.subnet = conn.network.create_subnet(network_id=self.net.id, ip_version=4,
                                                 cidr=f"10.{self.octet}.0.0/24")
        router = conn.network.create_router(
            name=unique("lbr"), external_gateway_info={"network_id": self.external.id})
        self.callback(conn.network.delete_router, router)
        conn.network.add_interface_to_router(router, subnet_id=self.subnet.id)
        self.callback(conn.network.remove_interface_from_router, router,
                      subnet_id=self.subnet.id)
        self.callback(self._delete_guest_ports)
        self.default_group = next(conn.network.security_groups(
            name="default", project_id=self.user["project_id"]))
        self.agent.reconcile()  # the router and the external network's bridge
        return self

    def _delete_guest_ports(self):
        for port in self.admin.network.ports(network_id=self.net.id,
                                             device_owner="compute:nova"):
            self.admin.network.delete_port(port)

    def allow(self, protocol: str, port: int | None = None) -> None:
        """Ingress to the guests (their default security group)."""
        rule = {"security_group_id": self.default_group.id, "direction": "ingress",
                "ethertype": "IPv4", "protocol": protocol}
        if port is not None:
            rule.update(port_range_min=port, port_range_max=port)
        self.conn.network.create_security_group_rule(**rule)

    def guests(self, count: int) -> list[Guest]:
        """Pretend guests at 10.<n>.0.20, .21, ... on the user's network."""
        ports = [self.admin.network.create_port(
            network_id=self.net.id, project_id=self.user["project_id"],
            binding_host_id=BRIDGE_HOST, device_owner="compute:nova",
            device_id=str(uuid.uuid4()),
            fixed_ips=[{"subnet_id": self.subnet.id,
                        "ip_address": f"10.{self.octet}.0.{20 + i}"}])
            for i in range(count)]
        self.agent.reconcile()
        out = []
        for port in ports:
            guest = Guest(self.admin.network.get_port(port.id), self.tmp_path)
            self.callback(guest.remove)
            guest.address = port.fixed_ips[0]["ip_address"]
            guest.run("ip", "addr", "add", f"{guest.address}/24", "dev", "eth0")
            guest.run("ip", "route", "add", "default", "via", f"10.{self.octet}.0.1")
            out.append(guest)
        return out

    def serve(self, ns: str, program: str, *args: str) -> subprocess.Popen:
        proc = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", program,
                                 *args])

        def stop():
            proc.kill()
            proc.wait(10)
        self.callback(stop)
        return proc

    def load_balancer(self, **body):
        lb = self.conn.load_balancer.create_load_balancer(vip_subnet_id=self.subnet.id,
                                                          **body)

        def delete():
            self.conn.load_balancer.delete_load_balancer(lb.id, cascade=True,
                                                         ignore_missing=True)
            gone(self.conn, lb.id)
        self.callback(delete)
        return lb

    def floating_ip(self, port_id: str) -> str:
        fip = self.conn.network.create_ip(floating_network_id=self.external.id,
                                          port_id=port_id)
        self.callback(self.conn.network.delete_ip, fip)
        self.agent.reconcile()
        return fip.floating_ip_address

    def outside(self, address: str) -> Outside:
        outside = Outside("brq" + self.external.id[:11], address)
        self.callback(outside.remove)
        return outside


def status_tree(conn, lb_id: str) -> dict:
    return conn.load_balancer.get(f"/lbaas/loadbalancers/{lb_id}/status").json()[
        "statuses"]["loadbalancer"]


def member_status(conn, lb_id: str) -> dict[str, str]:
    """member address -> operating status, from the status tree."""
    tree = status_tree(conn, lb_id)
    return {m["address"]: m["operating_status"]
            for li in tree["listeners"] for pool in li["pools"] for m in pool["members"]}


def until(predicate, what: str, timeout: float = 30):
    return wait_for(predicate, timeout, what, interval=0.2)
