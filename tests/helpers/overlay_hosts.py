"""Several "hosts" on one machine for the overlay tests and bench: each host is a
network namespace with an underlay address on a shared test switch (a bridge in a
namespace of its own), running `pocketstack service network-agent` inside it. Guests
are stand-ins (``Guest``: a namespace each joined by a veth named as libvirt's tap
would be) or real QEMU guests booted by a compute agent of the host's own
(``Host.start_compute``: `pocketstack service compute` on the libvirt driver, with
``[libvirt] host_netns`` naming the host's namespace).

Everything lives in namespaces named ``<tag>…`` made here (with the plumbing of
`pocketstack lab`, pocketstack/netns_hosts.py): ``Fabric.close()`` stops the agents and
deletes the namespaces, which takes every bridge, VXLAN device, veth and nftables table
inside with them.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from urllib.parse import urlsplit

from helpers.cloud import own_cloud, wait_for
from helpers.guestnet import UDHCPC_SCRIPT, echo_server

from pocketstack import netns_hosts
from pocketstack.netns_hosts import Relay

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")
UNDERLAY = "10.99.0.{}/24"
PHYSNET, PHYSNET_IFACE = "physnet1", "ph0"


sh = netns_hosts.sh


def wait(predicate, timeout: float, what: str, interval: float = 0.1):
    """predicate()'s first true value, within ``timeout`` seconds."""
    return wait_for(predicate, timeout, what, interval)


def vteps(admin, hosts) -> dict[str, str]:
    """{host: tunnel address} of the live Linux bridge agents of ``hosts``."""
    found = {}
    for agent in admin.network.agents(agent_type="Linux bridge agent"):
        if agent.host in hosts and agent.is_alive:
            found[agent.host] = agent.configuration.get("tunneling_ip")
    return found


def router_plugged(node, router_id: str, external_id: str) -> bool:
    listing = sh("ip", "netns", "list").stdout
    return f"qrouter-{router_id}" in listing and "brq" + external_id[:11] in node.links()


def routed_network(admin, tag: str, cidr: str):
    """(external network, vxlan network, its subnet, router): an external network
    198.51.100.0/24 (gateway .1, the Outside), a vxlan project network on ``cidr`` and a
    router between them."""
    external = admin.network.create_network(name=f"{tag}-ext", is_router_external=True)
    admin.network.create_subnet(network_id=external.id, ip_version=4,
                                cidr="198.51.100.0/24", gateway_ip="198.51.100.1",
                                enable_dhcp=False)
    net = admin.network.create_network(name=f"{tag}-net", provider_network_type="vxlan")
    subnet = admin.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr)
    router = admin.network.create_router(
        name=f"{tag}-r", external_gateway_info={"network_id": external.id})
    admin.network.add_interface_to_router(router, subnet_id=subnet.id)
    return external, net, subnet, router


def floating_ip_opened_by_its_group(admin, node, outside, router_id: str, external_id: str,
                                    port):
    """A floating IP for ``port``, checked from the outside: closed while the port's
    default group lets in only its members, answering once the group admits ICMP."""
    fip = admin.network.create_ip(floating_network_id=external_id, port_id=port.id)
    address = fip.floating_ip_address
    wait(lambda: address in node.run_in(f"qrouter-{router_id}", "nft", "list",
                                        "ruleset").stdout, 30,
         "the floating IP's rules on the network node")
    assert outside.run("busybox", "ping", "-c", "1", "-W", "1", address).returncode != 0
    admin.network.create_security_group_rule(
        security_group_id=port.security_group_ids[0], direction="ingress", protocol="icmp",
        remote_ip_prefix="0.0.0.0/0")
    wait(lambda: outside.run("busybox", "ping", "-c", "1", "-W", "1",
                             address).returncode == 0, 30,
         "the outside to ping the guest on its floating IP")
    return fip


class Host:
    """A compute host: its namespace, underlay address and agent process."""

    def __init__(self, fabric: "Fabric", name: str, index: int):
        self.fabric, self.name, self.index = fabric, name, index
        self.ns = f"{fabric.tag}h{index}"
        self.address = UNDERLAY.format(index).split("/")[0]
        self.data_dir = os.path.join(fabric.tmp, self.ns)
        self.log = os.path.join(fabric.tmp, f"{self.ns}.log")
        self.proc = self.compute = None
        fabric.made.append(self.ns)
        # with a second link to the switch (no address): physnet1 for flat/vlan networks
        netns_hosts.plug_host(fabric.switch, self.ns, index, UNDERLAY.format(index),
                      physnet_iface=PHYSNET_IFACE)
        os.makedirs(self.data_dir, mode=0o700)
        self.conf = os.path.join(self.data_dir, "agent.conf")
        with open(self.conf, "w") as f:
            f.write(f"[DEFAULT]\ntransport_url = {fabric.transport_url}\ndebug = true\n"
                    # no database for this process: any use of one would fail loudly
                    "[database]\nconnection = postgresql+psycopg://nobody@127.0.0.1:9/none\n"
                    f"[network]\nreport_interval = 0.5\nlocal_ip = {self.address}\n"
                    f"physical_interface_mappings = {PHYSNET}:{PHYSNET_IFACE}\n")

    def reach_metadata(self, cloud) -> None:
        """Before start(): the host's agent (a network node's metadata proxies) reaches
        compute's metadata API through a relay, with the cloud's shared secret, as a
        network node elsewhere is configured ([network] metadata_url)."""
        from pocketstack.clients import service_users

        api = urlsplit(cloud.url)
        relay = Relay(self.ns, (api.hostname, api.port))
        self.fabric.relays.append(relay)
        with open(self.conf) as f:
            text = f.read()
        text = text.replace("[network]\n", "[network]\nmetadata_url = "
                            f"http://127.0.0.1:{relay.port}/metadata\n", 1)
        text += ("[service_user]\nmetadata_proxy_shared_secret = "
                 f"{service_users.metadata_secret()}\n")
        with open(self.conf, "w") as f:
            f.write(text)

    def start(self) -> None:
        log = open(self.log, "ab")
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, EXE, "service", "network-agent", "--host",
             self.name, "--data-dir", self.data_dir, "--config-file", self.conf],
            stdout=log, stderr=subprocess.STDOUT)  # `ip netns exec` execs the agent itself
        log.close()

    def start_compute(self, cloud) -> None:
        """`pocketstack service compute --host <name>` on the libvirt driver, on the
        machine's libvirtd, sharing the controller cloud's data dir and database; it
        runs outside the host's namespace (it calls the APIs on 127.0.0.1) and moves
        its guests' taps in ([libvirt] host_netns)."""
        from pocketstack.common import config

        conf = os.path.join(self.data_dir, "compute.conf")
        with open(conf, "w") as f:
            f.write(f"[DEFAULT]\ntransport_url = {self.fabric.transport_url}\ndebug = true\n"
                    f"compute_driver = libvirt\npublic_url = {config.public_url()}\n"
                    f"[database]\nconnection = {config.CONF.database.connection}\n"
                    "[compute]\nperiodic_interval = 1.0\n"
                    f"[libvirt]\nhost_netns = {self.ns}\n")
        log = open(self.log + ".compute", "ab")
        self.compute = subprocess.Popen(
            [EXE, "service", "compute", "--host", self.name, "--data-dir", cloud.data_dir,
             "--config-file", conf], stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def stop(self) -> None:
        for proc in (self.compute, self.proc):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        self.proc = self.compute = None

    def alive(self) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            raise AssertionError(f"agent on {self.name} exited:\n{self.log_text()}")
        return True

    def log_text(self, which: str = "") -> str:
        """The tail of the host's agent log (``which="compute"``: its compute's)."""
        with open(self.log + (f".{which}" if which else ""), errors="replace") as f:
            return f.read()[-int(os.environ.get("OVERLAY_LOG_TAIL", "4000")):]

    # --- what the host has -----------------------------------------------------------

    def run(self, *args, check=True):
        return sh("ip", "netns", "exec", self.ns, *args, check=check)

    def run_in(self, ns: str, *args, check=False):
        """A command in a namespace the agent made (qdhcp-, qrouter-): its name is
        mounted in the agent's own mount namespace (`ip netns exec` gave it one), so
        enter that first."""
        return sh("nsenter", "-m", "-t", str(self.proc.pid), "ip", "netns", "exec", ns,
                  *args, check=check)

    def links(self) -> dict[str, dict]:
        out = sh("ip", "-n", self.ns, "-d", "-j", "link", "show").stdout
        return {link["ifname"]: link for link in json.loads(out)}

    def fdb(self, dev: str) -> set[tuple[str, str]]:
        out = self.run("bridge", "-j", "fdb", "show", "dev", dev, check=False).stdout
        return {(e["mac"], e["dst"]) for e in json.loads(out or "[]") if e.get("dst")}


class Guest:
    """A stand-in guest on a host: namespace, eth0 with the port's MAC and address (or
    none, for dhcp()), its peer ``tap<port id[:11]>`` on the network's bridge in the
    host's namespace."""

    def __init__(self, host: Host, port, prefix: int, mtu: int, static: bool = True):
        self.host = host
        self.ns = f"{host.fabric.tag}g{uuid.uuid4().hex[:6]}"
        self.address = port.fixed_ips[0]["ip_address"]
        tap = "tap" + port.id[:11]
        host.fabric.made.append(self.ns)
        sh("ip", "netns", "add", self.ns)
        sh("ip", "-n", host.ns, "link", "add", tap, "mtu", str(mtu), "type", "veth", "peer",
           "name", "eth0", "netns", self.ns)
        sh("ip", "-n", host.ns, "link", "set", tap, "master", "brq" + port.network_id[:11],
           "up")
        address = [f"addr add {self.address}/{prefix} dev eth0"] if static else []
        for command in ("link set lo up", f"link set eth0 address {port.mac_address} "
                        f"mtu {mtu}", *address, "link set eth0 up"):
            sh("ip", "-n", self.ns, *command.split())

    def dhcp(self) -> dict:
        """Lease an address with busybox udhcpc: what the DHCP server said."""
        script = os.path.join(self.host.fabric.tmp, f"{self.ns}.sh")
        lease_file = os.path.join(self.host.fabric.tmp, f"{self.ns}.lease")
        with open(script, "w") as f:
            f.write(UDHCPC_SCRIPT)
        os.chmod(script, 0o755)
        proc = subprocess.run(
            ["ip", "netns", "exec", self.ns, "busybox", "udhcpc", "-i", "eth0", "-n", "-q",
             "-f", "-t", "20", "-T", "1", "-O", "staticroutes", "-s", script],
            env=dict(os.environ, LEASE_FILE=lease_file), capture_output=True, text=True,
            timeout=60)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        with open(lease_file) as f:
            return dict(line.split("=", 1) for line in f.read().splitlines())

    def fetch(self, url: str):
        return sh("ip", "netns", "exec", self.ns, "timeout", "3", "busybox", "wget", "-q",
                  "-O", "-", url, check=False)

    def ping(self, address: str, count: int = 1, interval: float = 1.0):
        args = ["busybox", "ping", "-c", str(count), "-i", str(interval), "-W", "2"]
        return sh("ip", "netns", "exec", self.ns, *args, address, check=False,
                  timeout=30 + count * interval)


class Outside:
    """The world beyond a router: a namespace on the external network's bridge on the
    network node, holding the external subnet's gateway address and an echo server that
    answers with the address it sees the client as."""

    def __init__(self, node: Host, external_network_id: str, address: str):
        self.ns = f"{node.fabric.tag}out"
        node.fabric.made.append(self.ns)
        sh("ip", "netns", "add", self.ns)
        sh("ip", "-n", node.ns, "link", "add", "outside", "type", "veth", "peer", "name",
           "eth0", "netns", self.ns)
        sh("ip", "-n", node.ns, "link", "set", "outside", "master",
           "brq" + external_network_id[:11], "up")
        for command in ("link set lo up", f"addr add {address} dev eth0", "link set eth0 up"):
            sh("ip", "-n", self.ns, *command.split())
        self.server = echo_server(self.ns)
        node.fabric.servers.append(self.server)

    def run(self, *args, check=False):
        return sh("ip", "netns", "exec", self.ns, *args, check=check)


class Fabric:
    """The switch namespace and the hosts on it; close() removes all of it."""

    def __init__(self, tmp: str, transport_url: str):
        self.tag = "ov" + uuid.uuid4().hex[:6]
        self.tmp, self.transport_url = tmp, transport_url
        self.switch = f"{self.tag}sw"
        self.made: list[str] = [self.switch]
        self.hosts: list[Host] = []
        self.servers: list[subprocess.Popen] = []
        self.relays: list[Relay] = []
        netns_hosts.make_switch(self.switch)

    def add_host(self, name: str) -> Host:
        host = Host(self, name, len(self.hosts) + 1)
        self.hosts.append(host)
        return host

    def close(self, show_logs: bool = True) -> None:
        for host in self.hosts if show_logs else ():  # shown with a failing test's output
            if os.path.exists(host.log):
                print(f"--- agent log of {host.name} (tail) ---\n{host.log_text()}")
            if os.path.exists(host.log + ".compute"):
                print(f"--- compute log of {host.name} (tail) ---\n"
                      f"{host.log_text('compute')}")
        for host in self.hosts:
            try:
                host.stop()
            except Exception:  # noqa: BLE001 - the namespaces go whatever happened
                pass
        for server in self.servers:
            server.kill()
            server.wait(timeout=10)
        for relay in self.relays:
            relay.close()
        # a network node's dnsmasq and the qdhcp-/qrouter- names its agent made
        netns_hosts.remove_agent_leftovers(self.tmp, [host.data_dir for host in self.hosts])
        for ns in reversed(self.made):
            sh("ip", "netns", "del", ns, check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)


@contextlib.contextmanager
def fabric_cloud():
    """(a controller cloud whose RPC goes over unix sockets, a Fabric on it); both are
    removed afterwards."""
    tmp = tempfile.mkdtemp(prefix="pocketstack-overlay-")
    url = "unix://" + os.path.join(tmp, "rpc")
    with own_cloud("overlay", transport_url=url,
                   **{"network.agent_down_time": 10.0}) as cloud:
        made = Fabric(os.path.join(tmp, "hosts"), url)
        try:
            yield cloud, made
        finally:
            made.close()
    shutil.rmtree(tmp, ignore_errors=True)
