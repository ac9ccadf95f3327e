"""`openstack project cleanup` removes a project's network resources (it read
/v2.0/service-providers first, and its 404 silently aborted the whole cleanup)."""
from __future__ import annotations

import uuid

import pytest


@pytest.mark.cli
def test_project_cleanup_removes_the_network(cloud):
    member = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(member)
    network = conn.network.create_network(name=f"cleanup-{uuid.uuid4().hex[:8]}")
    subnet = conn.network.create_subnet(network_id=network.id, ip_version=4,
                                        cidr="10.196.0.0/24")
    router = conn.network.create_router(name="cleanup-router")
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    conn.network.create_port(network_id=network.id)
    group = conn.network.create_security_group(name="cleanup-group")

    out = cloud.cli("project", "cleanup", "--auth-project", "--auto-approve", user=member)
    admin = cloud.sdk()
    assert admin.network.find_network(network.id) is None, out
    assert admin.network.find_router(router.id) is None, out
    assert admin.network.find_security_group(group.id) is None, out
    assert list(admin.network.ports(project_id=member["project_id"])) == [], out
