"""The dashboard's image upload, network topology, flavor admin, server detail (console log,
instance actions and events, volumes) and the launch form's key pair, security group and
volume fields, over real HTTP and checked against the APIs' own answers. Bad input shows
the API's message with its status, never a 500."""
from __future__ import annotations

import time
import urllib.parse
import uuid

import httpx
import pytest

# The image, admin and member fixtures are conftest.py's.
from helpers.dashboard import alert_text, csrf_token, login, table_row


JSON = {"Accept": "application/json"}  # what upload.js asks for


def _until(fetch, want, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if value in want:
            return value
        assert time.monotonic() < deadline, f"still {value!r}, wanted {want!r}"
        time.sleep(0.05)


# -- images ---------------------------------------------------------------------------

def test_image_upload_streams_the_file_into_glance(cloud, member):
    user, client = member
    page = client.get("/dashboard/images")
    assert 'id="upload-progress"' in page.text and "/static/upload.js" in page.text
    assert client.get("/dashboard/static/upload.js").status_code == 200
    csrf = csrf_token(page.text)
    r = client.post("/dashboard/images/new", headers=JSON, data={
        "csrf_token": csrf, "name": "uploaded", "disk_format": "raw",
        "container_format": "bare", "visibility": "private"})
    assert r.status_code == 201, r.text
    image_id, target = r.json()["id"], r.json()["upload"]
    data = bytes(range(256)) * 4096 + b"tail"  # 1 MiB and a bit, sent in chunks

    def chunks():
        for i in range(0, len(data), 64 * 1024):
            yield data[i:i + 64 * 1024]
    r = client.put(target, content=chunks(), headers={"X-CSRF-Token": csrf,
                                                      "Content-Type":
                                                      "application/octet-stream"})
    assert r.status_code == 200 and r.json()["location"] == "/dashboard/images"
    s = cloud.user_session(user)
    image = s.get(cloud.url + f"/image/v2/images/{image_id}").json()
    assert (image["status"], image["size"], image["name"]) == ("active", len(data), "uploaded")
    assert s.get(cloud.url + f"/image/v2/images/{image_id}/file").content == data
    assert '<th scope="row">uploaded</th><td>active</td>' in client.get(
        "/dashboard/images").text


def test_image_upload_bad_input_gets_the_apis_message_and_leaves_no_image(cloud, member):
    user, client = member
    s = cloud.user_session(user)
    csrf = csrf_token(client.get("/dashboard/images").text)
    form = {"csrf_token": csrf, "name": "bad", "disk_format": "raw",
            "container_format": "bare", "visibility": "private"}
    r = client.post("/dashboard/images/new", headers=JSON,
                    data={**form, "disk_format": "floppy"})
    api = s.post(cloud.url + "/image/v2/images", json={
        "name": "bad", "disk_format": "floppy", "container_format": "bare"}, raise_exc=False)
    assert r.status_code == api.status_code == 400
    assert r.json()["error"] and r.json()["error"] in api.text
    # A member may not publish: glance's 403, shown.
    r = client.post("/dashboard/images/new", headers=JSON,
                    data={**form, "visibility": "public"})
    assert r.status_code == 403 and r.json()["error"]
    assert client.post("/dashboard/images/new", headers=JSON,
                       data={**form, "csrf_token": "x"}).status_code == 403
    # No CSRF header on the upload: refused before anything reaches glance.
    image_id = client.post("/dashboard/images/new", headers=JSON, data=form).json()["id"]
    r = client.put(f"/dashboard/images/{image_id}/file", content=b"x" * 10)
    assert r.status_code == 403
    assert s.get(cloud.url + f"/image/v2/images/{image_id}").json()["status"] == "queued"
    # A file glance refuses (an ISO that is not one): its message, and the image is gone.
    iso = client.post("/dashboard/images/new", headers=JSON,
                      data={**form, "disk_format": "iso"}).json()
    r = client.put(iso["upload"], content=b"not an iso" * 100,
                   headers={"X-CSRF-Token": csrf})
    assert 400 <= r.status_code < 500 and r.json()["error"], r.text
    assert s.get(cloud.url + f"/image/v2/images/{iso['id']}",
                 raise_exc=False).status_code == 404
    r = client.put(f"/dashboard/images/{uuid.uuid4()}/file", content=b"x",
                   headers={"X-CSRF-Token": csrf})
    assert r.status_code == 404 and r.json()["error"]
    assert client.get("/dashboard/images/new").status_code == 405
    # The form posted without JavaScript (no file, no JSON asked for): the page says why.
    r = client.post("/dashboard/images/new", data=form, follow_redirects=True)
    assert r.status_code == 200 and "needs JavaScript" in alert_text(r.text)
    s.delete(cloud.url + f"/image/v2/images/{image_id}")


def test_a_second_upload_to_an_active_image_keeps_it(cloud, member):
    user, client = member
    csrf = csrf_token(client.get("/dashboard/images").text)
    made = client.post("/dashboard/images/new", headers=JSON, data={
        "csrf_token": csrf, "name": "keep", "disk_format": "raw",
        "container_format": "bare"}).json()
    headers = {"X-CSRF-Token": csrf}
    assert client.put(made["upload"], content=b"a" * 512, headers=headers).status_code == 200
    r = client.put(made["upload"], content=b"b" * 512, headers=headers)
    assert r.status_code == 409 and r.json()["error"]
    image = cloud.user_session(user).get(cloud.url + f"/image/v2/images/{made['id']}").json()
    assert (image["status"], image["size"]) == ("active", 512)


# -- networks -------------------------------------------------------------------------

def test_topology_draws_networks_routers_servers_and_ports(cloud, member, image_id):
    user, client = member
    conn = cloud.user_sdk(user)
    net = conn.network.create_network(name="topo-net")
    subnet = conn.network.create_subnet(network_id=net.id, cidr="10.88.0.0/24", ip_version=4)
    router = conn.network.create_router(name="topo-router")
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    server = conn.compute.create_server(name="topo-vm", image_id=image_id, flavor_id="42",
                                        networks=[{"uuid": net.id}])
    try:
        _until(lambda: conn.compute.get_server(server.id).status, ("ACTIVE",))
        [vm_port] = list(conn.network.ports(device_id=server.id))
        [router_port] = list(conn.network.ports(device_id=router.id))
        page = client.get("/dashboard/networks/topology")
        assert page.status_code == 200
        svg = page.text.split("<svg", 1)[1].split("</svg>")[0]
        assert 'role="img"' in svg and '<title id="topology-title">' in svg
        assert f'data-network="{net.id}"' in svg and ">topo-net</text>" in svg
        assert ">10.88.0.0/24</text>" in svg
        vm = svg.split(f'data-device="{server.id}"')[1].split('<g class="device')[0]
        assert "topo-vm</text>" in vm and vm_port.fixed_ips[0]["ip_address"] in vm
        rt = svg.split(f'data-device="{router.id}"')[1].split('<g class="device')[0]
        assert "topo-router</text>" in rt and router_port.fixed_ips[0]["ip_address"] in rt
        desc = svg.split('<desc id="topology-desc">')[1].split("</desc>")[0]
        assert (f"Server topo-vm: on topo-net ({vm_port.fixed_ips[0]['ip_address']})"
                in desc) and "topo-net (10.88.0.0/24)" in desc
        assert "/dashboard/networks/topology" in client.get("/dashboard/networks").text
        # Another project sees none of it.
        other = cloud.make_user()
        stranger = login(cloud, other["name"], other["password"])
        page = stranger.get("/dashboard/networks/topology").text
        stranger.close()
        assert server.id not in page and router.id not in page and "topo-net" not in page
    finally:
        conn.compute.delete_server(server.id)
        _until(lambda: conn.compute.find_server(server.id) is None, (True,))
        conn.network.remove_interface_from_router(router, subnet=subnet.id)
        conn.network.delete_router(router)
        conn.network.delete_network(net)


def test_topology_of_a_project_without_networks(cloud, member):
    user, client = member
    page = client.get("/dashboard/networks/topology")
    assert page.status_code == 200 and "No routers or servers" in page.text


# -- flavors --------------------------------------------------------------------------

def test_admin_creates_and_deletes_flavors_and_sees_the_apis_validation(
        cloud, admin_client, member):
    csrf = csrf_token(admin_client.get("/dashboard/admin/flavors").text)
    name = f"dash3-{uuid.uuid4().hex[:6]}"
    form = {"csrf_token": csrf, "action": "create", "name": name, "id": "",
            "vcpus": "2", "ram": "256", "disk": "1", "is_public": "yes"}
    s = cloud.session()
    api = s.post(cloud.url + "/compute/v2.1/flavors", json={"flavor": {
        "name": name, "vcpus": "two", "ram": 256, "disk": 1}}, raise_exc=False)
    r = admin_client.post("/dashboard/admin/flavors", data={**form, "vcpus": "two"})
    assert r.status_code == api.status_code == 400
    assert alert_text(r.text) == api.json()["badRequest"]["message"]
    assert 'value="two"' in r.text  # the form keeps what was typed
    for bad in ({"ram": "-5"}, {"name": ""}, {"disk": "1.5"}, {"vcpus": ""}):
        r = admin_client.post("/dashboard/admin/flavors", data={**form, **bad})
        assert r.status_code == 400 and alert_text(r.text), bad
    assert name not in {f["name"] for f in s.get(
        cloud.url + "/compute/v2.1/flavors", params={"is_public": "None"}).json()["flavors"]}
    r = admin_client.post("/dashboard/admin/flavors", data=form)
    assert r.status_code == 303 and r.headers["location"] == "/dashboard/admin/flavors"
    [flavor] = [f for f in s.get(cloud.url + "/compute/v2.1/flavors/detail").json()["flavors"]
                if f["name"] == name]
    assert (flavor["vcpus"], flavor["ram"], flavor["disk"]) == (2, 256, 1)
    page = admin_client.get("/dashboard/admin/flavors").text
    assert f'<th scope="row">{name}</th><td>{flavor["id"]}</td><td>2</td>' in page
    r = admin_client.post("/dashboard/admin/flavors", data=form)  # the name is taken
    assert r.status_code == 409 and name in alert_text(r.text)
    user, client = member  # a member gets nova's 403 for the form
    r = client.post("/dashboard/admin/flavors", data={
        **form, "name": "x", "csrf_token": csrf_token(client.get("/dashboard/servers").text)})
    assert r.status_code == 403 and alert_text(r.text)
    r = admin_client.post("/dashboard/admin/flavors", data={
        "csrf_token": csrf, "action": "delete", "flavor_id": flavor["id"]})
    assert r.status_code == 303
    assert s.get(cloud.url + f"/compute/v2.1/flavors/{flavor['id']}",
                 raise_exc=False).status_code == 404
    r = admin_client.post("/dashboard/admin/flavors", data={
        "csrf_token": csrf, "action": "delete", "flavor_id": flavor["id"]})
    assert r.status_code == 404 and alert_text(r.text)
    r = admin_client.post("/dashboard/admin/flavors", data={
        "csrf_token": csrf, "action": "delete", "flavor_id": " "})
    assert r.status_code == 400 and alert_text(r.text)


# -- server detail and the launch form ----------------------------------------------

def test_launch_with_key_group_and_a_new_volume_and_the_detail_shows_them(
        cloud, member, image_id):
    user, client = member
    conn = cloud.user_sdk(user)
    conn.compute.create_keypair(name="dash3-key")
    net = conn.network.create_network(name="dash3-net")
    conn.network.create_subnet(network_id=net.id, cidr="10.89.0.0/24", ip_version=4)
    conn.network.create_security_group(name="dash3-web")
    page = client.get("/dashboard/servers/launch")
    assert '<option value="dash3-key">dash3-key</option>' in page.text
    assert '<option value="dash3-web">dash3-web</option>' in page.text
    csrf = csrf_token(page.text)
    data = {"csrf_token": csrf, "name": "dash3-vm", "image": image_id, "flavor": "42",
            "network": net.id, "key_name": "dash3-key",
            "security_groups": ["dash3-web", "default"],  # a multiple select
            "volume": "attach", "volume_size": "1"}
    r = client.post("/dashboard/servers/launch", data=data)
    assert r.status_code == 303, r.text
    server_id = r.headers["location"].rsplit("/", 1)[1]
    try:
        _until(lambda: conn.compute.get_server(server_id).status, ("ACTIVE", "ERROR"))
        server = conn.compute.get_server(server_id)
        assert server.status == "ACTIVE", server.fault
        assert server.key_name == "dash3-key"
        assert {g["name"] for g in server.security_groups} == {"dash3-web", "default"}
        [attached] = server.attached_volumes
        cloud.user_session(user).put(
            cloud.url + f"/volume/v3/{user['project_id']}/volumes/{attached['id']}",
            json={"volume": {"name": "dash3-data"}})
        page = client.get(r.headers["location"]).text
        assert f'data-volume="{attached["id"]}">dash3-data on /dev/' in page
        assert "<th scope=\"row\">Key pair</th><td>dash3-key</td>" in page
        # Instance actions with their events, as nova lists them to the owner.
        actions = cloud.user_session(user).get(
            cloud.url + f"/compute/v2.1/servers/{server_id}/os-instance-actions").json()
        create = actions["instanceActions"][-1]
        row = page.split(f'data-action="{create["request_id"]}">')[1].split("</tr>")[0]
        assert '<th scope="row">create</th>' in row and "<li" in row
        # The console log is the API's.
        console = cloud.user_session(user).post(
            cloud.url + f"/compute/v2.1/servers/{server_id}/action",
            json={"os-getConsoleOutput": {"length": 100}}).json()["output"]
        assert console.strip()
        log = page.split('id="console-log"')[1].split("</pre>")[0]
        assert console.strip().splitlines()[-1] in log
    finally:
        conn.compute.delete_server(server_id)
        _until(lambda: conn.compute.find_server(server_id) is None, (True,))
        conn.network.delete_network(net)


def test_boot_from_volume_through_the_form(cloud, member, image_id):
    user, client = member
    conn = cloud.user_sdk(user)
    csrf = csrf_token(client.get("/dashboard/servers/launch").text)
    r = client.post("/dashboard/servers/launch", data={
        "csrf_token": csrf, "name": "dash3-bfv", "image": image_id, "flavor": "42",
        "network": "none", "volume": "boot", "volume_size": "1"})
    assert r.status_code == 303, alert_text(r.text)
    server_id = r.headers["location"].rsplit("/", 1)[1]
    try:
        _until(lambda: conn.compute.get_server(server_id).status, ("ACTIVE", "ERROR"))
        server = conn.compute.get_server(server_id)
        assert server.status == "ACTIVE" and not (server.image or {}).get("id")  # from the volume
        [attached] = server.attached_volumes
        assert conn.block_storage.get_volume(attached["id"]).is_bootable
        # The boot volume offers neither detach (nova's 400) nor delete (cinder's 400).
        page = client.get("/dashboard/volumes").text
        row = table_row(page, f'<tr data-volume="{attached["id"]}">')
        assert "boot volume" in row
        assert 'value="detach"' not in row and 'value="delete"' not in row
        r = client.post("/dashboard/volumes", data={
            "csrf_token": csrf, "action": "detach", "volume_id": attached["id"],
            "server_id": server_id})
        assert r.status_code == 400 and alert_text(r.text) == "Cannot detach a root device volume"
    finally:
        conn.compute.delete_server(server_id)
        _until(lambda: conn.compute.find_server(server_id) is None, (True,))


@pytest.mark.parametrize("bad", [
    {"key_name": "no-such-key"}, {"security_groups": "no-such-group", "network": "auto"},
    {"volume": "boot", "volume_size": "big"}, {"volume": "attach", "volume_size": "-1"},
    {"volume": "snapshot", "volume_size": "1"}, {"flavor": "no-such-flavor"},
    {"image": ""}, {"name": ""}, {"network": "not-a-uuid"}])
def test_the_launch_form_shows_the_apis_message_for_bad_input(cloud, member, image_id, bad):
    user, client = member
    page = client.get("/dashboard/servers/launch")
    form = {"csrf_token": csrf_token(page.text), "name": "dash3-bad", "image": image_id,
            "flavor": "42", "network": "none", "volume": "none", **bad}
    r = client.post("/dashboard/servers/launch", data=form)
    assert 400 <= r.status_code < 500 and alert_text(r.text), r.text
    assert list(cloud.user_sdk(user).compute.servers()) == []


def test_server_detail_of_an_unknown_or_foreign_server_is_the_apis_404(cloud, member,
                                                                      image_id):
    user, client = member
    assert client.get(f"/dashboard/servers/{uuid.uuid4()}").status_code == 404
    other = cloud.make_user()
    conn = cloud.user_sdk(other)
    server = conn.compute.create_server(name="dash3-other", image_id=image_id,
                                        flavor_id="42", networks="none")
    try:
        r = client.get(f"/dashboard/servers/{server.id}")
        assert r.status_code == 404 and "dash3-other" not in r.text
    finally:
        conn.compute.delete_server(server.id)


def test_the_live_status_of_a_later_page_follows_its_marker(cloud, member, image_id):
    user, client = member
    conn = cloud.user_sdk(user)
    ids = [conn.compute.create_server(name=f"dash3-page-{i}", image_id=image_id,
                                      flavor_id="42", networks="none").id for i in range(3)]
    try:
        everything = client.get("/dashboard/servers/status").json()
        assert set(ids) <= set(everything)
        marker = list(cloud.user_session(user).get(
            cloud.url + "/compute/v2.1/servers").json()["servers"])[0]["id"]
        later = client.get("/dashboard/servers/status", params={"marker": marker}).json()
        assert marker not in later and len(later) == len(ids) - 1
        r = client.get("/dashboard/servers/status", params={"marker": "nonsense"})
        assert r.status_code == 400 and r.json()["error"]
    finally:
        for sid in ids:
            conn.compute.delete_server(sid)


def test_static_files_are_only_the_dashboards_scripts(cloud, member):
    user, client = member
    assert client.get("/dashboard/static/live.js").status_code == 200
    for name in ("../app.py", "nope.js", "%2e%2e%2fapp.py"):
        r = client.get("/dashboard/static/" + name)
        assert r.status_code == 404 and "Traceback" not in r.text


def test_new_forms_want_a_login(cloud):
    with httpx.Client(base_url=cloud.url) as anonymous:
        r = anonymous.get("/dashboard/networks/topology")
        assert r.status_code == 303
        assert anonymous.post("/dashboard/images/new").status_code == 401
        assert anonymous.put(f"/dashboard/images/{uuid.uuid4()}/file",
                             content=b"x").status_code == 401


GARBAGE = ["²", "１２", "9" * 40, "-0", " ", "\x00", "a" * 300, "<script>x</script>", "1e3",
           "../..", "%00", "ünïcödé"]


@pytest.mark.parametrize("value", GARBAGE)
def test_garbage_in_the_new_forms_is_a_4xx_never_a_500(cloud, admin_client, image_id, value):
    csrf = csrf_token(admin_client.get("/dashboard/servers").text)
    posts = [
        ("/dashboard/admin/flavors", {"action": "create", "name": value, "id": value,
                                      "vcpus": value, "ram": value, "disk": value,
                                      "is_public": value}),
        ("/dashboard/admin/flavors", {"action": "delete", "flavor_id": value}),
        ("/dashboard/servers/launch", {"name": "g", "image": image_id, "flavor": "42",
                                       "network": "none", "volume": "boot",
                                       "volume_size": value}),
        ("/dashboard/servers/launch", {"name": "g", "image": image_id, "flavor": "42",
                                       "network": "auto", "key_name": value,
                                       "security_groups": value, "volume": value,
                                       "volume_size": "1"}),
    ]
    for path, form in posts:
        r = admin_client.post(path, data={"csrf_token": csrf, **form})
        assert r.status_code < 500 and "Traceback" not in r.text, (path, form, r.text[:300])
        assert r.status_code == 303 or 'role="alert"' in r.text, (path, form)
        if r.status_code == 303 and path.endswith("/launch"):  # an odd but valid name
            admin_client.post(r.headers["location"] + "/action",
                              data={"csrf_token": csrf, "action": "delete"})
    r = admin_client.post("/dashboard/images/new", headers=JSON, data={
        "csrf_token": csrf, "name": value, "disk_format": value,
        "container_format": value, "visibility": value})
    assert 400 <= r.status_code < 500 and r.json()["error"]
    r = admin_client.put("/dashboard/images/" + urllib.parse.quote(value, safe="") + "/file",
                         content=b"x", headers={"X-CSRF-Token": csrf})
    assert 400 <= r.status_code < 500, r.text
    r = admin_client.get("/dashboard/servers/" + urllib.parse.quote(value, safe=""))
    assert 400 <= r.status_code < 500 and "Traceback" not in r.text
    r = admin_client.get("/dashboard/servers/status", params={"marker": value})
    assert 400 <= r.status_code < 500


def test_a_superscript_volume_size_is_a_4xx(cloud, member):
    user, client = member
    r = client.post("/dashboard/volumes", data={
        "csrf_token": csrf_token(client.get("/dashboard/volumes").text), "action": "create",
        "name": "v", "size": "²"})
    assert r.status_code == 400 and alert_text(r.text)


def test_resize_confirm_and_snapshot_from_the_server_page(cloud, member, image_id):
    user, client = member
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name="dash3-resize", image_id=image_id,
                                        flavor_id="42", networks="none")
    try:
        _until(lambda: conn.compute.get_server(server.id).status, ("ACTIVE",))
        page = client.get(f"/dashboard/servers/{server.id}").text
        csrf, action = csrf_token(page), f"/dashboard/servers/{server.id}/action"
        bigger = next(f for f in conn.compute.flavors() if f.id != "42" and f.disk >= 1)
        assert f'<option value="{bigger.id}">{bigger.name}</option>' in page
        api = cloud.user_session(user).post(
            cloud.url + f"/compute/v2.1/servers/{server.id}/action",
            json={"resize": {"flavorRef": "42"}}, raise_exc=False)
        r = client.post(action, data={"csrf_token": csrf, "action": "resize", "flavor": "42"})
        assert r.status_code == api.status_code == 400
        assert alert_text(r.text) == api.json()["badRequest"]["message"]
        r = client.post(action, data={"csrf_token": csrf, "action": "resize",
                                      "flavor": bigger.id})
        assert r.status_code == 303
        _until(lambda: conn.compute.get_server(server.id).status, ("VERIFY_RESIZE",))
        page = client.get(f"/dashboard/servers/{server.id}").text
        assert 'value="confirm_resize"' in page and 'value="revert_resize"' in page
        r = client.post(action, data={"csrf_token": csrf, "action": "confirm_resize"})
        assert r.status_code == 303
        _until(lambda: conn.compute.get_server(server.id).status, ("ACTIVE",))
        assert conn.compute.get_server(server.id).flavor.name == bigger.name
        r = client.post(action, data={"csrf_token": csrf, "action": "snapshot",
                                      "snapshot_name": ""})
        assert r.status_code == 400 and alert_text(r.text)
        r = client.post(action, data={"csrf_token": csrf, "action": "snapshot",
                                      "snapshot_name": "dash3-snap"})
        assert r.status_code == 303 and r.headers["location"] == "/dashboard/images"
        assert '<th scope="row">dash3-snap</th>' in client.get("/dashboard/images").text
    finally:
        conn.compute.delete_server(server.id)
        for image in conn.image.images(name="dash3-snap"):
            conn.image.delete_image(image)


def test_an_upload_that_breaks_off_leaves_no_image(cloud, member):
    import socket

    user, client = member
    csrf = csrf_token(client.get("/dashboard/images").text)
    made = client.post("/dashboard/images/new", headers=JSON, data={
        "csrf_token": csrf, "name": "broken-off", "disk_format": "raw",
        "container_format": "bare"}).json()
    host, port = cloud.url.split("//")[1].split(":")
    cookie = f"pocketstack_dashboard={client.cookies['pocketstack_dashboard']}"
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        raw.sendall((f"PUT {made['upload']} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n"
                     f"X-CSRF-Token: {csrf}\r\nContent-Type: application/octet-stream\r\n"
                     f"Content-Length: {1 << 20}\r\n\r\n").encode() + b"x" * 4096)
        time.sleep(0.2)  # the dashboard has begun passing it on
    s = cloud.user_session(user)
    _until(lambda: s.get(cloud.url + f"/image/v2/images/{made['id']}",
                         raise_exc=False).status_code, (404,))
