"""Grants (user/group × project/domain, OS-INHERIT) and GET /v3/role_assignments with
effective, include_names and include_subtree."""
from identity_helpers import assert_error, unique


def _keys(assignments):
    out = set()
    for a in assignments:
        actor = "user" if "user" in a else "group"
        target = "project" if "project" in a["scope"] else "domain"
        out.add((actor, a[actor]["id"], target, a["scope"][target]["id"], a["role"]["id"]))
    return out


def test_grant_check_list_revoke_for_users_and_groups(ks):
    project = ks.create("project", name=unique("p"))
    user, group = ks.create("user", name=unique("u")), ks.create("group", name=unique("g"))
    member = ks.role_id("member")
    for target, target_id in (("projects", project["id"]), ("domains", "default")):
        for kind, actor_id in (("users", user["id"]), ("groups", group["id"])):
            url = f"/v3/{target}/{target_id}/{kind}/{actor_id}/roles/{member}"
            assert ks.head(url).status_code == 404
            assert ks.put(url).status_code == 204
            assert ks.head(url).status_code == 204
            assert ks.get(url).status_code == 204
            roles = ks.get(url.rsplit("/", 1)[0]).json()["roles"]
            assert [r["id"] for r in roles] == [member]
            assert ks.delete(url).status_code == 204
            error = assert_error(ks.delete(url), 404)
            assert error["message"].startswith("Could not find role assignment with role:")
    assert_error(ks.put(f"/v3/projects/{project['id']}/users/nope/roles/{member}"), 404,
                 "Could not find user: nope.")
    assert_error(ks.put(f"/v3/projects/nope/users/{user['id']}/roles/{member}"), 404,
                 "Could not find project: nope.")
    assert_error(ks.put(f"/v3/projects/{project['id']}/users/{user['id']}/roles/nope"), 404,
                 "Could not find role: nope.")


def test_role_assignments_filters_effective_and_names(ks):
    project = ks.create("project", name=unique("p"))
    user, group = ks.create("user", name=unique("u")), ks.create("group", name=unique("g"))
    ks.put(f"/v3/groups/{group['id']}/users/{user['id']}")
    member, reader = ks.role_id("member"), ks.role_id("reader")
    ks.grant(project["id"], user["id"], "member")
    ks.grant(project["id"], group["id"], "reader", kind="groups")

    stored = ks.get("/v3/role_assignments",
                    params={"scope.project.id": project["id"]}).json()["role_assignments"]
    assert _keys(stored) == {("user", user["id"], "project", project["id"], member),
                             ("group", group["id"], "project", project["id"], reader)}
    link = [a for a in stored if "user" in a][0]["links"]["assignment"]
    assert link.endswith(f"/v3/projects/{project['id']}/users/{user['id']}/roles/{member}")

    effective = ks.get("/v3/role_assignments", params={
        "scope.project.id": project["id"], "effective": ""}).json()["role_assignments"]
    assert _keys(effective) == {("user", user["id"], "project", project["id"], member),
                                ("user", user["id"], "project", project["id"], reader)}
    by_user = ks.get("/v3/role_assignments", params={"user.id": user["id"], "effective": "1"})
    assert _keys(by_user.json()["role_assignments"]) == _keys(effective)
    implied = [a for a in effective if a["role"]["id"] == reader and "prior_role" in a["links"]]
    assert implied and implied[0]["links"]["prior_role"].endswith(
        f"/v3/roles/{member}/implies/{reader}")

    named = ks.get("/v3/role_assignments", params={
        "user.id": user["id"], "include_names": "True"}).json()["role_assignments"]
    assert named == [{
        "role": {"id": member, "name": "member"},
        "user": {"id": user["id"], "name": user["name"],
                 "domain": {"id": "default", "name": "Default"}},
        "scope": {"project": {"id": project["id"], "name": project["name"],
                              "domain": {"id": "default", "name": "Default"}}},
        "links": named[0]["links"]}]
    assert_error(ks.get("/v3/role_assignments", params={"group.id": group["id"],
                                                        "effective": ""}), 400)
    assert_error(ks.get("/v3/role_assignments", params={"user.id": user["id"],
                                                        "group.id": group["id"]}), 400)


def test_inherited_grants_reach_the_subtree(ks):
    parent = ks.create("project", name=unique("parent"))
    child = ks.create("project", name=unique("child"), parent_id=parent["id"])
    user = ks.create("user", name=unique("u"), password="pw")
    reader = ks.role_id("reader")
    url = (f"/v3/OS-INHERIT/projects/{parent['id']}/users/{user['id']}/roles/{reader}"
           "/inherited_to_projects")
    assert ks.put(url).status_code == 204
    assert ks.head(url).status_code == 204
    stored = ks.get("/v3/role_assignments", params={"user.id": user["id"]}).json()[
        "role_assignments"]
    assert stored[0]["scope"]["OS-INHERIT:inherited_to"] == "projects"
    effective = ks.get("/v3/role_assignments", params={"user.id": user["id"],
                                                       "effective": ""}).json()
    assert _keys(effective["role_assignments"]) == {
        ("user", user["id"], "project", child["id"], reader)}
    # The inherited role is usable on the child, not on the parent.
    assert ks.password_auth(user["name"], "pw", {"project": {"id": child["id"]}}
                            ).status_code == 201
    assert ks.password_auth(user["name"], "pw", {"project": {"id": parent["id"]}}
                            ).status_code == 401
    subtree = ks.get("/v3/role_assignments", params={
        "scope.project.id": parent["id"], "include_subtree": "", "effective": ""}).json()
    assert {a["scope"]["project"]["id"] for a in subtree["role_assignments"]} == {child["id"]}


def test_list_user_projects(ks):
    user = ks.new_user()
    token = ks.project_token(user)
    projects = ks.get(f"/v3/users/{user['id']}/projects", token=token).json()["projects"]
    assert [p["id"] for p in projects] == [user["project_id"]]
    other = ks.new_user()
    assert_error(ks.get(f"/v3/users/{other['id']}/projects", token=token), 403)
