"""Trusts and RBAC policies on SQLite, PostgreSQL and MariaDB: the trust's use counter (a
conditional UPDATE), the '*' policy kept in step with a network's shared flag, and the
in-use check (row locks) — each engine through keystoneauth1 and openstacksdk."""
from __future__ import annotations

import uuid

import pytest
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session
from keystoneauth1.identity import v3
from openstack import exceptions as sdk_exc


def _user(conn, suffix: str):
    project = conn.identity.create_project(name=f"p-{suffix}", domain_id="default")
    user = conn.identity.create_user(name=f"u-{suffix}", password="s3cret-pass",
                                     domain_id="default")
    conn.identity.assign_project_role_to_user(project, user, conn.identity.find_role("member"))
    return project, user


def test_trust_scoped_tokens_and_rbac_shared_network(backend_cloud):
    admin = backend_cloud.sdk()
    suffix = uuid.uuid4().hex[:8]
    project, user = _user(admin, suffix)
    # admin trusts the new user with its member role on the admin project, for one use
    admin_project = admin.identity.find_project("admin")
    trust = admin.identity.create_trust(
        trustor_user_id=admin.current_user_id, trustee_user_id=user.id,
        project_id=admin_project.id, roles=[{"name": "member"}], impersonation=False,
        remaining_uses=1)

    def trust_token():
        return session.Session(auth=v3.Password(
            auth_url=backend_cloud.auth_url, username=user.name, password="s3cret-pass",
            user_domain_id="default", trust_id=trust.id)).get_token()

    assert trust_token()
    with pytest.raises(ks_exc.NotFound):  # its one use is spent
        trust_token()

    network = admin.network.create_network(name=f"n-{suffix}")
    admin.network.create_subnet(network_id=network.id, cidr="10.91.0.0/24", ip_version=4)
    theirs = backend_cloud.sdk(username=user.name, password="s3cret-pass",
                               project_name=project.name)
    with pytest.raises(sdk_exc.NotFoundException):
        theirs.network.create_port(network_id=network.id)
    policy = admin.network.create_rbac_policy(object_type="network", object_id=network.id,
                                              action="access_as_shared",
                                              target_project_id=project.id)
    port = theirs.network.create_port(network_id=network.id)
    with pytest.raises(sdk_exc.ConflictException):
        admin.network.delete_rbac_policy(policy)
    theirs.network.delete_port(port)
    admin.network.delete_rbac_policy(policy)
    admin.network.update_network(network.id, is_shared=True)
    assert [p.target_project_id for p in admin.network.rbac_policies(
        object_id=network.id)] == ["*"]
    admin.network.delete_network(network)
    admin.identity.delete_user(user)
    admin.identity.delete_project(project)
