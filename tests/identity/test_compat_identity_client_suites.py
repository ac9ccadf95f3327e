"""Identity: domain-specific role grants, projects acting as domains, the project
hierarchy views, application credential access rules and /v3/policies filters — through
python-keystoneclient and openstacksdk as the clients' own test suites call them."""
from __future__ import annotations

import datetime as dt
import re
import uuid

import pytest
from keystoneauth1 import exceptions


def _name(prefix="i22"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def keystone(cloud):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.session(), interface="public")


@pytest.fixture(scope="module")
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture(scope="module")
def member_keystone(cloud, member):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.user_session(member), interface="public")


def _error(caught) -> dict:
    body = caught.value.response.json()["error"]
    assert set(body) == {"code", "message", "title"}
    return body


# --- domain-specific roles ------------------------------------------------------------------

def test_domain_specific_role_grants(keystone):
    domain = keystone.domains.create(name=_name("dom"))
    other = keystone.domains.create(name=_name("dom"))
    role = keystone.roles.create(name=_name("drole"), domain=domain)
    user = keystone.users.create(name=_name(), domain=domain)
    group = keystone.groups.create(name=_name(), domain=domain)
    inside = keystone.projects.create(name=_name(), domain=domain)
    outside = keystone.projects.create(name=_name(), domain=other)
    # on its domain: user, group, inherited; on a project of its domain
    keystone.roles.grant(role, user=user, domain=domain)
    keystone.roles.grant(role, group=group, domain=domain)
    keystone.roles.grant(role, user=user, domain=domain, os_inherit_extension_inherited=True)
    keystone.roles.grant(role, user=user, project=inside)
    keystone.roles.check(role, user=user, domain=domain)
    assert [r.id for r in keystone.roles.list(group=group, domain=domain)] == [role.id]
    # keystone checks only project grants: another domain's project is refused
    with pytest.raises(exceptions.Forbidden) as caught:
        keystone.roles.grant(role, user=user, project=outside)
    assert _error(caught)["code"] == 403
    stored = keystone.role_assignments.list(user=user)
    assert len(stored) == 3 and all(a.role["id"] == role.id for a in stored)
    # it only implies: effective lists (and tokens) leave it out
    assert keystone.role_assignments.list(user=user, effective=True) == []
    for d in (domain, other):
        keystone.domains.update(d, enabled=False)
        keystone.domains.delete(d)


# --- projects acting as domains, hierarchy, subtree assignments --------------------------

def test_project_acting_as_domain(cloud, keystone):
    conn = cloud.sdk()
    name = _name("isdom")
    project = conn.identity.create_project(name=name, is_domain=True, description="d")
    assert project.is_domain is True and project.domain_id is None
    assert project.parent_id is None
    assert keystone.domains.get(project.id).name == name  # it is a domain
    listed = [p.id for p in conn.identity.projects(is_domain=True)]
    assert project.id in listed and "default" in listed
    assert project.id not in [p.id for p in conn.identity.projects()]
    child = keystone.projects.create(name=_name(), domain=project.id)
    assert child.parent_id == project.id and child.domain_id == project.id
    shown = keystone.projects.get(project.id)
    assert shown.is_domain is True
    with pytest.raises(exceptions.BadRequest):  # only roots act as domains
        keystone.projects.create(name=_name(), domain=project.id, is_domain=True)
    with pytest.raises(exceptions.BadRequest):
        keystone.projects.update(project.id, is_domain=False)
    renamed = keystone.projects.update(project.id, description="new")
    assert renamed.description == "new" and renamed.is_domain is True
    with pytest.raises(exceptions.Forbidden):  # an enabled domain is not deleted
        keystone.projects.delete(project.id)
    keystone.projects.update(project.id, enabled=False)
    keystone.projects.delete(project.id)
    with pytest.raises(exceptions.NotFound):
        keystone.domains.get(project.id)
    with pytest.raises(exceptions.NotFound):
        keystone.projects.get(child.id)


def test_role_assignments_subtree_of_a_domain_project(keystone):
    domain = keystone.projects.create(name=_name("isdom"), domain=None, is_domain=True)
    top = keystone.projects.create(name=_name("top"), domain=domain.id)
    leaf = keystone.projects.create(name=_name("leaf"), domain=domain.id, parent=top)
    user = keystone.users.create(name=_name(), domain=domain.id)
    member = keystone.roles.find(name="member")
    keystone.roles.grant(member, user=user, project=top)
    keystone.roles.grant(member, user=user, project=leaf)
    tree = keystone.role_assignments.list(project=domain.id, include_subtree=True)
    assert sorted(a.scope["project"]["id"] for a in tree) == sorted([top.id, leaf.id])
    below_top = keystone.role_assignments.list(project=top, include_subtree=True)
    assert len(below_top) == 2
    assert keystone.role_assignments.list(project=leaf, include_subtree=True)[0].scope == {
        "project": {"id": leaf.id}}
    with pytest.raises(exceptions.NotFound) as caught:
        keystone.role_assignments.list(project="no-such-project", include_subtree=True)
    assert _error(caught)["code"] == 404
    # parents / subtree of the same tree
    got = keystone.projects.get(leaf, parents_as_ids=True)
    assert got.parents == {top.id: {domain.id: None}}
    got = keystone.projects.get(domain.id, subtree_as_ids=True)
    assert got.subtree == {top.id: {leaf.id: None}}
    got = keystone.projects.get(top, subtree_as_ids=True, parents_as_ids=True)
    assert got.subtree == {leaf.id: None} and got.parents == {domain.id: None}
    keystone.domains.update(domain.id, enabled=False)
    keystone.domains.delete(domain.id)


def test_parents_and_subtree_as_list(cloud, keystone):
    top = keystone.projects.create(name=_name("top"), domain="default")
    mid = keystone.projects.create(name=_name("mid"), domain="default", parent=top)
    leaf = keystone.projects.create(name=_name("leaf"), domain="default", parent=mid)
    password = "pw-" + uuid.uuid4().hex
    user = keystone.users.create(name=_name(), domain="default", password=password)
    member = keystone.roles.find(name="member")
    for p in (top, leaf):  # no role on mid: the *_as_list forms leave it out
        keystone.roles.grant(member, user=user, project=p)
    from keystoneclient.v3 import client

    mine = client.Client(session=cloud.session(username=user.name, password=password,
                                               project_id=leaf.id), interface="public")
    got = mine.projects.get(leaf, parents_as_list=True)
    assert [p["project"]["id"] for p in got.parents] == [top.id]
    got = keystone.projects.get(top, subtree_as_list=True)  # admin holds no role there
    assert got.subtree == []
    on_top = client.Client(session=cloud.session(username=user.name, password=password,
                                                 project_id=top.id), interface="public")
    got = on_top.projects.get(top, subtree_as_list=True)
    assert [p["project"]["id"] for p in got.subtree] == [leaf.id]
    assert got.subtree[0]["project"]["links"]["self"].endswith(f"/v3/projects/{leaf.id}")
    # no flag: no extra keys; both forms at once: keystone's 400
    assert not hasattr(keystone.projects.get(top), "subtree")
    with pytest.raises(exceptions.BadRequest) as caught:
        keystone.projects.client.get(f"/projects/{top.id}?parents_as_list&parents_as_ids")
    assert _error(caught)["code"] == 400
    keystone.users.delete(user)
    for p in (leaf, mid, top):
        keystone.projects.delete(p)


# --- application credentials ----------------------------------------------------------------

def test_app_cred_access_rules_and_expiry(cloud, member, member_keystone):
    expires = (dt.datetime.utcnow() + dt.timedelta(days=1)).replace(microsecond=0)
    rules = [{"service": "compute", "path": "/v2.1/servers", "method": "GET"},
             {"service": "image", "path": "/v2/images/*", "method": "GET"}]
    cred = member_keystone.application_credentials.create(
        name=_name("ac"), expires_at=expires, access_rules=rules)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", cred.expires_at)
    assert [(r["service"], r["path"], r["method"]) for r in cred.access_rules] == [
        (r["service"], r["path"], r["method"]) for r in rules]
    listed = member_keystone.access_rules.list(user=member["id"])
    assert {r.id for r in listed} == {r["id"] for r in cred.access_rules}
    compute_rule = next(r for r in listed if r.service == "compute")
    assert [r.id for r in member_keystone.access_rules.list(user=member["id"],
                                                             service="image")] == [
        next(r.id for r in listed if r.service == "image")]
    # an identical rule, or one named by id, is shared, not duplicated
    second = member_keystone.application_credentials.create(
        name=_name("ac"), access_rules=[{"id": compute_rule.id}, rules[0]])
    assert [r["id"] for r in second.access_rules] == [compute_rule.id]
    assert len(member_keystone.access_rules.list(user=member["id"])) == 2
    # the token carries the rules (keystonemiddleware reads them there)
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    auth = v3.ApplicationCredential(auth_url=cloud.auth_url,
                                    application_credential_id=second.id,
                                    application_credential_secret=second.secret)
    access = session.Session(auth=auth).auth.get_access(session.Session(auth=auth))
    assert access._data["token"]["application_credential"]["access_rules"][0]["id"] == \
        compute_rule.id
    # a rule in use is not deleted; a bad rule is keystone's 400
    with pytest.raises(exceptions.Forbidden):
        member_keystone.access_rules.delete(compute_rule, user=member["id"])
    for bad in ({"service": "compute", "path": "servers", "method": "GET"},
                {"service": "compute", "path": "/x", "method": "TRACE"},
                {"path": "/x", "method": "GET"}):
        with pytest.raises(exceptions.BadRequest) as caught:
            member_keystone.application_credentials.create(name=_name(), access_rules=[bad])
        assert _error(caught)["code"] == 400
    member_keystone.application_credentials.delete(cred)
    member_keystone.application_credentials.delete(second)
    member_keystone.access_rules.delete(compute_rule, user=member["id"])
    with pytest.raises(exceptions.NotFound):
        member_keystone.access_rules.get(compute_rule, user=member["id"])


def test_access_rules_are_the_users_own(keystone, member, member_keystone):
    admin = keystone.users.find(name="admin")
    with pytest.raises(exceptions.Forbidden):
        member_keystone.access_rules.list(user=admin.id)
    assert keystone.access_rules.list(user=member["id"]) is not None


# --- policies ------------------------------------------------------------------------------

def test_policy_filters(keystone):
    tag = uuid.uuid4().hex[:8]
    a = keystone.policies.create(blob="{}", type=f"application/json-{tag}-a")
    b = keystone.policies.create(blob="{}", type=f"text/yaml-{tag}-b")
    def types(**query):
        return sorted(p.type for p in keystone.policies.list(**query)
                      if tag in p.type)
    assert types(type__contains=tag) == sorted([a.type, b.type])
    assert types(type__startswith="application/") == [a.type]
    assert types(type__endswith=f"{tag}-b") == [b.type]
    assert types(type__icontains=tag.upper()) == sorted([a.type, b.type])
    assert types(type=a.type) == [a.type]
    for p in (a, b):
        keystone.policies.delete(p)


# --- one user flow through the openstack CLI ------------------------------------------------

def test_cli_federation_and_hierarchy(cloud, keystone):
    idp_id = _name("cli-idp")
    idp = cloud.cli("identity", "provider", "create", "--remote-id", f"https://{idp_id}",
                    "--description", "from the CLI", idp_id, "-f", "json")
    assert idp["id"] == idp_id and idp["remote_ids"] == [f"https://{idp_id}"]
    assert idp["enabled"] is True  # the CLI enables it unless told otherwise
    import json
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([{"local": [{"user": {"name": "{0}"}}],
                    "remote": [{"type": "REMOTE_USER"}]}], f)
        mapping_file = f.name
    cloud.cli("mapping", "create", "--rules", mapping_file, f"{idp_id}-map")
    protocol = cloud.cli("federation", "protocol", "create", "--identity-provider", idp_id,
                         "--mapping", f"{idp_id}-map", "saml2", "-f", "json")
    assert protocol["mapping"] == f"{idp_id}-map"
    top = keystone.projects.create(name=_name("top"), domain="default")
    leaf = keystone.projects.create(name=_name("leaf"), domain="default", parent=top)
    # the CLI's --parents/--children ask for the *_as_ids forms
    shown = cloud.cli("project", "show", "--parents", "--children", top.id, "-f", "json")
    assert shown["subtree"] == {leaf.id: None} and shown["parents"] == {"default": None}
    cloud.cli("identity", "provider", "delete", idp_id)
    keystone.federation.mappings.delete(f"{idp_id}-map")
    for p in (leaf, top):
        keystone.projects.delete(p)
