"""`pocketstack wait server|volume ... --status S`, as a script pastes it after a CLI action
that returns before the action is done (`server reboot`, `server stop`, a volume create):
it returns once the status is reached and the task is over, fails at once with the fault on
an error status, and fails clearly on a name that does not exist or a timeout."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from helpers.cloud import own_cloud


@pytest.fixture(scope="module")
def slow_cloud():
    # Statuses a client polls for (REBOOT) last 2 s here, as on a cloud left at its default.
    with own_cloud("wait", **{"fake.transition_delay": 2.0}) as handle:
        yield handle


def _wait(cloud, *args, timeout=60):
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=cloud.clouds_yaml, OS_CLOUD="pocketstack")
    return subprocess.run([sys.executable, "-m", "pocketstack.cli.main", "wait", *args],
                          env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def server(slow_cloud):
    conn = slow_cloud.sdk()
    net = conn.network.create_network(name=f"wait-{uuid.uuid4().hex[:6]}")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.9.0.0/24")
    image = conn.image.create_image(name=f"wait-{uuid.uuid4().hex[:6]}", disk_format="raw",
                                    container_format="bare", data=b"\0" * 1024)
    flavor = conn.compute.find_flavor("m1.nano")
    name = f"wait-{uuid.uuid4().hex[:6]}"
    created = conn.compute.create_server(name=name, image_id=image.id, flavor_id=flavor.id,
                                         networks=[{"uuid": net.id}])
    return conn, name, created.id, image.id, net.id


def test_waits_for_a_new_server_to_be_active(slow_cloud, server):
    conn, name, sid, _, _ = server
    proc = _wait(slow_cloud, "server", name)
    assert proc.returncode == 0, proc.stderr
    assert f"server {name}: ACTIVE" in proc.stdout
    assert conn.compute.get_server(sid).status == "ACTIVE"


def test_reboot_then_wait_returns_once_the_reboot_is_over(slow_cloud, server):
    conn, name, sid, _, _ = server
    _wait(slow_cloud, "server", name)
    conn.compute.reboot_server(sid, "SOFT")
    # The status reads REBOOT for the transition's 2 s: a wait that returned at once,
    # or at an ACTIVE status with the reboot still under way, would see it here.
    proc = _wait(slow_cloud, "server", name, "--status", "active")
    assert proc.returncode == 0, proc.stderr
    after = conn.compute.get_server(sid)
    assert (after.status, after.task_state) == ("ACTIVE", None)


def test_stop_then_wait_for_shutoff(slow_cloud, server):
    conn, name, sid, _, _ = server
    _wait(slow_cloud, "server", name)
    conn.compute.stop_server(sid)
    proc = _wait(slow_cloud, "server", sid, "--status", "SHUTOFF")
    assert proc.returncode == 0, proc.stderr
    assert conn.compute.get_server(sid).status == "SHUTOFF"
    conn.compute.start_server(sid)
    assert _wait(slow_cloud, "server", name).returncode == 0


def test_a_server_in_error_fails_at_once_with_its_fault(slow_cloud, server):
    conn, _, _, image_id, net_id = server
    admin = slow_cloud.session()
    rule = admin.post(slow_cloud.url + "/pocketstack/v1/faults", json={"fault": {
        "operation": "spawn", "action": "fail", "times": None,
        "message": "disk on fire"}}).json()["fault"]
    try:
        name = f"doomed-{uuid.uuid4().hex[:6]}"
        conn.compute.create_server(name=name, image_id=image_id, networks=[{"uuid": net_id}],
                                   flavor_id=conn.compute.find_flavor("m1.nano").id)
        proc = _wait(slow_cloud, "server", name, "--timeout", "50")
    finally:
        admin.delete(slow_cloud.url + f"/pocketstack/v1/faults/{rule['id']}")
    assert proc.returncode == 1
    assert f"server {name} is ERROR" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_status_never_reached_times_out_with_what_it_is(slow_cloud, server):
    _, name, _, _, _ = server
    _wait(slow_cloud, "server", name)
    proc = _wait(slow_cloud, "server", name, "--status", "SHUTOFF", "--timeout", "1")
    assert proc.returncode == 1
    assert f"server {name} is ACTIVE, not SHUTOFF, after 1 s" in proc.stderr


def test_an_unknown_name_is_a_clear_error(slow_cloud):
    proc = _wait(slow_cloud, "volume", f"nothing-{uuid.uuid4().hex[:6]}")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_waits_for_a_volume(slow_cloud):
    conn = slow_cloud.sdk()
    name = f"wait-{uuid.uuid4().hex[:6]}"
    conn.block_storage.create_volume(name=name, size=1)
    proc = _wait(slow_cloud, "volume", name)
    assert proc.returncode == 0, proc.stderr
    assert conn.block_storage.find_volume(name).status == "available"


def test_waits_for_a_volume_to_be_gone(slow_cloud):
    conn = slow_cloud.sdk()
    name = f"gone-{uuid.uuid4().hex[:6]}"
    volume = conn.block_storage.create_volume(name=name, size=1)
    assert _wait(slow_cloud, "volume", name).returncode == 0
    conn.block_storage.delete_volume(volume)
    proc = _wait(slow_cloud, "volume", name, "--status", "deleted")
    assert proc.returncode == 0, proc.stderr
    assert conn.block_storage.find_volume(name) is None


def test_bare_wait_still_waits_for_the_cloud(slow_cloud):
    proc = _wait(slow_cloud, "--url", slow_cloud.url, "--timeout", "10")
    assert proc.returncode == 0, proc.stderr
    assert "is ready" in proc.stdout
