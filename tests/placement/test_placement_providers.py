"""Placement: version discovery, providers, inventories, classes, traits and
aggregates over real HTTP, with placement's 4xx for bad input."""
from __future__ import annotations

import uuid

import pytest


def code(r):
    return r.json()["errors"][0].get("code")


def test_root_version_document_and_microversion_headers(placement):
    r = placement.get("/", version="none")
    assert r.status_code == 200
    v = r.json()["versions"][0]
    assert (v["id"], v["min_version"], v["max_version"], v["status"]) == (
        "v1.0", "1.0", "1.39", "CURRENT")
    assert r.headers["OpenStack-API-Version"] == "placement 1.0"
    assert "openstack-api-version" in r.headers["Vary"].lower()
    r = placement.get("/", version="latest")
    assert r.headers["OpenStack-API-Version"] == "placement 1.39"
    assert r.headers["Cache-Control"] == "no-cache" and r.headers["Last-Modified"]


@pytest.mark.parametrize("version,status", [("1.40", 406), ("2.0", 406), ("1.x", 400),
                                            ("one", 400)])
def test_unsupported_or_malformed_microversion(placement, version, status):
    r = placement.get("/resource_providers", version=version)
    assert r.status_code == status
    body = r.json()["errors"][0]
    assert body["status"] == status and body["request_id"].startswith("req-")
    if status == 406:
        assert (body["min_version"], body["max_version"]) == ("1.0", "1.39")


def test_catalog_has_placement(cloud):
    catalog = cloud.session().auth.get_access(cloud.session()).service_catalog.catalog
    entry = [e for e in catalog if e["type"] == "placement"]
    assert entry and entry[0]["endpoints"][0]["url"].endswith("/placement")


def test_provider_lifecycle_and_links(placement):
    name = f"cn-{uuid.uuid4().hex[:8]}"
    rp_uuid = str(uuid.uuid4())
    r = placement.post("/resource_providers", {"name": name, "uuid": rp_uuid})
    assert r.status_code == 200
    assert r.headers["Location"].endswith(f"/placement/resource_providers/{rp_uuid}")
    assert r.headers["Location"].startswith("http")
    rp = r.json()
    assert (rp["uuid"], rp["name"], rp["generation"]) == (rp_uuid, name, 0)
    assert rp["root_provider_uuid"] == rp_uuid and rp["parent_provider_uuid"] is None
    assert {link["rel"] for link in rp["links"]} == {"self", "inventories", "usages", "aggregates",
                                               "traits", "allocations"}
    r = placement.post("/resource_providers", {"name": "x"}, version="1.19")
    assert r.status_code == 201 and not r.content
    placement.delete(f"/resource_providers/{r.headers['Location'].rsplit('/', 1)[1]}")
    # duplicates: 409 placement.duplicate_name
    r = placement.post("/resource_providers", {"name": name})
    assert r.status_code == 409 and code(r) == "placement.duplicate_name"
    r = placement.post("/resource_providers", {"name": "other", "uuid": rp_uuid})
    assert r.status_code == 409 and code(r) == "placement.duplicate_name"
    r = placement.put(f"/resource_providers/{rp_uuid}", {"name": name + "-new"})
    assert r.status_code == 200 and r.json()["name"] == name + "-new"
    listed = placement.get(f"/resource_providers?name={name}-new").json()
    assert [p["uuid"] for p in listed["resource_providers"]] == [rp_uuid]
    assert placement.delete(f"/resource_providers/{rp_uuid}").status_code == 204
    r = placement.get(f"/resource_providers/{rp_uuid}")
    assert r.status_code == 404 and code(r) == "placement.resource_provider.not_found"


@pytest.mark.parametrize("body", [{}, {"name": 1}, {"name": "a" * 201},
                                  {"name": "a", "uuid": "not-a-uuid"},
                                  {"name": "a", "extra": 1},
                                  {"name": "a", "parent_provider_uuid": "nope"}])
def test_bad_provider_bodies_are_400(placement, body):
    r = placement.post("/resource_providers", body)
    assert r.status_code == 400, r.text
    assert r.json()["errors"][0]["title"] == "Bad Request"


def test_bad_uuids_and_filters(placement):
    assert placement.get("/resource_providers/not-a-uuid").status_code == 404
    assert placement.get("/resource_providers?uuid=not-a-uuid").status_code == 400
    assert placement.get("/resource_providers?bogus=1").status_code == 400
    assert placement.get("/resource_providers?resources=VCPU").status_code == 400
    assert placement.get("/resource_providers?resources=NOPE:1").status_code == 400
    assert placement.get("/resource_providers?required=CUSTOM_NOPE_X").status_code == 400
    assert placement.get("/resource_providers?member_of=nope").status_code == 400
    # a filter newer than the microversion is an unknown parameter
    assert placement.get("/resource_providers?required=HW_CPU_X86_AVX",
                         version="1.17").status_code == 400
    r = placement.post("/resource_providers", {"name": "x"},
                       headers={"Content-Type": "text/plain"})
    assert r.status_code in (400, 415)


def test_nested_providers_and_reparenting(placement):
    root = placement.provider()
    child = placement.provider(parent=root)
    grandchild = placement.provider(parent=child)
    r = placement.get(f"/resource_providers/{grandchild}").json()
    assert (r["parent_provider_uuid"], r["root_provider_uuid"]) == (child, root)
    tree = placement.get(f"/resource_providers?in_tree={child}").json()["resource_providers"]
    assert {p["uuid"] for p in tree} == {root, child, grandchild}
    r = placement.delete(f"/resource_providers/{child}")
    assert r.status_code == 409 and code(r) == "placement.resource_provider.cannot_delete_parent"
    name = placement.get(f"/resource_providers/{child}").json()["name"]
    # re-parenting: 400 before 1.37, allowed from it; never into its own subtree
    other = placement.provider()
    r = placement.put(f"/resource_providers/{child}",
                      {"name": name, "parent_provider_uuid": other}, version="1.36")
    assert r.status_code == 400
    r = placement.put(f"/resource_providers/{child}",
                      {"name": name, "parent_provider_uuid": grandchild})
    assert r.status_code == 400 and "loop" in r.text
    r = placement.put(f"/resource_providers/{child}",
                      {"name": name, "parent_provider_uuid": other})
    assert r.status_code == 200 and r.json()["root_provider_uuid"] == other
    assert placement.get(f"/resource_providers/{grandchild}").json()[
        "root_provider_uuid"] == other
    r = placement.put(f"/resource_providers/{child}", {"name": name,
                                                       "parent_provider_uuid": None})
    assert r.status_code == 200 and r.json()["root_provider_uuid"] == child


def test_inventories_with_generations(placement):
    rp = placement.provider()
    base = f"/resource_providers/{rp}/inventories"
    r = placement.put(base, {"resource_provider_generation": 0, "inventories": {
        "VCPU": {"total": 8, "reserved": 1, "allocation_ratio": 4.0},
        "MEMORY_MB": {"total": 2048, "max_unit": 1024, "step_size": 256}}})
    assert r.status_code == 200
    body = r.json()
    assert body["resource_provider_generation"] == 1
    assert body["inventories"]["VCPU"] == {"total": 8, "reserved": 1, "min_unit": 1,
                                           "max_unit": 2147483647, "step_size": 1,
                                           "allocation_ratio": 4.0}
    # a stale generation: 409 placement.concurrent_update
    r = placement.put(base, {"resource_provider_generation": 0, "inventories": {}})
    assert r.status_code == 409 and code(r) == "placement.concurrent_update"
    r = placement.put(base + "/VCPU", {"resource_provider_generation": 1, "total": 16})
    assert r.status_code == 200 and r.json()["total"] == 16
    assert r.json()["resource_provider_generation"] == 2
    r = placement.post(base, {"resource_class": "DISK_GB", "total": 100})
    assert r.status_code == 201 and r.headers["Location"].endswith("/inventories/DISK_GB")
    r = placement.post(base, {"resource_class": "DISK_GB", "total": 100})
    assert r.status_code == 409
    assert placement.get(base + "/DISK_GB").json()["total"] == 100
    assert placement.get(base + "/IPV4_ADDRESS").status_code == 404
    assert placement.delete(base + "/DISK_GB").status_code == 204
    assert placement.delete(base + "/DISK_GB").status_code == 404
    assert placement.delete(base).status_code == 204
    assert placement.get(base).json()["inventories"] == {}
    assert placement.delete(base, version="1.4").status_code == 405


@pytest.mark.parametrize("inventory", [
    {"VCPU": {"total": -1}}, {"VCPU": {"total": 0}}, {"VCPU": {"total": "8"}},
    {"VCPU": {"total": 8, "reserved": 9}}, {"VCPU": {"total": 8, "step_size": 0}},
    {"VCPU": {"total": 2 ** 31}}, {"VCPU": {"total": 8, "bogus": 1}},
    {"NOT_A_CLASS": {"total": 1}}, {"vcpu": {"total": 1}},
    {"VCPU": {"total": 8, "min_unit": 4, "max_unit": 2}},
])
def test_bad_inventories_are_400(placement, inventory):
    rp = placement.provider()
    r = placement.put(f"/resource_providers/{rp}/inventories",
                      {"resource_provider_generation": 0, "inventories": inventory})
    assert r.status_code == 400, r.text


def test_reserved_equal_to_total_from_1_26(placement):
    rp = placement.provider()
    body = {"resource_provider_generation": 0,
            "inventories": {"VCPU": {"total": 4, "reserved": 4}}}
    assert placement.put(f"/resource_providers/{rp}/inventories", body,
                         version="1.25").status_code == 400
    assert placement.put(f"/resource_providers/{rp}/inventories", body).status_code == 200


def test_resource_classes(placement):
    name = f"CUSTOM_RC_{uuid.uuid4().hex[:8].upper()}"
    names = [c["name"] for c in placement.get("/resource_classes").json()["resource_classes"]]
    assert "VCPU" in names and "MEMORY_MB" in names
    r = placement.post("/resource_classes", {"name": name})
    assert r.status_code == 201
    r = placement.post("/resource_classes", {"name": name})
    assert r.status_code == 409 and code(r) == "placement.duplicate_name"
    assert placement.get(f"/resource_classes/{name}").json()["name"] == name
    assert placement.put(f"/resource_classes/{name}").status_code == 204
    assert placement.put(f"/resource_classes/{name}_2").status_code == 201
    assert placement.put("/resource_classes/NOT_CUSTOM").status_code == 400
    assert placement.post("/resource_classes", {"name": "VCPU2"}).status_code == 400
    assert placement.delete("/resource_classes/VCPU").status_code == 400
    assert placement.get("/resource_classes", version="1.1").status_code == 404
    rp = placement.provider(inventory={name: 10})
    r = placement.delete(f"/resource_classes/{name}")
    assert r.status_code == 409
    placement.delete(f"/resource_providers/{rp}")
    assert placement.delete(f"/resource_classes/{name}").status_code == 204
    assert placement.get(f"/resource_classes/{name}").status_code == 404


def test_traits_and_provider_traits(placement):
    trait = f"CUSTOM_T_{uuid.uuid4().hex[:8].upper()}"
    assert placement.put(f"/traits/{trait}").status_code == 201
    assert placement.put(f"/traits/{trait}").status_code == 204
    assert placement.get(f"/traits/{trait}").status_code == 204
    assert placement.get("/traits/CUSTOM_NOPE_NOPE").status_code == 404
    assert placement.put("/traits/NOT_CUSTOM").status_code == 400
    assert placement.delete("/traits/HW_CPU_X86_AVX").status_code == 400
    listed = placement.get("/traits?name=startswith:HW_CPU_X86_AV").json()["traits"]
    assert "HW_CPU_X86_AVX" in listed and all(t.startswith("HW_CPU_X86_AV") for t in listed)
    assert placement.get(f"/traits?name=in:{trait},HW_CPU_X86_AVX").json()["traits"] == sorted(
        [trait, "HW_CPU_X86_AVX"])
    assert placement.get("/traits?name=bad").status_code == 400
    assert placement.get("/traits?associated=maybe").status_code == 400
    rp = placement.provider()
    r = placement.put(f"/resource_providers/{rp}/traits",
                      {"traits": [trait, "HW_CPU_X86_AVX"], "resource_provider_generation": 0})
    assert r.status_code == 200 and r.json()["resource_provider_generation"] == 1
    assert trait in placement.get("/traits?associated=true").json()["traits"]
    r = placement.put(f"/resource_providers/{rp}/traits",
                      {"traits": [], "resource_provider_generation": 0})
    assert r.status_code == 409 and code(r) == "placement.concurrent_update"
    r = placement.put(f"/resource_providers/{rp}/traits",
                      {"traits": ["CUSTOM_UNKNOWN_TRAIT_X"], "resource_provider_generation": 1})
    assert r.status_code == 400
    assert placement.delete(f"/traits/{trait}").status_code == 409
    listed = placement.get(f"/resource_providers?required={trait}").json()
    assert [p["uuid"] for p in listed["resource_providers"]] == [rp]
    assert rp not in [p["uuid"] for p in placement.get(
        f"/resource_providers?required=!{trait}").json()["resource_providers"]]
    assert placement.delete(f"/resource_providers/{rp}/traits").status_code == 204
    assert placement.delete(f"/traits/{trait}").status_code == 204


def test_aggregates_with_generation_from_1_19(placement):
    rp = placement.provider()
    agg1, agg2 = str(uuid.uuid4()), str(uuid.uuid4())
    r = placement.put(f"/resource_providers/{rp}/aggregates", [agg1], version="1.18")
    assert r.status_code == 200 and r.json() == {"aggregates": [agg1]}
    r = placement.put(f"/resource_providers/{rp}/aggregates",
                      {"aggregates": [agg1, agg2], "resource_provider_generation": 0})
    assert r.status_code == 200
    assert r.json()["resource_provider_generation"] == 1
    r = placement.put(f"/resource_providers/{rp}/aggregates",
                      {"aggregates": [], "resource_provider_generation": 0})
    assert r.status_code == 409 and code(r) == "placement.concurrent_update"
    r = placement.put(f"/resource_providers/{rp}/aggregates",
                      {"aggregates": ["nope"], "resource_provider_generation": 1})
    assert r.status_code == 400
    listed = placement.get(f"/resource_providers?member_of=in:{agg2},{uuid.uuid4()}").json()
    assert [p["uuid"] for p in listed["resource_providers"]] == [rp]
    assert rp not in [p["uuid"] for p in placement.get(
        f"/resource_providers?member_of=!{agg2}").json()["resource_providers"]]
    assert placement.get(f"/resource_providers/{rp}/aggregates",
                         version="1.0").status_code == 404
    # member_of=in: is the resource provider list's syntax from 1.3
    listed = placement.get(f"/resource_providers?member_of=in:{agg1}", version="1.3").json()
    assert [p["uuid"] for p in listed["resource_providers"]] == [rp]
