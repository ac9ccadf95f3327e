"""Placement: allocations with consumer generations, usages, the reshaper,
policy (member 403) and atomic claims under concurrency."""
from __future__ import annotations

import concurrent.futures
import uuid

import pytest


def code(r):
    return r.json()["errors"][0].get("code")


@pytest.fixture
def host(placement):
    return placement.provider(inventory={"VCPU": {"total": 4, "allocation_ratio": 2.0},
                                         "MEMORY_MB": {"total": 2048, "reserved": 512},
                                         "DISK_GB": {"total": 100, "step_size": 10}})


def test_allocation_lifecycle_with_consumer_generations(placement, host):
    c = str(uuid.uuid4())
    r = placement.allocate(c, {host: {"VCPU": 2, "MEMORY_MB": 512}})
    assert r.status_code == 204, r.text
    body = placement.get(f"/allocations/{c}").json()
    assert body["allocations"][host]["resources"] == {"VCPU": 2, "MEMORY_MB": 512}
    assert (body["project_id"], body["user_id"], body["consumer_type"]) == (
        "proj", "user", "INSTANCE")
    gen = body["consumer_generation"]
    # a stale or missing consumer generation: 409 placement.concurrent_update
    r = placement.allocate(c, {host: {"VCPU": 1}}, generation=None)
    assert r.status_code == 409 and code(r) == "placement.concurrent_update"
    r = placement.allocate(c, {host: {"VCPU": 1}}, generation=gen + 5)
    assert r.status_code == 409 and code(r) == "placement.concurrent_update"
    assert placement.allocate(c, {host: {"VCPU": 1}}, generation=gen).status_code == 204
    usages = placement.get(f"/resource_providers/{host}/usages").json()["usages"]
    assert usages == {"VCPU": 1, "MEMORY_MB": 0, "DISK_GB": 0}
    listed = placement.get(f"/resource_providers/{host}/allocations").json()
    assert listed["allocations"] == {c: {"resources": {"VCPU": 1},
                                         "consumer_generation": gen + 1}}
    old = placement.get(f"/resource_providers/{host}/allocations", version="1.27").json()
    assert old["allocations"] == {c: {"resources": {"VCPU": 1}}}
    # old formats: 1.0's list body and response
    c2 = str(uuid.uuid4())
    r = placement.put(f"/allocations/{c2}", {"allocations": [
        {"resource_provider": {"uuid": host}, "resources": {"DISK_GB": 10}}]}, version="1.0")
    assert r.status_code == 204
    old = placement.get(f"/allocations/{c2}", version="1.0").json()
    assert set(old) == {"allocations"}
    assert placement.delete(f"/allocations/{c2}").status_code == 204
    assert placement.delete(f"/allocations/{c2}").status_code == 404
    assert placement.get(f"/allocations/{c2}").json() == {"allocations": {}}
    # an empty allocation (1.28) removes the consumer's allocations
    gen = placement.get(f"/allocations/{c}").json()["consumer_generation"]
    assert placement.allocate(c, {}, generation=gen).status_code == 204
    assert placement.get(f"/allocations/{c}").json()["allocations"] == {}


def test_capacity_rule(placement, host):
    # VCPU: (4 - 0) * 2.0 = 8; MEMORY_MB: 2048 - 512 = 1536; DISK_GB in steps of 10
    ok = [{"VCPU": 8}, {"MEMORY_MB": 1536}, {"DISK_GB": 20}]
    for res in ok:
        c = str(uuid.uuid4())
        assert placement.allocate(c, {host: res}).status_code == 204
        placement.delete(f"/allocations/{c}")
    for res in ({"VCPU": 9}, {"MEMORY_MB": 1537}, {"DISK_GB": 15}, {"DISK_GB": 110}):
        r = placement.allocate(str(uuid.uuid4()), {host: res})
        assert r.status_code == 409, (res, r.text)
    r = placement.allocate(str(uuid.uuid4()), {host: {"IPV4_ADDRESS": 1}})
    assert r.status_code == 409  # no such inventory on the provider


@pytest.mark.parametrize("allocations", [
    {"VCPU": 0}, {"VCPU": -1}, {"NOPE_CLASS": 1}, {"vcpu": 1}, {},
])
def test_bad_allocation_bodies_are_400(placement, host, allocations):
    r = placement.allocate(str(uuid.uuid4()), {host: allocations})
    assert r.status_code == 400, r.text


def test_bad_consumer_and_provider_ids(placement, host):
    r = placement.allocate("not-a-uuid", {host: {"VCPU": 1}})
    assert r.status_code == 400
    r = placement.allocate(str(uuid.uuid4()), {str(uuid.uuid4()): {"VCPU": 1}})
    assert r.status_code == 400
    r = placement.put(f"/allocations/{uuid.uuid4()}", {
        "allocations": {host: {"resources": {"VCPU": 1}}}, "project_id": "p",
        "user_id": "u", "consumer_generation": None})  # 1.38 needs consumer_type
    assert r.status_code == 400
    assert placement.get(f"/resource_providers/{uuid.uuid4()}/usages").status_code == 404


def test_post_allocations_is_all_or_nothing(placement, host):
    a, b = str(uuid.uuid4()), str(uuid.uuid4())

    def body(vcpu_b):
        return {c: {"allocations": {host: {"resources": {"VCPU": n}}}, "project_id": "p",
                    "user_id": "u", "consumer_generation": None, "consumer_type": "INSTANCE"}
                for c, n in ((a, 2), (b, vcpu_b))}

    r = placement.post("/allocations", body(99))
    assert r.status_code == 409
    assert placement.get(f"/allocations/{a}").json()["allocations"] == {}
    assert placement.post("/allocations", body(2)).status_code == 204
    assert placement.get(f"/resource_providers/{host}/usages").json()["usages"]["VCPU"] == 4
    assert placement.post("/allocations", body(2), version="1.12").status_code == 405


def test_inventory_in_use(placement, host):
    c = str(uuid.uuid4())
    placement.allocate(c, {host: {"VCPU": 1}})
    gen = placement.get(f"/resource_providers/{host}").json()["generation"]
    r = placement.put(f"/resource_providers/{host}/inventories",
                      {"resource_provider_generation": gen,
                       "inventories": {"MEMORY_MB": {"total": 1024}}})
    assert r.status_code == 409 and code(r) == "placement.inventory.inuse"
    r = placement.delete(f"/resource_providers/{host}/inventories/VCPU")
    assert r.status_code == 409 and code(r) == "placement.inventory.inuse"
    r = placement.delete(f"/resource_providers/{host}")
    assert r.status_code == 409 and code(r) == "placement.resource_provider.inuse"
    placement.delete(f"/allocations/{c}")
    assert placement.delete(f"/resource_providers/{host}").status_code == 204


def test_usages_per_project_and_user(placement, host):
    project = uuid.uuid4().hex
    for user, vcpu in (("u1", 1), ("u2", 2)):
        placement.allocate(str(uuid.uuid4()), {host: {"VCPU": vcpu}}, project_id=project,
                           user_id=user)
    r = placement.get(f"/usages?project_id={project}", version="1.9")
    assert r.json() == {"usages": {"VCPU": 3}}
    r = placement.get(f"/usages?project_id={project}&user_id=u2", version="1.9")
    assert r.json() == {"usages": {"VCPU": 2}}
    r = placement.get(f"/usages?project_id={project}")
    assert r.json() == {"usages": {"INSTANCE": {"VCPU": 3, "consumer_count": 2}}}
    assert placement.get("/usages").status_code == 400
    assert placement.get(f"/usages?project_id={project}&bogus=1").status_code == 400
    assert placement.get(f"/usages?project_id={project}", version="1.8").status_code == 404


def test_concurrent_claims_never_oversubscribe(placement):
    rp = placement.provider(inventory={"VCPU": 5})

    def claim(_):
        return placement.allocate(str(uuid.uuid4()), {rp: {"VCPU": 1}}).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(claim, range(12)))
    assert codes.count(204) == 5 and set(codes) <= {204, 409}
    assert placement.get(f"/resource_providers/{rp}/usages").json()["usages"] == {"VCPU": 5}


def test_reshaper_moves_inventory_and_allocations_at_once(cloud, placement):
    service = cloud.make_user(roles=("service",))
    svc = type(placement)(cloud.user_session(service))
    root = placement.provider(inventory={"VCPU": 8})
    child = placement.provider(parent=root)
    c = str(uuid.uuid4())
    placement.allocate(c, {root: {"VCPU": 2}})
    gens = {rp: placement.get(f"/resource_providers/{rp}").json()["generation"]
            for rp in (root, child)}
    body = {"inventories": {
        root: {"resource_provider_generation": gens[root], "inventories": {}},
        child: {"resource_provider_generation": gens[child],
                "inventories": {"VCPU": {"total": 8}}}},
        "allocations": {c: {"allocations": {child: {"resources": {"VCPU": 2}}},
                            "project_id": "proj", "user_id": "user", "consumer_type": "INSTANCE",
                            "consumer_generation": placement.get(f"/allocations/{c}").json()[
                                "consumer_generation"]}}}
    assert placement.post("/reshaper", body).status_code == 403  # admin alone: service only
    r = svc.post("/reshaper", body)
    assert r.status_code == 204, r.text
    assert placement.get(f"/allocations/{c}").json()["allocations"][child]["resources"] == {
        "VCPU": 2}
    assert placement.get(f"/resource_providers/{root}/inventories").json()["inventories"] == {}
    r = svc.post("/reshaper", body)  # the same generations again: stale now
    assert r.status_code == 409


def test_member_gets_403_reader_sees_own_usages(cloud, placement):
    member = cloud.make_user(roles=("member",))
    m = type(placement)(cloud.user_session(member))
    for method, path in (("GET", "/resource_providers"), ("POST", "/resource_providers"),
                         ("GET", "/traits"), ("GET", "/resource_classes"),
                         ("GET", "/allocation_candidates?resources=VCPU:1"),
                         ("GET", f"/allocations/{uuid.uuid4()}"),
                         ("GET", f"/usages?project_id={uuid.uuid4().hex}")):
        r = m.req(method, path, json={"name": "x"} if method == "POST" else None)
        assert r.status_code == 403, (path, r.text)
        assert r.json()["errors"][0]["title"] == "Forbidden"
    r = m.get(f"/usages?project_id={member['project_id']}")
    assert r.status_code == 200 and r.json() == {"usages": {}}
    assert m.get("/", version="none").status_code == 200  # the version document is public


def test_odd_ids_and_huge_amounts_are_400(placement, host):
    r = placement.post("/allocations", {"-" * 36: {
        "allocations": {host: {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u",
        "consumer_generation": None, "consumer_type": "INSTANCE"}})
    assert r.status_code == 400, r.text
    r = placement.allocate(str(uuid.uuid4()), {host: {"VCPU": 10 ** 30}})
    assert r.status_code == 400, r.text
    r = placement.allocate(str(uuid.uuid4()), {"-" * 36: {"VCPU": 1}})
    assert r.status_code == 400, r.text
    r = placement.allocate(str(uuid.uuid4()), {host: {"VCPU": 1}}, generation=10 ** 30)
    assert r.status_code == 409, r.text
