"""Version discovery and microversion negotiation (API)."""

CURRENT = "2.100"  # compute's maximum microversion (raised step by step as microversions land)


def test_versions_root_lists_v21_with_min_and_max(cloud):
    s = cloud.session()
    r = s.get(cloud.url + "/compute/", authenticated=False)
    assert r.status_code == 200
    v21 = [v for v in r.json()["versions"] if v["id"] == "v2.1"][0]
    assert v21["min_version"] == "2.1" and v21["version"] == CURRENT
    assert v21["status"] == "CURRENT"
    r = s.get(cloud.url + "/compute/v2.1/", authenticated=False)
    assert r.json()["version"]["version"] == CURRENT


def test_microversion_is_echoed_with_vary(api):
    r = api.get("/flavors", headers={"OpenStack-API-Version": "compute 2.55"})
    assert r.headers["OpenStack-API-Version"] == "compute 2.55"
    assert r.headers["X-OpenStack-Nova-API-Version"] == "2.55"
    assert "OpenStack-API-Version" in r.headers["Vary"]
    r = api.get("/flavors", headers={"OpenStack-API-Version": "compute latest"})
    assert r.headers["OpenStack-API-Version"] == f"compute {CURRENT}"
    r = api.s.get(api.base + "/flavors", headers={"X-OpenStack-Nova-API-Version": "2.10"})
    assert r.headers["X-OpenStack-Nova-API-Version"] == "2.10"
    r = api.s.get(api.base + "/flavors")
    assert r.headers["X-OpenStack-Nova-API-Version"] == "2.1"


def test_unsupported_microversion_is_406_and_garbage_400(api):
    r = api.get("/flavors", headers={"OpenStack-API-Version": "compute 2.200"})
    assert r.status_code == 406
    assert r.json()["notAcceptable"]["code"] == 406
    major, minor = CURRENT.split(".")
    r = api.get("/flavors", headers={"OpenStack-API-Version": f"compute {major}.{int(minor) + 1}"})
    assert r.status_code == 406
    r = api.get("/flavors", headers={"OpenStack-API-Version": "compute 1.0"})
    assert r.status_code == 406
    r = api.get("/flavors", headers={"OpenStack-API-Version": "compute two"})
    assert r.status_code == 400
    assert "badRequest" in r.json()


def test_sdk_negotiates_and_lists_devstack_flavors(cloud):
    conn = cloud.sdk()
    flavors = {f.name: f for f in conn.compute.flavors()}
    assert flavors["m1.nano"].id == "42" and flavors["m1.micro"].id == "84"
    tiny = flavors["m1.tiny"]
    assert (tiny.ram, tiny.disk, tiny.vcpus) == (512, 1, 1)
    assert flavors["m1.xlarge"].ram == 16384
