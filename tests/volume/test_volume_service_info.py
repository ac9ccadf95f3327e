"""Block storage: what clients ask the service about itself - a backend's
capabilities (admin), the list filters each resource honours (3.33) - and the default
quota class, which admins update to change every project's defaults. Through
openstacksdk and keystoneauth."""
from __future__ import annotations

import uuid

import pytest
from openstack import exceptions as sdk_exc

from volume_helpers import Raw


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


def test_backend_capabilities(cloud, member):
    admin = cloud.sdk()
    hosts = [s.host for s in admin.block_storage.services(binary="cinder-volume")]
    assert hosts
    caps = admin.block_storage.get_capabilities(hosts[0])
    backend = hosts[0].split("@", 1)[1]
    assert caps.namespace == f"OS::Storage::Capabilities::{hosts[0]}"
    assert caps.volume_backend_name == backend and caps.replication_targets == []
    assert caps.properties["thin_provisioning"]["type"] == "boolean"
    raw, admin_raw = Raw(cloud.user_session(member)), Raw(cloud.session())
    assert raw("GET", f"/capabilities/{hosts[0]}")[0] == 403
    for bad in ("nohost", f"{hosts[0]}x", "@", "x" * 2000):
        status, body, _ = admin_raw("GET", f"/capabilities/{bad}")
        assert status == 404 and "itemNotFound" in body, bad
    with pytest.raises(sdk_exc.NotFoundException):
        admin.block_storage.get_capabilities("elsewhere@file")


def test_resource_filters(cloud, member):
    conn = cloud.user_sdk(member)
    found = {f.resource: f.filters for f in conn.block_storage.resource_filters()}
    assert {"volume", "snapshot", "backup", "attachment"} <= set(found)
    assert "consumes_quota" in found["volume"] and "created_at" in found["volume"]
    only = list(conn.block_storage.resource_filters(resource="snapshot"))
    assert [f.resource for f in only] == ["snapshot"]
    raw = Raw(cloud.user_session(member))
    assert raw("GET", "/resource_filters?resource=bogus", version="3.33")[1] == {
        "resource_filters": []}
    assert raw("GET", "/resource_filters", version="3.32")[0] == 404


def test_default_quota_class_update(cloud, member):
    admin = cloud.sdk()
    before = admin.block_storage.get_quota_class_set("default")
    raised = before.backups + 7
    try:
        updated = admin.block_storage.update_quota_class_set("default", backups=raised)
        assert updated.backups == raised
        # a project without limits of its own gets the class's values
        fresh = Raw(cloud.user_session(member))
        quota = fresh("GET", f"/os-quota-sets/{member['project_id']}")[1]["quota_set"]
        assert quota["backups"] == raised
        assert fresh("GET", "/limits")[1]["limits"]["absolute"]["maxTotalBackups"] == raised
        admin_raw = Raw(cloud.session())
        status, body, _ = admin_raw("PUT", "/os-quota-class-sets/default",
                                    {"quota_class_set": {"backups": raised}})
        assert status == 200 and body["quota_class_set"]["backups"] == raised
        assert "id" not in body["quota_class_set"]
        shown = admin_raw("GET", "/os-quota-class-sets/default")[1]["quota_class_set"]
        assert shown["id"] == "default" and shown["backups"] == raised
        for bad in (None, {}, {"quota_class_set": {"bogus": 1}},
                    {"quota_class_set": {"backups": "x"}},
                    {"quota_class_set": {"backups": -2}},
                    {"quota_class_set": {"backups": 2 ** 40}},
                    {"quota_class_set": {"backups": True}}, {"quota_class_set": []}):
            status, body, _ = admin_raw("PUT", "/os-quota-class-sets/default", bad)
            assert status == 400 and "badRequest" in body, (bad, body)
        status, _, _ = fresh("PUT", "/os-quota-class-sets/default",
                             {"quota_class_set": {"backups": 1}})
        assert status == 403
        # another class is stored, and does not change the defaults
        gold = f"gold-{uuid.uuid4().hex[:6]}"
        assert admin_raw("PUT", f"/os-quota-class-sets/{gold}",
                         {"quota_class_set": {"volumes": 500}})[0] == 200
        assert admin_raw("GET", f"/os-quota-class-sets/{gold}")[1]["quota_class_set"][
            "volumes"] == 500
        assert admin.block_storage.get_quota_class_set("default").volumes == before.volumes
    finally:
        admin.block_storage.update_quota_class_set("default", backups=before.backups)
