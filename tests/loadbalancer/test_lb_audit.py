"""`pocketstack audit` checks the load balancer service: nothing to say of a healthy tree;
an object whose load balancer or pool is gone, and HAProxy files of a load balancer that
is gone, are named."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest
from lb_helpers import active


def _mentioning(problems: dict, text: str) -> list[str]:
    return [p for found in problems.values() for p in found if text in p]


def test_audit_names_orphans_and_leftover_haproxy_files(cloud, conn, subnet):
    from pocketstack.cli.audit import run_checks
    from pocketstack.common import db
    from pocketstack.loadbalancer import models

    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    pool = conn.load_balancer.create_pool(loadbalancer_id=lb.id, protocol="TCP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    member = conn.load_balancer.create_member(pool, address="10.20.0.90", protocol_port=22)
    active(conn, lb.id)
    healthy = run_checks(stuck_after=300)
    assert _mentioning(healthy, lb.id) == [] and _mentioning(healthy, member.id) == []

    ghost_lb, ghost_pool = str(uuid.uuid4()), str(uuid.uuid4())
    with db.transaction() as s:  # rows a crash (or a hand) left behind
        row = s.get(models.Member, member.id)
        s.add(models.Member(id=str(uuid.uuid4()), project_id=row.project_id,
                            load_balancer_id=lb.id, pool_id=ghost_pool, address="10.20.0.91",
                            protocol_port=22, provisioning_status="ACTIVE",
                            operating_status="NO_MONITOR"))
        s.add(models.Pool(id=str(uuid.uuid4()), project_id=row.project_id,
                          load_balancer_id=ghost_lb, protocol="TCP",
                          lb_algorithm="ROUND_ROBIN", provisioning_status="ACTIVE",
                          operating_status="ONLINE"))
    files = os.path.join(cloud.data_dir, "loadbalancer", ghost_lb)
    os.makedirs(files)
    try:
        found = run_checks(stuck_after=300)["load balancers"]
        assert any(f"pool {ghost_pool}, which is gone" in p for p in found), found
        assert any(f"load balancer {ghost_lb}, which is gone" in p and p.startswith("pool")
                   for p in found), found
        assert any(p.startswith(f"HAProxy files of load balancer {ghost_lb}")
                   for p in found), found
    finally:
        os.rmdir(files)
        with db.transaction() as s:
            for model, column, value in ((models.Member, models.Member.pool_id, ghost_pool),
                                         (models.Pool, models.Pool.load_balancer_id,
                                          ghost_lb)):
                for obj in s.query(model).filter(column == value):
                    s.delete(obj)
    assert run_checks(stuck_after=300)["load balancers"] == []
    conn.load_balancer.delete_load_balancer(lb.id, cascade=True)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("haproxy") is None
                    or shutil.which("ip") is None, reason="needs root, ip and haproxy")
def test_audit_names_this_clouds_namespaces_processes_and_vip_ports_no_load_balancer_owns(
        cloud, admin_conn, subnet):
    from pocketstack.cli.audit import run_checks
    from pocketstack.loadbalancer import dataplane

    ghost = str(uuid.uuid4())
    mine = dataplane.namespace(ghost)
    assert mine.startswith("qlbaas-") and mine.endswith(ghost) and mine != f"qlbaas-{ghost}"
    other_cloud = f"qlbaas-{'0' * 12}-{uuid.uuid4()}"  # another cloud's: not ours to name
    folder = os.path.join(cloud.data_dir, "loadbalancer", ghost)
    os.makedirs(folder)
    config = os.path.join(folder, "haproxy.cfg")
    with open(config, "w") as f:
        f.write(f"frontend f\n    mode tcp\n    bind unix@{folder}/f.sock\n"
                f"    timeout client 1s\n")
    port = admin_conn.network.create_port(network_id=subnet.network_id,
                                          device_owner="Octavia", device_id=f"lb-{ghost}")
    proc = None
    try:
        for ns in (mine, other_cloud):
            subprocess.run(["ip", "netns", "add", ns], check=True)
        proc = subprocess.Popen(["haproxy", "-f", config])
        found = run_checks(stuck_after=300)["load balancers"]
        assert f"namespace {mine} belongs to load balancer {ghost}, which is gone" in found
        assert f"HAProxy process {proc.pid} serves load balancer {ghost}, which is " \
               f"gone" in found, found
        assert f"VIP port {port.id} belongs to load balancer {ghost}, which is gone" in found
        assert not any(other_cloud in p for p in found), found
    finally:
        if proc is not None:
            proc.kill()
            proc.wait(10)
        for ns in (mine, other_cloud):
            subprocess.run(["ip", "netns", "del", ns], check=False)
        shutil.rmtree(folder)
        admin_conn.network.delete_port(port)
    assert run_checks(stuck_after=300)["load balancers"] == []
