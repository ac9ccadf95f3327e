"""os-aggregates: CRUD and actions in nova's shape, availability_zone metadata
moving hosts between zones (os-availability-zone, the AvailabilityZoneFilter, a server's
OS-EXT-AZ), nova's zone consistency rules, and the AggregateInstanceExtraSpecsFilter."""
import contextlib
import uuid

import pytest
from compute_rest import public_image

from helpers.cloud import own_cloud

CREATE_KEYS = {"availability_zone", "created_at", "deleted", "deleted_at", "id", "name",
               "updated_at"}
V21 = {"OpenStack-API-Version": "compute 2.1"}


@pytest.fixture(scope="module")
def cloud():
    """A cloud of its own: nova refuses to move a host that holds servers into another
    zone, and the session's shared cloud keeps what other files left on its hosts."""
    with own_cloud("aggregates") as c, c.cloud.runtime.activated():
        yield c


@pytest.fixture(scope="module")
def image_id(cloud):
    return public_image(cloud, "aggregates")


@contextlib.contextmanager
def aggregate(admin_api, zone=None, hosts=(), metadata=None):
    body = {"name": f"agg-{uuid.uuid4().hex[:6]}"}
    if zone:
        body["availability_zone"] = zone
    r = admin_api.post("/os-aggregates", {"aggregate": body})
    assert r.status_code == 200, r.text
    agg = r.json()["aggregate"]
    try:
        for host in hosts:
            r = admin_api.post(f"/os-aggregates/{agg['id']}/action",
                               {"add_host": {"host": host}})
            assert r.status_code == 200, r.text
        if metadata:
            r = admin_api.post(f"/os-aggregates/{agg['id']}/action",
                               {"set_metadata": {"metadata": metadata}})
            assert r.status_code == 200, r.text
        yield agg
    finally:
        shown = admin_api.get(f"/os-aggregates/{agg['id']}")
        for host in (shown.json()["aggregate"]["hosts"] if shown.status_code == 200 else []):
            admin_api.post(f"/os-aggregates/{agg['id']}/action",
                           {"remove_host": {"host": host}})
        admin_api.delete(f"/os-aggregates/{agg['id']}")


def _zones(api, detail=False):
    path = "/os-availability-zone" + ("/detail" if detail else "")
    return {z["zoneName"]: z for z in api.get(path).json()["availabilityZoneInfo"]}


def test_crud_shapes_and_zone_listing(api, admin_api):
    r = admin_api.post("/os-aggregates", {"aggregate": {"name": "shape-agg",
                                                        "availability_zone": "az-shape"}})
    assert r.status_code == 200, r.text
    agg = r.json()["aggregate"]
    assert set(agg) == CREATE_KEYS | {"uuid"}  # create shows no hosts/metadata
    assert agg["availability_zone"] == "az-shape" and agg["deleted"] is False
    old = admin_api.get(f"/os-aggregates/{agg['id']}", headers=V21).json()["aggregate"]
    assert set(old) == CREATE_KEYS | {"hosts", "metadata"}
    assert old["metadata"] == {"availability_zone": "az-shape"}
    r = admin_api.post(f"/os-aggregates/{agg['id']}/action", {"add_host": {"host": "cmp-3"}})
    assert r.status_code == 200 and r.json()["aggregate"]["hosts"] == ["cmp-3"]
    assert "az-shape" in _zones(api)
    assert "cmp-3" in _zones(admin_api, detail=True)["az-shape"]["hosts"]
    assert "cmp-3" not in _zones(admin_api, detail=True)["nova"]["hosts"]
    r = admin_api.req("PUT", f"/os-aggregates/{agg['id']}",
                      json={"aggregate": {"name": "shape-agg-2"}})
    assert r.status_code == 200 and r.json()["aggregate"]["name"] == "shape-agg-2"
    r = admin_api.post(f"/os-aggregates/{agg['id']}/action",
                       {"set_metadata": {"metadata": {"ssd": "true", "gpu": None}}})
    assert r.json()["aggregate"]["metadata"] == {"availability_zone": "az-shape", "ssd": "true"}
    r = admin_api.post(f"/os-aggregates/{agg['id']}/action",
                       {"set_metadata": {"metadata": {"ssd": None}}})
    assert r.json()["aggregate"]["metadata"] == {"availability_zone": "az-shape"}
    assert admin_api.delete(f"/os-aggregates/{agg['id']}").status_code == 400  # not empty
    admin_api.post(f"/os-aggregates/{agg['id']}/action", {"remove_host": {"host": "cmp-3"}})
    assert "az-shape" not in _zones(api)
    r = admin_api.delete(f"/os-aggregates/{agg['id']}")
    assert r.status_code == 200
    assert admin_api.get(f"/os-aggregates/{agg['id']}").status_code == 404


def test_zone_moves_hosts_for_scheduling(api, admin_api, image_id):
    with aggregate(admin_api, zone="az-london", hosts=["cmp-2"]):
        sid = api.boot(image_id, availability_zone="az-london")
        s = api.wait(sid)
        assert s["status"] == "ACTIVE" and s["OS-EXT-AZ:availability_zone"] == "az-london"
        assert admin_api.server(sid)["OS-EXT-SRV-ATTR:host"] == "cmp-2"
        # a host with servers does not change zone under them (nova's rule)
        with aggregate(admin_api) as other:
            r = admin_api.post(f"/os-aggregates/{other['id']}/action",
                               {"add_host": {"host": "cmp-2"}})
            assert r.status_code == 200  # no zone: fine
            r = admin_api.post(f"/os-aggregates/{other['id']}/action",
                               {"set_metadata": {"metadata": {"availability_zone": "paris"}}})
            assert r.status_code == 400, r.text
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
        # nova-zone boots stay off the london host
        r = api.post("/servers", {"server": {"name": "z", "imageRef": image_id,
                                             "flavorRef": "42", "networks": "none",
                                             "availability_zone": "nova"}})
        sid = r.json()["server"]["id"]
        api.wait(sid)
        assert admin_api.server(sid)["OS-EXT-SRV-ATTR:host"] != "cmp-2"
        api.delete(f"/servers/{sid}")
    r = api.post("/servers", {"server": {"name": "z", "imageRef": image_id, "flavorRef": "42",
                                         "networks": "none",
                                         "availability_zone": "az-london"}})
    assert r.status_code == 400  # the zone is gone with its aggregate


def test_a_host_is_in_one_zone(admin_api):
    with aggregate(admin_api, zone="az-a", hosts=["cmp-4"]) as a:
        with aggregate(admin_api, zone="az-b") as b:
            r = admin_api.post(f"/os-aggregates/{b['id']}/action",
                               {"add_host": {"host": "cmp-4"}})
            assert r.status_code == 409 and "az-a" in r.json()["conflictingRequest"]["message"]
        with aggregate(admin_api, zone="az-a") as same:
            r = admin_api.post(f"/os-aggregates/{same['id']}/action",
                               {"add_host": {"host": "cmp-4"}})
            assert r.status_code == 200
        with aggregate(admin_api, hosts=["cmp-4"]) as plain:
            r = admin_api.req("PUT", f"/os-aggregates/{plain['id']}",
                              json={"aggregate": {"availability_zone": "az-c"}})
            assert r.status_code == 400
        assert a["availability_zone"] == "az-a"


def test_aggregate_instance_extra_specs_filter(api, admin_api, image_id):
    r = admin_api.post("/flavors", {"flavor": {"name": f"ssd-{uuid.uuid4().hex[:4]}",
                                               "ram": 128, "vcpus": 1, "disk": 1}})
    fid = r.json()["flavor"]["id"]
    admin_api.post(f"/flavors/{fid}/os-extra_specs",
                   {"extra_specs": {"aggregate_instance_extra_specs:ssd": "true"}})
    try:
        sid = api.boot(image_id, flavor=fid)
        s = api.wait(sid)
        assert s["status"] == "ERROR"
        assert "AggregateInstanceExtraSpecsFilter removed 4" in s["fault"]["message"]
        api.delete(f"/servers/{sid}")
        with aggregate(admin_api, hosts=["cmp-1"], metadata={"ssd": "true"}):
            ids = [api.boot(image_id, flavor=fid) for _ in range(2)]
            assert {admin_api.server(i)["OS-EXT-SRV-ATTR:host"]
                    for i in ids if api.wait(i)} == {"cmp-1"}
            for i in ids:
                api.delete(f"/servers/{i}")
                api.wait_gone(i)
    finally:
        admin_api.delete(f"/flavors/{fid}")


def test_bad_aggregate_requests(api, admin_api):
    def post(path, body):
        return admin_api.post(path, body).status_code

    with aggregate(admin_api, zone="az-bad", hosts=["cmp-1"]) as agg:
        base = f"/os-aggregates/{agg['id']}"
        assert post("/os-aggregates", {"aggregate": {"name": agg["name"]}}) == 409
        assert post("/os-aggregates", {"aggregate": {}}) == 400
        assert post("/os-aggregates", {"aggregate": {"name": "x", "extra": 1}}) == 400
        assert post("/os-aggregates", {"aggregate": {"name": "x",
                                                     "availability_zone": "a:b"}}) == 400
        assert post(base + "/action", {"add_host": {"host": "cmp-1"}}) == 409
        assert post(base + "/action", {"add_host": {"host": "no-such-host"}}) == 404
        assert post(base + "/action", {"add_host": {"host": "bad host!"}}) == 400
        assert post(base + "/action", {"add_host": {}}) == 400
        assert post(base + "/action", {"remove_host": {"host": "cmp-2"}}) == 404
        assert post(base + "/action", {"set_metadata": {"metadata": {"k" * 256: "v"}}}) == 400
        assert post(base + "/action", {"set_metadata": {}}) == 400
        assert post(base + "/action", {"explode": {}}) == 400
        assert post(base + "/action", {"add_host": {"host": "cmp-2"},
                                       "remove_host": {"host": "cmp-1"}}) == 400
        assert admin_api.req("PUT", base, json={"aggregate": {}}).status_code == 400
        assert admin_api.get("/os-aggregates/abc").status_code == 400
        assert admin_api.get("/os-aggregates/99999999").status_code == 404
        assert post("/os-aggregates/99999999/action", {"add_host": {"host": "cmp-1"}}) == 404
        # members are not admins
        assert api.get("/os-aggregates").status_code == 403
        assert api.post("/os-aggregates", {"aggregate": {"name": "mine"}}).status_code == 403
        assert api.post(base + "/action", {"add_host": {"host": "cmp-2"}}).status_code == 403
        hosts = admin_api.get(base).json()["aggregate"]["hosts"]
        assert hosts == ["cmp-1"]


@pytest.mark.cli
def test_openstack_cli_aggregate_and_zone(cloud):
    agg = cloud.cli("aggregate", "create", "--zone", "az-cli", "cli-agg", "-f", "json")
    try:
        cloud.cli("aggregate", "add", "host", "cli-agg", "cmp-4")
        cloud.cli("aggregate", "set", "--property", "ssd=true", "cli-agg")
        shown = cloud.cli("aggregate", "show", "cli-agg", "-f", "json")
        assert shown["hosts"] == ["cmp-4"] and shown["availability_zone"] == "az-cli"
        zones = cloud.cli("availability", "zone", "list", "--compute", "-f", "json")
        assert "az-cli" in {z["Zone Name"] for z in zones}
        cloud.cli("aggregate", "remove", "host", "cli-agg", "cmp-4")
    finally:
        cloud.cli("aggregate", "delete", str(agg["id"]), check=False)
