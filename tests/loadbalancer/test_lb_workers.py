"""`pocketstack up --workers 2`: load balancer changes accepted by any API process (the
main one or a worker) are applied by the provider driver of the main process and go
ACTIVE; deletes go through too."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.up_process import UpProcess  # noqa: E402

from helpers.cloud import wait_for  # noqa: E402

CONF = """
[identity]
password_hash_rounds = 4
"""


def test_changes_made_through_any_api_process_go_active(tmp_path):
    up = UpProcess(str(tmp_path / "data"), conf=CONF,
                   args=("--workers", "2", "--admin-password", "pw")).start(timeout=120)
    try:
        conn = up.sdk(password="pw")
        net = conn.network.create_network(name="lbw")
        subnet = conn.network.create_subnet(network_id=net.id, cidr="10.90.0.0/24",
                                            ip_version=4)
        # Fresh connections, so the listening socket hands them to either process.
        ids = [up.sdk(password="pw").load_balancer.create_load_balancer(
            vip_subnet_id=subnet.id, name=f"w{i}").id for i in range(6)]

        def statuses():
            return {lb.provisioning_status for lb in conn.load_balancer.load_balancers()}

        wait_for(lambda: statuses() == {"ACTIVE"}, 60, "every load balancer ACTIVE",
                 interval=0.1)
        for lb_id in ids:
            up.sdk(password="pw").load_balancer.create_listener(
                loadbalancer_id=lb_id, protocol="TCP", protocol_port=22)
        wait_for(lambda: statuses() == {"ACTIVE"}, 60, "every listener applied",
                 interval=0.1)
        assert {li.provisioning_status for li in conn.load_balancer.listeners()} == {"ACTIVE"}
        for lb_id in ids:
            up.sdk(password="pw").load_balancer.delete_load_balancer(lb_id, cascade=True)
        wait_for(lambda: not list(conn.load_balancer.load_balancers()), 60,
                 "every load balancer deleted", interval=0.1)
        assert not [p for p in conn.network.ports(network_id=net.id)
                    if p.device_owner == "Octavia"]
    finally:
        up.stop()
