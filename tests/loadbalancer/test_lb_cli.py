"""The user flow with the real `openstack loadbalancer` commands (python-octaviaclient)."""
from __future__ import annotations

from lb_helpers import make_subnet


def test_openstack_loadbalancer_user_flow(cloud, member, conn):
    subnet = make_subnet(conn, cidr="10.40.0.0/24")
    lb = cloud.cli("loadbalancer", "create", "--name", "web", "--vip-subnet-id", subnet.id,
                   "--wait", "-f", "json", user=member)
    assert lb["provisioning_status"] in ("PENDING_CREATE", "ACTIVE")
    shown = cloud.cli("loadbalancer", "show", "web", "-f", "json", user=member)
    assert shown["provisioning_status"] == "ACTIVE" and shown["vip_subnet_id"] == subnet.id
    listed = cloud.cli("loadbalancer", "list", "-f", "json", user=member)
    assert [x["name"] for x in listed] == ["web"]
    listener = cloud.cli("loadbalancer", "listener", "create", "--name", "http",
                         "--protocol", "HTTP", "--protocol-port", "80", "--wait", "web",
                         "-f", "json", user=member)
    pool = cloud.cli("loadbalancer", "pool", "create", "--name", "backends",
                     "--listener", listener["id"], "--protocol", "HTTP",
                     "--lb-algorithm", "ROUND_ROBIN", "--wait", "-f", "json", user=member)
    for address in ("10.40.0.10", "10.40.0.11"):
        cloud.cli("loadbalancer", "member", "create", "--address", address,
                  "--protocol-port", "8080", "--subnet-id", subnet.id, "--wait",
                  pool["id"], "-f", "json", user=member)
    members = cloud.cli("loadbalancer", "member", "list", pool["id"], "-f", "json", user=member)
    assert sorted(m["address"] for m in members) == ["10.40.0.10", "10.40.0.11"]
    assert {m["provisioning_status"] for m in members} == {"ACTIVE"}
    bad = cloud.cli("loadbalancer", "listener", "create", "--protocol", "HTTP",
                    "--protocol-port", "80", "web", user=member, check=False)
    assert bad.returncode != 0 and "already using protocol TCP and protocol_port 80" in (
        bad.stderr + bad.stdout)
    cloud.cli("loadbalancer", "delete", "--cascade", "--wait", "web", user=member,
              parse=False)
    assert cloud.cli("loadbalancer", "list", "-f", "json", user=member) == []
    assert conn.network.find_port(lb["vip_port_id"]) is None
