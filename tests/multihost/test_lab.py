"""`pocketstack lab up|status|down` as a user runs them (real processes): a controller, a
network node and compute hosts as namespaces on a switch, VXLAN between them, an external
network whose uplink reaches an "outside" namespace.

With real guests (where the machine has libvirt): a guest on each host (zone
``nova:<host>``) pings the other, from its own user data over VXLAN, and answers on its
floating IP from the outside. Simulated (everywhere with root): the hosts and their agents
register, the outside reaches a router's gateway over the uplink, and a stand-in guest
(a namespace on host1's bridge with a server's port) reads its metadata through the
network node. Either way `lab
down` leaves no namespace, link, process or libvirt domain of the lab.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid

import pytest

from helpers.cloud import wait_for

from pocketstack import lab, netns_hosts

SKIP = lab.missing_requirements() or (None if shutil.which("busybox") else
                                      "the outside namespace pings with busybox")
needs_root = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
BOOT_TIMEOUT = 240.0  # two guests under QEMU's software emulation on a loaded machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabRun:
    """A lab in a temporary dir with a prefix of its own, driven through the CLI."""

    def __init__(self, directory: str | None = None):
        self.dir = directory or tempfile.mkdtemp(prefix="pocketstack-lab-")
        self.prefix = "t" + uuid.uuid4().hex[:6]

    def run(self, *args, timeout=300) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pocketstack.cli.main", "lab", *args,
                               "--dir", self.dir], capture_output=True, text=True,
                              timeout=timeout)

    def up(self, *args) -> str:
        proc = self.run("up", "--prefix", self.prefix, "--port", str(_free_port()), *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    def connection(self):
        import openstack

        return openstack.connection.Connection(session=lab.Lab(self.dir).session())

    def outside(self, *args) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", f"{self.prefix}-outside", *args],
                              capture_output=True, text=True, timeout=60)

    def agent_namespaces(self) -> list[str]:
        """The qdhcp-/qrouter- namespaces the network node's agent records."""
        state = os.path.join(self.dir, lab.NETWORK_NODE, "network")
        return [prefix + name for kind, prefix in (("agent", "qdhcp-"), ("l3", "qrouter-"))
                for name in (os.listdir(os.path.join(state, kind))
                             if os.path.isdir(os.path.join(state, kind)) else ())]

    def leftovers(self, namespaces=()) -> list[str]:
        """Whatever of the lab is still on the machine."""
        found = [f"namespace {ns}" for ns in netns_hosts.namespaces()
                 if ns.startswith(self.prefix + "-") or ns in namespaces]
        links = netns_hosts.sh("ip", "-o", "link", "show").stdout
        found += [f"link {line.split(':')[1].strip()}" for line in links.splitlines()
                  if line.split(":")[1].strip().startswith(self.prefix)]
        found += [f"process {pid}" for pid in netns_hosts.processes_under(self.dir)]
        found += [f"domain {name}" for name in _domains_under(self.dir)]
        if os.path.exists(self.dir):
            found.append(f"dir {self.dir}")
        return found

    def logs(self) -> str:
        out = []
        for root, _dirs, files in os.walk(self.dir):
            for name in files:
                if name.endswith(".log"):
                    with open(os.path.join(root, name), errors="replace") as f:
                        out.append(f"--- {os.path.join(root, name)} (tail)\n{f.read()[-3000:]}")
        return "\n".join(out)


def _domains_under(directory: str) -> list[str]:
    try:
        import libvirt
    except ImportError:
        return []
    from pocketstack.compute.virt.libvirt import config as guest_config

    try:
        conn = libvirt.open("qemu:///system")
    except libvirt.libvirtError:
        return []
    try:
        return [d.name() for d in conn.listAllDomains()
                if (guest_config.read_owner(d.XMLDesc(0)) or ("", ""))[1].startswith(
                    directory + os.sep)]
    finally:
        conn.close()


@pytest.fixture
def a_lab():
    run = LabRun()
    try:
        yield run
    finally:
        if os.path.exists(run.dir):
            print(run.logs())  # shown with a failing test's output
            run.run("down")
        shutil.rmtree(run.dir, ignore_errors=True)


def _status_rows(run: LabRun) -> dict[str, str]:
    proc = run.run("status")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {}
    for line in proc.stdout.splitlines():
        words = line.split()
        if words and words[0] in ("network", "host1", "host2"):
            rows[words[0]] = line
    return rows


def _router_with_gateway(conn, cidr: str):
    """A vxlan network behind a router whose gateway is on the lab's external network."""
    public = conn.network.find_network("public")
    net = conn.network.create_network(name="lab-net", provider_network_type="vxlan")
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr)
    router = conn.network.create_router(name="lab-r",
                                        external_gateway_info={"network_id": public.id})
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    return public, net, subnet, router


def test_bad_input_and_no_lab_are_plain_answers(tmp_path):
    run = LabRun(str(tmp_path / "nothing"))
    bad = run.run("up", "--prefix", "Not-A-Prefix")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "--prefix 'Not-A-Prefix': 1 to 8 lowercase letters and digits" in bad.stderr
    assert not os.path.exists(run.dir)
    status = run.run("status")
    assert (status.returncode, status.stdout.strip()) == (1, f"No lab in {run.dir}.")
    down = run.run("down")
    assert (down.returncode, down.stdout.strip()) == (0, f"No lab in {run.dir}.")


@needs_root
def test_a_lab_that_cannot_start_says_why_and_leaves_nothing(a_lab):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        proc = a_lab.run("up", "--prefix", a_lab.prefix, "--simulated", "--port",
                         str(busy.getsockname()[1]))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "error: the controller did not start: Cannot listen on 127.0.0.1:" in proc.stderr
    assert "removing what it made" in proc.stdout
    assert a_lab.leftovers() == []


@needs_root
def test_simulated_lab_registers_its_hosts_and_leaves_nothing(a_lab):
    out = a_lab.up("--hosts", "2", "--simulated")
    assert "compute hosts are SIMULATED" in out
    assert f"export OS_CLIENT_CONFIG_FILE={a_lab.dir}/controller/clouds.yaml " \
           "OS_CLOUD=pocketstack" in out
    again = a_lab.run("up", "--prefix", a_lab.prefix)
    assert again.returncode == 1 and f"a lab is already in {a_lab.dir}" in again.stderr
    conn = a_lab.connection()
    hypervisors = {h.name: h for h in conn.compute.hypervisors(details=True)}
    assert set(hypervisors) == {"host1", "host2"}  # no simulated cmp-N of the controller
    assert all(h.state == "up" for h in hypervisors.values())
    agents = {a.host: a for a in conn.network.agents(agent_type="Linux bridge agent")}
    assert {h: (a.is_alive, a.configuration["tunneling_ip"]) for h, a in agents.items()} == {
        "network": (True, "10.99.0.1"), "host1": (True, "10.99.0.11"),
        "host2": (True, "10.99.0.12")}
    public = conn.network.find_network("public")
    assert (public.is_router_external, public.provider_network_type, public.mtu) == (
        True, "flat", 1500)

    # a server on host2 behind a router: the network node plumbs the router, whose
    # gateway the outside reaches over the uplink
    public, net, _subnet, router = _router_with_gateway(conn, "10.95.0.0/24")
    image = conn.image.create_image(name="empty", disk_format="raw", container_format="bare",
                                    data=b"\0" * 512)
    server = conn.compute.create_server(name="s2", image_id=image.id, flavor_id="42",
                                        networks=[{"uuid": net.id}],
                                        availability_zone="nova:host2")
    server = conn.compute.wait_for_server(server, interval=0.5, wait=60)
    assert server.hypervisor_hostname == "host2"
    gateway = conn.network.get_router(router.id).external_gateway_info[
        "external_fixed_ips"][0]["ip_address"]
    wait_for(lambda: a_lab.outside("busybox", "ping", "-c", "1", "-W", "1",
                                   gateway).returncode == 0, 30,
             "the outside to reach the router's gateway")

    _metadata_through_the_network_node(a_lab, conn, image)
    _computes_hold_no_database(a_lab)

    rows = _status_rows(a_lab)
    assert set(rows) == {"network", "host1", "host2"}
    for name in ("host1", "host2"):
        assert f"{a_lab.prefix}-{name}" in rows[name] and "alive" in rows[name]
        assert rows[name].count("running (") == 2 and "up/enabled" in rows[name]

    namespaces = a_lab.agent_namespaces()
    assert f"qrouter-{router.id}" in namespaces
    down = a_lab.run("down")
    assert down.returncode == 0, down.stdout + down.stderr
    assert a_lab.leftovers(namespaces) == []


def _computes_hold_no_database(run: LabRun) -> None:
    """The compute hosts booted their servers through the conductor: their config has no
    database settings, and their processes never opened the controller's database file."""
    database = os.path.realpath(os.path.join(run.dir, "controller", "pocketstack.db"))
    assert os.path.exists(database)
    with open(os.path.join(run.dir, "controller", "service-passwords")) as f:
        passwords = json.load(f)
    for name in ("host1", "host2"):
        host_dir = os.path.join(run.dir, name)
        with open(os.path.join(host_dir, "pocketstack.conf")) as f:
            text = f.read()
        assert "[database]" not in text and "sqlite" not in text, text
        assert "database_access = conductor" in text, text
        assert f"nova-compute-{name}" in passwords, passwords.keys()  # host-credential's
        assert f"host_password = {passwords[f'nova-compute-{name}']}" in text
        pid = netns_hosts.running(os.path.join(host_dir, "compute.pid"), host_dir)
        assert pid, f"the compute of {name} runs"
        fds = f"/proc/{pid}/fd"
        opened = set()
        for fd in os.listdir(fds):
            try:
                opened.add(os.readlink(os.path.join(fds, fd)))
            except OSError:
                continue  # closed meanwhile
        assert not [p for p in opened if p.startswith(database)], opened


def _metadata_through_the_network_node(run: LabRun, conn, image) -> None:
    """A server on host1 on a network without a router (its guests ask the DHCP
    namespace's proxy) and, standing in for its guest, a namespace of the lab's prefix
    holding the port's MAC and address, on the network's bridge in host1's namespace: the
    network node's proxy answers with the server's own metadata."""
    net = conn.network.create_network(name="md-net", provider_network_type="vxlan")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.94.0.0/24")
    server = conn.compute.wait_for_server(conn.compute.create_server(
        name="md1", image_id=image.id, flavor_id="42", networks=[{"uuid": net.id}],
        availability_zone="nova:host1"), interval=0.5, wait=60)
    port = next(conn.network.ports(device_id=server.id))
    dhcp = wait_for(lambda: next(conn.network.ports(network_id=net.id,
                                                    device_owner="network:dhcp"), None), 30,
                    "the network's DHCP port")
    guest, tap, host_ns = f"{run.prefix}-md1", "tap" + port.id[:11], f"{run.prefix}-host1"
    netns_hosts.sh("ip", "netns", "add", guest)
    netns_hosts.sh("ip", "-n", host_ns, "link", "add", tap, "type", "veth", "peer", "name", "eth0",
           "netns", guest)
    netns_hosts.sh("ip", "-n", host_ns, "link", "set", tap, "master", "brq" + net.id[:11], "up")
    for command in ("link set lo up", f"link set eth0 address {port.mac_address}",
                    f"addr add {port.fixed_ips[0]['ip_address']}/24 dev eth0",
                    "link set eth0 up",
                    f"route add 169.254.169.254 via {dhcp.fixed_ips[0]['ip_address']}"):
        netns_hosts.sh("ip", "-n", guest, *command.split())
    url = "http://169.254.169.254/openstack/latest/meta_data.json"
    body = wait_for(lambda: subprocess.run(
        ["ip", "netns", "exec", guest, "timeout", "5", "busybox", "wget", "-q", "-O", "-", url],
        capture_output=True, text=True, timeout=30).stdout, 60,
        "the stand-in guest to read its metadata")
    assert f'"uuid": "{server.id}"' in body, body


SKIP_REAL = lab.libvirt_missing()


@needs_root
@pytest.mark.skipif(SKIP_REAL is not None, reason=SKIP_REAL or "")
def test_real_guests_on_two_lab_hosts_ping_each_other_and_the_outside_reaches_them(a_lab):
    out = a_lab.up("--hosts", "2")
    assert "real QEMU guests" in out, out
    tiny = subprocess.run([sys.executable, "-m", "pocketstack.cli.main", "image", "tiny",
                           "--data-dir", os.path.join(a_lab.dir, "controller")],
                          capture_output=True, text=True, timeout=300)
    assert tiny.returncode == 0, tiny.stdout + tiny.stderr
    conn = a_lab.connection()
    image = conn.image.find_image("pocketstack-tiny")
    public, net, subnet, _router = _router_with_gateway(conn, "10.95.0.0/24")
    group = conn.network.create_security_group(name="lab-icmp")
    conn.network.create_security_group_rule(security_group_id=group.id, direction="ingress",
                                            protocol="icmp", remote_ip_prefix="0.0.0.0/0")
    ports = {h: conn.network.create_port(network_id=net.id, security_group_ids=[group.id])
             for h in ("host1", "host2")}
    address = {h: p.fixed_ips[0]["ip_address"] for h, p in ports.items()}

    servers = {}
    for host, other in (("host1", "host2"), ("host2", "host1")):
        script = ("#!/bin/sh\n"  # each guest waits for the other, then reports
                  f"for i in $(seq 120); do ping -c 1 -W 1 {address[other]} >/dev/null "
                  "&& break; done\n"
                  f"ping -c 2 -W 2 {address[other]} >/dev/null && echo PEER-OK "
                  "|| echo PEER-FAILED\n")
        servers[host] = conn.compute.create_server(
            name=f"g-{host}", image_id=image.id, flavor_id="42", config_drive=True,
            networks=[{"port": ports[host].id}], availability_zone=f"nova:{host}",
            user_data=base64.b64encode(script.encode()).decode())
    for host, server in servers.items():
        active = conn.compute.wait_for_server(server, interval=0.5, wait=BOOT_TIMEOUT)
        assert active.hypervisor_hostname == host
    for host, server in servers.items():
        console = wait_for(lambda: (lambda text: text if "PEER-" in text else None)(
            conn.compute.get_server_console_output(server.id)["output"]), BOOT_TIMEOUT,
            f"the guest on {host} to report its peer")
        assert f"eth0 leased {address[host]}/24" in console, console  # DHCP over VXLAN
        assert "PEER-OK" in console, console                           # across hosts

    for host in servers:
        fip = conn.network.create_ip(floating_network_id=public.id, port_id=ports[host].id)
        wait_for(lambda: a_lab.outside("busybox", "ping", "-c", "1", "-W", "1",
                                       fip.floating_ip_address).returncode == 0, 30,
                 f"the outside to ping the guest on {host} on its floating IP")

    rows = _status_rows(a_lab)
    for name in ("host1", "host2"):
        assert rows[name].count("running (") == 2 and "up/enabled" in rows[name], rows

    # the guests are still running: `lab down` removes them with the rest
    assert len(_domains_under(a_lab.dir)) == 2
    namespaces = a_lab.agent_namespaces()
    down = a_lab.run("down")
    assert down.returncode == 0, down.stdout + down.stderr
    assert "removed the libvirt domain" in down.stdout
    assert a_lab.leftovers(namespaces) == []


DISK_MARK = "MARK-" + uuid.uuid4().hex[:8]
# The tiny guest runs from its initramfs; its root disk is raw to it: the first boot writes
# a mark at the disk's start, every later boot reads it back (whatever host it runs on).
DISK_SCRIPT = f"""#!/bin/sh
m=$(dd if=/dev/vda bs=16 count=1 2>/dev/null | tr -dc 'A-Za-z0-9-')
case "$m" in
  MARK-*) echo "DISK-KEPT $m";;
  *) printf '{DISK_MARK}' | dd of=/dev/vda conv=notrunc 2>/dev/null; sync; echo DISK-WROTE;;
esac
"""


def _console(conn, server_id: str) -> str:
    return conn.compute.get_server_console_output(server_id)["output"]

def _boot_marked_on_host1(conn, image, name: str, networks: list) -> str:
    """A real guest on host1 that has written its mark on its disk (DISK_SCRIPT): its id."""
    server = conn.compute.create_server(
        name=name, image_id=image.id, flavor_id="42", config_drive=True,
        networks=networks, availability_zone="nova:host1",
        user_data=base64.b64encode(DISK_SCRIPT.encode()).decode())
    sid = conn.compute.wait_for_server(server, interval=0.5, wait=BOOT_TIMEOUT).id
    assert _status(conn, sid)[2] == "host1"
    wait_for(lambda: "DISK-WROTE" in _console(conn, sid), BOOT_TIMEOUT,
             "the guest to write its mark on its disk")
    return sid


def _status(conn, server_id: str):
    server = conn.compute.get_server(server_id)
    return server.status, server.task_state, server.hypervisor_hostname


@needs_root
@pytest.mark.skipif(SKIP_REAL is not None, reason=SKIP_REAL or "")
def test_real_guest_cold_migrates_and_evacuates_between_lab_hosts_with_its_disk(a_lab):
    """The lab's hosts share their instances path: a real guest on host1 cold-migrates
    to host2 (VERIFY_RESIZE there, then confirmed), still answering on its floating IP and
    reading back what it wrote on its disk on host1; with host2's compute stopped and
    its guest dead, it is evacuated to host1, the same disk again."""
    a_lab.up("--hosts", "2")
    tiny = subprocess.run([sys.executable, "-m", "pocketstack.cli.main", "image", "tiny",
                           "--data-dir", os.path.join(a_lab.dir, "controller")],
                          capture_output=True, text=True, timeout=300)
    assert tiny.returncode == 0, tiny.stdout + tiny.stderr
    conn = a_lab.connection()
    image = conn.image.find_image("pocketstack-tiny")
    public, net, _subnet, _router = _router_with_gateway(conn, "10.95.0.0/24")
    group = conn.network.create_security_group(name="lab-icmp")
    conn.network.create_security_group_rule(security_group_id=group.id, direction="ingress",
                                            protocol="icmp", remote_ip_prefix="0.0.0.0/0")
    port = conn.network.create_port(network_id=net.id, security_group_ids=[group.id])
    sid = _boot_marked_on_host1(conn, image, "mover", [{"port": port.id}])
    fip = conn.network.create_ip(floating_network_id=public.id, port_id=port.id)

    def answers(where: str) -> None:
        wait_for(lambda: a_lab.outside("busybox", "ping", "-c", "1", "-W", "1",
                                       fip.floating_ip_address).returncode == 0, 60,
                 f"the outside to ping the guest on its floating IP {where}")

    def kept_its_disk(times: int, where: str) -> None:
        wait_for(lambda: _console(conn, sid).count(f"DISK-KEPT {DISK_MARK}") >= times,
                 BOOT_TIMEOUT, f"the guest to read its mark back {where}")

    answers("on host1")
    conn.compute.migrate_server(sid)
    wait_for(lambda: _status(conn, sid) == ("VERIFY_RESIZE", None, "host2"), BOOT_TIMEOUT,
             "VERIFY_RESIZE on host2")
    assert os.path.isdir(os.path.join(a_lab.dir, "instances", sid + "_resize"))
    conn.compute.confirm_server_resize(sid)
    wait_for(lambda: _status(conn, sid) == ("ACTIVE", None, "host2"), 60, "ACTIVE on host2")
    assert not os.path.exists(os.path.join(a_lab.dir, "instances", sid + "_resize"))
    kept_its_disk(1, "on host2")
    answers("on host2")
    migration = next(m for m in conn.compute.migrations() if m.server_id == sid)
    assert (migration.source_compute, migration.dest_compute, migration.status) == (
        "host1", "host2", "confirmed")

    # host2 dies: its compute stops and its guest with it; an admin says it is down
    host2 = os.path.join(a_lab.dir, "host2")
    assert lab.stop(os.path.join(host2, "compute.pid"), host2)
    import libvirt

    libvirt_conn = libvirt.open("qemu:///system")
    try:
        libvirt_conn.lookupByUUIDString(sid).destroy()
    finally:
        libvirt_conn.close()
    service = next(conn.compute.services(host="host2", binary="nova-compute"))
    conn.compute.update_service_forced_down(service, forced=True)
    # before 2.95 an evacuated server runs on its new host (from 2.95 it comes up stopped)
    evacuate = conn.compute.post(f"/servers/{sid}/action", json={"evacuate": {}},
                                 microversion="2.94")
    assert evacuate.status_code == 200, evacuate.text
    try:
        wait_for(lambda: _status(conn, sid) == ("ACTIVE", None, "host1"), BOOT_TIMEOUT,
                 "ACTIVE on host1 after the evacuation")
    except AssertionError as error:  # say where it stands and what the hosts did
        server = conn.compute.get_server(sid)
        events = [(e.event, e.result, getattr(e, "details", None))
                  for a in conn.compute.server_actions(sid)
                  for e in conn.compute.get_server_action(a.request_id, sid).events or ()]
        raise AssertionError(f"{error}: {_status(conn, sid)} {server.fault} {events}") \
            from None
    kept_its_disk(2, "on host1 after the evacuation")
    assert "DISK-WROTE" not in _console(conn, sid).split(f"DISK-KEPT {DISK_MARK}", 1)[1]
    answers("on host1 after the evacuation")

    namespaces = a_lab.agent_namespaces()
    down = a_lab.run("down")
    assert down.returncode == 0, down.stdout + down.stderr
    assert a_lab.leftovers(namespaces) == []


@needs_root
@pytest.mark.skipif(SKIP_REAL is not None, reason=SKIP_REAL or "")
def test_real_guest_resizes_to_the_other_lab_host_sharing_its_instances_path(a_lab):
    """The lab's hosts report the same instance storage (their shared instances path): a
    real guest on host1 resized to a bigger flavor goes to host2, which has more room
    (VERIFY_RESIZE there); confirmed, it runs there with the new flavor, its root disk
    grown to it and what it wrote on its disk on host1 read back."""
    a_lab.up("--hosts", "2")
    tiny = subprocess.run([sys.executable, "-m", "pocketstack.cli.main", "image", "tiny",
                           "--data-dir", os.path.join(a_lab.dir, "controller")],
                          capture_output=True, text=True, timeout=300)
    assert tiny.returncode == 0, tiny.stdout + tiny.stderr
    conn = a_lab.connection()
    image = conn.image.find_image("pocketstack-tiny")
    net = conn.network.create_network(name="lab-resize", provider_network_type="vxlan")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.96.0.0/24")
    bigger = conn.compute.create_flavor(name="lab-bigger", ram=256, vcpus=1, disk=2)
    sid = _boot_marked_on_host1(conn, image, "grower", [{"uuid": net.id}])

    conn.compute.resize_server(sid, bigger.id)
    try:
        wait_for(lambda: _status(conn, sid)[:2] == ("VERIFY_RESIZE", None), BOOT_TIMEOUT,
                 "VERIFY_RESIZE")
    except AssertionError as error:  # say where it stands and why
        raise AssertionError(f"{error}: {_status(conn, sid)} "
                             f"{conn.compute.get_server(sid).fault}") from None
    assert _status(conn, sid) == ("VERIFY_RESIZE", None, "host2")
    assert os.path.isdir(os.path.join(a_lab.dir, "instances", sid + "_resize"))
    conn.compute.confirm_server_resize(sid)
    wait_for(lambda: _status(conn, sid) == ("ACTIVE", None, "host2"), 60, "ACTIVE on host2")
    assert not os.path.exists(os.path.join(a_lab.dir, "instances", sid + "_resize"))
    assert conn.compute.get_server(sid).flavor["original_name"] == "lab-bigger"
    info = subprocess.run(["qemu-img", "info", "--output=json", "-U",
                           os.path.join(a_lab.dir, "instances", sid, "disk")],
                          capture_output=True, text=True, timeout=60)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["virtual-size"] == 2 * 1024 ** 3
    wait_for(lambda: f"DISK-KEPT {DISK_MARK}" in _console(conn, sid), BOOT_TIMEOUT,
             "the guest to read its mark back on host2")
    migration = next(m for m in conn.compute.migrations() if m.server_id == sid)
    assert (migration.source_compute, migration.dest_compute, migration.status,
            migration.migration_type) == ("host1", "host2", "confirmed", "resize")

    namespaces = a_lab.agent_namespaces()
    down = a_lab.run("down")
    assert down.returncode == 0, down.stdout + down.stderr
    assert a_lab.leftovers(namespaces) == []
