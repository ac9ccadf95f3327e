"""barbican's default policy: the owning project's members read and write its secrets and
containers, another project gets 403 (barbican looks secrets up by id alone, then its
policy refuses), ACL users of any project read what the ACL gives them, and
``project-access: false`` leaves only the creator, the ACL's users and admins."""
from __future__ import annotations

import uuid

from keymanager_helpers import barbican_error, colleague

DENIED = "attempt not allowed - please review your user/project privileges"


def test_another_projects_secret_is_forbidden(member, other):
    ref = member.store("mine")
    assert barbican_error(other.get(ref), 403) == f"Secret retrieval {DENIED}"
    assert barbican_error(other.get(ref + "/payload"), 403) == \
        f"Secret payload retrieval {DENIED}"
    assert barbican_error(other.delete(ref), 403) == f"Secret deletion {DENIED}"
    barbican_error(other.put(ref + "/acl", {"read": {"users": [other.user["id"]]}}), 403)
    barbican_error(other.get(ref + "/metadata"), 403)
    assert ref not in other.get("/v1/secrets").text
    assert member.get(ref + "/payload").content == b"mine"


def test_acl_shares_read_with_a_user_of_another_project(member, other):
    ref = member.store("shared")
    r = member.put(ref + "/acl", {"read": {"users": [other.user["id"]]}})
    assert r.status_code == 200, r.text
    assert other.get(ref).json()["name"] is None
    assert other.get(ref + "/payload", headers={"Accept": "text/plain"}).text == "shared"
    assert other.get(ref + "/metadata").status_code == 200
    barbican_error(other.delete(ref), 403)  # read only
    barbican_error(other.get(ref + "/acl"), 403)
    assert other.get("/v1/secrets").json()["total"] == 0  # their project's own list
    shared = other.get("/v1/secrets?acl_only=true").json()
    assert [s["secret_ref"] for s in shared["secrets"]] == [ref]
    member.delete(ref + "/acl")
    barbican_error(other.get(ref), 403)


def test_project_access_false_leaves_the_creator_and_acl_users(cloud, member, other):
    ref = member.store("private")
    teammate = colleague(cloud, member.user["project_id"])
    assert teammate.get(ref + "/payload").content == b"private"  # project access by default
    member.put(ref + "/acl", {"read": {"users": [other.user["id"]], "project-access": False}})
    barbican_error(teammate.get(ref), 403)
    barbican_error(teammate.get(ref + "/payload"), 403)
    barbican_error(teammate.delete(ref), 403)
    assert member.get(ref + "/payload").content == b"private"
    assert other.get(ref + "/payload").content == b"private"
    admin = colleague(cloud, member.user["project_id"], roles=("admin",))
    assert admin.get(ref + "/payload").content == b"private"


def test_container_acl_and_other_project(member, other):
    secret = member.store()
    ref = member.post("/v1/containers", {"type": "generic", "secret_refs": [
        {"name": "s", "secret_ref": secret}]}).json()["container_ref"]
    assert barbican_error(other.get(ref), 403) == f"Container retrieval {DENIED}"
    barbican_error(other.post(ref + "/consumers", {"name": "x", "URL": "http://x"}), 403)
    member.put(ref + "/acl", {"read": {"users": [other.user["id"]]}})
    assert other.get(ref).status_code == 200
    barbican_error(other.delete(ref), 403)


def test_readers_and_the_creation_rules(cloud, member):
    """barbican's secure-RBAC defaults give a project reader quotas only."""
    ref = member.store()
    reader = colleague(cloud, member.user["project_id"], roles=("reader",))
    assert barbican_error(reader.get("/v1/secrets"), 403) == f"Secret(s) retrieval {DENIED}"
    barbican_error(reader.get(ref), 403)
    barbican_error(reader.post("/v1/secrets", {"name": "x"}), 403)
    assert reader.get("/v1/quotas").status_code == 200


def test_application_credential_access_rules_name_the_key_manager(cloud, member):
    """The key manager is `key-manager` to access rules: a rule for its listing allows
    that listing alone, and a credential limited to another service gets a 401."""
    from keystoneauth1 import session as ks_session
    from keystoneauth1.identity import v3

    owner = member.s

    def restricted(rules):
        r = owner.post(f"{cloud.auth_url}/v3/users/{member.user['id']}"
                       "/application_credentials",
                       json={"application_credential": {"name": f"ac-{uuid.uuid4().hex[:8]}",
                                                        "access_rules": rules}})
        cred = r.json()["application_credential"]
        return ks_session.Session(auth=v3.ApplicationCredential(
            auth_url=cloud.auth_url, application_credential_id=cred["id"],
            application_credential_secret=cred["secret"]))

    km = {"endpoint_filter": {"service_type": "key-manager"}, "raise_exc": False}
    sess = restricted([{"service": "key-manager", "method": "GET", "path": "/v1/secrets"}])
    assert sess.get("/v1/secrets", **km).status_code == 200
    r = sess.post("/v1/secrets", json={"name": "x"}, **km)
    assert barbican_error(r, 401)
    other = restricted([{"service": "compute", "method": "GET", "path": "/v2.1/servers"}])
    barbican_error(other.get("/v1/secrets", **km), 401)
