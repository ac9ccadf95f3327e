"""Compute microversions 2.97-2.100 through keystoneauth (explicit microversion
headers) and the openstack CLI, with the error cases nova answers."""
import uuid

import pytest
from compute_rest import Compute


def _at(cloud, session, version):
    return Compute(cloud, session, version)


@pytest.fixture(scope="module")
def server(api, image_id):
    sid = api.boot(image_id)
    assert api.wait(sid)["status"] == "ACTIVE"
    yield sid
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def _stop(api, sid):
    assert api.post(f"/servers/{sid}/action", {"os-stop": None}).status_code == 202
    assert api.wait(sid, ("SHUTOFF",))["OS-EXT-STS:task_state"] is None


def _start(api, sid):
    assert api.post(f"/servers/{sid}/action", {"os-start": None}).status_code == 202
    api.wait(sid, ("ACTIVE",))


# --- 2.97: server shares, in a cloud without a shared-file-system service ------------------

def test_297_shares_below_297_are_404(cloud, api, server):
    old = _at(cloud, api.s, "2.96")
    share = str(uuid.uuid4())
    assert old.get(f"/servers/{server}/shares").status_code == 404
    assert old.get(f"/servers/{server}/shares/{share}").status_code == 404
    assert old.post(f"/servers/{server}/shares",
                    {"share": {"share_id": share}}).status_code == 404
    assert old.delete(f"/servers/{server}/shares/{share}").status_code == 404


def test_297_list_show_and_schema(cloud, api, server):
    new = _at(cloud, api.s, "2.97")
    share = str(uuid.uuid4())
    r = new.get(f"/servers/{server}/shares")
    assert r.status_code == 200 and r.json() == {"shares": []}
    assert r.headers["OpenStack-API-Version"] == "compute 2.97"
    r = new.get(f"/servers/{server}/shares/{share}")
    assert r.status_code == 404
    assert r.json()["itemNotFound"]["message"] == f"Share {share} could not be found."
    # no query parameters (nova's index_query / show_query)
    assert new.get(f"/servers/{server}/shares?limit=1").status_code == 400
    assert new.get(f"/servers/{server}/shares/{share}?x=1").status_code == 400
    # an unknown server
    assert new.get(f"/servers/{uuid.uuid4()}/shares").status_code == 404
    for bad in ({}, {"share": {}}, {"share": {"share_id": "not-a-uuid"}},
                {"share": {"share_id": share, "tag": ""}},
                {"share": {"share_id": share, "tag": "has space"}},
                {"share": {"share_id": share, "tag": "x" * 256}},
                {"share": {"share_id": share, "extra": 1}}, {"share": share},
                {"share": {"share_id": share}, "more": 1}, [], None):
        r = new.post(f"/servers/{server}/shares", bad)
        assert r.status_code == 400, (bad, r.text)
        assert r.json()["badRequest"]["code"] == 400


def test_297_attach_detach_need_a_stopped_server(cloud, api, server):
    new = _at(cloud, api.s, "2.97")
    share = str(uuid.uuid4())
    r = new.post(f"/servers/{server}/shares", {"share": {"share_id": share, "tag": "data"}})
    assert r.status_code == 409
    assert r.json()["conflictingRequest"]["message"] == (
        f"Cannot 'create share' instance {server} while it is in vm_state active")
    r = new.delete(f"/servers/{server}/shares/{share}")
    assert r.status_code == 409
    assert "'delete share'" in r.json()["conflictingRequest"]["message"]
    _stop(api, server)
    try:
        # the flavor asks for no hugepages and the host has no file-backed memory: nova's
        # ForbiddenSharesNotConfiguredCorrectly
        r = new.post(f"/servers/{server}/shares", {"share": {"share_id": share}})
        assert r.status_code == 409, r.text
        assert r.json()["conflictingRequest"]["message"] == (
            "Feature not supported because either compute or instance are not configured "
            "correctly.")
        r = new.delete(f"/servers/{server}/shares/{share}")
        assert r.status_code == 404
        assert r.json()["itemNotFound"]["message"] == f"Share {share} could not be found."
        assert new.get(f"/servers/{server}/shares").json() == {"shares": []}
    finally:
        _start(api, server)


def test_297_attach_without_share_service_is_503(cloud, api, admin_api, image_id):
    """A flavor with hw:mem_page_size passes nova's host check; nova would then fail to
    reach Manila (a 500): we answer 503 in nova's format."""
    admin = _at(cloud, admin_api.s, "2.97")
    fid = f"shares-{uuid.uuid4().hex[:6]}"
    r = admin.post("/flavors", {"flavor": {"name": fid, "id": fid, "ram": 64, "vcpus": 1,
                                           "disk": 1}})
    assert r.status_code == 200, r.text
    r = admin.post(f"/flavors/{fid}/os-extra_specs",
                   {"extra_specs": {"hw:mem_page_size": "small"}})
    assert r.status_code == 200, r.text
    new = _at(cloud, api.s, "2.97")
    sid = new.boot(image_id, flavor=fid)
    try:
        assert new.wait(sid)["status"] == "ACTIVE"
        _stop(new, sid)
        share = str(uuid.uuid4())
        r = new.post(f"/servers/{sid}/shares", {"share": {"share_id": share}})
        assert r.status_code == 503, r.text
        message = r.json()["serviceUnavailable"]["message"]
        assert "shared-file-system" in message and share in message
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
        admin.delete(f"/flavors/{fid}")


def test_297_share_policies(cloud, api, make_api, server):
    stranger = _at(cloud, make_api(cloud.make_user(roles=("member",))).s, "2.97")
    # another project's server is not found, as nova
    assert stranger.get(f"/servers/{server}/shares").status_code == 404
    reader = _at(cloud, make_api(cloud.make_user(roles=("reader",))).s, "2.97")
    assert reader.get(f"/servers/{server}/shares").status_code == 404


# --- 2.98: the image's properties in the server's image -------------------------------------

@pytest.fixture(scope="module")
def image_with_props(cloud):
    s = cloud.session()
    r = s.post(cloud.url + "/image/v2/images",
               json={"name": f"props-{uuid.uuid4().hex[:6]}", "disk_format": "qcow2",
                     "container_format": "bare", "visibility": "public",
                     "hw_qemu_guest_agent": "yes", "os_distro": "cirros",
                     "architecture": "x86_64", "not_an_image_meta_prop": "hidden"})
    image = r.json()
    from pocketstack.common.image_formats import qcow2_header

    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=qcow2_header(1 << 20),
          headers={"Content-Type": "application/octet-stream"})
    return image["id"]


_PROPS = {"hw_qemu_guest_agent": "yes", "os_distro": "cirros", "architecture": "x86_64"}


def test_298_image_properties(cloud, api, image_id, image_with_props):
    new = _at(cloud, api.s, "2.98")
    old = _at(cloud, api.s, "2.97")
    sid = new.boot(image_with_props)
    try:
        shown = new.wait(sid)
        assert shown["image"]["id"] == image_with_props
        assert shown["image"]["properties"] == _PROPS
        assert "properties" not in old.server(sid)["image"]
        listed = {s["id"]: s for s in new.get("/servers/detail").json()["servers"]}
        assert listed[sid]["image"]["properties"] == _PROPS
        assert all("properties" not in s["image"]
                   for s in old.get("/servers/detail").json()["servers"] if s["image"])
        r = new.req("PUT", f"/servers/{sid}", json={"server": {"name": "renamed"}})
        assert r.status_code == 200 and r.json()["server"]["image"]["properties"] == _PROPS
        # rebuilt from an image without such properties: the new image's (none)
        r = new.post(f"/servers/{sid}/action", {"rebuild": {"imageRef": image_id}})
        assert r.status_code == 202, r.text
        assert r.json()["server"]["image"] == {
            "id": image_id, "properties": {},
            "links": r.json()["server"]["image"]["links"]}
        assert new.wait(sid)["image"]["properties"] == {}
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)


# --- 2.99: the spice-direct console type ----------------------------------------------------

def test_299_spice_direct_console(cloud, api, server):
    new = _at(cloud, api.s, "2.99")
    old = _at(cloud, api.s, "2.98")
    body = {"remote_console": {"protocol": "spice", "type": "spice-direct"}}
    r = old.post(f"/servers/{server}/remote-consoles", body)
    assert r.status_code == 400  # not in the schema before 2.99
    assert "Invalid input" in r.json()["badRequest"]["message"]
    # our hosts have no SPICE: nova's ConsoleTypeUnavailable
    r = new.post(f"/servers/{server}/remote-consoles", body)
    assert r.status_code == 400
    assert r.json()["badRequest"]["message"] == "Unavailable console type spice-direct."
    r = new.post(f"/servers/{server}/remote-consoles",
                 {"remote_console": {"protocol": "vnc", "type": "spice-direct"}})
    assert r.status_code == 400
    r = new.post(f"/servers/{server}/remote-consoles",
                 {"remote_console": {"protocol": "serial", "type": "serial"}})
    assert r.status_code == 200 and r.json()["remote_console"]["url"]


# --- 2.100: the scheduler hints the server was created with ---------------------------------

def test_2100_scheduler_hints(cloud, api, image_id, server):
    new = _at(cloud, api.s, "2.100")
    old = _at(cloud, api.s, "2.99")
    r = new.post("/servers", {
        "server": {"name": "hinted", "imageRef": image_id, "flavorRef": "42",
                   "networks": "none"},
        "OS-SCH-HNT:scheduler_hints": {"same_host": server}})
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    try:
        hints = {"same_host": [server]}
        assert new.wait(sid)["scheduler_hints"] == hints
        assert new.server(server)["scheduler_hints"] == {}
        assert "scheduler_hints" not in old.server(sid)
        listed = {s["id"]: s for s in new.get("/servers/detail").json()["servers"]}
        assert listed[sid]["scheduler_hints"] == hints
        assert listed[server]["scheduler_hints"] == {}
        assert "scheduler_hints" not in new.get("/servers").json()["servers"][0]
        r = new.req("PUT", f"/servers/{sid}", json={"server": {"name": "renamed"}})
        assert r.status_code == 200 and r.json()["server"]["scheduler_hints"] == hints
        r = new.post(f"/servers/{sid}/action", {"rebuild": {"imageRef": image_id}})
        assert r.status_code == 202 and r.json()["server"]["scheduler_hints"] == hints
        new.wait(sid)
        shown = cloud.cli("--os-compute-api-version", "2.100", "server", "show", sid,
                          "-f", "json")
        assert shown["scheduler_hints"] == hints
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)


def test_299_console_auth_token(cloud, api, admin_api, server):
    r = _at(cloud, api.s, "2.99").post(
        f"/servers/{server}/remote-consoles",
        {"remote_console": {"protocol": "serial", "type": "serial"}})
    token = r.json()["remote_console"]["url"].split("token=")[1]
    admin = _at(cloud, admin_api.s, "2.99")
    r = admin.get(f"/os-console-auth-tokens/{token}")
    assert r.status_code == 200, r.text
    console = r.json()["console"]
    assert console["instance_uuid"] == server and "tls_port" not in console
    assert set(console) == {"instance_uuid", "host", "port", "internal_access_path"}
    # 2.99 takes no query parameters; before it they are ignored
    assert admin.get(f"/os-console-auth-tokens/{token}?x=1").status_code == 400
    assert _at(cloud, admin_api.s, "2.98").get(
        f"/os-console-auth-tokens/{token}?x=1").status_code == 200
    assert _at(cloud, admin_api.s, "2.30").get(
        f"/os-console-auth-tokens/{token}").status_code == 400
    r = admin.get("/os-console-auth-tokens/no-such-token")
    assert r.status_code == 404 and r.json()["itemNotFound"]["message"] == "Token not found"
    # admin only
    assert _at(cloud, api.s, "2.99").get(
        f"/os-console-auth-tokens/{token}").status_code == 403
