"""A burst of boots with a network each on ONE host: more builds than the host
has RPC workers. Each build waits for network-vif-plugged, which reaches the host as a cast
of its own; with builds on the RPC workers, those casts queued behind the waiting builds
and every build waited out vif_plugging_timeout, then failed (no other host to go to).
"""
from __future__ import annotations

import concurrent.futures
import shutil
import tempfile
import time

from pocketstack.cloud import Cloud

BURST = 40  # more than the host's 16 RPC workers


def test_burst_on_one_host_gets_every_vif_plugged_event_in_time():
    data_dir = tempfile.mkdtemp(prefix="build-burst-")
    cloud = Cloud(data_dir, admin_password="pw", hosts=1, overrides={
        "identity.password_hash_rounds": 4, "fake.spawn_delay": 0.3,
        "compute.vif_plugging_timeout": 5.0, "compute.build_stall_timeout": 600.0,
        "quota.instances": -1, "quota.cores": -1, "quota.ram": -1})
    cloud.start(port=0)
    try:
        conn = cloud.connection()
        image = conn.image.create_image(name="burst-img", data=b"x" * 64, disk_format="raw",
                                        container_format="bare")
        net = conn.network.create_network(name="burst-net")
        conn.network.create_subnet(network_id=net.id, cidr="10.66.0.0/24", ip_version=4)

        def boot(i):
            return cloud.connection().compute.create_server(
                name=f"burst-{i}", image_id=image.id, flavor_id="42",
                networks=[{"uuid": net.id}]).id

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            ids = set(pool.map(boot, range(BURST)))
        deadline = time.monotonic() + 120
        while True:
            status = {s.id: s.status for s in conn.compute.servers() if s.id in ids}
            if all(v in ("ACTIVE", "ERROR") for v in status.values()):
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        errors = {s.name: (s.fault or {}).get("message")
                  for s in conn.compute.servers(details=True)
                  if s.id in ids and s.status == "ERROR"}
        assert not errors, errors
        assert len(status) == BURST
    finally:
        cloud.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
