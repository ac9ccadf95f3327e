"""Placement: GET /allocation_candidates - single providers, nested trees,
sharing providers, numbered groups, traits, aggregates, limits and bad input."""
from __future__ import annotations

import uuid

import pytest

COMPUTE = {"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 100}


def trait(placement):
    name = f"CUSTOM_{uuid.uuid4().hex[:10].upper()}"
    assert placement.put(f"/traits/{name}").status_code == 201
    return name


def cands(placement, query, version=None):
    r = placement.get(f"/allocation_candidates?{query}", version=version)
    assert r.status_code == 200, r.text
    return r.json()


def providers_of(body):
    return [set(req["allocations"]) for req in body["allocation_requests"]]


def test_single_provider_candidates_and_summaries(placement):
    t = trait(placement)
    agg = str(uuid.uuid4())
    rp = placement.provider(inventory=COMPUTE, traits=[t], aggregates=[agg])
    small = placement.provider(inventory={"VCPU": 8, "MEMORY_MB": 256, "DISK_GB": 100},
                               traits=[t], aggregates=[agg])
    body = cands(placement, f"resources=VCPU:1,MEMORY_MB:512,DISK_GB:1&required={t}")
    assert providers_of(body) == [{rp}]
    req = body["allocation_requests"][0]
    assert req == {"allocations": {rp: {"resources": {"VCPU": 1, "MEMORY_MB": 512,
                                                      "DISK_GB": 1}}},
                   "mappings": {"": [rp]}}
    summary = body["provider_summaries"][rp]
    assert summary["resources"]["VCPU"] == {"capacity": 8, "used": 0}
    assert summary["traits"] == [t]
    assert summary["root_provider_uuid"] == rp and summary["parent_provider_uuid"] is None
    assert small not in body["provider_summaries"]
    # older shapes
    old = cands(placement, "resources=VCPU:1", version="1.10")
    assert {"resource_provider": {"uuid": rp}, "resources": {"VCPU": 1}} in [
        a for req in old["allocation_requests"] for a in req["allocations"]]
    assert "traits" not in old["provider_summaries"][rp]
    body = cands(placement, f"resources=VCPU:1&member_of={agg}", version="1.26")
    assert set(body["provider_summaries"][rp]["resources"]) == {"VCPU"}
    assert "mappings" not in body["allocation_requests"][0]
    # forbidden traits and aggregates, limit
    assert cands(placement, f"resources=VCPU:1&required=!{t}&member_of={agg}")[
        "allocation_requests"] == []
    assert cands(placement, f"resources=VCPU:1&member_of=!{agg}&required={t}")[
        "allocation_requests"] == []
    assert len(cands(placement, f"resources=VCPU:1&member_of={agg}&limit=1")[
        "allocation_requests"]) == 1
    t2 = trait(placement)
    body = cands(placement, f"resources=VCPU:1&required=in:{t},{t2}&member_of={agg}")
    assert {p for s in providers_of(body) for p in s} == {rp, small}


def test_nested_tree_spreads_the_unnumbered_group(placement):
    agg = str(uuid.uuid4())
    root = placement.provider(inventory={"MEMORY_MB": 4096}, aggregates=[agg])
    numa0 = placement.provider(parent=root, inventory={"VCPU": 4})
    numa1 = placement.provider(parent=root, inventory={"VCPU": 4})
    body = cands(placement, f"resources=VCPU:2,MEMORY_MB:1024&in_tree={root}")
    assert sorted(map(sorted, providers_of(body))) == sorted(
        [sorted({root, numa0}), sorted({root, numa1})])
    assert set(body["provider_summaries"]) == {root, numa0, numa1}
    # numbered groups: each from one provider; isolate keeps them apart
    q = (f"resources=MEMORY_MB:512&resources1=VCPU:3&resources2=VCPU:3&in_tree={root}"
         "&group_policy=isolate")
    body = cands(placement, q)
    assert len(body["allocation_requests"]) == 2
    for req in body["allocation_requests"]:
        assert req["mappings"][""] == [root]
        assert {req["mappings"]["1"][0], req["mappings"]["2"][0]} == {numa0, numa1}
    q = q.replace("isolate", "none").replace("VCPU:3", "VCPU:2")
    assert len(cands(placement, q)["allocation_requests"]) == 4
    # both groups on one NUMA node only when it has room for both
    q = f"resources1=VCPU:3&resources2=VCPU:3&in_tree={root}&group_policy=none"
    assert all(req["mappings"]["1"] != req["mappings"]["2"]
               for req in cands(placement, q)["allocation_requests"])
    # suffixed groups (1.33)
    body = cands(placement, f"resources_CPU=VCPU:1&resources_MEM=MEMORY_MB:1&"
                            f"in_tree={root}&group_policy=isolate")
    assert all(set(r["mappings"]) == {"_CPU", "_MEM"} for r in body["allocation_requests"])
    assert placement.get("/allocation_candidates?resources_CPU=VCPU:1&group_policy=none",
                         version="1.32").status_code == 400


def test_root_required_and_same_subtree(placement):
    t = trait(placement)
    root = placement.provider(traits=[t])
    nic = placement.provider(parent=root, traits=["HW_NIC_SRIOV"])
    pf = placement.provider(parent=nic, inventory={"SRIOV_NET_VF": 8})
    numa = placement.provider(parent=root, inventory={"VCPU": 4})
    base = f"resources1=SRIOV_NET_VF:1&resources2=VCPU:1&group_policy=none&in_tree={root}"
    assert len(cands(placement, base + f"&root_required={t}")["allocation_requests"]) == 1
    assert cands(placement, base + f"&root_required=!{t}")["allocation_requests"] == []
    body = cands(placement, f"resources1=SRIOV_NET_VF:1&required_NIC=HW_NIC_SRIOV&"
                            f"same_subtree=1,_NIC&group_policy=none&in_tree={root}")
    req = body["allocation_requests"][0]
    assert req["mappings"] == {"1": [pf], "_NIC": [nic]} and set(req["allocations"]) == {pf}
    body = cands(placement, base + "&same_subtree=1,2")
    assert body["allocation_requests"] == []  # pf and numa are in different subtrees
    assert numa in cands(placement, base)["provider_summaries"]


def test_sharing_provider_via_aggregate(placement):
    agg = str(uuid.uuid4())
    cn = placement.provider(inventory={"VCPU": 4, "MEMORY_MB": 1024}, aggregates=[agg])
    storage = placement.provider(inventory={"DISK_GB": 1000}, aggregates=[agg],
                                 traits=["MISC_SHARES_VIA_AGGREGATE"])
    body = cands(placement, f"resources=VCPU:1,DISK_GB:100&member_of={agg}")
    assert providers_of(body) == [{cn, storage}]
    req = body["allocation_requests"][0]["allocations"]
    assert req[cn]["resources"] == {"VCPU": 1} and req[storage]["resources"] == {"DISK_GB": 100}
    # and the pair can be claimed as offered
    c = str(uuid.uuid4())
    r = placement.put(f"/allocations/{c}", dict(
        body["allocation_requests"][0], project_id="p", user_id="u", consumer_generation=None,
        consumer_type="INSTANCE"))
    assert r.status_code == 204, r.text


@pytest.mark.parametrize("query,status", [
    ("", 400), ("resources=", 400), ("resources=VCPU", 400), ("resources=VCPU:-1", 400),
    ("resources=VCPU:0", 400), ("resources=NO_SUCH:1", 400), ("resources=VCPU:1&limit=0", 400),
    ("resources=VCPU:1&limit=x", 400), ("resources=VCPU:1&required=CUSTOM_NOPE_NOPE", 400),
    ("resources=VCPU:1&member_of=bad", 400), ("resources=VCPU:1&in_tree=bad", 400),
    ("resources=VCPU:1&bogus=1", 400), ("resources1=VCPU:1&resources2=VCPU:1", 400),
    ("resources=VCPU:1&group_policy=maybe", 400), ("resources=VCPU:1&same_subtree=_X", 400),
    ("resources=VCPU:1&required=HW_CPU_X86_AVX&required=!HW_CPU_X86_AVX", 400),
    ("resources=VCPU:1,VCPU:2", 400), ("required1=HW_CPU_X86_AVX&resources=VCPU:1", 400),
])
def test_bad_candidate_queries_are_400(placement, query, status):
    r = placement.get(f"/allocation_candidates?{query}")
    assert r.status_code == status, r.text
    assert r.json()["errors"][0]["code"].startswith("placement.")


def test_candidates_need_1_10(placement):
    assert placement.get("/allocation_candidates?resources=VCPU:1",
                         version="1.9").status_code == 404
