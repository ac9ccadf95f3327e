"""A cloud restarted on its data dir with fewer simulated hosts (or with compute_driver =
libvirt, which runs none) shows the hosts it no longer runs as down and disabled at once,
with the reason, instead of `up` until their last heartbeat ages out; a later start that
runs them again puts them back in service."""
from __future__ import annotations

import shutil
import tempfile

from helpers.cloud import ADMIN_PASSWORD, TEST_OVERRIDES, CloudHandle


def _start(data_dir: str, hosts: int) -> CloudHandle:
    from pocketstack.cloud import Cloud

    cloud = Cloud(data_dir, admin_password=ADMIN_PASSWORD,
                  overrides={**TEST_OVERRIDES, "fake.hosts": hosts})
    cloud.start(port=0)
    return CloudHandle(cloud)


def _states(handle: CloudHandle) -> dict:
    conn = handle.sdk()
    services = {s.host: s for s in conn.compute.services() if s.binary == "nova-compute"}
    hypervisors = {h.name: h for h in conn.compute.hypervisors(details=True)}
    return {host: (svc.state, svc.status, svc.disabled_reason, hypervisors[host].state)
            for host, svc in services.items()}


def test_hosts_not_run_by_a_restart_are_down_and_disabled_until_run_again():
    data_dir = tempfile.mkdtemp(prefix="pocketstack-hosts-")
    try:
        first = _start(data_dir, 3)
        assert {h: s[0] for h, s in _states(first).items()} == {
            "cmp-1": "up", "cmp-2": "up", "cmp-3": "up"}
        first.cloud.stop()

        fewer = _start(data_dir, 1)
        try:
            states = _states(fewer)
            assert states["cmp-1"] == ("up", "enabled", None, "up")
            for host in ("cmp-2", "cmp-3"):
                state, status, reason, hypervisor = states[host]
                assert (state, status, hypervisor) == ("down", "disabled", "down"), host
                assert "not run by this start" in reason
            conn = fewer.sdk()
            server = conn.compute.create_server(
                name="lands-on-the-host-that-runs", flavor_id=conn.compute.find_flavor(
                    "m1.nano").id, image_id=conn.image.create_image(
                    name="blank", disk_format="raw", container_format="bare",
                    data=b"\0" * 512).id, networks="none")
            server = conn.compute.wait_for_server(server, wait=60, interval=0.1)
            assert server.compute_host == "cmp-1"
        finally:
            fewer.cloud.stop()

        again = _start(data_dir, 3)
        try:
            assert {h: s[:3] for h, s in _states(again).items()} == {
                h: ("up", "enabled", None) for h in ("cmp-1", "cmp-2", "cmp-3")}
        finally:
            again.cloud.stop()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
