"""Bad identity inputs: each answered with the exact status and a Keystone error body."""
import time

from identity_helpers import assert_error, unique

AUTH_FAILED = "The request you have made requires authentication."


def test_wrong_password_and_unknown_user_get_the_same_401(ks):
    wrong = ks.password_auth("admin", "not-the-password")
    unknown = ks.password_auth(unique("nobody"), "whatever")
    unknown_domain = ks.password_auth("admin", "x", domain_id="no-such-domain")
    for r in (wrong, unknown, unknown_domain):
        assert_error(r, 401, AUTH_FAILED)
        assert r.headers["www-authenticate"].startswith('Keystone uri="')
    assert wrong.json() == unknown.json()


def test_disabled_user_gets_the_same_401(ks):
    user = ks.new_user()
    ks.patch(f"/v3/users/{user['id']}", json={"user": {"enabled": False}})
    assert_error(ks.password_auth(user["name"], user["password"]), 401, AUTH_FAILED)


def test_garbage_revoked_and_expired_tokens_are_401(ks, cloud):
    from pocketstack.identity import tokens

    assert_error(ks.get("/v3/users", token="garbage"), 401, AUTH_FAILED)
    user = ks.new_user()
    token = ks.project_token(user)
    assert ks.delete("/v3/auth/tokens", headers={"X-Subject-Token": token}).status_code == 204
    assert_error(ks.get("/v3/auth/projects", token=token), 401, AUTH_FAILED)
    # A token whose expiry has passed (minted with the cloud's own keys).
    expired, _ = tokens.issue(user_id=user["id"], user_domain_id="default",
                              methods=["password"], roles=["member"],
                              project_id=user["project_id"], project_domain_id="default")
    data = tokens.validate(expired)
    past = tokens.fernet.crypto().encrypt(
        tokens.json.dumps(dict(data, e=time.time() - 5)).encode()).decode()
    assert_error(ks.get("/v3/auth/projects", token=past), 401, AUTH_FAILED)
    # As a subject token, an invalid one is "not found".
    assert_error(ks.validate("garbage", token=ks.admin_token), 404)


def test_non_admin_creating_a_project_is_403(ks):
    user = ks.new_user()
    r = ks.post("/v3/projects", token=ks.project_token(user), json={"project": {"name": "x"}})
    assert_error(r, 403, "You are not authorized to perform the requested action: "
                         "identity:create_project.")


def test_malformed_json_is_400(ks):
    for path in ("/v3/projects", "/v3/auth/tokens"):
        r = ks.post(path, content=b'{"project": {"name": ', headers={
            "Content-Type": "application/json"})
        error = assert_error(r, 400)
        assert error["message"].startswith("Expecting to find valid JSON in request body.")


def test_missing_required_field_is_400(ks):
    error = assert_error(ks.post("/v3/projects", json={"project": {"description": "x"}}), 400)
    assert "'name' is a required property" in error["message"]
    assert_error(ks.post("/v3/users", json={}), 400)
    assert_error(ks.post("/v3/auth/tokens", json={"auth": {}}), 400)
    assert_error(ks.post("/v3/auth/tokens", json={"auth": {"identity": {
        "methods": ["password"], "password": {"user": {"name": "admin"}}}}}), 400)


def test_wrong_types_are_400_never_500(ks):
    assert_error(ks.post("/v3/projects", json={"project": {"name": 5}}), 400)
    assert_error(ks.post("/v3/projects", json={"project": {"name": "ok", "enabled": "yes"}}),
                 400)
    assert_error(ks.post("/v3/projects", json=["project"]), 400)
    assert_error(ks.post("/v3/auth/tokens", json={"auth": {"identity": {
        "methods": ["password"], "password": {"user": {"id": 5, "password": "x"}}}}}), 400)
    assert_error(ks.post("/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": ks.cloud.admin_password}}},
        "scope": {"project": "admin"}}}), 400)


def test_body_over_the_limit_is_413(ks):
    big = "x" * (1024 * 1024 + 10)
    r = ks.post("/v3/projects", json={"project": {"name": "big", "description": big}})
    assert_error(r, 413)


def test_duplicate_project_name_in_a_domain_is_409(ks):
    name = unique("dup")
    ks.create("project", name=name)
    r = ks.post("/v3/projects", json={"project": {"name": name}})
    assert_error(r, 409, "Conflict occurred attempting to store project - it is not permitted "
                         f"to have two projects with the same name in the same domain : {name}.")
    # The same name in another domain is fine.
    domain = ks.create("domain", name=unique("d"))
    ks.create("project", name=name, domain_id=domain["id"])


def test_duplicate_user_group_and_role_names_are_409(ks):
    for kind in ("user", "group", "role"):
        name = unique(kind)
        ks.create(kind, name=name)
        assert_error(ks.post(f"/v3/{kind}s", json={kind: {"name": name}}), 409)


def test_deleting_an_enabled_domain_is_403(ks):
    domain = ks.create("domain", name=unique("d"))
    r = ks.delete(f"/v3/domains/{domain['id']}")
    assert_error(r, 403, "Cannot delete a domain that is enabled, please disable it first.")
    assert ks.patch(f"/v3/domains/{domain['id']}",
                    json={"domain": {"enabled": False}}).status_code == 200
    assert ks.delete(f"/v3/domains/{domain['id']}").status_code == 204
    assert_error(ks.get(f"/v3/domains/{domain['id']}"), 404,
                 f"Could not find domain: {domain['id']}.")


def test_unknown_things_are_404_in_keystone_words(ks):
    assert_error(ks.get("/v3/projects/nope"), 404, "Could not find project: nope.")
    assert_error(ks.get("/v3/users/nope"), 404, "Could not find user: nope.")
    assert_error(ks.get("/v3/groups/nope"), 404, "Could not find group: nope.")
    assert_error(ks.get("/v3/roles/nope"), 404, "Could not find role: nope.")
    assert_error(ks.get("/v3/services/nope"), 404, "Could not find service: nope.")
    assert_error(ks.get("/v3/endpoints/nope"), 404, "Could not find endpoint: nope.")
    assert_error(ks.get("/v3/regions/nope"), 404, "Could not find region: nope.")


def test_password_is_never_echoed(ks):
    r = ks.post("/v3/users", json={"user": {"name": unique("u"), "password": 12345678}})
    error = assert_error(r, 400)
    assert "12345678" not in r.text and error["message"] == \
        "Invalid input for field 'user/password'."
    user = ks.create("user", name=unique("u"), password="sekrit-pass")
    assert "password" not in user and "sekrit" not in str(user)
    listed = ks.get("/v3/users").text
    assert "sekrit" not in listed and "$2b$" not in listed
