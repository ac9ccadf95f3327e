"""Placement through the real clients: openstacksdk's conn.placement and
osc-placement's `openstack resource provider ...` commands."""
from __future__ import annotations

import uuid

import pytest


def test_openstacksdk_placement_proxy(cloud):
    conn = cloud.sdk()
    name = f"sdk-{uuid.uuid4().hex[:8]}"
    rp = conn.placement.create_resource_provider(name=name)
    assert rp.name == name and rp.generation == 0
    assert conn.placement.get_resource_provider(rp.id).name == name
    assert name in [p.name for p in conn.placement.resource_providers(name=name)]
    inv = conn.placement.create_resource_provider_inventory(
        rp, resource_class="VCPU", total=16, allocation_ratio=2.0)
    assert inv.total == 16
    invs = list(conn.placement.resource_provider_inventories(rp))
    assert [(i.resource_class, i.total) for i in invs] == [("VCPU", 16)]
    rp = conn.placement.get_resource_provider(rp.id)
    rp = conn.placement.update_resource_provider(rp, name=name + "-x")
    assert rp.name == name + "-x"
    assert "VCPU" in [c.name for c in conn.placement.resource_classes()]
    custom = f"CUSTOM_SDK_{uuid.uuid4().hex[:6].upper()}"
    conn.placement.create_resource_class(name=custom)
    assert conn.placement.get_resource_class(custom).name == custom
    assert "HW_CPU_X86_AVX" in [t.name for t in conn.placement.traits()]
    rp = conn.placement.get_resource_provider(rp.id)
    placement = cloud.session()
    r = placement.put(f"/resource_providers/{rp.id}/traits",
                      json={"traits": ["HW_CPU_X86_AVX"], "resource_provider_generation": 1},
                      endpoint_filter={"service_type": "placement"},
                      headers={"OpenStack-API-Version": "placement 1.39"})
    assert r.json()["resource_provider_generation"] == 2
    assert conn.placement.get_trait("HW_CPU_X86_AVX").id == "HW_CPU_X86_AVX"  # a 204
    agg = str(uuid.uuid4())
    rp = conn.placement.get_resource_provider(rp.id)
    conn.placement.set_resource_provider_aggregates(rp, agg)
    assert conn.placement.fetch_resource_provider_aggregates(rp).aggregates == [agg]
    conn.placement.delete_resource_provider_inventory(
        next(iter(conn.placement.resource_provider_inventories(rp))), resource_provider=rp)
    conn.placement.delete_resource_provider(rp)
    assert conn.placement.find_resource_provider(name + "-x") is None


@pytest.mark.cli
def test_osc_placement_cli(cloud):
    name = f"cli-{uuid.uuid4().hex[:8]}"
    v = ["--os-placement-api-version", "1.39"]
    rp = cloud.cli(*v, "resource", "provider", "create", name, "-f", "json")
    rp_uuid = rp["uuid"]
    cloud.cli(*v, "resource", "provider", "inventory", "set", rp_uuid, "--resource",
              "VCPU=8", "--resource", "MEMORY_MB=4096", "--resource", "DISK_GB=100")
    shown = cloud.cli(*v, "resource", "provider", "show", rp_uuid, "-f", "json")
    assert shown["name"] == name and shown["generation"] == 1
    listed = cloud.cli(*v, "resource", "provider", "list", "--name", name, "-f", "json")
    assert [p["uuid"] for p in listed] == [rp_uuid]
    agg = str(uuid.uuid4())
    cloud.cli(*v, "resource", "provider", "aggregate", "set", rp_uuid, "--aggregate", agg,
              "--generation", "1")
    usage = cloud.cli(*v, "resource", "provider", "usage", "show", rp_uuid, "-f", "json")
    assert {u["resource_class"]: u["usage"] for u in usage} == {
        "VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}
    traits = cloud.cli(*v, "trait", "list", "-f", "json")
    assert "HW_CPU_X86_AVX" in [t["name"] for t in traits]
    found = cloud.cli(*v, "allocation", "candidate", "list", "--resource", "VCPU=1",
                      "--member-of", agg, "-f", "json")
    assert [c["resource provider"] for c in found] == [rp_uuid]
    proc = cloud.cli(*v, "resource", "provider", "show", str(uuid.uuid4()), check=False)
    assert proc.returncode != 0 and "No resource provider" in proc.stderr
