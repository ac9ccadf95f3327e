"""Token issue, validation, rescoping and the /v3/auth collections, through keystoneauth1
and raw HTTP."""
import re

import pytest
from keystoneauth1 import exceptions as ka_exc
from keystoneauth1 import session as ka_session
from keystoneauth1.identity import v3

from identity_helpers import assert_error, unique

TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def test_project_token_body_as_keystone(ks):
    r = ks.password_auth("admin", ks.cloud.admin_password,
                         {"project": {"name": "admin", "domain": {"name": "Default"}}})
    assert r.status_code == 201
    token = r.json()["token"]
    assert TIME.match(token["expires_at"]) and TIME.match(token["issued_at"])
    assert token["methods"] == ["password"]
    assert token["user"]["name"] == "admin" and token["user"]["domain"] == {
        "id": "default", "name": "Default"}
    assert token["project"]["name"] == "admin" and token["is_domain"] is False
    assert {"admin", "manager", "member", "reader"} <= {r["name"] for r in token["roles"]}
    assert len(token["audit_ids"]) == 1
    types = {}
    for entry in token["catalog"]:
        types[entry["type"]] = entry
        for ep in entry["endpoints"]:
            assert set(ep) == {"id", "interface", "url", "region", "region_id"}
            assert ep["region"] == ep["region_id"] == "RegionOne"
    assert {"identity", "compute", "image", "network", "block-storage", "volumev3"} <= set(types)
    project_id = token["project"]["id"]
    assert all(ep["url"].endswith(f"/volume/v3/{project_id}")
               for ep in types["block-storage"]["endpoints"])


def test_unscoped_domain_scoped_and_nocatalog(ks):
    user = ks.new_user()
    r = ks.password_auth(user["name"], user["password"])  # no default project: unscoped
    token = r.json()["token"]
    assert "project" not in token and "roles" not in token and "catalog" not in token
    admin_domain = ks.password_auth("admin", ks.cloud.admin_password,
                                    {"domain": {"id": "default"}}).json()["token"]
    assert admin_domain["domain"] == {"id": "default", "name": "Default"}
    assert "admin" in {r["name"] for r in admin_domain["roles"]}
    r = ks.http.post("/v3/auth/tokens?nocatalog", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "id": user["id"], "password": user["password"]}}},
        "scope": {"project": {"id": user["project_id"]}}}})
    assert r.status_code == 201 and "catalog" not in r.json()["token"]
    # No role on the project: 401.
    other = ks.create("project", name=unique("p"))
    assert_error(ks.password_auth(user["name"], user["password"],
                                  {"project": {"id": other["id"]}}), 401)


def test_default_project_scopes_only_when_usable(ks):
    user = ks.new_user()
    ks.patch(f"/v3/users/{user['id']}", json={"user": {"default_project_id": user["project_id"]}})
    token = ks.password_auth(user["name"], user["password"]).json()["token"]
    assert token["project"]["id"] == user["project_id"]
    lonely = ks.create("project", name=unique("p"))
    ks.patch(f"/v3/users/{user['id']}", json={"user": {"default_project_id": lonely["id"]}})
    token = ks.password_auth(user["name"], user["password"]).json()["token"]
    assert "project" not in token  # Keystone ignores a default project without roles


def test_validate_head_and_revoke(ks):
    user = ks.new_user()
    token = ks.project_token(user)
    r = ks.validate(token)
    assert r.status_code == 200 and r.headers["x-subject-token"] == token
    assert r.json()["token"]["user"]["id"] == user["id"]
    head = ks.http.head("/v3/auth/tokens", headers={"X-Auth-Token": token,
                                                    "X-Subject-Token": token})
    assert head.status_code == 200
    # Another user's token: only admins (or the service role) may look.
    other = ks.project_token(ks.new_user())
    assert_error(ks.validate(other, token=token), 403)
    assert ks.validate(token, token=ks.admin_token).status_code == 200
    assert ks.delete("/v3/auth/tokens", token=token,
                     headers={"X-Subject-Token": token}).status_code == 204
    assert_error(ks.validate(token, token=ks.admin_token), 404)


def test_rescope_with_a_token_to_another_project(ks, cloud):
    user = ks.new_user()
    second = ks.create("project", name=unique("p"))
    ks.grant(second["id"], user["id"], "reader")
    unscoped = ks.token(user["name"], user["password"])
    r = ks.http.post("/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["token"], "token": {"id": unscoped}},
        "scope": {"project": {"id": second["id"]}}}})
    assert r.status_code == 201, r.text
    body = r.json()["token"]
    assert body["project"]["id"] == second["id"]
    assert {r["name"] for r in body["roles"]} == {"reader"}
    assert set(body["methods"]) == {"token", "password"}
    assert len(body["audit_ids"]) == 2
    # keystoneauth1's Token plugin does the same.
    sess = ka_session.Session(auth=v3.Token(auth_url=cloud.auth_url, token=unscoped,
                                            project_id=user["project_id"]))
    assert sess.get_project_id() == user["project_id"]


def test_auth_projects_domains_and_catalog(ks):
    user = ks.new_user()
    extra = ks.create("project", name=unique("p"))
    group = ks.create("group", name=unique("g"))
    ks.put(f"/v3/groups/{group['id']}/users/{user['id']}")
    ks.grant(extra["id"], group["id"], "reader", kind="groups")
    token = ks.project_token(user)
    projects = ks.get("/v3/auth/projects", token=token).json()
    assert {p["id"] for p in projects["projects"]} == {user["project_id"], extra["id"]}
    assert projects["links"]["self"].endswith("/v3/auth/projects")
    assert ks.get("/v3/auth/domains", token=token).json()["domains"] == []
    catalog = ks.get("/v3/auth/catalog", token=token).json()["catalog"]
    assert "identity" in {c["type"] for c in catalog}
    unscoped = ks.token(user["name"], user["password"])
    assert_error(ks.get("/v3/auth/catalog", token=unscoped), 403)


def test_password_change_revokes_old_tokens_and_new_password_works(ks, cloud):
    user = ks.new_user()
    old_token = ks.project_token(user)
    r = ks.post(f"/v3/users/{user['id']}/password", token=old_token, json={
        "user": {"original_password": "wrong", "password": "new-secret"}})
    assert_error(r, 401)
    assert ks.validate(old_token).status_code == 200
    r = ks.post(f"/v3/users/{user['id']}/password", token=old_token, json={
        "user": {"original_password": user["password"], "password": "new-secret"}})
    assert r.status_code == 204, r.text
    assert_error(ks.get("/v3/auth/projects", token=old_token), 401)
    assert_error(ks.password_auth(user["name"], user["password"]), 401)
    sess = cloud.session(username=user["name"], password="new-secret",
                         project_id=user["project_id"])
    assert sess.get_token()


def test_application_credential_auth_and_delete_revokes(ks, cloud):
    user = ks.new_user(role="member")
    token = ks.project_token(user)
    path = f"/v3/users/{user['id']}/application_credentials"
    r = ks.post(path, token=token, json={"application_credential": {
        "name": "ci", "roles": [{"name": "reader"}]}})
    assert r.status_code == 201, r.text
    cred = r.json()["application_credential"]
    assert cred["secret"] and cred["project_id"] == user["project_id"]
    assert [x["name"] for x in cred["roles"]] == ["reader"]
    shown = ks.get(f"{path}/{cred['id']}", token=token).json()["application_credential"]
    assert "secret" not in shown
    # A role the user does not hold: 400.
    assert_error(ks.post(path, token=token, json={"application_credential": {
        "name": "x", "roles": [{"name": "admin"}]}}), 400)
    assert_error(ks.post(path, token=token, json={"application_credential": {"name": "ci"}}),
                 409)
    sess = ka_session.Session(auth=v3.ApplicationCredential(
        auth_url=cloud.auth_url, application_credential_id=cred["id"],
        application_credential_secret=cred["secret"]))
    access = sess.auth.get_access(sess)
    assert access.project_id == user["project_id"] and access.role_names == ["reader"]
    by_name = ka_session.Session(auth=v3.ApplicationCredential(
        auth_url=cloud.auth_url, application_credential_name="ci",
        application_credential_secret=cred["secret"], user_id=user["id"]))
    assert by_name.get_token()
    cred_token = sess.get_token()
    # An application credential cannot create more credentials (it is restricted).
    assert_error(ks.post(path, token=cred_token, json={"application_credential": {
        "name": "more"}}), 403)
    assert ks.delete(f"{path}/{cred['id']}", token=token).status_code == 204
    assert_error(ks.get("/v3/auth/projects", token=cred_token), 401)
    with pytest.raises(ka_exc.Unauthorized):
        ka_session.Session(auth=v3.ApplicationCredential(
            auth_url=cloud.auth_url, application_credential_id=cred["id"],
            application_credential_secret=cred["secret"])).get_token()


def test_another_users_application_credentials_are_private(ks):
    alice, bob = ks.new_user(), ks.new_user()
    token = ks.project_token(alice)
    r = ks.post(f"/v3/users/{alice['id']}/application_credentials", token=token,
                json={"application_credential": {"name": "mine"}})
    cred = r.json()["application_credential"]
    bob_token = ks.project_token(bob)
    assert_error(ks.get(f"/v3/users/{alice['id']}/application_credentials", token=bob_token),
                 403)
    assert_error(ks.get(f"/v3/users/{alice['id']}/application_credentials/{cred['id']}",
                        token=bob_token), 403)
    assert_error(ks.post(f"/v3/users/{alice['id']}/application_credentials", token=bob_token,
                         json={"application_credential": {"name": "evil"}}), 403)
