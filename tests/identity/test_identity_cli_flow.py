"""The identity user flow with the real `openstack` CLI, and application credentials created
with the CLI then used through keystoneauth1."""
import pytest
from keystoneauth1 import session as ka_session
from keystoneauth1.identity import v3

pytestmark = pytest.mark.cli


@pytest.fixture
def demo_cleanup(ks):
    yield
    for kind, name in (("projects", "demo"), ("users", "alice")):
        for item in ks.get(f"/v3/{kind}", params={"name": name}).json()[kind]:
            ks.delete(f"/v3/{kind}/{item['id']}")


def test_identity_user_flow(cloud, ks, demo_cleanup):
    token = cloud.cli("token", "issue", "-f", "json")
    assert token["id"] and token["project_id"] and token["user_id"]
    assert ks.validate(token["id"], token=ks.admin_token).status_code == 200

    catalog = cloud.cli("catalog", "list", "-f", "json")
    types = {entry["Type"] for entry in catalog}
    assert {"identity", "compute", "image", "network", "block-storage", "volumev3"} <= types

    project = cloud.cli("project", "create", "demo", "-f", "json")
    assert project["name"] == "demo" and project["domain_id"] == "default"
    user = cloud.cli("user", "create", "--password", "s3cret", "alice", "-f", "json")
    assert user["name"] == "alice" and "password" not in user
    cloud.cli("role", "add", "--project", "demo", "--user", "alice", "member")

    rows = cloud.cli("role", "assignment", "list", "--names", "-f", "json")
    assert {"Role": "member", "User": "alice@Default", "Group": "",
            "Project": "demo@Default", "Domain": "", "System": "",
            "Inherited": False} in rows
    assert any(r["Role"] == "admin" and r["User"] == "admin@Default" for r in rows)

    # alice can now log in to demo.
    sess = cloud.session(username="alice", password="s3cret", project_id=project["id"])
    assert "member" in sess.auth.get_access(sess).role_names


def test_cli_application_credential_then_auth(cloud, ks):
    user = ks.new_user()
    cred = cloud.cli("application", "credential", "create", "ci-cred", "-f", "json",
                     user=user)
    assert cred["Secret"] and cred["Project ID"] == user["project_id"]
    sess = ka_session.Session(auth=v3.ApplicationCredential(
        auth_url=cloud.auth_url, application_credential_id=cred["ID"],
        application_credential_secret=cred["Secret"]))
    access = sess.auth.get_access(sess)
    assert access.user_id == user["id"] and access.project_id == user["project_id"]
    assert "member" in access.role_names
    listed = cloud.cli("application", "credential", "list", "-f", "json", user=user)
    assert [c["ID"] for c in listed] == [cred["ID"]]


def test_cli_user_password_set(cloud, ks):
    user = ks.new_user()
    old_token = ks.project_token(user)
    cloud.cli("user", "password", "set", "--original-password", user["password"],
              "--password", "brand-new-pw", user=user)
    assert ks.get("/v3/auth/projects", token=old_token, admin=False).status_code == 401
    assert ks.password_auth(user["name"], "brand-new-pw").status_code == 201
