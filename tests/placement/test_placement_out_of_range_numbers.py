"""Numbers out of placement's range are placement's 4xx, never a 500: integers of more
digits than Python's int() converts (4,300) in the microversion header — read before the
token is — and in query parameters, and inventory fields outside the schema's bounds."""
from __future__ import annotations

import httpx
import pytest

HUGE = "9" * 5000


@pytest.fixture(scope="module")
def anonymous(cloud):
    with httpx.Client(base_url=cloud.url + "/placement", timeout=60) as client:
        yield client


@pytest.mark.parametrize("path", ["/", "/resource_providers"])
@pytest.mark.parametrize("version", [f"1.{HUGE}", f"{HUGE}.0"])
def test_huge_microversion_is_400_without_a_token(anonymous, path, version):
    r = anonymous.get(path, headers={"OpenStack-API-Version": f"placement {version}"})
    assert r.status_code == 400, r.text[:300]
    error = r.json()["errors"][0]
    assert error["status"] == 400 and "invalid version string" in error["detail"]
    assert len(r.content) < 2000  # the 5,000 digits are not echoed back


def test_long_but_convertible_microversion_is_still_406(anonymous):
    r = anonymous.get("/", headers={"OpenStack-API-Version": f"placement 1.{'9' * 4000}"})
    assert r.status_code == 406
    assert r.json()["errors"][0]["max_version"] == "1.39"


def _bad_value(r):
    assert r.status_code == 400, r.text[:300]
    assert r.json()["errors"][0]["code"] == "placement.query.bad_value"


@pytest.mark.parametrize("query", [
    {"resources": f"VCPU:{HUGE}"}, {"resources": f"VCPU:1,MEMORY_MB:{HUGE}"},
    {"resources": "VCPU:99999999999"}])
def test_huge_resource_amounts_are_400(placement, query):
    _bad_value(placement.get("/resource_providers", params=query))
    _bad_value(placement.get("/allocation_candidates", params=query))


def test_huge_granular_amount_and_limit_are_400(placement):
    _bad_value(placement.get("/allocation_candidates",
                             params={"resources1": f"VCPU:{HUGE}"}))
    r = placement.get("/allocation_candidates", params={"resources": "VCPU:1",
                                                        "limit": HUGE})
    _bad_value(r)
    assert len(r.content) < 2000


@pytest.mark.parametrize("record", [
    {"total": 8, "allocation_ratio": -1.0}, {"total": 8, "allocation_ratio": -0.5},
    {"total": 8, "reserved": -1}, {"total": 8, "min_unit": 0},
    {"total": 8, "max_unit": 2 ** 31}, {"total": 8, "step_size": 2 ** 31},
    {"total": 2 ** 40}])
def test_inventory_fields_out_of_range_are_400(placement, record):
    rp = placement.provider()
    r = placement.put(f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 0, "inventories": {"VCPU": record}})
    assert r.status_code == 400, r.text
    assert "JSON does not validate" in r.json()["errors"][0]["detail"]
    r = placement.post(f"/resource_providers/{rp}/inventories",
                       dict(record, resource_class="VCPU"))
    assert r.status_code == 400, r.text
    # nothing was written
    assert placement.get(f"/resource_providers/{rp}/inventories").json()["inventories"] == {}


def test_zero_allocation_ratio_is_accepted(placement):
    rp = placement.provider()
    r = placement.put(f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 8, "allocation_ratio": 0.0}}})
    assert r.status_code == 200, r.text
