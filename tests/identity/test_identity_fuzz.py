"""Whatever JSON a user sends to identity, the answer is a 2xx or a Keystone 4xx — never a
500 (hypothesis generates the bodies; the cloud is the real one)."""
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner,
                                                               max_size=3),
    max_leaves=8)

FIELDS = ["name", "domain_id", "parent_id", "enabled", "description", "tags", "password",
          "default_project_id", "type", "service_id", "interface", "url", "region_id",
          "parent_region_id", "id", "options", "is_domain", "explicit_domain_id"]
entities = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=5)

COLLECTIONS = ["projects", "users", "groups", "roles", "domains", "services", "endpoints",
               "regions"]
FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _check(r):
    assert r.status_code < 500, (r.status_code, r.text)
    if r.status_code >= 400:
        assert set(r.json()["error"]) == {"code", "message", "title"}


@FAST
@given(collection=st.sampled_from(COLLECTIONS), entity=entities)
def test_create_bodies(ks, collection, entity):
    kind = collection[:-1]
    if isinstance(entity.get("name"), str):
        entity["name"] = entity["name"] + uuid.uuid4().hex[:6]
    r = ks.post(f"/v3/{collection}", json={kind: entity})
    _check(r)
    if r.status_code == 201 and collection in ("projects", "users", "groups", "roles"):
        ks.delete(f"/v3/{collection}/{r.json()[kind]['id']}")


@FAST
@given(body=json_values)
def test_any_json_to_token_issue(ks, body):
    _check(ks.http.post("/v3/auth/tokens", json=body))
    _check(ks.http.post("/v3/auth/tokens", json={"auth": body}))
    _check(ks.http.post("/v3/auth/tokens", json={"auth": {"identity": body}}))
    _check(ks.http.post("/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": body}}}}))
    _check(ks.http.post("/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"},
            "password": ks.cloud.admin_password}}}, "scope": body}}))


_project = {}


def _fuzz_project(ks) -> dict:
    if not _project:
        _project.update(ks.create("project", name="fuzz-" + uuid.uuid4().hex[:8]))
    return _project


@FAST
@given(entity=entities, query=st.dictionaries(
    st.sampled_from(["name", "enabled", "domain_id", "parent_id", "tags", "name__icontains",
                     "user.id", "scope.project.id", "effective", "include_names",
                     "include_subtree", "group.id", "role.id"]),
    st.text(max_size=12), max_size=4))
def test_updates_and_queries(ks, entity, query):
    project = _fuzz_project(ks)
    _check(ks.patch(f"/v3/projects/{project['id']}", json={"project": {
        k: v for k, v in entity.items() if k not in ("name", "enabled")}}))
    for path in ("/v3/projects", "/v3/users", "/v3/role_assignments", "/v3/groups"):
        _check(ks.get(path, params=query))
