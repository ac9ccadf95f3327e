"""Helpers of the metadata and guest networking tests: a project with a network, a key
pair and an image, and servers booted in it through the real compute API (openstacksdk)."""
from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import sys
import time
import uuid


def _public_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH,
                            serialization.PublicFormat.OpenSSH).decode() + " guestnet@test"


PUBLIC_KEY = _public_key()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def unique_table(prefix: str) -> str:
    """An nftables table name of this run's own: two test runs on one host (a developer's
    and CI's) must not swap each other's rules."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


class Project:
    """A member project with what booting a server needs."""

    def __init__(self, cloud):
        self.cloud = cloud
        self.user = cloud.make_user(roles=("member",))
        self.conn = cloud.user_sdk(self.user)
        self.admin = cloud.sdk()
        # a module's tests boot more servers than the default quota of 10 holds
        self.admin.set_compute_quotas(self.user["project_id"], instances=50, cores=100)
        self.key = self.conn.compute.create_keypair(name=unique("key"), public_key=PUBLIC_KEY)
        image = self.admin.image.create_image(
            name=unique("tiny"), disk_format="raw", container_format="bare",
            visibility="public", data=b"\0" * 1024)
        self.image_id = image.id

    def network(self, cidr: str = "10.20.0.0/24", **subnet):
        net = self.conn.network.create_network(name=unique("net"))
        sub = self.conn.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr,
                                              name=unique("sub"), **subnet)
        return net, sub

    def boot(self, network_id: str, user_data: bytes | None = b"#!/bin/sh\necho hi\n",
             fixed_ip: str | None = None, **extra):
        network = {"uuid": network_id, **({"fixed_ip": fixed_ip} if fixed_ip else {})}
        kwargs = dict(name=unique("vm"), image_id=self.image_id, flavor_id="42",
                      networks=[network], key_name=self.key.name, **extra)
        if user_data is not None:
            kwargs["user_data"] = base64.b64encode(user_data).decode()
        server = self.conn.compute.create_server(**kwargs)
        return self.conn.compute.wait_for_server(server, interval=0.05, wait=60)

    def port_of(self, server_id: str):
        ports = list(self.admin.network.ports(device_id=server_id))
        assert len(ports) == 1, ports
        return ports[0]

    def cleanup(self):
        for server in self.conn.compute.servers():
            self.conn.compute.delete_server(server)
        deadline = time.monotonic() + 30
        while list(self.conn.compute.servers()) and time.monotonic() < deadline:
            time.sleep(0.05)
        for net in self.conn.network.networks(project_id=self.user["project_id"]):
            for port in self.admin.network.ports(network_id=net.id,
                                                 device_owner="compute:nova"):
                self.admin.network.delete_port(port)
            self.conn.network.delete_network(net)
        self.admin.image.delete_image(self.image_id, ignore_missing=True)


# --- real guest networking (test_guestnet_host.py, test_guestnet_l3.py) ---------------

UDHCPC_SCRIPT = """#!/bin/sh
# udhcpc's hook: configure the lease and record what the DHCP server said
case "$1" in
  bound|renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/$mask" dev "$interface"
    set -- $staticroutes
    while [ -n "$1" ]; do ip route replace "$1" via "$2" dev "$interface"; shift 2; done
    printf 'ip=%s\\nmask=%s\\nrouter=%s\\nstaticroutes=%s\\nmtu=%s\\n' \\
      "$ip" "$mask" "$router" "$staticroutes" "$mtu" > "$LEASE_FILE"
    ;;
esac
"""


def sh(*args, check=True):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=check)


class Guest:
    """A pretend VM: namespace gn<random>, eth0 with the port's MAC, its other end a
    'tap<port id[:11]>' on the network's bridge (what libvirt would plug)."""

    def __init__(self, port, tmp_path):
        self.port = port
        self.ns = "gn" + uuid.uuid4().hex[:10]
        self.tap = "tap" + port.id[:11]
        self.lease_file = str(tmp_path / f"{self.ns}.lease")
        self.script = str(tmp_path / f"{self.ns}.sh")
        with open(self.script, "w") as f:
            f.write(UDHCPC_SCRIPT)
        os.chmod(self.script, 0o755)
        bridge = port.binding_vif_details["bridge_name"]
        sh("ip", "netns", "add", self.ns)
        sh("ip", "link", "add", self.tap, "type", "veth", "peer", "name", "eth0", "netns",
           self.ns)
        sh("ip", "link", "set", self.tap, "master", bridge, "up")
        sh("ip", "-n", self.ns, "link", "set", "eth0", "address", port.mac_address, "up")
        sh("ip", "-n", self.ns, "link", "set", "lo", "up")

    def run(self, *args, check=True):
        return sh("ip", "netns", "exec", self.ns, *args, check=check)

    def dhcp(self) -> dict:
        proc = subprocess.run(
            ["ip", "netns", "exec", self.ns, "busybox", "udhcpc", "-i", "eth0", "-n", "-q",
             "-f", "-t", "10", "-T", "1", "-O", "staticroutes", "-s", self.script],
            env=dict(os.environ, LEASE_FILE=self.lease_file), capture_output=True,
            text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        with open(self.lease_file) as f:
            return dict(line.split("=", 1) for line in f.read().splitlines())

    def ping(self, address: str) -> bool:
        return self.run("busybox", "ping", "-c", "1", "-W", "2", address,
                        check=False).returncode == 0

    def fetch(self, path: str) -> str:
        return self.run("timeout", "20", "busybox", "wget", "-q", "-O", "-",  # (its -T
                        f"http://169.254.169.254{path}").stdout                # crashes)

    def remove(self):
        sh("ip", "netns", "del", self.ns, check=False)


class AgentHandle:
    """The agent this module runs in the test cloud; ``stop()``/``start()`` play a restart
    of the cloud process (bridges, namespaces and dnsmasq stay meanwhile)."""

    def __init__(self):
        from pocketstack.network.agent import agent

        self.module = agent
        self.running = agent.start()

    def reconcile(self):
        self.running.reconcile()  # what the agent does in the background, now

    def stop(self):
        self.module.stop(self.running)

    def start(self):
        self.running = self.module.start()


@contextlib.contextmanager
def running_agent(bridge_host: str, nft_table: str):
    """The host agent on in the test cloud for ports bound to ``bridge_host``, with its
    own nftables table; on exit everything it made is removed and the overrides cleared
    whatever the teardown met (later tests of the worker get a plain cloud)."""
    from pocketstack.common import config

    conf = config.CONF
    conf.set_override("host_networking", True, group="network")
    conf.set_override("bridge_hosts", [bridge_host], group="network")
    conf.set_override("nft_table", nft_table, group="network")
    handle = None
    try:
        handle = AgentHandle()
        yield handle
    finally:
        try:
            if handle is not None:
                handle.module.stop(handle.running, teardown=True)
        finally:
            for name in ("host_networking", "bridge_hosts", "nft_table"):
                conf.clear_override(name, group="network")


def links() -> set[str]:
    out = sh("ip", "-j", "link", "show").stdout
    return {link["ifname"] for link in json.loads(out)}


def namespaces() -> set[str]:
    return set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()


# Answers every GET with the client's address as the server sees it (SNAT shows here).
# An HTTP server on port argv[1] answering every GET with its name (argv[2]) or, without
# one, the client's address (what a guest behind NAT or a load balancer sees).
ECHO_SERVER = """
import http.server, sys
class Echo(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = (sys.argv[2] if len(sys.argv) > 2 else self.client_address[0]).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("0.0.0.0", int(sys.argv[1])), Echo).serve_forever()
"""


def echo_server(ns: str, port: int = 8080) -> subprocess.Popen:
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", ECHO_SERVER,
                             str(port)])


# --- the world beyond a router ------------------------------------------------------------

EXTERNAL_CIDR, OUTSIDE_IP = "198.51.100.0/24", "198.51.100.1"  # documentation range


class Outside:
    """A namespace on the external network's bridge, playing the world beyond the
    router: it holds the external subnet's gateway address and runs the echo server."""

    def __init__(self, external_network_id: str):
        self.ns = "gno" + uuid.uuid4().hex[:10]
        self.veth = self.ns
        self.server = None
        sh("ip", "netns", "add", self.ns)
        sh("ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns",
           self.ns)
        self.bridge = "brq" + external_network_id[:11]
        self.attach()
        sh("ip", "-n", self.ns, "addr", "add", f"{OUTSIDE_IP}/24", "dev", "eth0")
        sh("ip", "-n", self.ns, "link", "set", "eth0", "up")
        sh("ip", "-n", self.ns, "link", "set", "lo", "up")
        self.server = echo_server(self.ns)

    def attach(self):
        """On the external network's bridge, again if the agent made it anew (it goes
        with the last router using the network, as a real uplink would not)."""
        sh("ip", "link", "set", self.veth, "master", self.bridge, "up")

    def ping(self, address: str, wait: int = 1) -> bool:
        return sh("ip", "netns", "exec", self.ns, "busybox", "ping", "-c", "1", "-W",
                  str(wait), address, check=False).returncode == 0

    def fetch(self, address: str, port: int) -> str | None:
        """The echo server's answer at address:port, None if nothing answers in 3 s."""
        proc = sh("ip", "netns", "exec", self.ns, "timeout", "3", "busybox", "wget", "-q",
                  "-O", "-", f"http://{address}:{port}/", check=False)
        return proc.stdout.strip() if proc.returncode == 0 else None

    def remove(self):
        if self.server is not None:
            self.server.kill()
            self.server.wait(timeout=10)
        sh("ip", "netns", "del", self.ns, check=False)
