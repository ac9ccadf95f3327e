"""Keystone's immutable resource option: the service project is made immutable at
bootstrap, so an admin's delete or disable of it, of the users the services act as, or of
their roles there is keystone's 403 — until the option is set to false, the one change an
immutable project accepts."""
from __future__ import annotations

import uuid

import pytest

SERVICE_USERS = ("nova", "neutron", "cinder", "glance")


def _api(cloud):
    return cloud.session(), cloud.url + "/identity/v3"


def _message(r) -> str:
    return r.json()["error"]["message"]


def test_the_service_project_is_immutable_and_refuses_delete_and_disable(cloud):
    s, v3 = _api(cloud)
    project = cloud.sdk().identity.find_project("service", domain_id="default")
    shown = s.get(f"{v3}/projects/{project.id}").json()["project"]
    assert shown["options"] == {"immutable": True}
    r = s.delete(f"{v3}/projects/{project.id}", raise_exc=False)
    assert r.status_code == 403
    assert _message(r) == (f"Unable to delete immutable project resource: `{project.id}. "
                           "Set resource option \"immutable\" to false first.")
    r = s.patch(f"{v3}/projects/{project.id}", json={"project": {"enabled": False}},
                raise_exc=False)
    assert r.status_code == 403 and "immutable" in _message(r)
    r = s.put(f"{v3}/projects/{project.id}/tags/x", raise_exc=False)
    assert r.status_code == 403
    after = s.get(f"{v3}/projects/{project.id}").json()["project"]
    assert after["enabled"] is True and after["tags"] == []


@pytest.mark.parametrize("name", SERVICE_USERS)
def test_a_service_user_cannot_be_deleted_disabled_or_lose_its_roles(cloud, name):
    s, v3 = _api(cloud)
    sdk = cloud.sdk()
    user = sdk.identity.find_user(name, domain_id="default")
    service = sdk.identity.find_project("service", domain_id="default")
    r = s.delete(f"{v3}/users/{user.id}", raise_exc=False)
    assert r.status_code == 403
    assert _message(r).startswith(f"Cannot delete user {name}: the cloud's services act as")
    for change in ({"enabled": False}, {"name": name + "-x"}):
        r = s.patch(f"{v3}/users/{user.id}", json={"user": change}, raise_exc=False)
        assert r.status_code == 403, change
    for role in ("admin", "service"):
        role_id = sdk.identity.find_role(role).id
        r = s.delete(f"{v3}/projects/{service.id}/users/{user.id}/roles/{role_id}",
                     raise_exc=False)
        assert r.status_code == 403
        assert _message(r).startswith(f"Cannot revoke the {role} role on service")
    assert sdk.identity.get_user(user.id).is_enabled
    roles = {a.role["id"] for a in sdk.identity.role_assignments(
        user_id=user.id, scope_project_id=service.id)}
    assert roles == {sdk.identity.find_role(r).id for r in ("admin", "service")}
    # The service user still logs in and validates tokens.
    assert cloud.session(name, _password(cloud, name), project_name="service").get(
        v3 + "/auth/tokens", headers={"X-Subject-Token": s.get_token()}).status_code == 200


def _password(cloud, name):
    from pocketstack.clients import service_users
    return service_users.password(name)


def test_an_immutable_project_changes_only_by_setting_the_option_to_false(cloud):
    s, v3 = _api(cloud)
    name = f"immutable-{uuid.uuid4().hex[:6]}"
    r = s.post(f"{v3}/projects", json={"project": {"name": name,
                                                   "options": {"immutable": True}}})
    project = r.json()["project"]
    assert project["options"] == {"immutable": True}
    url = f"{v3}/projects/{project['id']}"
    assert s.delete(url, raise_exc=False).status_code == 403
    r = s.patch(url, json={"project": {"description": "x", "options": {"immutable": False}}},
                raise_exc=False)
    assert r.status_code == 403  # the unlock goes alone
    r = s.patch(url, json={"project": {"options": {"immutable": False}}})
    assert r.json()["project"]["options"] == {"immutable": False}
    assert s.delete(url).status_code == 204


def test_bootstrap_makes_an_older_clouds_service_project_immutable_once(cloud):
    """A cloud made before the option has a service project without options: the next
    start's bootstrap sets it; an admin's "immutable": false it leaves alone."""
    from pocketstack.clients import service_users
    from pocketstack.common import db
    from pocketstack.identity import bootstrap
    from pocketstack.identity.models import Project

    s, v3 = _api(cloud)
    project_id = cloud.sdk().identity.find_project("service", domain_id="default").id
    url = f"{v3}/projects/{project_id}"

    def start():
        bootstrap.bootstrap(cloud.admin_password, service_users.ensure_passwords())
        return s.get(url).json()["project"]["options"]
    try:
        with db.transaction() as session:
            session.get(Project, project_id).extra = {}
        assert s.get(url).json()["project"]["options"] == {}
        assert start() == {"immutable": True}
        s.patch(url, json={"project": {"options": {"immutable": False}}})
        assert start() == {"immutable": False}
    finally:
        s.patch(url, json={"project": {"options": {"immutable": True}}})
    assert s.delete(url, raise_exc=False).status_code == 403
