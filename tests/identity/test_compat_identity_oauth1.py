"""OS-OAUTH1 delegation as keystone serves it: python-keystoneclient's oauth1 manager asks
for a request token, the user authorizes it, the consumer trades it for an access token;
keystoneauth1's OAuth1 plugin (keystoneauth1.extras.oauth1) gets tokens with it; the
user's access tokens are listed, shown and deleted in Tempest's request shapes; wrong
signatures, verifiers and secrets answer keystone's 401s."""
from __future__ import annotations

import pytest
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session
from keystoneauth1.extras.oauth1 import v3 as ks_oauth1


@pytest.fixture(scope="module")
def keystone(cloud):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.session(), interface="public")


@pytest.fixture(scope="module")
def owner(cloud):
    """keystone's defaults let admins authorize request tokens."""
    return cloud.make_user(roles=("admin", "member", "reader"))


def _client(cloud, user):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.user_session(user), interface="public")


def _role_id(keystone, name):
    return next(r.id for r in keystone.roles.list(name=name))


def _oauth_session(cloud, consumer, access, **kw) -> session.Session:
    # the plugin signs <auth_url>/auth/tokens: the versioned identity URL, as keystone needs
    return session.Session(auth=ks_oauth1.OAuth1(
        cloud.auth_url + "/v3", consumer_key=consumer.id, consumer_secret=consumer.secret,
        access_key=access.key, access_secret=access.secret, **kw))


def _delegate(cloud, keystone, owner, roles=("member",)):
    """consumer -> request token -> authorized -> access token; what each step gave."""
    mine = _client(cloud, owner)
    consumer = keystone.oauth1.consumers.create(description="delegate")
    request = keystone.oauth1.request_tokens.create(consumer.id, consumer.secret,
                                                    owner["project_id"])
    authorized = mine.oauth1.request_tokens.authorize(
        request.key, [_role_id(keystone, r) for r in roles])
    verifier = authorized.oauth_verifier
    access = keystone.oauth1.access_tokens.create(consumer.id, consumer.secret, request.key,
                                                  request.secret, verifier)
    return consumer, request, verifier, access


def test_oauth1_delegation_end_to_end(cloud, keystone, owner):
    consumer, request, verifier, access = _delegate(cloud, keystone, owner)
    assert len(request.key) == 32 and request.expires and len(verifier) == 8
    # a token for the owner on the project, with the delegated role and what it implies
    delegated = _oauth_session(cloud, consumer, access)
    ref = delegated.auth.get_access(delegated)
    assert ref.user_id == owner["id"] and ref.project_id == owner["project_id"]
    assert "member" in ref.role_names and "admin" not in ref.role_names
    body = delegated.get(cloud.auth_url + "/v3/auth/tokens", headers={
        "X-Subject-Token": ref.auth_token}).json()["token"]
    assert body["OS-OAUTH1"] == {"access_token_id": access.key, "consumer_id": consumer.id}
    assert body["methods"] == ["oauth1"]
    # the token works against another service, as the owner on the project
    listed = delegated.get(cloud.url + "/compute/v2.1/servers")
    assert listed.status_code == 200
    # it may not be rescoped, nor delegate further
    rescope = {"auth": {"identity": {"methods": ["token"], "token": {"id": ref.auth_token}},
                        "scope": {"project": {"id": owner["project_id"]}}}}
    r = delegated.post(cloud.auth_url + "/v3/auth/tokens", json=rescope, authenticated=False,
                       raise_exc=False)
    assert r.status_code == 403 and "OAuth-scoped token" in r.json()["error"]["message"]
    # the owner's access tokens, in Tempest's request shapes (admin reads them)
    admin = cloud.session()
    base = f"{cloud.auth_url}/v3/users/{owner['id']}/OS-OAUTH1/access_tokens"
    listed = admin.get(base).json()["access_tokens"]
    assert [(t["id"], t["consumer_id"], t["project_id"]) for t in listed] == [
        (access.key, consumer.id, owner["project_id"])]
    assert "access_secret" not in listed[0] and "role_ids" not in listed[0]
    shown = admin.get(f"{base}/{access.key}").json()["access_token"]
    assert shown["links"]["roles"].endswith(f"/access_tokens/{access.key}/roles")
    roles = admin.get(f"{base}/{access.key}/roles").json()["roles"]
    member_id = _role_id(keystone, "member")
    assert [r["id"] for r in roles] == [member_id]
    assert admin.get(f"{base}/{access.key}/roles/{member_id}").json()["role"]["name"] == \
        "member"
    assert admin.get(f"{base}/{access.key}/roles/{_role_id(keystone, 'admin')}",
                     raise_exc=False).status_code == 404
    # the delegated token may not manage access tokens or authorize others
    r = delegated.get(base, raise_exc=False)
    assert r.status_code == 403
    # deleting the access token ends it, and the tokens it gave
    assert admin.delete(f"{base}/{access.key}").status_code == 204
    r = admin.get(cloud.auth_url + "/v3/auth/tokens",
                  headers={"X-Subject-Token": ref.auth_token}, raise_exc=False)
    assert r.status_code == 404
    with pytest.raises(ks_exc.NotFound):
        _oauth_session(cloud, consumer, access).get_token()
    keystone.oauth1.consumers.delete(consumer)


def test_oauth1_refusals(cloud, keystone, owner):
    consumer = keystone.oauth1.consumers.create(description="refused")
    # a wrong consumer secret: keystone's "Invalid signature"
    with pytest.raises(ks_exc.Unauthorized) as err:
        keystone.oauth1.request_tokens.create(consumer.id, "wrong-secret",
                                              owner["project_id"])
    assert "Invalid signature" in str(err.value)
    # an unknown project or consumer is 404; no Authorization header is 400
    with pytest.raises(ks_exc.NotFound):
        keystone.oauth1.request_tokens.create(consumer.id, consumer.secret, "f" * 32)
    r = cloud.session().post(cloud.auth_url + "/v3/OS-OAUTH1/request_token",
                             headers={"Requested-Project-Id": owner["project_id"]},
                             authenticated=False, raise_exc=False)
    assert r.status_code == 400 and "error" in r.json()
    request = keystone.oauth1.request_tokens.create(consumer.id, consumer.secret,
                                                    owner["project_id"])
    # a role the user does not hold on the project cannot be lent
    mine = _client(cloud, owner)
    other = cloud.make_user(roles=("member",))
    theirs = _client(cloud, other)
    r = theirs.session.put(f"{cloud.auth_url}/v3/OS-OAUTH1/authorize/{request.key}",
                           json={"roles": [{"name": "member"}]}, raise_exc=False)
    assert r.status_code == 403  # keystone's default: admins authorize
    r = mine.session.put(f"{cloud.auth_url}/v3/OS-OAUTH1/authorize/{request.key}",
                         json={"roles": [{"id": _role_id(keystone, "service")}]},
                         raise_exc=False)
    assert r.status_code == 401
    assert r.json()["error"]["message"] == "authorizing user does not have role required"
    r = mine.session.put(f"{cloud.auth_url}/v3/OS-OAUTH1/authorize/{request.key}",
                         json={"roles": [{"id": "x", "name": "y"}]}, raise_exc=False)
    assert r.status_code == 400
    # not yet authorized: no verifier matches
    with pytest.raises(ks_exc.Unauthorized) as err:
        keystone.oauth1.access_tokens.create(consumer.id, consumer.secret, request.key,
                                             request.secret, "abcdefgh")
    assert "verifier" in str(err.value)
    verifier = mine.oauth1.request_tokens.authorize(
        request.key, [_role_id(keystone, "reader")]).oauth_verifier
    with pytest.raises(ks_exc.Unauthorized):
        keystone.oauth1.access_tokens.create(consumer.id, consumer.secret, request.key,
                                             "wrong-secret", verifier)
    access = keystone.oauth1.access_tokens.create(consumer.id, consumer.secret,
                                                  request.key, request.secret, verifier)
    # the request token is spent
    with pytest.raises(ks_exc.NotFound):
        keystone.oauth1.access_tokens.create(consumer.id, consumer.secret, request.key,
                                             request.secret, verifier)
    # a token signed with the wrong access secret is refused
    forged = _oauth_session(cloud, consumer, type(access)(access.manager, {
        "id": access.key, "key": access.key, "secret": "0" * 32}))
    with pytest.raises(ks_exc.Unauthorized):
        forged.get_token()
    # another consumer may not use it, even signing with its own secret
    stranger = keystone.oauth1.consumers.create(description="stranger")
    with pytest.raises(ks_exc.Unauthorized):
        session.Session(auth=ks_oauth1.OAuth1(
            cloud.auth_url + "/v3", consumer_key=stranger.id,
            consumer_secret=stranger.secret, access_key=access.key,
            access_secret=access.secret)).get_token()
    keystone.oauth1.consumers.delete(stranger)
    ref = _oauth_session(cloud, consumer, access)
    assert ref.auth.get_access(ref).role_names == ["reader"]
    # deleting the consumer ends its access tokens
    token = ref.get_token()
    keystone.oauth1.consumers.delete(consumer)
    r = cloud.session().get(cloud.auth_url + "/v3/auth/tokens",
                            headers={"X-Subject-Token": token}, raise_exc=False)
    assert r.status_code == 404
    assert cloud.session().get(
        f"{cloud.auth_url}/v3/users/{owner['id']}/OS-OAUTH1/access_tokens").json()[
        "access_tokens"] == []
