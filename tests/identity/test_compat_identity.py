"""Identity: system role grants (upstream test suites create a system-reader
user for every admin test class), 404 for an unknown domain, domain update."""
from __future__ import annotations

import uuid

import pytest


def _name(prefix="compat"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def keystone(cloud):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.session(), interface="public")


@pytest.fixture(scope="module")
def reader_role(keystone):
    return keystone.roles.find(name="reader")


def _system_token(cloud, user_name, password):
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    auth = v3.Password(auth_url=cloud.auth_url, username=user_name, password=password,
                       user_domain_id="default", system_scope="all")
    return session.Session(auth=auth)


def test_system_reader_user(cloud, keystone, reader_role):
    password = "pass-" + uuid.uuid4().hex
    user = keystone.users.create(name=_name("sysreader"), domain="default", password=password)
    keystone.roles.grant(reader_role, user=user, system="all")
    keystone.roles.check(reader_role, user=user, system="all")
    assert [r.id for r in keystone.roles.list(user=user, system="all")] == [reader_role.id]

    assignments = keystone.role_assignments.list(user=user, system="all")
    assert [(a.role["id"], a.scope) for a in assignments] == [
        (reader_role.id, {"system": {"all": True}})]
    everything = keystone.role_assignments.list(system="all")
    assert user.id in [a.user["id"] for a in everything if hasattr(a, "user")]
    # a project-scoped listing does not show system grants
    project_scoped = keystone.role_assignments.list(user=user, project=cloud_admin_project(
        keystone))
    assert list(project_scoped) == []

    # the system-scoped token carries the role; as a reader it reads, cannot write
    session = _system_token(cloud, user.name, password)
    access = session.auth.get_access(session)
    assert access.system_scoped and access.role_names == ["reader"]
    from keystoneclient.v3 import client

    as_reader = client.Client(session=session, interface="public")
    assert user.id in [u.id for u in as_reader.users.list()]
    from keystoneauth1 import exceptions

    with pytest.raises(exceptions.Forbidden):
        as_reader.users.create(name=_name(), domain="default")
    with pytest.raises(exceptions.Forbidden):
        as_reader.roles.grant(reader_role, user=user, system="all")

    keystone.roles.revoke(reader_role, user=user, system="all")
    with pytest.raises(exceptions.NotFound):
        keystone.roles.check(reader_role, user=user, system="all")
    with pytest.raises(exceptions.Unauthorized):  # revoked: the token is no longer valid
        as_reader.users.list()
    keystone.users.delete(user)


def cloud_admin_project(keystone):
    return keystone.projects.find(name="admin")


def test_system_grants_for_groups(keystone, reader_role):
    group = keystone.groups.create(name=_name("sysgroup"), domain="default")
    keystone.roles.grant(reader_role, group=group, system="all")
    keystone.roles.check(reader_role, group=group, system="all")
    assert [r.id for r in keystone.roles.list(group=group, system="all")] == [reader_role.id]
    keystone.roles.revoke(reader_role, group=group, system="all")
    assert keystone.roles.list(group=group, system="all") == []
    keystone.groups.delete(group)


def test_domain_specific_role_cannot_be_a_system_grant(keystone):
    from keystoneauth1 import exceptions

    role = keystone.roles.create(name=_name("domrole"), domain="default")
    user = keystone.users.create(name=_name(), domain="default")
    with pytest.raises(exceptions.BadRequest):
        keystone.roles.grant(role, user=user, system="all")
    keystone.users.delete(user)
    keystone.roles.delete(role)


@pytest.mark.parametrize("kind", ["users", "projects", "groups"])
def test_create_in_unknown_domain_is_404(keystone, kind):
    from keystoneauth1 import exceptions

    manager = getattr(keystone, kind)
    with pytest.raises(exceptions.NotFound) as caught:
        manager.create(name=_name(), domain="no-such-domain")
    assert "no-such-domain" in str(caught.value)


def test_domain_update_answers_200(cloud, keystone):
    conn = cloud.sdk()
    name = _name("domain")
    domain = conn.identity.create_domain(name=name, description="first")
    updated = conn.identity.update_domain(domain, name=name + "-new", description="second",
                                          enabled=False)
    assert (updated.name, updated.description, updated.is_enabled) == (
        name + "-new", "second", False)
    again = conn.update_domain(name_or_id=name + "-new", name=name, description="third",
                               enabled=True)
    assert again["name"] == name
    keystone.domains.update(domain.id, name=name, enabled=False)
    conn.identity.delete_domain(domain)
