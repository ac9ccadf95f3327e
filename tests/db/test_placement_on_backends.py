"""Placement on SQLite, PostgreSQL and MariaDB (``pocketstack up`` in a
subprocess): concurrent claims never oversubscribe (the generation compare-and-swap under
each engine's isolation), candidates' prebuilt SQL, nested providers, and the bad inputs
that reach the database."""
from __future__ import annotations

import concurrent.futures
import uuid

HEADERS = {"OpenStack-API-Version": "placement 1.39"}


class _Placement:
    def __init__(self, cloud):
        self.s = cloud.session()

    def __call__(self, method, path, json=None):
        return self.s.request(path, method, json=json, headers=HEADERS, raise_exc=False,
                              endpoint_filter={"service_type": "placement"})


def _provider(api, inventory, parent=None):
    body = {"name": f"rp-{uuid.uuid4().hex[:10]}"}
    if parent:
        body["parent_provider_uuid"] = parent
    rp = api("POST", "/resource_providers", body).json()["uuid"]
    if inventory:
        r = api("PUT", f"/resource_providers/{rp}/inventories", {
            "resource_provider_generation": 0,
            "inventories": {rc: {"total": n} for rc, n in inventory.items()}})
        assert r.status_code == 200, r.text
    return rp


def _claim(api, rp, resources):
    return api("PUT", f"/allocations/{uuid.uuid4()}", {
        "allocations": {rp: {"resources": resources}}, "project_id": "p", "user_id": "u",
        "consumer_generation": None, "consumer_type": "INSTANCE"})


def test_concurrent_claims_never_oversubscribe(backend_cloud):
    api = _Placement(backend_cloud)
    rp = _provider(api, {"VCPU": 5})
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: _claim(api, rp, {"VCPU": 1}).status_code, range(16)))
    assert codes.count(204) == 5 and set(codes) <= {204, 409}, codes
    # a lost generation race is retried (as upstream): only capacity refuses a claim
    assert api("GET", f"/resource_providers/{rp}/usages").json()["usages"]["VCPU"] == 5
    assert _claim(api, rp, {"VCPU": 1}).status_code == 409


def test_candidates_and_nested_providers(backend_cloud):
    api = _Placement(backend_cloud)
    full = _provider(api, {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10})
    _claim(api, full, {"VCPU": 1})
    free = _provider(api, {"VCPU": 4, "MEMORY_MB": 1024, "DISK_GB": 10})
    r = api("GET", "/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:1")
    found = {u for req in r.json()["allocation_requests"] for u in req["allocations"]}
    assert free in found and full not in found
    root = _provider(api, {"MEMORY_MB": 2048})
    numa = _provider(api, {"VCPU": 2}, parent=root)
    r = api("GET", f"/allocation_candidates?resources=VCPU:1,MEMORY_MB:1&in_tree={root}")
    assert [set(req["allocations"]) for req in r.json()["allocation_requests"]] == [
        {root, numa}]
    assert api("DELETE", f"/resource_providers/{root}").status_code == 409


def test_bad_input_reaching_the_database(backend_cloud):
    api = _Placement(backend_cloud)
    rp = _provider(api, {"VCPU": 4})
    assert api("POST", "/resource_providers", {"name": "x" * 201}).status_code == 400
    assert api("POST", "/resource_providers", {"name": "é" * 200}).status_code == 200
    assert _claim(api, rp, {"VCPU": 2 ** 40}).status_code == 400
    assert api("GET", "/resource_providers?name=" + "%F0%9F%98%80" * 100).status_code == 200
    r = api("PUT", f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 1, "inventories": {"VCPU": {"total": 2 ** 31 - 1,
                                                                    "allocation_ratio": 3e38}}})
    assert r.status_code == 200, r.text


def test_concurrent_boots_claim_in_placement_without_oversubscribing(backend_cloud):
    """The scheduler's claims are placement allocations. With room for exactly
    one m1.nano per host left by an operator's reserved (set through the API), six boots
    at once on four hosts give four servers and two NoValidHost (the project's quota is
    ten), on every engine; deleting them leaves no allocation behind."""
    from pocketstack.common.image_formats import qcow2_header

    api = _Placement(backend_cloud)
    sdk = backend_cloud.sdk()
    image = sdk.image.create_image(name="backend-placement", data=qcow2_header(1 << 20),
                                   disk_format="qcow2", container_format="bare")
    nano = sdk.compute.find_flavor("m1.nano")
    hosts = {h.name for h in sdk.compute.hypervisors()}
    rps = [p for p in api("GET", "/resource_providers").json()["resource_providers"]
           if p["name"] in hosts]
    assert len(rps) == len(hosts) == 4, rps

    def set_memory(rp, reserved_below_free=None):
        inv = api("GET", f"/resource_providers/{rp}/inventories/MEMORY_MB").json()
        used = api("GET", f"/resource_providers/{rp}/usages").json()["usages"]["MEMORY_MB"]
        body = {"total": inv["total"], "reserved": 0, "allocation_ratio": 1.5,
                "resource_provider_generation": inv["resource_provider_generation"]}
        if reserved_below_free is not None:
            body.update(reserved=inv["total"] - used - reserved_below_free,
                        allocation_ratio=1.0)
        r = api("PUT", f"/resource_providers/{rp}/inventories/MEMORY_MB", body)
        assert r.status_code == 200, r.text

    servers = []
    try:
        for rp in rps:
            set_memory(rp["uuid"], reserved_below_free=nano.ram)
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            servers = list(pool.map(lambda i: sdk.compute.create_server(
                name=f"backend-{i}", image_id=image.id, flavor_id=nano.id,
                networks="none"), range(6)))
        finals = [_settle(sdk, s) for s in servers]
        assert sorted(s.status for s in finals) == ["ACTIVE"] * 4 + ["ERROR"] * 2, \
            [(s.status, (s.fault or {}).get("message")) for s in finals]
        assert all("No valid host" in s.fault["message"] for s in finals
                   if s.status == "ERROR")
    finally:
        for s in servers:
            sdk.compute.delete_server(s, ignore_missing=True)
        for s in servers:
            sdk.compute.wait_for_delete(s, wait=60)
        for rp in rps:
            set_memory(rp["uuid"])
        sdk.image.delete_image(image)
    for s in servers:
        assert api("GET", f"/allocations/{s.id}").json()["allocations"] == {}


def _settle(sdk, server, timeout=60.0):
    import time

    deadline = time.monotonic() + timeout
    while True:
        server = sdk.compute.get_server(server.id)
        if server.status in ("ACTIVE", "ERROR") or time.monotonic() > deadline:
            return server
        time.sleep(0.2)
