"""`pocketstack up --workers N`: the all-in-one in several processes — API
workers on one listening socket, compute hosts in processes of their own that run their
network calls inline (the DHCP files and vif-plugged events too), RPC over Unix sockets,
SQLite written by all of them. Through the real command and openstacksdk: a burst of
boots with a network each lands on hosts served by other processes, no host is
oversubscribed, every IP is distinct, deletes leave nothing behind, and no child process
outlives `pocketstack down` or a kill -9 of the main process.
"""
from __future__ import annotations

import concurrent.futures
import os
import re
import signal
import subprocess
import sys
import time

import httpx

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.procfs import alive_pids, child_pids, cmdline_of  # noqa: E402
from helpers.up_process import EXE, UpProcess, free_port, settled_servers  # noqa: E402

# Two hosts of 3 vCPUs each, no overcommit: room for exactly 6 one-vCPU servers.
CONF = """
[identity]
password_hash_rounds = 4
[fake]
hosts = 2
vcpus = 3
spawn_delay = 0.2
[scheduler]
cpu_allocation_ratio = 1.0
"""
CAPACITY = 6
BURST = 8


def _hypervisor_usage(conn) -> list[dict]:
    """Hypervisors with their usage: nova dropped vcpus_used & co. at 2.88, so ask 2.87."""
    return conn.compute.get("/os-hypervisors/detail",
                            microversion="2.87").json()["hypervisors"]

def _wait_gone(pids, bound: float) -> list[int]:
    deadline = time.monotonic() + bound
    while alive_pids(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive_pids(pids)


def _env() -> dict:
    env = dict(os.environ)
    env.pop("POCKETSTACK_HOME", None)
    return env


def test_workers_burst_with_networks_then_down_leaves_no_process(root):
    data_dir = os.path.join(root, "data")
    conf_path = os.path.join(root, "pocketstack.conf")
    with open(conf_path, "w") as f:
        f.write(CONF)
    port = free_port()
    started = subprocess.run(
        [EXE, "up", "--detach", "--data-dir", data_dir, "--config-file", conf_path,
         "--port", str(port), "--admin-password", "pw", "--workers", "2"],
        capture_output=True, text=True, timeout=180, env=_env())
    assert started.returncode == 0, started.stdout + started.stderr
    with open(os.path.join(data_dir, "pocketstack.pid")) as f:
        main_pid = int(f.read())
    children = child_pids(main_pid)
    try:
        # One API worker and two compute processes (the default: one per worker, each
        # with one of the two hosts) beside the main process.
        kinds = sorted(cmdline_of(pid).split("--name ")[1].split()[0] for pid in children)
        assert kinds == ["api-1", "compute-1", "compute-2"], kinds

        up = UpProcess(data_dir, port=port)
        conn = up.sdk(password="pw")
        image = conn.image.create_image(name="w-img", data=b"x" * 64, disk_format="raw",
                                        container_format="bare")
        net = conn.network.create_network(name="w-net")
        conn.network.create_subnet(network_id=net.id, cidr="10.77.0.0/24", ip_version=4)

        def boot(i):
            c = up.sdk(password="pw")
            return c.compute.create_server(name=f"w-{i}", image_id=image.id,
                                           flavor_id="42", networks=[{"uuid": net.id}]).id

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            ids = list(pool.map(boot, range(BURST)))
        servers = settled_servers(conn, ids)

        active = [s for s in servers.values() if s.status == "ACTIVE"]
        # Exactly the capacity: every claim counted, across processes, none twice.
        assert len(active) == CAPACITY, {s.name: s.status for s in servers.values()}
        for s in servers.values():
            if s.status == "ERROR":
                assert "No valid host" in (s.fault or {}).get("message", ""), s.fault
        assert {s.compute_host for s in active} == {"cmp-1", "cmp-2"}
        addresses = [a["addr"] for s in active for a in s.addresses["w-net"]]
        assert len(addresses) == CAPACITY and len(set(addresses)) == CAPACITY, addresses
        for hv in _hypervisor_usage(conn):
            assert hv["vcpus_used"] == hv["vcpus"] == 3, hv
        _assert_ports_bound_plugged_and_in_dhcp(up, conn, data_dir, net, active)

        for server_id in ids:
            conn.compute.delete_server(server_id)
        deadline = time.monotonic() + 60
        while [s for s in conn.compute.servers() if s.id in ids]:
            assert time.monotonic() < deadline, "servers still listed after delete"
            time.sleep(0.2)
        assert not [p for p in conn.network.ports(network_id=net.id)
                    if p.device_owner.startswith("compute:")]
        for hv in _hypervisor_usage(conn):
            assert hv["vcpus_used"] == 0 and hv["memory_mb_used"] == 0, hv
    finally:
        down = subprocess.run([EXE, "down", "--data-dir", data_dir], capture_output=True,
                              text=True, timeout=90, env=_env())
    assert down.returncode == 0, down.stdout + down.stderr
    assert not alive_pids([main_pid])
    assert not alive_pids(children), [cmdline_of(p) for p in alive_pids(children)]
    assert not [n for n in os.listdir(os.path.join(data_dir, "rpc")) if n.endswith(".sock")]
    audit = subprocess.run([EXE, "audit", "--data-dir", data_dir, "--config-file", conf_path],
                           capture_output=True, text=True, timeout=120, env=_env())
    assert audit.returncode == 0, audit.stdout + audit.stderr


def _assert_ports_bound_plugged_and_in_dhcp(up, conn, data_dir, net, active) -> None:
    """What the network calls of a build give a server, whichever process ran them (a
    compute process runs them inline, with its own DHCP writer and vif-plugged notifier):
    an ACTIVE port bound to the server's host, a network-vif-plugged the build waited for,
    and the port's MAC and address in the network's DHCP host file."""
    session = up.session(password="pw")
    wanted = set()
    for s in active:
        ports = list(conn.network.ports(device_id=s.id))
        assert len(ports) == 1, ports
        port = ports[0]
        assert port.status == "ACTIVE" and port.binding_host_id == s.compute_host, port
        wanted.add(f"{port.mac_address},host-"
                   f"{port.fixed_ips[0]['ip_address'].replace('.', '-')}.openstacklocal,"
                   f"{port.fixed_ips[0]['ip_address']}")
        actions = session.get(f"{up.url}/compute/v2.1/servers/{s.id}/os-instance-actions",
                              headers={"OpenStack-API-Version": "compute 2.62"}
                              ).json()["instanceActions"]
        create = [a for a in actions if a["action"] == "create"][0]
        events = session.get(
            f"{up.url}/compute/v2.1/servers/{s.id}/os-instance-actions/"
            f"{create['request_id']}", headers={"OpenStack-API-Version": "compute 2.62"}
        ).json()["instanceAction"]["events"]
        plugged = [e for e in events if e["event"] == "compute_wait_vif_plugged"]
        assert plugged and plugged[0]["result"] == "Success", events
    host_file = os.path.join(data_dir, "network", "dhcp", net.id, "host")
    assert not _missing_host_lines(host_file, wanted, 30)  # the DHCP writer is asynchronous


def _missing_host_lines(host_file: str, wanted: set, timeout: float) -> set:
    """What of ``wanted`` the DHCP host file still lacks after waiting up to ``timeout`` s
    (a bound wait for correctness, not timing: the files are written in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        with open(host_file) as f:
            missing = wanted - set(f.read().split())
        if not missing or time.monotonic() > deadline:
            return missing
        time.sleep(0.2)


def test_children_stop_when_the_main_process_is_killed(root):
    up = UpProcess(os.path.join(root, "data"), conf=CONF,
                   args=("--admin-password", "pw", "--workers", "2")).start(timeout=120)
    try:
        children = child_pids(up.proc.pid)
        assert len(children) == 3, [cmdline_of(p) for p in children]
        # Served by whichever process accepts: every request works while all run.
        session = up.session(password="pw")
        for _ in range(10):
            assert session.get(up.url + "/compute/v2.1/flavors").status_code == 200
        # A dashboard login holds on every new connection, whichever process takes it.
        with httpx.Client(base_url=up.url, timeout=60) as browser:
            page = browser.get("/dashboard/login")
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
            r = browser.post("/dashboard/login", data={
                "csrf_token": csrf, "domain": "Default", "username": "admin",
                "password": "pw"})
            assert r.status_code == 303 and r.headers["location"] == "/dashboard/servers"
            cookies = dict(browser.cookies)
        for _ in range(12):
            with httpx.Client(base_url=up.url, timeout=60, cookies=cookies) as fresh:
                assert fresh.get("/dashboard/servers").status_code == 200
        up.proc.send_signal(signal.SIGKILL)
        up.proc.wait(10)
        # Bounded wait for correctness (they exit as soon as they notice), not a timing check.
        assert not _wait_gone(children, 60), [cmdline_of(p) for p in alive_pids(children)]
    finally:
        up.stop()


def test_a_compute_process_killed_comes_back_and_the_dhcp_files_are_rewritten(root):
    """A compute process runs its builds' port calls and so writes DHCP files (batched):
    killed, it is started again, its hosts build again, and every network's files are
    rewritten from the database (a rewrite it had pending is not lost)."""
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=CONF,
                   args=("--admin-password", "pw", "--workers", "2")).start(timeout=120)
    try:
        conn = up.sdk(password="pw")
        image = conn.image.create_image(name="r-img", data=b"x" * 64, disk_format="raw",
                                        container_format="bare")
        net = conn.network.create_network(name="r-net")
        conn.network.create_subnet(network_id=net.id, cidr="10.78.0.0/24", ip_version=4)
        ids = [conn.compute.create_server(name=f"r-{i}", image_id=image.id, flavor_id="42",
                                          networks=[{"uuid": net.id}]).id for i in range(2)]
        assert all(s.status == "ACTIVE" for s in settled_servers(conn, ids).values())
        host_file = os.path.join(data_dir, "network", "dhcp", net.id, "host")
        wanted = {f"{p.mac_address},host-{p.fixed_ips[0]['ip_address'].replace('.', '-')}"
                  f".openstacklocal,{p.fixed_ips[0]['ip_address']}"
                  for p in conn.network.ports(network_id=net.id, device_owner="compute:nova")}
        assert len(wanted) == 2
        open(host_file, "w").close()  # as if the rewrite had been lost with the process

        compute = [p for p in child_pids(up.proc.pid) if "--name compute-1 " in cmdline_of(p)]
        assert len(compute) == 1
        os.kill(compute[0], signal.SIGKILL)
        assert not _missing_host_lines(host_file, wanted, 90)
        again = [p for p in child_pids(up.proc.pid) if "--name compute-1 " in cmdline_of(p)]
        assert len(again) == 1 and again[0] != compute[0]

        more = [conn.compute.create_server(name=f"r-more-{i}", image_id=image.id,
                                           flavor_id="42", networks=[{"uuid": net.id}]).id
                for i in range(2)]
        servers = settled_servers(conn, more)
        assert all(s.status == "ACTIVE" for s in servers.values()), \
            {s.name: (s.status, s.fault) for s in servers.values()}
    finally:
        up.stop()
