"""CRUD with Keystone's shapes, filters and links: domains, projects, users, groups, roles,
implied roles, services, endpoints and regions (through openstacksdk where it helps)."""
from identity_helpers import assert_error, unique


def test_collections_have_links_and_members_self_links(ks):
    for kind in ("domains", "projects", "users", "groups", "roles", "services", "endpoints",
                 "regions"):
        body = ks.get(f"/v3/{kind}").json()
        assert set(body) == {kind, "links"}
        assert body["links"]["self"].endswith(f"/v3/{kind}")
        assert body["links"]["previous"] is None and body["links"]["next"] is None
        for item in body[kind]:
            assert item["links"]["self"].endswith(f"/v3/{kind}/{item['id']}")
    assert ks.get("/v3/projects?name=admin").json()["links"]["self"].endswith(
        "/v3/projects?name=admin")


def test_domain_crud_and_filters(ks):
    name = unique("dom")
    domain = ks.create("domain", name=name, description="d", tags=["a"])
    assert domain["enabled"] is True and domain["tags"] == ["a"] and domain["options"] == {}
    found = ks.get("/v3/domains", params={"name": name}).json()["domains"]
    assert [d["id"] for d in found] == [domain["id"]]
    r = ks.patch(f"/v3/domains/{domain['id']}", json={"domain": {"description": "new"}})
    assert r.json()["domain"]["description"] == "new"
    assert ks.get("/v3/domains", params={"name": name, "enabled": "false"}).json()[
        "domains"] == []
    assert_error(ks.post("/v3/domains", json={"domain": {"name": name}}), 409)


def test_project_crud_hierarchy_and_filters(ks):
    parent = ks.create("project", name=unique("parent"), tags=["blue", "red"])
    assert parent["parent_id"] == "default" and parent["domain_id"] == "default"
    assert parent["is_domain"] is False and parent["enabled"] is True
    child = ks.create("project", name=unique("child"), parent_id=parent["id"], color="green")
    assert child["parent_id"] == parent["id"] and child["color"] == "green"
    listed = ks.get("/v3/projects", params={"parent_id": parent["id"]}).json()["projects"]
    assert [p["id"] for p in listed] == [child["id"]]
    tagged = ks.get("/v3/projects", params={"tags": "blue,red"}).json()["projects"]
    assert parent["id"] in {p["id"] for p in tagged} and child["id"] not in {
        p["id"] for p in tagged}
    not_tagged = ks.get("/v3/projects", params={"not-tags-any": "blue"}).json()["projects"]
    assert parent["id"] not in {p["id"] for p in not_tagged}
    contains = ks.get("/v3/projects", params={"name__contains": "child-"}).json()["projects"]
    assert child["id"] in {p["id"] for p in contains}
    # Disabling a parent with an enabled child is refused; a non-leaf cannot be deleted.
    assert_error(ks.patch(f"/v3/projects/{parent['id']}",
                          json={"project": {"enabled": False}}), 403)
    assert_error(ks.delete(f"/v3/projects/{parent['id']}"), 403)
    assert_error(ks.patch(f"/v3/projects/{child['id']}",
                          json={"project": {"domain_id": "other"}}), 400)
    r = ks.patch(f"/v3/projects/{child['id']}", json={"project": {"enabled": False}})
    assert r.status_code == 200 and r.json()["project"]["enabled"] is False
    assert ks.get("/v3/projects", params={"enabled": "false", "parent_id": parent["id"]}
                  ).json()["projects"][0]["id"] == child["id"]
    assert ks.delete(f"/v3/projects/{parent['id']}?cascade").status_code == 204
    assert_error(ks.get(f"/v3/projects/{child['id']}"), 404)


def test_project_tags_api(ks):
    project = ks.create("project", name=unique("p"))
    base = f"/v3/projects/{project['id']}/tags"
    assert ks.get(base).json() == {"tags": []}
    assert ks.put(base, json={"tags": ["a", "b"]}).json() == {"tags": ["a", "b"]}
    assert ks.put(f"{base}/c").status_code == 201
    assert ks.get(f"{base}/c").status_code == 204
    assert ks.head(f"{base}/c").status_code == 204
    assert_error(ks.get(f"{base}/zzz"), 404, "Could not find project tag: zzz.")
    assert ks.delete(f"{base}/a").status_code == 204
    assert sorted(ks.get(base).json()["tags"]) == ["b", "c"]
    assert_error(ks.put(base, json={"tags": ["has,comma"]}), 400)
    assert ks.delete(base).status_code == 204
    assert ks.get(f"/v3/projects/{project['id']}").json()["project"]["tags"] == []


def test_user_crud(ks):
    project = ks.create("project", name=unique("p"))
    user = ks.create("user", name=unique("u"), password="pw-1", email="a@example.com",
                     default_project_id=project["id"], description="tester")
    assert user["email"] == "a@example.com" and user["default_project_id"] == project["id"]
    assert user["enabled"] is True and user["password_expires_at"] is None
    assert "password" not in user
    r = ks.patch(f"/v3/users/{user['id']}", json={"user": {"email": "b@example.com"}})
    assert r.json()["user"]["email"] == "b@example.com"
    found = ks.get("/v3/users", params={"name": user["name"]}).json()["users"]
    assert [u["id"] for u in found] == [user["id"]]
    assert ks.get("/v3/users", params={"domain_id": "nope"}).json()["users"] == []
    assert_error(ks.post("/v3/users", json={"user": {"name": unique("u"),
                                                     "domain_id": "nope"}}), 404)
    assert ks.delete(f"/v3/users/{user['id']}").status_code == 204
    assert_error(ks.get(f"/v3/users/{user['id']}"), 404)


def test_groups_and_membership(ks):
    group = ks.create("group", name=unique("g"), description="devs")
    user = ks.create("user", name=unique("u"))
    member = f"/v3/groups/{group['id']}/users/{user['id']}"
    assert_error(ks.head(member), 404) if False else None
    assert ks.head(member).status_code == 404
    assert ks.put(member).status_code == 204
    assert ks.head(member).status_code == 204
    assert [u["id"] for u in ks.get(f"/v3/groups/{group['id']}/users").json()["users"]] == [
        user["id"]]
    assert [g["id"] for g in ks.get(f"/v3/users/{user['id']}/groups").json()["groups"]] == [
        group["id"]]
    assert ks.delete(member).status_code == 204
    assert ks.get(f"/v3/groups/{group['id']}/users").json()["users"] == []
    assert_error(ks.put(f"/v3/groups/{group['id']}/users/nope"), 404)
    r = ks.patch(f"/v3/groups/{group['id']}", json={"group": {"name": group["name"] + "x"}})
    assert r.json()["group"]["name"] == group["name"] + "x"
    assert ks.delete(f"/v3/groups/{group['id']}").status_code == 204


def test_roles_global_and_domain_specific(ks):
    domain = ks.create("domain", name=unique("d"))
    role = ks.create("role", name=unique("r"), description="x")
    assert role["domain_id"] is None and role["options"] == {}
    droles = ks.create("role", name=role["name"], domain_id=domain["id"])  # same name: fine
    assert droles["domain_id"] == domain["id"]
    names = {r["name"] for r in ks.get("/v3/roles").json()["roles"]}
    assert {"admin", "member", "reader", role["name"]} <= names
    assert droles["id"] not in {r["id"] for r in ks.get("/v3/roles").json()["roles"]}
    listed = ks.get("/v3/roles", params={"domain_id": domain["id"]}).json()["roles"]
    assert [r["id"] for r in listed] == [droles["id"]]
    # A domain-specific role can only be granted inside its domain.
    project = ks.create("project", name=unique("p"))
    user = ks.create("user", name=unique("u"))
    assert_error(ks.put(f"/v3/projects/{project['id']}/users/{user['id']}/roles/"
                        f"{droles['id']}"), 403)
    assert ks.delete(f"/v3/roles/{role['id']}").status_code == 204


def test_implied_roles_and_inferences(ks):
    prior, implied = ks.create("role", name=unique("prior")), ks.create("role", name=unique("i"))
    url = f"/v3/roles/{prior['id']}/implies/{implied['id']}"
    r = ks.put(url)
    assert r.status_code == 201
    body = r.json()
    assert body["role_inference"]["prior_role"]["id"] == prior["id"]
    assert body["role_inference"]["implies"]["id"] == implied["id"]
    assert body["links"]["self"].endswith(url)
    assert ks.head(url).status_code == 204
    assert ks.get(url).json() == body
    listed = ks.get(f"/v3/roles/{prior['id']}/implies").json()["role_inference"]
    assert [r["id"] for r in listed["implies"]] == [implied["id"]]
    rules = ks.get("/v3/role_inferences").json()["role_inferences"]
    assert any(x["prior_role"]["id"] == prior["id"] for x in rules)
    assert any(x["prior_role"]["name"] == "member" and
               [i["name"] for i in x["implies"]] == ["reader"] for x in rules)
    # admin cannot be implied; cycles are refused.
    assert_error(ks.put(f"/v3/roles/{prior['id']}/implies/{ks.role_id('admin')}"), 403)
    assert_error(ks.put(f"/v3/roles/{implied['id']}/implies/{prior['id']}"), 403)
    assert ks.delete(url).status_code == 204
    assert ks.head(url).status_code == 404


def test_services_endpoints_regions_and_catalog_cache(ks):
    region = ks.post("/v3/regions", json={"region": {"id": unique("Region"),
                                                     "description": "x"}}).json()["region"]
    sub = ks.put(f"/v3/regions/{unique('sub')}", json={"region": {
        "parent_region_id": region["id"]}}).json()["region"]
    assert sub["parent_region_id"] == region["id"]
    assert_error(ks.post("/v3/regions", json={"region": {"id": region["id"]}}), 409)
    service = ks.create("service", type=unique("type"), name="thing", description="d")
    assert service["enabled"] is True
    endpoint = ks.create("endpoint", service_id=service["id"], interface="public",
                         url="http://127.0.0.1:9/thing", region_id=region["id"])
    assert endpoint["region"] == endpoint["region_id"] == region["id"]
    assert_error(ks.post("/v3/endpoints", json={"endpoint": {
        "service_id": "nope", "interface": "public", "url": "http://x/"}}), 400)
    assert_error(ks.post("/v3/endpoints", json={"endpoint": {
        "service_id": service["id"], "interface": "sideways", "url": "http://x/"}}), 400)
    listed = ks.get("/v3/endpoints", params={"service_id": service["id"]}).json()["endpoints"]
    assert [e["id"] for e in listed] == [endpoint["id"]]

    def catalog_types(token):
        return {c["type"]: c for c in ks.get("/v3/auth/catalog", token=token).json()["catalog"]}

    token = ks.admin_token
    assert catalog_types(token)[service["type"]]["endpoints"][0]["url"].endswith("/thing")
    ks.patch(f"/v3/endpoints/{endpoint['id']}", json={"endpoint": {"url": "http://x:9/new"}})
    assert catalog_types(token)[service["type"]]["endpoints"][0]["url"] == "http://x:9/new"
    assert_error(ks.delete(f"/v3/regions/{region['id']}"), 403)
    assert ks.delete(f"/v3/services/{service['id']}").status_code == 204
    assert service["type"] not in catalog_types(token)
    assert ks.delete(f"/v3/regions/{region['id']}").status_code == 204
    assert_error(ks.get(f"/v3/regions/{sub['id']}"), 404)


def test_sdk_finds_projects_roles_and_domains_by_name(cloud, ks):
    conn = cloud.sdk()
    name = unique("p")
    ks.create("project", name=name)
    assert conn.identity.find_project(name).name == name
    assert conn.identity.find_role("member").name == "member"
    assert conn.identity.find_domain("Default").id == "default"
