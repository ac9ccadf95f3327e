"""Whatever changes what a token stands for makes it fail validation at once."""
from identity_helpers import assert_error, unique


def _valid(ks, token) -> bool:
    return ks.get("/v3/auth/projects", token=token, admin=False).status_code == 200


def test_disabling_and_deleting_a_user(ks):
    user = ks.new_user()
    token = ks.project_token(user)
    ks.patch(f"/v3/users/{user['id']}", json={"user": {"enabled": False}})
    assert not _valid(ks, token)
    ks.patch(f"/v3/users/{user['id']}", json={"user": {"enabled": True}})
    token = ks.project_token(user)
    assert _valid(ks, token)
    ks.delete(f"/v3/users/{user['id']}")
    assert not _valid(ks, token)


def test_admin_password_reset_revokes(ks):
    user = ks.new_user()
    token = ks.project_token(user)
    ks.patch(f"/v3/users/{user['id']}", json={"user": {"password": "reset-pw"}})
    assert not _valid(ks, token)
    assert ks.password_auth(user["name"], "reset-pw").status_code == 201


def test_disabling_and_deleting_a_project(ks):
    user = ks.new_user()
    other = ks.create("project", name=unique("p"))
    ks.grant(other["id"], user["id"], "member")
    token, other_token = ks.project_token(user), ks.project_token(user, other["id"])
    ks.patch(f"/v3/projects/{user['project_id']}", json={"project": {"enabled": False}})
    assert not _valid(ks, token)
    assert _valid(ks, other_token)  # only tokens for that project
    assert_error(ks.password_auth(user["name"], user["password"],
                                  {"project": {"id": user["project_id"]}}), 401)
    ks.delete(f"/v3/projects/{other['id']}")
    assert not _valid(ks, other_token)


def test_revoking_a_user_grant(ks):
    user = ks.new_user()
    token = ks.project_token(user)
    member = ks.role_id("member")
    ks.delete(f"/v3/projects/{user['project_id']}/users/{user['id']}/roles/{member}")
    assert not _valid(ks, token)
    assert_error(ks.password_auth(user["name"], user["password"],
                                  {"project": {"id": user["project_id"]}}), 401)


def test_revoking_a_group_grant_and_leaving_a_group(ks):
    project = ks.create("project", name=unique("p"))
    group = ks.create("group", name=unique("g"))
    alice, bob = ks.new_user(role=None, project_id=project["id"]), ks.new_user(
        role=None, project_id=project["id"])
    for u in (alice, bob):
        ks.put(f"/v3/groups/{group['id']}/users/{u['id']}")
    ks.grant(project["id"], group["id"], "member", kind="groups")
    a_token, b_token = ks.project_token(alice), ks.project_token(bob)
    ks.delete(f"/v3/groups/{group['id']}/users/{alice['id']}")
    assert not _valid(ks, a_token) and _valid(ks, b_token)
    ks.delete(f"/v3/projects/{project['id']}/groups/{group['id']}/roles/"
              f"{ks.role_id('member')}")
    assert not _valid(ks, b_token)


def test_disabling_a_domain(ks):
    domain = ks.create("domain", name=unique("d"))
    user = ks.new_user(domain_id=domain["id"])
    token = ks.token(user["name"], user["password"], {"project": {"id": user["project_id"]}},
                     domain_id=domain["id"])
    ks.patch(f"/v3/domains/{domain['id']}", json={"domain": {"enabled": False}})
    assert not _valid(ks, token)
    assert_error(ks.password_auth(user["name"], user["password"], domain_id=domain["id"]), 401)


def test_deleting_a_role_or_an_implication(ks):
    role, extra = ks.create("role", name=unique("r")), ks.create("role", name=unique("x"))
    user = ks.new_user(role=role["name"])
    ks.put(f"/v3/roles/{role['id']}/implies/{extra['id']}")
    token = ks.project_token(user)
    names = {r["name"] for r in ks.validate(token).json()["token"]["roles"]}
    assert names == {role["name"], extra["name"]}
    ks.delete(f"/v3/roles/{role['id']}/implies/{extra['id']}")
    assert not _valid(ks, token)
    token = ks.project_token(user)
    ks.delete(f"/v3/roles/{role['id']}")
    assert not _valid(ks, token)
