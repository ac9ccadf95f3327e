"""`pocketstack up --workers 2` with `[compute] database_access = conductor`: the compute
processes run as `pocketstack service compute` does on the conductor - no database, their
state through the main process's conductor, the other services over HTTP - whichever of
them and the main process's conductor starts first. Through the real command and
openstacksdk: a burst of boots with a network, one compute process killed -9 in the middle
of it, every server ACTIVE, the restarted process's host building again, all deleted
without leftovers, and no compute
process holding the database (the API worker, which does, shows the check sees it).
"""
from __future__ import annotations

import concurrent.futures
import datetime as dt
import os
import signal
import subprocess
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.procfs import alive_pids, child_pids, cmdline_of, open_files  # noqa: E402
from helpers.up_process import EXE, UpProcess, settled_servers  # noqa: E402

# spawn_delay: builds still in hand when the compute process is killed.
CONF = """
[identity]
password_hash_rounds = 4
[fake]
hosts = 2
spawn_delay = 1.0
[compute]
database_access = conductor
build_timeout = 600
build_stall_timeout = 600
[quota]
instances = -1
cores = -1
ram = -1
"""
BURST = 20


def _workers(main_pid: int) -> dict[str, int]:
    """The main process's children by name (api-1, compute-1, ...)."""
    found = {}
    for pid in child_pids(main_pid):
        line = cmdline_of(pid)
        if "--name " in line:
            found[line.split("--name ")[1].split()[0]] = pid
    return found


def _wait_seen_after(conn, host: str, moment: dt.datetime, bound: float) -> None:
    """Until ``host``'s nova-compute service row was last seen after ``moment`` (UTC)."""
    deadline = time.monotonic() + bound
    while True:
        seen = [dt.datetime.fromisoformat(s.updated_at.rstrip("Z"))
                for s in conn.compute.services() if s.host == host
                and s.binary == "nova-compute" and s.updated_at]
        if seen and seen[0] > moment:
            return
        assert time.monotonic() < deadline, f"{host} not seen since {moment}: {seen}"
        time.sleep(0.2)


def _reschedules(session, url: str, server_id: str) -> list[str]:
    """Why the server's build was rescheduled (its trace's conductor_reschedule steps)."""
    events = session.get(f"{url}/pocketstack/v1/servers/{server_id}/trace").json()["events"]
    return [e["detail"] for e in events if e["step"] == "conductor_reschedule"]


def test_burst_with_a_compute_process_killed_and_no_database_in_the_computes(root):
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=CONF,
                   args=("--admin-password", "pw", "--workers", "2")).start(timeout=120)
    seen: set[int] = set()  # every worker pid, for the check after the stop
    try:
        workers = _workers(up.proc.pid)
        seen.update(workers.values())
        assert sorted(workers) == ["api-1", "compute-1", "compute-2"], workers
        conn = up.sdk(password="pw")
        image = conn.image.create_image(name="c-img", data=b"x" * 64, disk_format="raw",
                                        container_format="bare")
        net = conn.network.create_network(name="c-net")
        conn.network.create_subnet(network_id=net.id, cidr="10.79.0.0/24", ip_version=4)

        def boot(i):
            return up.sdk(password="pw").compute.create_server(
                name=f"c-{i}", image_id=image.id, flavor_id="42",
                networks=[{"uuid": net.id}]).id

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            ids = list(pool.map(boot, range(BURST // 2)))
            # Killed while the first half is being built (each spawn takes a second)
            # and before the second half is cast.
            os.kill(workers["compute-1"], signal.SIGKILL)
            killed_at = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
            ids += list(pool.map(boot, range(BURST // 2, BURST)))
        assert not alive_pids([workers["compute-1"]])
        servers = settled_servers(conn, ids, 180)
        assert all(s.status == "ACTIVE" for s in servers.values()), \
            {s.name: (s.status, s.fault) for s in servers.values() if s.status != "ACTIVE"}
        # cmp-1 builds again once its process is back (it registers through the
        # conductor), a server sent to it by name included.
        _wait_seen_after(conn, "cmp-1", killed_at, 90)
        targeted = conn.compute.create_server(
            name="c-cmp-1", image_id=image.id, flavor_id="42", networks=[{"uuid": net.id}],
            availability_zone="nova:cmp-1").id
        servers.update(settled_servers(conn, [targeted], 60))
        ids.append(targeted)
        assert servers[targeted].status == "ACTIVE", servers[targeted].fault
        assert servers[targeted].compute_host == "cmp-1"
        addresses = [a["addr"] for s in servers.values() for a in s.addresses["c-net"]]
        assert len(set(addresses)) == BURST + 1, addresses
        # The kill met builds and they were rescheduled: a cast to the dead host failed,
        # or its restarted process found builds it had in hand.
        session = up.session(password="pw")
        reasons = [r for i in ids for r in _reschedules(session, up.url, i)]
        assert any("compute.cmp-1" in r or "compute service on cmp-1 restarted" in r
                   for r in reasons), reasons

        # compute-2 ran through the whole burst, compute-1 came back and built: neither
        # holds the database file, its -wal/-shm or its writer lock (which a process
        # that ever opened the database keeps open); the API worker does.
        again = _workers(up.proc.pid)
        seen.update(again.values())
        assert again["compute-1"] != workers["compute-1"]
        assert again["compute-2"] == workers["compute-2"]
        database = os.path.realpath(os.path.join(data_dir, "pocketstack.db"))
        assert os.path.exists(database)
        for name in ("compute-1", "compute-2"):
            held = [p for p in open_files(again[name]) if p.startswith(database)]
            assert not held, (name, held)
        assert [p for p in open_files(again["api-1"]) if p.startswith(database)]

        for server_id in ids:
            conn.compute.delete_server(server_id)
        deadline = time.monotonic() + 60
        while [s for s in conn.compute.servers() if s.id in ids]:
            assert time.monotonic() < deadline, "servers still listed after delete"
            time.sleep(0.2)
        assert not [p for p in conn.network.ports(network_id=net.id)
                    if p.device_owner.startswith("compute:")]
        hypervisors = conn.compute.get("/os-hypervisors/detail",
                                       microversion="2.87").json()["hypervisors"]
        assert len(hypervisors) == 2
        for hv in hypervisors:
            assert hv["vcpus_used"] == 0 and hv["memory_mb_used"] == 0, hv
        audit = subprocess.run([EXE, "audit", "--data-dir", data_dir, "--config-file",
                                up.config_file], capture_output=True, text=True,
                               timeout=120)
        assert audit.returncode == 0, audit.stdout + audit.stderr
    finally:
        up.stop(timeout=60)
    assert up.proc.returncode == 0, up.output()[-3000:]
    assert not alive_pids(seen), [cmdline_of(p) for p in alive_pids(seen)]
