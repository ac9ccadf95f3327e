"""The whole cloud on SQLite, PostgreSQL and MariaDB (``pocketstack up`` in a subprocess),
driven through keystoneauth1 and openstacksdk: the token life cycle and identity CRUD."""
from __future__ import annotations

import uuid

import httpx
from keystoneauth1 import exceptions as ks_exc
import pytest


def _headers(token: str, subject: str | None = None) -> dict:
    headers = {"X-Auth-Token": token}
    if subject:
        headers["X-Subject-Token"] = subject
    return headers


def test_token_issue_validate_revoke(backend_cloud):
    admin = backend_cloud.session()
    admin_token = admin.get_token()
    user_token = backend_cloud.session().get_token()
    url = backend_cloud.auth_url + "/v3/auth/tokens"

    r = httpx.get(url, headers=_headers(admin_token, user_token))
    assert r.status_code == 200
    body = r.json()["token"]
    assert body["project"]["name"] == "admin"
    assert {"admin", "member", "reader"} <= {role["name"] for role in body["roles"]}
    assert body["expires_at"].endswith("Z") and "." in body["expires_at"]
    assert r.headers["x-subject-token"] == user_token
    assert httpx.head(url, headers=_headers(admin_token, user_token)).status_code == 200

    assert httpx.delete(url, headers=_headers(admin_token, user_token)).status_code == 204
    assert httpx.get(url, headers=_headers(admin_token, user_token)).status_code == 404
    r = httpx.get(backend_cloud.auth_url + "/v3/auth/projects", headers=_headers(user_token))
    assert r.status_code == 401
    assert r.json()["error"]["code"] == 401
    # The admin's own token is untouched by revoking another one.
    assert httpx.get(url, headers=_headers(admin_token, admin_token)).status_code == 200


def test_identity_crud_and_a_new_user_logs_in(backend_cloud):
    conn = backend_cloud.sdk()
    suffix = uuid.uuid4().hex[:8]
    project = conn.identity.create_project(name=f"demo-{suffix}", domain_id="default")
    user = conn.identity.create_user(name=f"alice-{suffix}", password="s3cret-pass",
                                     domain_id="default")
    member = conn.identity.find_role("member")
    conn.identity.assign_project_role_to_user(project, user, member)
    assert conn.identity.validate_user_has_project_role(project, user, member)

    alice = backend_cloud.session(username=user.name, password="s3cret-pass",
                                  project_name=project.name)
    access = alice.auth.get_access(alice)
    assert access.project_id == project.id
    assert {"member", "reader"} <= set(access.role_names)
    assert "admin" not in access.role_names

    with pytest.raises(ks_exc.Conflict):
        backend_cloud.session().post("/v3/projects", endpoint_filter={"service_type": "identity"},
                                     json={"project": {"name": project.name}})

    # Disabling the user revokes its tokens at once, on every engine.
    token = alice.get_token()
    conn.identity.update_user(user, enabled=False)
    r = httpx.get(backend_cloud.auth_url + "/v3/auth/projects", headers=_headers(token))
    assert r.status_code == 401
