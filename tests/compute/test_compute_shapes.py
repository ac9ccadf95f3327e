"""Server create/show/list-detail responses against nova's published shapes:
the exact key sets of nova's api_samples (doc/api_samples/servers: server-create-resp,
server-get-resp, servers-details-resp at 2.1, 2.47 and 2.73 — 2.74…2.79 add no server
keys, 2.79 only delete_on_termination inside volumes_attached), for an admin looking at a
member's ACTIVE server on a network. Also networks=auto with several networks (409)."""
import uuid

import pytest

# Key lists copied from nova's api_samples (servers/*.json), nothing else.
CREATE = {"OS-DCF:diskConfig", "adminPass", "id", "links", "security_groups"}
SHOW_21 = {
    "OS-DCF:diskConfig", "OS-EXT-AZ:availability_zone", "OS-EXT-SRV-ATTR:host",
    "OS-EXT-SRV-ATTR:hypervisor_hostname", "OS-EXT-SRV-ATTR:instance_name",
    "OS-EXT-STS:power_state", "OS-EXT-STS:task_state", "OS-EXT-STS:vm_state",
    "OS-SRV-USG:launched_at", "OS-SRV-USG:terminated_at", "accessIPv4", "accessIPv6",
    "addresses", "config_drive", "created", "flavor", "hostId", "id", "image", "key_name",
    "links", "metadata", "name", "os-extended-volumes:volumes_attached", "progress",
    "security_groups", "status", "tenant_id", "updated", "user_id"}
SHOW_247 = SHOW_21 | {
    "OS-EXT-SRV-ATTR:hostname", "OS-EXT-SRV-ATTR:kernel_id", "OS-EXT-SRV-ATTR:launch_index",
    "OS-EXT-SRV-ATTR:ramdisk_id", "OS-EXT-SRV-ATTR:reservation_id",
    "OS-EXT-SRV-ATTR:root_device_name", "OS-EXT-SRV-ATTR:user_data", "description",
    "host_status", "locked", "tags"}
DETAIL_279 = SHOW_247 | {"locked_reason", "trusted_image_certificates"}
SHOW_279 = DETAIL_279 | {"server_groups"}  # 2.71: show (not list) names the groups
FLAVOR_21 = {"id", "links"}
FLAVOR_247 = {"disk", "ephemeral", "extra_specs", "original_name", "ram", "swap", "vcpus"}
ADDRESS = {"OS-EXT-IPS-MAC:mac_addr", "OS-EXT-IPS:type", "addr", "version"}
# what a project member sees: no OS-EXT-SRV-ATTR:*, no host_status (admin-only policies)
MEMBER_HIDDEN = {k for k in SHOW_247 if k.startswith("OS-EXT-SRV-ATTR:")} | {"host_status"}


@pytest.fixture(scope="module")
def booted(cloud, api, image_id, member):
    s = cloud.user_session(member)
    base = cloud.url + "/network/v2.0"
    r = s.post(base + "/networks", json={"network": {"name": f"shape-{uuid.uuid4().hex[:4]}"}},
               raise_exc=False)
    if r.status_code == 404:
        pytest.skip("the network service is not mounted in this tree")
    net = r.json()["network"]
    s.post(base + "/subnets", json={"subnet": {"network_id": net["id"], "ip_version": 4,
                                               "cidr": "10.9.0.0/24"}})
    r = api.post("/servers", {"server": {"name": "shape-vm", "imageRef": image_id,
                                         "flavorRef": "42",
                                         "networks": [{"uuid": net["id"]}]}},
                 headers={"OpenStack-API-Version": "compute 2.1"})
    assert r.status_code == 202, r.text
    created = r.json()
    sid = created["server"]["id"]
    assert api.wait(sid)["status"] == "ACTIVE"
    yield {"id": sid, "create": created, "net": net}
    api.delete(f"/servers/{sid}")


def _get(api, path, version):
    r = api.get(path, headers={"OpenStack-API-Version": f"compute {version}"})
    assert r.status_code == 200, r.text
    return r.json()


def test_create_response(booted):
    assert set(booted["create"]) == {"server"}
    assert set(booted["create"]["server"]) == CREATE


@pytest.mark.parametrize("version,keys,flavor", [("2.1", SHOW_21, FLAVOR_21),
                                                 ("2.47", SHOW_247, FLAVOR_247),
                                                 ("2.79", SHOW_279, FLAVOR_247)])
def test_show_response(admin_api, booted, version, keys, flavor):
    server = _get(admin_api, f"/servers/{booted['id']}", version)["server"]
    assert set(server) == keys, (set(server) ^ keys)
    assert set(server["flavor"]) == flavor
    [addrs] = server["addresses"].values()
    assert all(set(a) == ADDRESS for a in addrs)
    assert {link["rel"] for link in server["links"]} == {"self", "bookmark"}
    assert set(server["image"]) == {"id", "links"}


@pytest.mark.parametrize("version,keys", [("2.1", SHOW_21), ("2.47", SHOW_247),
                                          ("2.79", DETAIL_279)])
def test_list_detail_response(admin_api, booted, version, keys):
    body = _get(admin_api, "/servers/detail?all_tenants=1&name=^shape-vm$", version)
    assert set(body) == {"servers"}
    [server] = body["servers"]
    assert set(server) == keys, (set(server) ^ keys)


def test_member_view_has_no_admin_fields(api, booted):
    server = _get(api, f"/servers/{booted['id']}", "2.79")["server"]
    assert set(server) == SHOW_279 - MEMBER_HIDDEN
    listed = _get(api, "/servers", "2.79")["servers"]
    assert all(set(s) == {"id", "links", "name"} for s in listed)


def test_networks_auto_with_several_networks_is_409(cloud, api, image_id, member, booted):
    s = cloud.user_session(member)
    other = s.post(cloud.url + "/network/v2.0/networks",
                   json={"network": {"name": "second"}}).json()["network"]
    s.post(cloud.url + "/network/v2.0/subnets",
           json={"subnet": {"network_id": other["id"], "ip_version": 4,
                            "cidr": "10.10.0.0/24"}})
    try:
        r = api.post("/servers", {"server": {"name": "auto", "imageRef": image_id,
                                             "flavorRef": "42", "networks": "auto"}})
        assert r.status_code == 409, r.text
        assert "Multiple possible networks" in r.json()["conflictingRequest"]["message"]
        # before 2.37 no networks means the same
        r = api.post("/servers", {"server": {"name": "auto", "imageRef": image_id,
                                             "flavorRef": "42"}},
                     headers={"OpenStack-API-Version": "compute 2.36"})
        assert r.status_code == 409, r.text
        servers = api.get("/servers?name=^auto$").json()["servers"]
        assert servers == []
    finally:
        s.delete(cloud.url + f"/network/v2.0/networks/{other['id']}")
