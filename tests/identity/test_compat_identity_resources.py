"""Identity: credentials (incl. EC2 and the OS-EC2 view), unified limits and
policy blobs through keystoneclient and openstacksdk."""
from __future__ import annotations

import json
import uuid

import pytest
from keystoneauth1 import exceptions


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


def test_credentials_crud_and_ownership(keystone, member, member_keystone):
    blob = json.dumps({"access": uuid.uuid4().hex, "secret": "s3cret"})
    ec2 = member_keystone.credentials.create(user=member["id"], type="ec2", blob=blob,
                                             project=member["project_id"])
    assert ec2.type == "ec2" and json.loads(ec2.blob)["secret"] == "s3cret"
    with pytest.raises(exceptions.Conflict):  # the same access key again
        member_keystone.credentials.create(user=member["id"], type="ec2", blob=blob,
                                           project=member["project_id"])
    with pytest.raises(exceptions.BadRequest):  # ec2 needs a project
        member_keystone.credentials.create(user=member["id"], type="ec2",
                                           blob=json.dumps({"access": "x"}))
    cert = member_keystone.credentials.create(user=member["id"], type="cert", blob="PEM")
    mine = {c.id for c in member_keystone.credentials.list()}
    assert {ec2.id, cert.id} <= mine
    assert {c.id for c in keystone.credentials.list(user_id=member["id"])} == mine
    assert [c.id for c in keystone.credentials.list(user_id=member["id"], type="cert")] == [
        cert.id]
    updated = member_keystone.credentials.update(cert, user=member["id"], type="cert",
                                                 blob="PEM2")
    assert updated.blob == "PEM2"
    admin_id = keystone.users.find(name="admin").id
    with pytest.raises(exceptions.Forbidden):  # not for someone else
        member_keystone.credentials.create(user=admin_id, type="cert", blob="x")
    admin_cred = keystone.credentials.create(user=admin_id, type="cert", blob="x")
    assert admin_cred.id not in {c.id for c in member_keystone.credentials.list()}
    with pytest.raises(exceptions.Forbidden):
        member_keystone.credentials.get(admin_cred.id)
    for credential in (ec2, cert, admin_cred):
        keystone.credentials.delete(credential.id)
    with pytest.raises(exceptions.NotFound):
        keystone.credentials.get(cert.id)


def test_os_ec2_credentials(member, member_keystone):
    created = member_keystone.ec2.create(member["id"], member["project_id"])
    assert created.tenant_id == member["project_id"] and created.secret
    assert created.access in [c.access for c in member_keystone.ec2.list(member["id"])]
    assert member_keystone.ec2.get(member["id"], created.access).secret == created.secret
    # the same credential is a /v3/credentials entry of type ec2
    assert "ec2" in [c.type for c in member_keystone.credentials.list()]
    member_keystone.ec2.delete(member["id"], created.access)
    with pytest.raises(exceptions.NotFound):
        member_keystone.ec2.get(member["id"], created.access)


def test_unified_limits(cloud, keystone, member, member_keystone):
    conn = cloud.sdk()
    service = conn.identity.create_service(type=f"compat-{uuid.uuid4().hex[:6]}",
                                           name="compat-limits")
    registered = conn.identity.create_registered_limit(
        service_id=service.id, resource_name="widgets", default_limit=10,
        region_id="RegionOne")
    assert registered.default_limit == 10
    with pytest.raises(exceptions.Conflict):  # one default per resource and region
        keystone.registered_limits.create(service=service.id, resource_name="widgets",
                                          default_limit=5, region="RegionOne")
    limit = conn.identity.create_limit(service_id=service.id, resource_name="widgets",
                                       resource_limit=20, project_id=member["project_id"],
                                       region_id="RegionOne")
    assert (limit.resource_limit, limit.project_id) == (20, member["project_id"])
    assert [lim.id for lim in conn.identity.limits(service_id=service.id)] == [limit.id]
    # a member sees its project's limits and the registered defaults, changes nothing
    assert [lim.id for lim in member_keystone.limits.list(service=service.id)] == [limit.id]
    assert member_keystone.registered_limits.get(registered.id).default_limit == 10
    with pytest.raises(exceptions.Forbidden):
        member_keystone.limits.update(limit.id, resource_limit=99)
    from openstack import exceptions as sdk_exceptions

    with pytest.raises(sdk_exceptions.BadRequestException):  # nothing registered for it
        conn.identity.create_limit(service_id=service.id, resource_name="gadgets",
                                   resource_limit=1, project_id=member["project_id"])
    with pytest.raises(exceptions.Forbidden):  # in use by a project limit
        keystone.registered_limits.delete(registered.id)
    assert conn.identity.update_limit(limit, resource_limit=30).resource_limit == 30
    model = cloud.session().get("/v3/limits/model",
                                endpoint_filter={"service_type": "identity"}).json()
    assert model["model"]["name"] == "flat"
    conn.identity.delete_limit(limit)
    conn.identity.delete_registered_limit(registered)
    conn.identity.delete_service(service)


def test_policy_blobs(keystone, member_keystone):
    policy = keystone.policies.create(blob='{"rule": ""}', type="application/json")
    assert keystone.policies.get(policy.id).blob == '{"rule": ""}'
    assert policy.id in [p.id for p in keystone.policies.list()]
    assert keystone.policies.update(policy.id, blob="{}").blob == "{}"
    with pytest.raises(exceptions.Forbidden):
        member_keystone.policies.list()
    keystone.policies.delete(policy.id)
    with pytest.raises(exceptions.NotFound):
        keystone.policies.get(policy.id)
