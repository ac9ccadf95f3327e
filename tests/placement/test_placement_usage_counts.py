"""Each inventory keeps ``used`` (the sum of its allocations) so the scheduler's
claim checks one row. Every way the REST API writes allocations keeps it exact: PUT,
a PUT that moves a consumer to another provider, POST /allocations for several
consumers, DELETE, the reshaper, and a claim refused for capacity (nothing changes)."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.placement.models import Allocation, Inventory, ResourceProvider


def _drift(*rp_uuids) -> list:
    """(provider, class, used, sum of allocations) wherever they differ."""
    with db.reader() as s:
        ids = dict(s.execute(sa.select(ResourceProvider.uuid, ResourceProvider.id)
                             .where(ResourceProvider.uuid.in_(rp_uuids))).all())
        sums = {(rp, rc): int(n) for rp, rc, n in s.execute(
            sa.select(Allocation.resource_provider_id, Allocation.resource_class,
                      sa.func.sum(Allocation.used))
            .where(Allocation.resource_provider_id.in_(ids.values()))
            .group_by(Allocation.resource_provider_id, Allocation.resource_class))}
        out = []
        for inv in s.scalars(sa.select(Inventory)
                             .where(Inventory.resource_provider_id.in_(ids.values()))):
            want = sums.get((inv.resource_provider_id, inv.resource_class), 0)
            if inv.used != want:
                out.append((inv.resource_provider_id, inv.resource_class, inv.used, want))
        return out


def test_every_allocation_write_keeps_inventory_usage_exact(cloud, placement):
    a = placement.provider(inventory={"VCPU": 8, "MEMORY_MB": 4096})
    b = placement.provider(inventory={"VCPU": 8, "MEMORY_MB": 4096})
    c1, c2, c3 = (str(uuid.uuid4()) for _ in range(3))
    assert placement.allocate(c1, {a: {"VCPU": 2, "MEMORY_MB": 512}}).status_code == 204
    assert _drift(a, b) == []
    gen = placement.get(f"/allocations/{c1}").json()["consumer_generation"]
    r = placement.allocate(c1, {b: {"VCPU": 1}}, generation=gen)  # moves to b
    assert r.status_code == 204, r.text
    assert _drift(a, b) == []
    r = placement.post("/allocations", {
        c2: {"allocations": {a: {"resources": {"VCPU": 3}}}, "project_id": "p",
             "user_id": "u", "consumer_generation": None, "consumer_type": "INSTANCE"},
        c3: {"allocations": {a: {"resources": {"MEMORY_MB": 100}},
                             b: {"resources": {"MEMORY_MB": 200}}},
             "project_id": "p", "user_id": "u", "consumer_generation": None,
             "consumer_type": "INSTANCE"}})
    assert r.status_code == 204, r.text
    assert _drift(a, b) == []
    r = placement.allocate(str(uuid.uuid4()), {a: {"VCPU": 100}})  # over capacity: 409
    assert r.status_code == 409
    assert _drift(a, b) == []
    assert placement.delete(f"/allocations/{c2}").status_code == 204
    assert _drift(a, b) == []
    usages = placement.get(f"/resource_providers/{a}/usages").json()["usages"]
    assert usages == {"VCPU": 0, "MEMORY_MB": 100}


def test_the_reshaper_recounts_what_it_moved(cloud, placement):
    service = cloud.make_user(roles=("service",))
    svc = type(placement)(cloud.user_session(service))
    root = placement.provider(inventory={"VCPU": 8})
    child = placement.provider(parent=root)
    c = str(uuid.uuid4())
    placement.allocate(c, {root: {"VCPU": 2}})
    gens = {rp: placement.get(f"/resource_providers/{rp}").json()["generation"]
            for rp in (root, child)}
    r = svc.post("/reshaper", {"inventories": {
        root: {"resource_provider_generation": gens[root], "inventories": {}},
        child: {"resource_provider_generation": gens[child],
                "inventories": {"VCPU": {"total": 8}}}},
        "allocations": {c: {"allocations": {child: {"resources": {"VCPU": 2}}},
                            "project_id": "proj", "user_id": "user",
                            "consumer_type": "INSTANCE",
                            "consumer_generation": placement.get(f"/allocations/{c}").json()[
                                "consumer_generation"]}}})
    assert r.status_code == 204, r.text
    assert _drift(root, child) == []
    with db.reader() as s:
        used = s.scalar(sa.select(Inventory.used).join(
            ResourceProvider, ResourceProvider.id == Inventory.resource_provider_id)
            .where(ResourceProvider.uuid == child))
    assert used == 2
