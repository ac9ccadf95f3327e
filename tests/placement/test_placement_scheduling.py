"""Placement as the one source of truth for scheduling (second part): the
compute hosts report their providers, a boot's claim is an allocation there, an
operator's `reserved` set through the API moves boots, deletes and moves release or
hand over allocations, and NoValidHost still says per host why.

On a cloud of its own: the test sets reserved on every host, which would fail other
tests' boots on the session's shared cloud."""
from __future__ import annotations

import time
import types

import pytest

from pocketstack.common import config
from pocketstack.common.image_formats import qcow2_header

from helpers.cloud import own_cloud

V = {"OpenStack-API-Version": "placement 1.39"}
PLACEMENT = {"service_type": "placement"}


@pytest.fixture(scope="module")
def cloud():
    with own_cloud("placement-sched") as c, c.cloud.runtime.activated():
        yield c


@pytest.fixture(scope="module")
def ks(cloud):
    """keystoneauth1 session speaking placement 1.39 (what the SDK and nova use)."""
    s = cloud.session()

    def call(method, path, json=None):
        return s.request(path, method, json=json, headers=V, raise_exc=False,
                         endpoint_filter=PLACEMENT)
    return call


@pytest.fixture(scope="module")
def sdk(cloud):
    return cloud.sdk()


@pytest.fixture(scope="module")
def image_id(cloud):
    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images", json={
        "name": "placement-sched", "disk_format": "qcow2", "container_format": "bare",
        "visibility": "public"}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=qcow2_header(1 << 20),
          headers={"Content-Type": "application/octet-stream"})
    return image["id"]


def _hypervisors(sdk):
    """{hostname: hypervisor} at compute 2.53 (ids are the compute nodes' uuids, sizes
    still shown)."""
    r = sdk.session.get("/os-hypervisors/detail", endpoint_filter={"service_type": "compute"},
                        headers={"OpenStack-API-Version": "compute 2.53"})
    return {h["hypervisor_hostname"]: types.SimpleNamespace(
        id=h["id"], vcpus=h["vcpus"], memory_size=h["memory_mb"],
        local_disk_size=h["local_gb"]) for h in r.json()["hypervisors"]}


def _providers(ks):
    return {p["name"]: p for p in ks("GET", "/resource_providers").json()["resource_providers"]}


def _boot(sdk, image_id, name, wait=True):
    server = sdk.compute.create_server(name=name, image_id=image_id, flavor_id="42",
                                       networks="none")
    if wait:
        return sdk.compute.wait_for_server(server, status="ACTIVE", wait=60)
    return server


def _set_reserved(ks, rp_uuid, rc, reserved):
    inv = ks("GET", f"/resource_providers/{rp_uuid}/inventories/{rc}").json()
    body = {k: inv[k] for k in ("total", "min_unit", "max_unit", "step_size",
                                "allocation_ratio", "resource_provider_generation")}
    r = ks("PUT", f"/resource_providers/{rp_uuid}/inventories/{rc}",
           dict(body, reserved=reserved))
    assert r.status_code == 200, r.text


def test_each_host_reports_its_provider_inventories_and_trait(sdk, ks):
    hypervisors = _hypervisors(sdk)
    providers = _providers(ks)
    assert len(hypervisors) == 4 and set(hypervisors) <= set(providers)
    for name, hv in hypervisors.items():
        rp = providers[name]
        assert rp["uuid"] == hv.id  # the compute node's uuid, as nova
        inv = ks("GET", f"/resource_providers/{rp['uuid']}/inventories").json()["inventories"]
        assert {rc: (i["total"], i["reserved"], i["allocation_ratio"])
                for rc, i in inv.items()} == {
            "VCPU": (hv.vcpus, 0, 16.0), "MEMORY_MB": (hv.memory_size, 0, 1.5),
            "DISK_GB": (hv.local_disk_size, 0, 1.0)}
        traits = ks("GET", f"/resource_providers/{rp['uuid']}/traits").json()["traits"]
        assert "COMPUTE_NODE" in traits


def test_boot_allocates_in_placement_and_delete_removes_it(sdk, ks, image_id):
    server = _boot(sdk, image_id, "placed")
    host = sdk.compute.get_server(server.id).hypervisor_hostname
    rp = _providers(ks)[host]["uuid"]
    flavor = sdk.compute.get_flavor("42")
    allocs = ks("GET", f"/allocations/{server.id}").json()
    assert allocs["allocations"] == {rp: {"generation": allocs["allocations"][rp]["generation"],
                                          "resources": {"VCPU": flavor.vcpus,
                                                        "MEMORY_MB": flavor.ram,
                                                        "DISK_GB": flavor.disk}}}
    assert allocs["project_id"] == server.project_id and allocs["user_id"] == server.user_id
    usages = ks("GET", f"/resource_providers/{rp}/usages").json()["usages"]
    assert usages["MEMORY_MB"] >= 64 and usages["VCPU"] >= 1
    project = ks("GET", f"/usages?project_id={server.project_id}").json()["usages"]
    assert project["INSTANCE"]["MEMORY_MB"] >= flavor.ram  # consumer type from 1.38
    cands = ks("GET", "/allocation_candidates?resources=VCPU:1,MEMORY_MB:64").json()
    assert rp in cands["provider_summaries"]
    sdk.compute.delete_server(server)
    sdk.compute.wait_for_delete(server, wait=60)
    assert ks("GET", f"/allocations/{server.id}").json()["allocations"] == {}


def test_reserved_set_through_placement_steers_boots_and_novalidhost_explains(
        sdk, ks, image_id):
    providers = _providers(ks)
    hosts = sorted(_hypervisors(sdk))
    keep = hosts[-1]
    mem = {h: ks("GET", f"/resource_providers/{providers[h]['uuid']}/inventories/MEMORY_MB")
           .json()["total"] for h in hosts}
    try:
        for h in hosts[:-1]:  # an operator reserves all memory of three hosts
            _set_reserved(ks, providers[h]["uuid"], "MEMORY_MB", mem[h])
        placed = [_boot(sdk, image_id, f"steered-{i}") for i in range(3)]
        assert {sdk.compute.get_server(s.id).hypervisor_hostname for s in placed} == {keep}
        for s in placed:
            sdk.compute.delete_server(s)
        for s in placed:
            sdk.compute.wait_for_delete(s, wait=60)
        _set_reserved(ks, providers[keep]["uuid"], "MEMORY_MB", mem[keep])
        failed = _boot(sdk, image_id, "nowhere", wait=False)
        failed = sdk.compute.wait_for_server(failed, status="ERROR", failures=[], wait=60)
        message = failed.fault["message"]
        assert "No valid host" in message and "4 hosts" in message, message
        assert "RAM, most free is 0 MB" in message, message
        sdk.compute.delete_server(failed)
    finally:
        for h in hosts:
            _set_reserved(ks, providers[h]["uuid"], "MEMORY_MB", 0)


def test_periodic_report_keeps_an_operators_ratio_unless_config_sets_it(sdk, ks, cloud):
    """nova's rule: unset *_allocation_ratio leaves placement's value; set, it wins."""
    from pocketstack.compute.manager import periodic

    hypervisors = _hypervisors(sdk)
    name = sorted(hypervisors)[0]
    hv = hypervisors[name]
    rp = hv.id
    resources = {"vcpus": hv.vcpus, "memory_mb": hv.memory_size,
                 "local_gb": hv.local_disk_size}
    managers = {name: types.SimpleNamespace(driver=types.SimpleNamespace(
        resources=lambda: resources))}
    inv = ks("GET", f"/resource_providers/{rp}/inventories/VCPU").json()
    r = ks("PUT", f"/resource_providers/{rp}/inventories/VCPU", {
        "total": inv["total"], "allocation_ratio": 2.0, "reserved": 1,
        "resource_provider_generation": inv["resource_provider_generation"]})
    assert r.status_code == 200, r.text
    try:
        periodic.report_providers(managers)
        inv = ks("GET", f"/resource_providers/{rp}/inventories/VCPU").json()
        assert (inv["allocation_ratio"], inv["reserved"]) == (2.0, 1)
        config.CONF.set_override("cpu_allocation_ratio", 4.0, group="scheduler")
        try:
            periodic.report_providers(managers)
        finally:
            config.CONF.clear_override("cpu_allocation_ratio", group="scheduler")
        inv = ks("GET", f"/resource_providers/{rp}/inventories/VCPU").json()
        assert (inv["allocation_ratio"], inv["reserved"]) == (4.0, 1)
    finally:
        inv = ks("GET", f"/resource_providers/{rp}/inventories/VCPU").json()
        ks("PUT", f"/resource_providers/{rp}/inventories/VCPU", {
            "total": inv["total"], "allocation_ratio": 16.0, "reserved": 0,
            "resource_provider_generation": inv["resource_provider_generation"]})


def test_cold_migration_moves_the_source_allocation_to_the_migration(sdk, ks, image_id,
                                                                      cloud):
    """As nova: during VERIFY_RESIZE the migration's uuid holds the source, the server's
    the destination; confirming drops the migration's."""
    server = _boot(sdk, image_id, "mover")
    source = sdk.compute.get_server(server.id).hypervisor_hostname
    providers = _providers(ks)
    sdk.compute.migrate_server(server)
    server = sdk.compute.wait_for_server(server, status="VERIFY_RESIZE", wait=60)
    dest = sdk.compute.get_server(server.id).hypervisor_hostname
    assert dest != source
    r = sdk.session.get("/os-migrations",
                        endpoint_filter={"service_type": "compute"},
                        headers={"OpenStack-API-Version": "compute 2.59"})
    migration = next(m["uuid"] for m in r.json()["migrations"]
                     if m["instance_uuid"] == server.id)
    held = ks("GET", f"/allocations/{migration}").json()["allocations"]
    assert list(held) == [providers[source]["uuid"]]
    mine = ks("GET", f"/allocations/{server.id}").json()["allocations"]
    assert list(mine) == [providers[dest]["uuid"]]
    sdk.compute.confirm_server_resize(server)
    deadline = time.monotonic() + 30
    while ks("GET", f"/resource_providers/{providers[source]['uuid']}/allocations").json()[
            "allocations"]:
        assert time.monotonic() < deadline, "the source kept the migration's allocation"
        time.sleep(0.1)
    sdk.compute.delete_server(server)
    sdk.compute.wait_for_delete(server, wait=60)
    assert ks("GET", f"/allocations/{server.id}").json()["allocations"] == {}


@pytest.mark.cli
def test_osc_placement_shows_the_hosts_and_their_usage(cloud, sdk, image_id):
    server = _boot(sdk, image_id, "cli-usage")
    host = sdk.compute.get_server(server.id).hypervisor_hostname
    v = ["--os-placement-api-version", "1.39"]
    listed = cloud.cli(*v, "resource", "provider", "list", "-f", "json")
    rp = next(p["uuid"] for p in listed if p["name"] == host)
    usage = cloud.cli(*v, "resource", "provider", "usage", "show", rp, "-f", "json")
    assert {u["resource_class"]: u["usage"] for u in usage}["MEMORY_MB"] >= 64
    cands = cloud.cli(*v, "allocation", "candidate", "list", "--resource", "VCPU=1",
                      "-f", "json")
    assert rp in {c["resource provider"] for c in cands}
    sdk.compute.delete_server(server)
    sdk.compute.wait_for_delete(server, wait=60)


def test_claims_kept_by_compute_before_placement_are_adopted(sdk, ks):
    """An upgraded cloud's compute_allocations rows become placement allocations."""
    import uuid

    import sqlalchemy as sa

    from pocketstack.common import db
    from pocketstack.compute import host_rows
    from pocketstack.compute.models import Allocation, ComputeNode

    old = str(uuid.uuid4())
    with db.transaction() as s:
        node = s.scalars(sa.select(ComputeNode).order_by(ComputeNode.id)).first()
        s.add(Allocation(instance_uuid=old, node_id=node.id, host=node.host, vcpus=1,
                         memory_mb=32, disk_gb=0))
    host_rows.adopt_old_claims([node.host])
    try:
        held = ks("GET", f"/allocations/{old}").json()["allocations"]
        assert held == {node.uuid: {"generation": held[node.uuid]["generation"],
                                    "resources": {"VCPU": 1, "MEMORY_MB": 32}}}
        with db.reader() as s:
            assert s.get(Allocation, old) is None
    finally:
        ks("DELETE", f"/allocations/{old}")


def test_shelve_offload_drops_the_allocation_and_unshelve_claims_again(sdk, ks, image_id,
                                                                        cloud):
    """As nova with shelved_offload_time = 0: offloaded, the server holds nothing in
    placement; unshelved, it holds its flavor on the host it lands on."""
    server = _boot(sdk, image_id, "shelver")
    sdk.compute.shelve_server(server)
    sdk.compute.wait_for_server(server, status="SHELVED_OFFLOADED", wait=60)
    assert ks("GET", f"/allocations/{server.id}").json()["allocations"] == {}
    sdk.compute.unshelve_server(server)
    server = sdk.compute.wait_for_server(server, status="ACTIVE", wait=60)
    host = sdk.compute.get_server(server.id).hypervisor_hostname
    held = ks("GET", f"/allocations/{server.id}").json()["allocations"]
    assert list(held) == [_providers(ks)[host]["uuid"]]
    sdk.compute.delete_server(server)
    sdk.compute.wait_for_delete(server, wait=60)
    assert ks("GET", f"/allocations/{server.id}").json()["allocations"] == {}
