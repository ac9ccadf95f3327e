"""Booleans in compute's query strings read as nova reads them (oslo's
strutils.bool_from_string): flavor is_public, servers all_tenants and locked."""
import uuid

import pytest


@pytest.fixture(scope="module")
def private_flavor(cloud):
    conn = cloud.sdk()
    flavor = conn.compute.create_flavor(name=f"ccbool-{uuid.uuid4().hex[:6]}", ram=64,
                                        vcpus=1, disk=1, is_public=False)
    yield flavor
    conn.compute.delete_flavor(flavor)


@pytest.mark.parametrize("value", ["t", "y", "True", "1", "yes", "on", "TRUE", "Y"])
def test_is_public_true_spellings(admin_api, private_flavor, value):
    ids = {f["id"] for f in admin_api.get(f"/flavors?is_public={value}").json()["flavors"]}
    assert "42" in ids and private_flavor.id not in ids


@pytest.mark.parametrize("value", ["f", "n", "False", "0", "no", "off"])
def test_is_public_false_spellings(admin_api, private_flavor, value):
    ids = {f["id"] for f in admin_api.get(f"/flavors?is_public={value}").json()["flavors"]}
    assert private_flavor.id in ids and "42" not in ids


def test_is_public_none_and_invalid(cloud, admin_api, api, private_flavor):
    # through openstacksdk: `openstack flavor list --all` sends is_public=None
    conn = cloud.sdk()
    ids = {f.id for f in conn.compute.flavors(is_public=None)}
    assert {private_flavor.id, "42"} <= ids
    r = admin_api.get("/flavors?is_public=maybe")
    assert r.status_code == 400 and "Invalid is_public filter [maybe]" in r.text
    # a member sees the public flavors whatever it asks
    ids = {f["id"] for f in api.get("/flavors?is_public=false").json()["flavors"]}
    assert "42" in ids and private_flavor.id not in ids


def test_servers_all_tenants_and_locked(admin_api, api):
    assert admin_api.get("/servers?all_tenants=t").status_code == 200
    assert admin_api.get("/servers?all_tenants=").status_code == 200
    r = admin_api.get("/servers?all_tenants=maybe")
    assert r.status_code == 400
    # a member asking for every project with any true spelling: nova's policy 403
    assert api.get("/servers?all_tenants=y").status_code == 403
    assert api.get("/servers?all_tenants=off").status_code == 200
    assert api.get("/servers?locked=t").status_code == 200
    assert api.get("/servers?locked=maybe").status_code == 400
