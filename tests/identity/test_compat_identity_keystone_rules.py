"""Identity rules as keystone applies them: an endpoint group's filters may be emptied by
an update (only create requires some), and deleting a service leaves its registered
limits and limits in place (keystone's tables hold no foreign key from them to the
service). Through python-keystoneclient and openstacksdk."""
from __future__ import annotations

import uuid

import pytest
from keystoneauth1 import exceptions


@pytest.fixture(scope="module")
def keystone(cloud):
    from keystoneclient.v3 import client

    return client.Client(session=cloud.session(), interface="public")


def _name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_endpoint_group_update_may_empty_the_filters(keystone):
    service = keystone.services.create(name=_name("svc"), type=_name("type"))
    endpoint = keystone.endpoints.create(service=service, url="http://example.test/x",
                                         interface="internal", region="RegionOne")
    group = keystone.endpoint_groups.create(name=_name("eg"),
                                            filters={"service_id": service.id})
    _, body = keystone.endpoint_groups.client.get(
        f"/OS-EP-FILTER/endpoint_groups/{group.id}/endpoints")
    assert [e["id"] for e in body["endpoints"]] == [endpoint.id]
    updated = keystone.endpoint_groups.update(group, filters={})
    assert updated.filters == {}
    assert keystone.endpoint_groups.get(group).filters == {}
    # no filter: every endpoint
    _, body = keystone.endpoint_groups.client.get(
        f"/OS-EP-FILTER/endpoint_groups/{group.id}/endpoints")
    assert {e.id for e in keystone.endpoints.list()} == {e["id"] for e in body["endpoints"]}
    # create still wants some, and unknown keys stay refused on update
    with pytest.raises(exceptions.BadRequest):
        keystone.endpoint_groups.create(name=_name("eg"), filters={})
    with pytest.raises(exceptions.BadRequest):
        keystone.endpoint_groups.update(group, filters={"url": "x"})
    keystone.endpoint_groups.delete(group)
    keystone.services.delete(service)


def test_deleting_a_service_keeps_its_limits(cloud, keystone):
    conn = cloud.sdk()
    project = keystone.projects.create(name=_name("limits"), domain="default")
    service = keystone.services.create(name=_name("svc"), type=_name("type"))
    registered = conn.identity.create_registered_limit(
        service_id=service.id, resource_name="widgets", default_limit=5)
    limit = conn.identity.create_limit(service_id=service.id, project_id=project.id,
                                       resource_name="widgets", resource_limit=7)
    keystone.services.delete(service)
    with pytest.raises(exceptions.NotFound):
        keystone.services.get(service.id)
    # keystone keeps both, still naming the gone service
    kept = conn.identity.get_registered_limit(registered.id)
    assert (kept.service_id, kept.default_limit) == (service.id, 5)
    assert conn.identity.get_limit(limit.id).resource_limit == 7
    assert limit.id in {x.id for x in conn.identity.limits(project_id=project.id)}
    # no new ones for the gone service
    with pytest.raises(Exception) as caught:
        conn.identity.create_registered_limit(service_id=service.id,
                                              resource_name="gadgets", default_limit=1)
    assert getattr(caught.value, "status_code", None) == 400
    conn.identity.delete_limit(limit)
    conn.identity.delete_registered_limit(registered)
    keystone.projects.delete(project)
