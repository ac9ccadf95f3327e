"""Identity: trusts (/v3/OS-TRUST) through keystoneclient, keystoneauth1's
``v3.Password(trust_id=...)`` and the `openstack trust` CLI."""
from __future__ import annotations

import datetime as dt

import pytest
from keystoneauth1 import exceptions, session
from keystoneauth1.identity import v3


@pytest.fixture(scope="module")
def keystone(cloud):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.session(), interface="public")


@pytest.fixture(scope="module")
def trustor(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture(scope="module")
def trustee(cloud):
    return cloud.make_user(roles=("reader",))


def _client(cloud, user):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.user_session(user), interface="public")


def _trust_session(cloud, user, trust_id) -> session.Session:
    return session.Session(auth=v3.Password(
        auth_url=cloud.auth_url, username=user["name"], password=user["password"],
        user_domain_id="default", trust_id=trust_id))


def test_trust_crud_roles_and_filters(cloud, keystone, trustor, trustee):
    mine = _client(cloud, trustor)
    expires = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) + dt.timedelta(hours=1)
    trust = mine.trusts.create(trustee_user=trustee["id"], trustor_user=trustor["id"],
                               role_names=["member"], project=trustor["project_id"],
                               impersonation=True, expires_at=expires, remaining_uses=5)
    assert (trust.trustor_user_id, trust.trustee_user_id) == (trustor["id"], trustee["id"])
    assert trust.impersonation is True and trust.remaining_uses == 5
    assert trust.project_id == trustor["project_id"] and trust.expires_at.startswith(
        expires.strftime("%Y-%m-%dT%H:%M"))
    assert [r["name"] for r in trust.roles] == ["member"]
    # trustor and trustee both see it; the filters pick it out
    assert mine.trusts.get(trust.id).id == trust.id
    theirs = _client(cloud, trustee)
    assert theirs.trusts.get(trust.id).trustor_user_id == trustor["id"]
    assert [t.id for t in mine.trusts.list(trustor_user=trustor["id"])] == [trust.id]
    assert [t.id for t in theirs.trusts.list(trustee_user=trustee["id"])] == [trust.id]
    assert trust.id in [t.id for t in keystone.trusts.list()]  # an admin lists all
    assert keystone.trusts.list(trustor_user=trustee["id"]) == []
    with pytest.raises(exceptions.Forbidden):  # only an admin lists every trust
        mine.trusts.list()
    with pytest.raises(exceptions.Forbidden):  # someone else's trusts
        theirs.trusts.list(trustor_user=trustor["id"])
    # the roles sub-routes
    sess = cloud.user_session(trustor)
    base = f"{cloud.auth_url}/v3/OS-TRUST/trusts/{trust.id}/roles"
    roles = sess.get(base).json()["roles"]
    assert [r["name"] for r in roles] == ["member"]
    assert sess.get(f"{base}/{roles[0]['id']}").json()["role"]["name"] == "member"
    assert sess.head(f"{base}/{roles[0]['id']}").status_code == 200
    assert sess.get(f"{base}/nope", raise_exc=False).status_code == 404
    # only the trustor deletes it
    with pytest.raises(exceptions.Forbidden):
        theirs.trusts.delete(trust.id)
    mine.trusts.delete(trust.id)
    with pytest.raises(exceptions.NotFound):
        mine.trusts.get(trust.id)


def test_trust_create_is_checked(cloud, keystone, trustor, trustee):
    mine = _client(cloud, trustor)
    with pytest.raises(exceptions.Forbidden):  # the caller must be the trustor
        mine.trusts.create(trustee_user=trustor["id"], trustor_user=trustee["id"],
                           role_names=["reader"], project=trustee["project_id"])
    with pytest.raises(exceptions.NotFound):  # a role the trustor does not hold there
        mine.trusts.create(trustee_user=trustee["id"], trustor_user=trustor["id"],
                           role_names=["admin"], project=trustor["project_id"])
    with pytest.raises(exceptions.NotFound):  # no such trustee
        mine.trusts.create(trustee_user="0" * 32, trustor_user=trustor["id"],
                           role_names=["member"], project=trustor["project_id"])
    sess = cloud.user_session(trustor)
    url = f"{cloud.auth_url}/v3/OS-TRUST/trusts"
    for bad in ({"trustor_user_id": trustor["id"], "trustee_user_id": trustee["id"]},
                {"trustor_user_id": trustor["id"], "trustee_user_id": trustee["id"],
                 "impersonation": False, "remaining_uses": 0},
                {"trustor_user_id": trustor["id"], "trustee_user_id": trustee["id"],
                 "impersonation": False, "expires_at": "yesterday"},
                {"trustor_user_id": trustor["id"], "trustee_user_id": trustee["id"],
                 "impersonation": False, "project_id": trustor["project_id"]}):
        resp = sess.post(url, json={"trust": bad}, raise_exc=False)
        assert resp.status_code == 400, (bad, resp.text)
        assert resp.json()["error"]["code"] == 400


def test_trust_scoped_token(cloud, trustor, trustee):
    mine = _client(cloud, trustor)
    trust = mine.trusts.create(trustee_user=trustee["id"], trustor_user=trustor["id"],
                               role_names=["member"], project=trustor["project_id"],
                               remaining_uses=2)
    sess = _trust_session(cloud, trustee, trust.id)
    access = sess.auth.get_access(sess)
    # not impersonating: the token is the trustee's, on the trustor's project
    assert access.user_id == trustee["id"] and access.project_id == trustor["project_id"]
    assert access.role_names == ["member", "reader"]  # member implies reader
    body = sess.get(f"{cloud.auth_url}/v3/auth/tokens", headers={
        "X-Subject-Token": sess.get_token()}).json()["token"]
    assert body["OS-TRUST:trust"] == {"id": trust.id, "impersonation": False,
                                      "trustor_user": {"id": trustor["id"]},
                                      "trustee_user": {"id": trustee["id"]}}
    # the token works on the trustor's project: list its networks
    assert sess.get("/v2.0/networks", endpoint_filter={"service_type": "network"}).ok
    # remaining_uses: one token spent, one left, then the trust is gone
    assert mine.trusts.get(trust.id).remaining_uses == 1
    _trust_session(cloud, trustee, trust.id).get_token()
    with pytest.raises(exceptions.NotFound):
        mine.trusts.get(trust.id)
    with pytest.raises(exceptions.NotFound):
        _trust_session(cloud, trustee, trust.id).get_token()
    # only the trustee may use a trust
    other = mine.trusts.create(trustee_user=trustee["id"], trustor_user=trustor["id"],
                               role_names=["reader"], project=trustor["project_id"])
    with pytest.raises(exceptions.Forbidden):
        _trust_session(cloud, trustor, other.id).get_token()
    mine.trusts.delete(other.id)


def test_impersonation_and_revocation(cloud, trustor, trustee):
    mine = _client(cloud, trustor)
    trust = mine.trusts.create(trustee_user=trustee["id"], trustor_user=trustor["id"],
                               role_names=["reader"], project=trustor["project_id"],
                               impersonation=True)
    sess = _trust_session(cloud, trustee, trust.id)
    access = sess.auth.get_access(sess)
    assert access.user_id == trustor["id"] and access.role_names == ["reader"]
    token = sess.get_token()
    check = cloud.session()
    assert check.get(f"{cloud.auth_url}/v3/auth/tokens",
                     headers={"X-Subject-Token": token}).ok
    mine.trusts.delete(trust.id)  # deleting the trust revokes its tokens
    assert check.get(f"{cloud.auth_url}/v3/auth/tokens", headers={"X-Subject-Token": token},
                     raise_exc=False).status_code == 404


def test_trust_cli_flow(cloud, keystone, trustee):
    admin_id = keystone.users.find(name="admin").id
    created = cloud.cli("trust", "create", "--project", "admin", "--role", "member",
                        admin_id, trustee["id"], "-f", "json")
    assert created["trustee_user_id"] == trustee["id"] and created["project_id"]
    listed = cloud.cli("trust", "list", "-f", "json")
    assert created["id"] in [t["ID"] for t in listed]
    shown = cloud.cli("trust", "show", created["id"], "-f", "json")
    assert shown["trustor_user_id"] == admin_id
    cloud.cli("trust", "delete", created["id"])
    assert created["id"] not in [t.id for t in keystone.trusts.list()]
