"""Kill -9 in the middle of a burst of boots, restart, and every server is
ACTIVE or ERROR at once — not after the build deadline — with nothing leaked.

The build deadline and the stalled-build check are set to ten minutes here, so only the
start-up recovery (the conductor's for builds not yet placed, each host's for the builds
it had) can settle the servers within the wait. The loop is short (a few restarts); the
bench script bench/restart_chaos.py runs many more and records the times.

A POST in flight when the kill lands may have written its server and died before the 202
went out: the client saw an error, yet the server exists and is recovered like the others
(as with any API, the request may or may not have been carried out). So what the cloud
lists - not the list of 202s - is what must settle and what is deleted at the end; a
server that got its 202 must be among them.
"""
from __future__ import annotations

import concurrent.futures
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.up_process import EXE, UpProcess, free_port  # noqa: E402

CONF = """
[identity]
password_hash_rounds = 4
[compute]
build_timeout = 600
build_stall_timeout = 600
[fake]
spawn_delay = 0.3
[quota]
instances = -1
cores = -1
ram = -1
"""
RESTARTS = 3
BURST = 12
SETTLE_BOUND = 60.0  # far below the 600 s the other mechanisms would take (slow when loaded)


def _hypervisor_usage(conn) -> list[dict]:
    """Hypervisors with their usage: nova dropped vcpus_used & co. at 2.88, so ask 2.87."""
    return conn.compute.get("/os-hypervisors/detail",
                            microversion="2.87").json()["hypervisors"]

def _burst(up, token, image_id, network_id, count, kill_after):
    """POST ``count`` servers concurrently; kill -9 the cloud once ``kill_after`` have
    been accepted. Returns the ids of the accepted ones."""
    import httpx

    accepted = []

    def boot(i):
        try:
            r = httpx.post(up.url + "/compute/v2.1/servers", timeout=30,
                           headers={"X-Auth-Token": token},
                           json={"server": {"name": f"burst-{i}", "imageRef": image_id,
                                            "flavorRef": "42",
                                            "networks": [{"uuid": network_id}]}})
        except httpx.HTTPError:
            return None
        if r.status_code == 202:
            accepted.append(r.json()["server"]["id"])
            if len(accepted) == kill_after:
                up.proc.send_signal(signal.SIGKILL)
        return r.status_code

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        list(pool.map(boot, range(count)))
    if up.proc.poll() is None:
        up.proc.send_signal(signal.SIGKILL)
    up.proc.wait(10)
    up.stop()
    return accepted


def _settle(conn, accepted, bound):
    """Seconds until every server the cloud lists is ACTIVE or ERROR and every one in
    ``accepted`` is listed (fails after ``bound``)."""
    started = time.monotonic()
    while True:
        states = {s.id: s.status for s in conn.compute.servers()}
        pending = {i: status for i, status in states.items()
                   if status not in ("ACTIVE", "ERROR")}
        pending.update({i: "not listed" for i in accepted if i not in states})
        if not pending:
            return time.monotonic() - started
        if time.monotonic() - started > bound:
            pytest.fail(f"not settled after {bound}s: {pending}")
        time.sleep(0.1)


def test_kill_9_mid_burst_then_restart_recovers_every_build():
    root = tempfile.mkdtemp(prefix="hardening-restart-")
    data_dir = os.path.join(root, "data")
    port = free_port()
    up = UpProcess(data_dir, conf=CONF, port=port).start(timeout=120)
    try:
        conn = up.sdk()
        image = conn.image.create_image(name="restart-img", data=b"x" * 64,
                                        disk_format="raw", container_format="bare",
                                        visibility="public")
        net = conn.network.create_network(name="restart-net")
        conn.network.create_subnet(network_id=net.id, cidr="10.88.0.0/24", ip_version=4)
        accepted = []
        timings = []
        for _ in range(RESTARTS):
            token = up.session().get_token()
            accepted += _burst(up, token, image.id, net.id, BURST, kill_after=BURST // 2)
            up = UpProcess(data_dir, conf=CONF, port=port).start(timeout=120)
            conn = up.sdk()
            timings.append(_settle(conn, accepted, SETTLE_BOUND))
            assert up.proc.poll() is None, up.output()
        statuses = {s.id: s.status for s in conn.compute.servers()}
        unanswered = len(set(statuses) - set(accepted))
        print(f"settled {len(statuses)} servers ({unanswered} whose POST the kill cut off) "
              f"after each restart in {', '.join(f'{t:.2f}s' for t in timings)}")
        assert all(status in ("ACTIVE", "ERROR") for status in statuses.values())
        assert sum(status == "ACTIVE" for status in statuses.values()) >= len(statuses) // 2, \
            statuses

        # Nothing leaked: delete everything, then no port, claim or usage is left.
        for server_id in statuses:
            conn.compute.delete_server(server_id)
        deadline = time.monotonic() + 60
        while list(conn.compute.servers()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [(s.id, s.status, s.task_state) for s in conn.compute.servers()]
        assert not [p for p in conn.network.ports(network_id=net.id)
                    if p.device_owner.startswith("compute:")]
        for hv in _hypervisor_usage(conn):
            assert hv["vcpus_used"] == 0 and hv["memory_mb_used"] == 0, hv
        audit = subprocess.run([EXE, "audit", "--data-dir", data_dir, "--config-file",
                                up.config_file], capture_output=True, text=True, timeout=120)
        assert audit.returncode == 0, audit.stdout + audit.stderr
    finally:
        up.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_boot_whose_answer_the_kill_cut_off_is_listed_recovered_and_deletable():
    """The case that made the burst test above flaky, made certain: the server is written,
    the process dies before the client reads its 202 (this client never reads it). After
    the restart the server is listed, settles, and a delete leaves nothing behind."""
    import http.client
    import json

    root = tempfile.mkdtemp(prefix="hardening-cutoff-")
    data_dir = os.path.join(root, "data")
    port = free_port()
    up = UpProcess(data_dir, conf=CONF, port=port).start(timeout=120)
    try:
        conn = up.sdk()
        image = conn.image.create_image(name="cutoff-img", data=b"x" * 64,
                                        disk_format="raw", container_format="bare",
                                        visibility="public")
        net = conn.network.create_network(name="cutoff-net")
        conn.network.create_subnet(network_id=net.id, cidr="10.89.0.0/24", ip_version=4)
        raw = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        raw.request("POST", "/compute/v2.1/servers", headers={
            "X-Auth-Token": up.session().get_token(), "Content-Type": "application/json"},
            body=json.dumps({"server": {"name": "cut-off", "imageRef": image.id,
                                        "flavorRef": "42", "networks": [{"uuid": net.id}]}}))
        # Kill -9 as soon as the server is written, without reading the answer.
        deadline = time.monotonic() + SETTLE_BOUND
        while not list(conn.compute.servers(name="cut-off")):
            assert time.monotonic() < deadline, "the server was never written"
            time.sleep(0.01)
        up.proc.send_signal(signal.SIGKILL)
        up.proc.wait(10)
        up.stop()
        raw.close()

        up = UpProcess(data_dir, conf=CONF, port=port).start(timeout=120)
        conn = up.sdk()
        [server] = list(conn.compute.servers(name="cut-off"))
        print(f"after the restart: {server.status} ({server.task_state})")
        _settle(conn, [server.id], SETTLE_BOUND)
        conn.compute.delete_server(server.id)
        conn.compute.wait_for_delete(server, wait=60)  # (a GET after the delete may 404)
        assert not [p for p in conn.network.ports(network_id=net.id)
                    if p.device_owner.startswith("compute:")]
        for hv in _hypervisor_usage(conn):
            assert hv["vcpus_used"] == 0 and hv["memory_mb_used"] == 0, hv
    finally:
        up.stop()
        shutil.rmtree(root, ignore_errors=True)
