"""Identity: OS-EP-FILTER, OS-FEDERATION, OS-OAUTH1 consumers and domain-specific
configuration through python-keystoneclient, openstacksdk and a keystoneauth session, with
keystone's error bodies for what they refuse."""
from __future__ import annotations

import uuid

import pytest
from keystoneauth1 import exceptions


def _name(prefix="ext"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def keystone(cloud):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.session(), interface="public")


@pytest.fixture(scope="module")
def conn(cloud):
    return cloud.sdk()


@pytest.fixture(scope="module")
def member_keystone(cloud):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.user_session(cloud.make_user()), interface="public")


def _error(caught, code: int) -> str:
    body = caught.value.response.json()["error"]
    assert set(body) == {"code", "message", "title"} and body["code"] == code
    return body["message"]


# --- OS-EP-FILTER ---------------------------------------------------------------------------

def test_project_endpoints(keystone, conn, member_keystone):
    project = keystone.projects.create(name=_name(), domain="default")
    service = keystone.services.create(name=_name(), type=_name("type"))
    public = keystone.endpoints.create(service, "http://ep.example/public", "public",
                                       region="RegionOne")
    internal = keystone.endpoints.create(service, "http://ep.example/int", "internal")
    ef = keystone.endpoint_filter
    ef.add_endpoint_to_project(project, public)
    ef.check_endpoint_in_project(project, public)
    with pytest.raises(exceptions.Conflict):
        ef.add_endpoint_to_project(project, public)
    with pytest.raises(exceptions.NotFound):
        ef.check_endpoint_in_project(project, internal)
    assert [e.id for e in ef.list_endpoints_for_project(project)] == [public.id]
    assert [p.id for p in ef.list_projects_for_endpoint(public)] == [project.id]
    assert [e.id for e in conn.identity.project_endpoints(project.id)] == [public.id]
    with pytest.raises(exceptions.NotFound) as caught:
        ef.add_endpoint_to_project("no-such-project", public)
    _error(caught, 404)
    with pytest.raises(exceptions.Forbidden):
        member_keystone.endpoint_filter.list_endpoints_for_project(project)
    # an endpoint group adds what its filters match
    group = keystone.endpoint_groups.create(name=_name("eg"), description="internal only",
                                            filters={"service_id": service.id,
                                                     "interface": "internal"})
    assert group.filters == {"service_id": service.id, "interface": "internal"}
    _, body = keystone.endpoint_groups.client.get(
        f"/OS-EP-FILTER/endpoint_groups/{group.id}/endpoints")
    assert [e["id"] for e in body["endpoints"]] == [internal.id]
    ef.add_endpoint_group_to_project(group, project)
    ef.check_endpoint_group_in_project(group, project)
    with pytest.raises(exceptions.Conflict):
        ef.add_endpoint_group_to_project(group, project)
    assert sorted(e.id for e in ef.list_endpoints_for_project(project)) == sorted(
        [public.id, internal.id])
    assert [g.id for g in ef.list_endpoint_groups_for_project(project)] == [group.id]
    assert [p.id for p in ef.list_projects_for_endpoint_group(group)] == [project.id]
    updated = keystone.endpoint_groups.update(group, filters={"service_id": service.id})
    assert updated.filters == {"service_id": service.id}
    with pytest.raises(exceptions.BadRequest) as caught:  # keystone's three filter keys
        keystone.endpoint_groups.create(name=_name(), filters={"url": "x"})
    _error(caught, 400)
    with pytest.raises(exceptions.BadRequest):
        keystone.endpoint_groups.create(name=_name(), filters={})
    ef.delete_endpoint_group_from_project(group, project)
    with pytest.raises(exceptions.NotFound):
        ef.check_endpoint_group_in_project(group, project)
    ef.delete_endpoint_from_project(project, public)
    assert ef.list_endpoints_for_project(project) == []
    keystone.endpoint_groups.delete(group)
    with pytest.raises(exceptions.NotFound):
        keystone.endpoint_groups.get(group)
    # a deleted project takes its associations along
    ef.add_endpoint_to_project(project, internal)
    keystone.projects.delete(project)
    assert ef.list_projects_for_endpoint(internal) == []
    keystone.services.delete(service)


# --- OS-FEDERATION ------------------------------------------------------------------------

RULES = [{"local": [{"user": {"name": "{0}"}}, {"group": {"id": "g1"}}],
          "remote": [{"type": "REMOTE_USER"}, {"type": "GROUPS", "any_one_of": ["admins"]}]}]


def test_identity_providers_protocols_mappings(keystone, conn):
    fed = keystone.federation
    idp_id = _name("idp")
    idp = fed.identity_providers.create(id=idp_id, remote_ids=["https://idp.example/x"],
                                        description="test idp", enabled=True)
    assert (idp.id, idp.enabled, idp.remote_ids) == (idp_id, True, ["https://idp.example/x"])
    auto = keystone.domains.get(idp.domain_id)  # keystone made a domain for its users
    assert idp_id in auto.description
    with pytest.raises(exceptions.Conflict):
        fed.identity_providers.create(id=idp_id)
    with pytest.raises(exceptions.Conflict):  # a remote id belongs to one provider
        fed.identity_providers.create(id=_name("idp"), remote_ids=["https://idp.example/x"])
    with pytest.raises(exceptions.NotFound):
        fed.identity_providers.create(id=_name("idp"), domain_id="no-such-domain")
    sdk_idp = conn.identity.get_identity_provider(idp_id)
    assert sdk_idp.is_enabled and sdk_idp.domain_id == idp.domain_id
    assert idp_id in [i.id for i in fed.identity_providers.list(enabled=True)]
    updated = fed.identity_providers.update(idp_id, remote_ids=["a", "b"], enabled=False)
    assert (sorted(updated.remote_ids), updated.enabled) == (["a", "b"], False)
    with pytest.raises(exceptions.BadRequest):  # the domain never changes
        fed.identity_providers.update(idp_id, domain_id="default")

    mapping_id = _name("map")
    mapping = fed.mappings.create(mapping_id=mapping_id, rules=RULES)
    assert mapping.rules == RULES and mapping.schema_version == "1.0"
    assert mapping_id in [m.id for m in conn.identity.mappings()]
    with pytest.raises(exceptions.BadRequest) as caught:
        fed.mappings.create(mapping_id=_name("map"), rules=[{"local": []}])
    _error(caught, 400)
    with pytest.raises(exceptions.BadRequest):
        fed.mappings.create(mapping_id=_name("map"), rules=RULES, schema_version="9.9")
    fed.mappings.update(mapping_id, rules=RULES[:1], schema_version="2.0")

    protocol = fed.protocols.create("saml2", identity_provider=idp_id, mapping=mapping_id)
    assert (protocol.id, protocol.mapping_id) == ("saml2", mapping_id)
    assert protocol.links["identity_provider"].endswith(f"/identity_providers/{idp_id}")
    with pytest.raises(exceptions.BadRequest):  # keystone: Invalid mapping id
        fed.protocols.create("oidc", identity_provider=idp_id, mapping="no-such-mapping")
    with pytest.raises(exceptions.NotFound):
        fed.protocols.create("oidc", identity_provider="no-such-idp", mapping=mapping_id)
    assert [p.id for p in conn.identity.federation_protocols(idp_id)] == ["saml2"]
    fed.protocols.update(idp_id, "saml2", mapping=mapping_id)
    fed.protocols.delete(idp_id, "saml2")
    with pytest.raises(exceptions.NotFound):
        fed.protocols.get(idp_id, "saml2")
    fed.identity_providers.delete(idp_id)
    fed.mappings.delete(mapping_id)
    with pytest.raises(exceptions.NotFound) as caught:
        fed.identity_providers.get(idp_id)
    _error(caught, 404)


def test_service_providers(keystone, conn, member_keystone):
    sps = keystone.federation.service_providers
    sp_id = _name("sp")
    sp = sps.create(id=sp_id, auth_url="https://sp.example/v3/OS-FEDERATION/x/auth",
                    sp_url="https://sp.example/Shibboleth.sso/SAML2/ECP")
    assert (sp.enabled, sp.relay_state_prefix) == (False, "ss:mem:")
    assert conn.identity.get_service_provider(sp_id).sp_url == sp.sp_url
    updated = sps.update(sp_id, enabled=True, description="d")
    assert (updated.enabled, updated.description) == (True, "d")
    with pytest.raises(exceptions.BadRequest):
        sps.create(id=_name("sp"), auth_url="not a url", sp_url="https://x")
    with pytest.raises(exceptions.Conflict):
        sps.create(id=sp_id, auth_url=sp.auth_url, sp_url=sp.sp_url)
    with pytest.raises(exceptions.Forbidden):
        member_keystone.federation.service_providers.list()
    sps.delete(sp_id)
    assert sp_id not in [s.id for s in sps.list()]


# --- OS-OAUTH1 consumers (keystoneclient's manager needs oauthlib: a keystoneauth session) --

def test_oauth1_consumers(cloud):
    ks = cloud.session()
    ep = {"service_type": "identity", "interface": "public", "version": (3, 0)}

    def call(method, path, **kw):
        return ks.request(f"/OS-OAUTH1/consumers{path}", method, endpoint_filter=ep,
                          raise_exc=False, **kw)
    created = call("POST", "", json={"consumer": {"description": "ci"}})
    assert created.status_code == 201
    consumer = created.json()["consumer"]
    assert consumer["secret"] and consumer["description"] == "ci"
    shown = call("GET", f"/{consumer['id']}").json()["consumer"]
    assert "secret" not in shown and shown["links"]["self"].endswith(consumer["id"])
    assert consumer["id"] in [c["id"] for c in call("GET", "").json()["consumers"]]
    r = call("PATCH", f"/{consumer['id']}", json={"consumer": {"description": "new"}})
    assert r.json()["consumer"]["description"] == "new"
    r = call("PATCH", f"/{consumer['id']}", json={"consumer": {"secret": "x"}})
    assert r.status_code == 400 and r.json()["error"]["code"] == 400
    assert call("DELETE", f"/{consumer['id']}").status_code == 204
    r = call("GET", f"/{consumer['id']}")
    assert r.status_code == 404 and r.json()["error"]["title"] == "Not Found"
    member = cloud.user_session(cloud.make_user())
    r = member.request("/OS-OAUTH1/consumers", "GET", endpoint_filter=ep, raise_exc=False)
    assert r.status_code == 403


# --- domain-specific configuration -----------------------------------------------------------

def test_domain_config(keystone, conn):
    domain = keystone.domains.create(name=_name("cfgdom"))
    config = {"identity": {"driver": "ldap"},
              "ldap": {"url": "ldap://ldap.example", "user_tree_dn": "ou=Users",
                       "password": "s3cret"}}
    created = keystone.domain_configs.create(domain, config)
    assert created.ldap == {"url": "ldap://ldap.example", "user_tree_dn": "ou=Users"}
    shown = conn.identity.get_domain_config(domain.id)
    assert shown.identity.driver == "ldap" and shown.ldap.url == "ldap://ldap.example"
    updated = keystone.domain_configs.update(domain, {"ldap": {"url": "ldap://other"}})
    assert updated.ldap["url"] == "ldap://other" and updated.ldap["user_tree_dn"] == "ou=Users"
    raw = keystone.domain_configs.client
    assert raw.get(f"/domains/{domain.id}/config/ldap/url")[1]["config"] == {
        "url": "ldap://other"}
    assert raw.get(f"/domains/{domain.id}/config/identity")[1]["config"] == {
        "identity": {"driver": "ldap"}}
    defaults = raw.get("/domains/config/default")[1]["config"]
    assert defaults["identity"]["driver"] == "sql" and "password" not in defaults["ldap"]
    assert raw.get("/domains/config/ldap/url/default")[1]["config"] == {
        "url": "ldap://localhost"}
    compliance = raw.get("/domains/default/config/security_compliance")[1]["config"]
    assert set(compliance["security_compliance"]) == {"password_regex",
                                                       "password_regex_description"}
    with pytest.raises(exceptions.Forbidden) as caught:  # keystone's InvalidDomainConfig
        keystone.domain_configs.create(domain, {"catalog": {"driver": "x"}})
    assert "not supported" in _error(caught, 403)
    with pytest.raises(exceptions.Forbidden):
        keystone.domain_configs.update(domain, {"ldap": {"no_such_option": 1}})
    raw.delete(f"/domains/{domain.id}/config/ldap/url")
    with pytest.raises(exceptions.NotFound) as caught:
        raw.get(f"/domains/{domain.id}/config/ldap/url")
    _error(caught, 404)
    # PUT again replaces (200: a config was there)
    resp, body = raw.put(f"/domains/{domain.id}/config",
                         body={"config": {"identity": {"driver": "sql"}}})
    assert resp.status_code == 200 and body["config"] == {"identity": {"driver": "sql"}}
    keystone.domain_configs.delete(domain)
    with pytest.raises(exceptions.NotFound):
        keystone.domain_configs.get(domain)
    with pytest.raises(exceptions.NotFound):
        keystone.domain_configs.get("no-such-domain")
    keystone.domains.update(domain, enabled=False)
    keystone.domains.delete(domain)


# --- EC2 / S3 credentials validated by /v3/ec2tokens and /v3/s3tokens ----------------------

def _post(session, path, body):
    return session.post(path, json=body, raise_exc=False, endpoint_filter={
        "service_type": "identity", "interface": "public", "version": (3, 0)})


def test_ec2tokens(cloud, keystone):
    import hashlib

    from keystoneclient.contrib.ec2.utils import Ec2Signer

    user = cloud.make_user(roles=("member",))
    ec2 = keystone.ec2.create(user["id"], user["project_id"])
    admin = cloud.session()
    v2 = {"access": ec2.access, "host": "ec2.example:8773", "verb": "GET", "path": "/",
          "params": {"SignatureVersion": "2", "Action": "DescribeInstances",
                     "AWSAccessKeyId": ec2.access}}
    v2["signature"] = Ec2Signer(ec2.secret).generate(dict(v2, params=dict(v2["params"])))
    r = _post(admin, "/ec2tokens", {"credentials": v2})
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    assert token["user"]["id"] == user["id"] and token["project"]["id"] == user["project_id"]
    assert token["methods"] == ["ec2credential"] and "member" in [
        role["name"] for role in token["roles"]]
    assert r.headers["X-Subject-Token"]
    # the token works like any other
    validated = admin.get("/auth/tokens", headers={"X-Subject-Token":
                                                   r.headers["X-Subject-Token"]},
                          endpoint_filter={"service_type": "identity", "version": (3, 0)})
    assert validated.json()["token"]["user"]["id"] == user["id"]
    # v4, as botocore signs
    body_hash = hashlib.sha256(b"").hexdigest()
    date = "20300101T000000Z"
    v4 = {"access": ec2.access, "host": "ec2.example", "verb": "GET", "path": "/",
          "params": {"Action": "DescribeInstances"}, "body_hash": body_hash,
          "headers": {"Host": "ec2.example", "X-Amz-Date": date, "Authorization":
                      f"AWS4-HMAC-SHA256 Credential={ec2.access}/20300101/RegionOne/ec2/"
                      "aws4_request, SignedHeaders=host;x-amz-date, Signature=x"}}
    v4["signature"] = Ec2Signer(ec2.secret).generate(v4)
    assert _post(admin, "/ec2tokens", {"ec2Credentials": v4}).status_code == 200
    # wrong signature, unknown key, nothing to check: keystone's 401/404/400
    r = _post(admin, "/ec2tokens", {"credentials": dict(v2, signature="bad")})
    assert r.status_code == 401 and r.json()["error"]["code"] == 401
    r = _post(admin, "/ec2tokens", {"credentials": dict(v2, access="nope")})
    assert r.status_code == 404 and r.json()["error"]["code"] == 404
    assert _post(admin, "/ec2tokens", {"credentials": {}}).status_code == 401
    assert _post(admin, "/ec2tokens", {}).status_code == 400
    stale = dict(v2, params=dict(v2["params"], Timestamp="2001-01-01T00:00:00Z"))
    stale["signature"] = Ec2Signer(ec2.secret).generate(dict(stale,
                                                             params=dict(stale["params"])))
    assert _post(admin, "/ec2tokens", {"credentials": stale}).status_code == 401
    # only admins and services validate signatures (keystone's 2025 default)
    member = cloud.user_session(user)
    assert _post(member, "/ec2tokens", {"credentials": v2}).status_code == 403
    keystone.ec2.delete(user["id"], ec2.access)


def test_s3tokens(cloud, keystone):
    import base64
    import hashlib
    import hmac

    user = cloud.make_user(roles=("member",))
    ec2 = keystone.ec2.create(user["id"], user["project_id"])
    to_sign = b"GET\n\n\nTue, 27 Nov 2026 11:00:00 GMT\n/bucket/key"
    signature = base64.b64encode(hmac.new(ec2.secret.encode(), to_sign,
                                          hashlib.sha1).digest()).decode()
    body = {"credentials": {"access": ec2.access, "signature": signature,
                            "token": base64.urlsafe_b64encode(to_sign).decode()}}
    admin = cloud.session()
    r = _post(admin, "/s3tokens", body)
    assert r.status_code == 200, r.text
    assert r.json()["token"]["project"]["id"] == user["project_id"]
    body["credentials"]["signature"] = "forged"
    r = _post(admin, "/s3tokens", body)
    assert r.status_code == 401 and r.json()["error"]["message"] == (
        "Credential signature mismatch")
    keystone.ec2.delete(user["id"], ec2.access)
