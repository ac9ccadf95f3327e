"""Metadata definitions: glance's seeded namespaces, CRUD of namespaces and their objects,
properties, tags and resource type associations through openstacksdk and
python-glanceclient; visibility, protection and admin-only writes as glance."""
from __future__ import annotations

import uuid

import pytest

from image_helpers import assert_error


@pytest.fixture(scope="module")
def admin_sdk(cloud):
    return cloud.sdk()


@pytest.fixture(scope="module")
def member(cloud, as_user):
    user = as_user()
    user.sdk = cloud.user_sdk(user.user)
    return user


def _name():
    return f"PS::Test::{uuid.uuid4().hex[:8]}"


def test_seeded_namespaces(admin_sdk, member, glance):
    names = {ns.namespace for ns in admin_sdk.image.metadef_namespaces()}
    assert len(names) == 33  # every file of glance's etc/metadefs
    assert {"OS::Compute::Libvirt", "OS::Compute::Hypervisor", "OS::Glance::Signatures",
            "OS::Glance::CommonImageProperties", "OS::Cinder::Volumetype"} <= names
    libvirt = admin_sdk.image.get_metadef_namespace("OS::Compute::Libvirt")
    assert libvirt.is_protected and libvirt.visibility == "public" and libvirt.owner == "admin"
    assert {a["name"]: a.get("prefix") for a in libvirt.resource_type_associations} == {
        "OS::Glance::Image": "hw_", "OS::Nova::Flavor": "hw:"}
    # a member sees the public ones, not glance's two without a visibility (owner admin)
    seen = {ns.namespace for ns in member.sdk.image.metadef_namespaces()}
    assert "OS::Compute::Libvirt" in seen and "OS::Glance::CommonImageProperties" not in seen
    assert_error(member.get("/v2/metadefs/namespaces/OS::Glance::CommonImageProperties"), 404,
                 "was not found")
    types = {t.name for t in member.sdk.image.metadef_resource_types()}
    assert {"OS::Glance::Image", "OS::Nova::Flavor", "OS::Cinder::Volume"} <= types
    # a property shown for a resource type carries its prefix, as glance
    shown = glance.get("/v2/metadefs/namespaces/OS::Compute::Libvirt"
                       "?resource_type=OS::Glance::Image").json()
    assert "hw_serial_port_count" in shown["properties"]
    prop = member.sdk.image.get_metadef_property("serial_port_count",
                                                 "OS::Compute::Libvirt")
    assert prop.type == "integer"
    r = glance.get("/v2/metadefs/namespaces/OS::Compute::Libvirt/properties/"
                   "hw_serial_port_count?resource_type=OS::Glance::Image")
    assert r.status_code == 200 and r.json()["name"] == "serial_port_count"
    # the protected seeded data cannot be deleted, even by an admin
    assert_error(glance.delete("/v2/metadefs/namespaces/OS::Compute::Libvirt"), 403,
                 "is protected")
    assert_error(glance.delete("/v2/metadefs/namespaces/OS::Compute::Libvirt/properties/"
                               "serial_port_count"), 403, "is protected")
    assert_error(glance.delete("/v2/metadefs/namespaces/OS::Compute::Libvirt/objects"), 403)


def test_namespace_lifecycle_through_the_sdk(admin_sdk, member):
    name = _name()
    ns = admin_sdk.image.create_metadef_namespace(
        namespace=name, display_name="Test", description="d", visibility="public",
        resource_type_associations=[{"name": "OS::Glance::Image", "prefix": "ps_"}])
    assert ns.owner and not ns.is_protected
    admin_sdk.image.create_metadef_object(name, name="disk", description="a disk",
                                          properties={"size": {"type": "integer",
                                                               "title": "Size"}},
                                          required=["size"])
    admin_sdk.image.create_metadef_property(name, name="speed", title="Speed",
                                            type="string", enum=["fast", "slow"])
    admin_sdk.image.add_tag_to_metadef_namespace(name, "blue")
    ns = admin_sdk.image.get_metadef_namespace(name)
    assert [o.name for o in admin_sdk.image.metadef_objects(name)] == ["disk"]
    assert [p.name for p in admin_sdk.image.metadef_properties(name)] == ["speed"]
    obj = member.sdk.image.get_metadef_object("disk", name)
    assert obj.required == ["size"] and obj.properties["size"]["type"] == "integer"
    # members read public namespaces but write nothing (glance's metadef_admin)
    with pytest.raises(Exception) as caught:
        member.sdk.image.create_metadef_property(name, name="x", title="X", type="string")
    assert getattr(caught.value, "status_code", None) == 403
    assert_error(member.delete(f"/v2/metadefs/namespaces/{name}"), 403)
    assert_error(member.post("/v2/metadefs/namespaces", json={"namespace": _name()}), 403)
    # update (PUT): attributes not sent fall back to glance's defaults
    updated = admin_sdk.image.update_metadef_namespace(name, display_name="Renamed")
    assert updated.display_name == "Renamed" and updated.visibility == "private"
    assert_error(member.get(f"/v2/metadefs/namespaces/{name}"), 404)
    with pytest.raises(Exception) as caught:  # glance's schema: the body names it
        admin_sdk.image.update_metadef_property("speed", name, title="S", type="string")
    assert "'name' is a required property" in str(caught.value)
    admin_sdk.image.update_metadef_property("speed", name, name="speed", title="Speed",
                                            type="string", enum=["fast"])
    assert admin_sdk.image.get_metadef_property("speed", name).enum == ["fast"]
    admin_sdk.image.delete_metadef_resource_type_association("OS::Glance::Image", name)
    assert list(admin_sdk.image.metadef_resource_type_associations(name)) == []
    admin_sdk.image.delete_all_metadef_objects(name)
    admin_sdk.image.delete_metadef_namespace(name)
    assert_error(member.get(f"/v2/metadefs/namespaces/{name}/objects"), 404)


def test_tags_and_errors(glance):
    name = _name()
    base = f"/v2/metadefs/namespaces/{name}"
    created = glance.post("/v2/metadefs/namespaces", json={
        "namespace": name, "protected": True,
        "properties": {"p": {"title": "P", "type": "boolean"}},
        "tags": [{"name": "a"}, {"name": "b"}]})
    assert created.status_code == 201, created.text
    assert created.json()["tags"] == [{"name": "a"}, {"name": "b"}]
    assert_error(glance.post("/v2/metadefs/namespaces", json={"namespace": name}), 409,
                 "already exists")
    assert_error(glance.post("/v2/metadefs/namespaces", json={"namespace": _name(),
                                                               "bogus": 1}), 400)
    assert_error(glance.post("/v2/metadefs/namespaces", json={"display_name": "x"}), 400)
    assert_error(glance.post(f"{base}/properties", json={"name": "q"}), 400)  # title, type
    assert_error(glance.post(f"{base}/tags/A"), 409, "case insensitive")
    r = glance.post(f"{base}/tags", json={"tags": [{"name": "c"}]},
                    headers={"X-Openstack-Append": "True"})
    assert r.status_code == 201
    assert [t["name"] for t in glance.get(f"{base}/tags").json()["tags"]] == ["a", "b", "c"]
    r = glance.post(f"{base}/tags", json={"tags": [{"name": "d"}]})  # replaces
    assert [t["name"] for t in glance.get(f"{base}/tags").json()["tags"]] == ["d"]
    assert glance.put(f"{base}/tags/d", json={"name": "e"}).json()["name"] == "e"
    assert_error(glance.get(f"{base}/tags/d"), 404, "was not found")
    assert_error(glance.delete(f"{base}/tags/e"), 403, "is protected")
    assert_error(glance.get(f"{base}/objects/none"), 404, "was not found")
    assert_error(glance.get("/v2/metadefs/namespaces?limit=-1"), 400, "must be positive")
    assert_error(glance.get("/v2/metadefs/namespaces?sort_dir=sideways"), 400)
    assert_error(glance.get("/v2/metadefs/namespaces?marker=No::Such"), 404)
    assert_error(glance.post(f"{base}/resource_types", json={"prefix": "x"}), 400)
    assert glance.post(f"{base}/resource_types", json={"name": "PS::New"}).status_code == 201
    assert_error(glance.post(f"{base}/resource_types", json={"name": "PS::New"}), 409)
    assert_error(glance.delete(f"{base}/resource_types/PS::New"), 403, "is protected")
    assert_error(glance.delete(f"{base}/resource_types/PS::Other"), 404)
    # unprotect, then everything goes
    assert glance.put(base, json={"namespace": name, "protected": False}).status_code == 200
    assert glance.delete(f"{base}/resource_types/PS::New").status_code == 204
    assert glance.delete(base).status_code == 204
    assert_error(glance.delete(base), 404)


def test_paging_and_filters(glance):
    first = glance.get("/v2/metadefs/namespaces?limit=5&sort_key=namespace&sort_dir=asc")
    body = first.json()
    assert len(body["namespaces"]) == 5 and body["schema"] == "/v2/schemas/metadefs/namespaces"
    names = [n["namespace"] for n in body["namespaces"]]
    assert names == sorted(names)
    second = glance.get(body["next"].replace("/v2", "/v2", 1)).json()
    assert second["namespaces"][0]["namespace"] > names[-1]
    flavor = glance.get("/v2/metadefs/namespaces?resource_types=OS::Nova::Flavor&limit=100")
    for ns in flavor.json()["namespaces"]:
        assert "OS::Nova::Flavor" in [a["name"] for a in ns["resource_type_associations"]]
    for name in ("namespace", "namespaces", "object", "objects", "property", "properties",
                 "tag", "tags", "resource_type", "resource_types"):
        assert glance.get(f"/v2/schemas/metadefs/{name}").status_code == 200


def test_glanceclient_metadefs(cloud):
    from glanceclient import Client

    gc = Client("2", session=cloud.session(), region_name="RegionOne")
    names = [ns["namespace"] for ns in gc.metadefs_namespace.list()]
    assert "OS::Compute::Libvirt" in names
    name = _name()
    gc.metadefs_namespace.create(namespace=name, visibility="public")
    gc.metadefs_object.create(name, name="o", properties={})
    gc.metadefs_tag.create(name, "t")
    ns = gc.metadefs_namespace.get(name)
    assert [o["name"] for o in ns["objects"]] == ["o"] and ns["tags"] == [{"name": "t"}]
    gc.metadefs_namespace.delete(name)
