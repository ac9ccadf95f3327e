"""Who may do what: admin everything; users themselves; domain readers and managers their
own domain; never another domain's or another user's private data."""
import pathlib
import re

from identity_helpers import assert_error, unique


def test_every_policy_a_handler_checks_is_registered():
    from pocketstack.identity import policies

    rest = pathlib.Path(policies.__file__).parent / "rest"
    used = set()
    for path in rest.glob("*.py"):
        used |= set(re.findall(r'"(identity:[a-z_]+)"', path.read_text()))
    registered = {rule.name for rule in policies.list_rules()}
    assert used and used <= registered, used - registered


def test_a_member_reads_itself_but_not_others(ks):
    alice, bob = ks.new_user(), ks.new_user()
    token = ks.project_token(alice)
    assert ks.get(f"/v3/users/{alice['id']}", token=token).status_code == 200
    assert_error(ks.get(f"/v3/users/{bob['id']}", token=token), 403)
    assert_error(ks.get("/v3/users", token=token), 403)
    assert_error(ks.get("/v3/projects", token=token), 403)
    assert ks.get(f"/v3/projects/{alice['project_id']}", token=token).status_code == 200
    assert_error(ks.get(f"/v3/projects/{bob['project_id']}", token=token), 403)
    assert ks.get("/v3/domains/default", token=token).status_code == 200
    assert_error(ks.get("/v3/domains", token=token), 403)
    assert_error(ks.patch(f"/v3/users/{alice['id']}", token=token,
                          json={"user": {"enabled": False}}), 403)
    assert_error(ks.get("/v3/role_assignments", token=token), 403)
    assert_error(ks.put(f"/v3/projects/{alice['project_id']}/users/{alice['id']}/roles/"
                        f"{ks.role_id('admin')}", token=token), 403)
    assert ks.get("/v3/regions", token=token).status_code == 200


def test_domain_reader_sees_its_domain_only(ks):
    dom_a, dom_b = ks.create("domain", name=unique("a")), ks.create("domain", name=unique("b"))
    in_a = ks.create("user", name=unique("u"), domain_id=dom_a["id"])
    in_b = ks.create("user", name=unique("u"), domain_id=dom_b["id"])
    reader = ks.create("user", name=unique("r"), domain_id=dom_a["id"], password="pw")
    ks.grant(dom_a["id"], reader["id"], "reader", target="domains")
    token = ks.token(reader["name"], "pw", {"domain": {"id": dom_a["id"]}},
                     domain_id=dom_a["id"])
    listed = ks.get("/v3/users", token=token).json()["users"]
    assert {u["id"] for u in listed} == {in_a["id"], reader["id"]}
    assert_error(ks.get("/v3/users", token=token, params={"domain_id": dom_b["id"]}), 403)
    assert ks.get(f"/v3/users/{in_a['id']}", token=token).status_code == 200
    assert_error(ks.get(f"/v3/users/{in_b['id']}", token=token), 403)
    assert_error(ks.post("/v3/users", token=token, json={"user": {"name": "x"}}), 403)
    assignments = ks.get("/v3/role_assignments", token=token).json()["role_assignments"]
    assert assignments and all(a["scope"].get("domain", {}).get("id") == dom_a["id"]
                               for a in assignments)


def test_domain_manager_manages_its_domain(ks):
    dom_a, dom_b = ks.create("domain", name=unique("a")), ks.create("domain", name=unique("b"))
    manager = ks.create("user", name=unique("m"), domain_id=dom_a["id"], password="pw")
    ks.grant(dom_a["id"], manager["id"], "manager", target="domains")
    token = ks.token(manager["name"], "pw", {"domain": {"id": dom_a["id"]}},
                     domain_id=dom_a["id"])
    r = ks.post("/v3/users", token=token, json={"user": {"name": unique("u")}})
    assert r.status_code == 201 and r.json()["user"]["domain_id"] == dom_a["id"]
    new_user = r.json()["user"]
    project = ks.post("/v3/projects", token=token, json={"project": {"name": unique("p")}})
    assert project.status_code == 201
    project = project.json()["project"]
    member = ks.role_id("member")
    grant = f"/v3/projects/{project['id']}/users/{new_user['id']}/roles/{member}"
    assert ks.put(grant, token=token).status_code == 204
    admin_grant = f"/v3/projects/{project['id']}/users/{new_user['id']}/roles/" \
                  f"{ks.role_id('admin')}"
    assert_error(ks.put(admin_grant, token=token), 403)
    assert_error(ks.post("/v3/users", token=token, json={"user": {
        "name": unique("u"), "domain_id": dom_b["id"]}}), 403)
    assert_error(ks.post("/v3/projects", token=token, json={"project": {
        "name": unique("p"), "domain_id": dom_b["id"]}}), 403)
    assert_error(ks.post("/v3/domains", token=token, json={"domain": {"name": "x"}}), 403)
