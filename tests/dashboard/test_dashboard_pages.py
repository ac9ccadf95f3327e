"""The dashboard's resource pages over real HTTP, each checked against the API's own answer:
admin (hypervisors, services, all servers, flavors, fault rules), volumes, keypairs, images
and networks. A member gets the API's refusal shown, never a 500."""
from __future__ import annotations

import re
import time
import uuid

import httpx
import pytest

from helpers.dashboard import alert_text, csrf_token, table_row


def test_admin_sees_hypervisors_with_usage_bars_as_the_api_counts_them(cloud, admin_client):
    page = admin_client.get("/dashboard/admin/hypervisors")
    assert page.status_code == 200
    hypervisors = cloud.session().get(
        cloud.url + "/compute/v2.1/os-hypervisors/detail").json()["hypervisors"]
    assert hypervisors
    for h in hypervisors:
        assert f'<th scope="row">{h["hypervisor_hostname"]}</th>' in page.text
        assert (f'RAM (MB)</span>: {h["memory_mb_used"]} of {h["memory_mb"]}' in page.text)
        assert f'max="{h["vcpus"]}" value="{h["vcpus_used"]}"' in page.text
    assert "<meter aria-labelledby=" in page.text


def test_admin_sees_services_up_and_down(cloud, admin_client):
    page = admin_client.get("/dashboard/admin/services")
    assert page.status_code == 200
    services = cloud.session().get(cloud.url + "/compute/v2.1/os-services").json()["services"]
    assert services
    for s in services:
        assert (f'data-service-state="{s["host"]}/{s["binary"]}">{s["state"]}</td>'
                in page.text)


def test_all_servers_for_the_admin_and_the_apis_403_for_a_member(
        cloud, admin_client, member, image_id):
    user, client = member
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name=f"dash2-{uuid.uuid4().hex[:6]}",
                                        image_id=image_id, flavor_id="42", networks="none")
    try:
        page = admin_client.get("/dashboard/admin/servers")
        assert page.status_code == 200 and "<caption>Servers of every project" in page.text
        # Another project's server is on the admin's list, with its project's name.
        assert (f'<th scope="row">{server.name}</th><td data-project="{user["project_id"]}">'
                f'{user["project_name"]}</td>') in page.text
        # The admin menu is only for admins (the pages are the API's to refuse, below).
        assert 'aria-label="Admin"' in page.text
        assert 'aria-label="Admin"' not in client.get("/dashboard/servers").text
        refused = client.get("/dashboard/admin/servers")
        api = cloud.user_session(user).get(cloud.url + "/compute/v2.1/servers/detail",
                                           params={"all_tenants": 1}, raise_exc=False)
        assert api.status_code == refused.status_code == 403
        assert alert_text(refused.text) == api.json()["forbidden"]["message"]
        for path in ("/dashboard/admin/hypervisors", "/dashboard/admin/services",
                     "/dashboard/admin/faults"):
            assert client.get(path).status_code == 403
    finally:
        conn.compute.delete_server(server.id)


def test_flavors_page_lists_every_flavor(cloud, admin_client):
    page = admin_client.get("/dashboard/admin/flavors")
    assert page.status_code == 200
    flavors = cloud.sdk().compute.flavors()
    for f in flavors:
        assert f"<th scope=\"row\">{f.name}</th><td>{f.id}</td><td>{f.vcpus}</td>" in page.text


def _until(fetch, want, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if value == want:
            return value
        assert time.monotonic() < deadline, f"still {value!r}, wanted {want!r}"
        time.sleep(0.05)


def _active_server(cloud, user, image_id):
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name=f"dash2-{uuid.uuid4().hex[:6]}",
                                        image_id=image_id, flavor_id="42", networks="none")
    _until(lambda: conn.compute.get_server(server.id).status, "ACTIVE")
    return conn, server


def test_volumes_create_attach_detach_and_the_apis_message_on_bad_input(
        cloud, member, image_id):
    user, client = member
    conn, server = _active_server(cloud, user, image_id)
    try:
        page = client.get("/dashboard/volumes")
        assert page.status_code == 200 and "No volumes in this project" in page.text
        csrf = csrf_token(page.text)
        r = client.post("/dashboard/volumes", data={"csrf_token": csrf, "action": "create",
                                                    "name": "data", "size": "abc"})
        assert r.status_code == 400 and "size" in alert_text(r.text).lower()
        assert 'value="abc"' in r.text  # the form keeps what was typed
        assert client.post("/dashboard/volumes", data={
            "action": "create", "name": "data", "size": "1"}).status_code == 403  # no CSRF
        assert list(conn.block_storage.volumes()) == []
        r = client.post("/dashboard/volumes", data={"csrf_token": csrf, "action": "create",
                                                    "name": "data", "size": "1"})
        assert r.status_code == 303 and r.headers["location"] == "/dashboard/volumes"
        [volume] = list(conn.block_storage.volumes())
        assert volume.name == "data" and volume.size == 1
        _until(lambda: conn.block_storage.get_volume(volume.id).status, "available")
        assert f'id="attach-{volume.id}"' in client.get("/dashboard/volumes").text
        r = client.post("/dashboard/volumes", data={"csrf_token": csrf, "action": "attach",
                                                    "volume_id": volume.id,
                                                    "server_id": server.id})
        assert r.status_code == 303
        _until(lambda: conn.block_storage.get_volume(volume.id).status, "in-use")
        page = client.get("/dashboard/volumes").text
        assert f'data-volume-status="{volume.id}">in-use' in page
        assert f"{server.name} (/dev/" in page
        # Attach is offered only where it can work: not on an in-use, single-attach volume;
        # nor delete, which cinder refuses for an attached volume (a forged one: its 400).
        assert f'id="attach-{volume.id}"' not in page
        row = table_row(page, f'<tr data-volume="{volume.id}">')
        assert 'value="detach"' in row and 'value="delete"' not in row
        r = client.post("/dashboard/volumes", data={"csrf_token": csrf, "action": "delete",
                                                    "volume_id": volume.id})
        assert r.status_code == 400 and "attached" in alert_text(r.text)
        r = client.post("/dashboard/volumes", data={"csrf_token": csrf, "action": "attach",
                                                    "volume_id": volume.id,
                                                    "server_id": server.id})
        assert r.status_code in (400, 409) and alert_text(r.text)  # already attached: the API says
        r = client.post("/dashboard/volumes", data={"csrf_token": csrf, "action": "detach",
                                                    "volume_id": volume.id,
                                                    "server_id": server.id})
        assert r.status_code == 303
        _until(lambda: conn.block_storage.get_volume(volume.id).status, "available")
        assert 'value="delete"' in table_row(client.get("/dashboard/volumes").text,
                                        f'<tr data-volume="{volume.id}">')
        r = client.post("/dashboard/volumes", data={"csrf_token": csrf, "action": "delete",
                                                    "volume_id": volume.id})
        assert r.status_code == 303
        _until(lambda: [v.id for v in conn.block_storage.volumes()], [])
    finally:
        for v in conn.block_storage.volumes():
            conn.block_storage.delete_volume(v.id, force=True)
        conn.compute.delete_server(server.id)


def test_keypairs_generate_import_delete_and_a_bad_key_shows_the_apis_message(cloud, member):
    user, client = member
    conn = cloud.user_sdk(user)
    page = client.get("/dashboard/keypairs")
    assert page.status_code == 200 and "No key pairs" in page.text
    csrf = csrf_token(page.text)
    r = client.post("/dashboard/keypairs", data={"csrf_token": csrf, "action": "create",
                                                 "name": "generated"})
    assert r.status_code == 200 and "-----BEGIN" in r.text and "PRIVATE KEY" in r.text
    fingerprint = conn.compute.get_keypair("generated").fingerprint
    assert f'<th scope="row">generated</th><td>{fingerprint}</td>' in r.text
    # Shown once: the list page afterwards has no private key.
    assert "PRIVATE KEY" not in client.get("/dashboard/keypairs").text

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    public = ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    r = client.post("/dashboard/keypairs", data={"csrf_token": csrf, "action": "create",
                                                 "name": "imported", "public_key": public})
    assert r.status_code == 303
    assert conn.compute.get_keypair("imported").public_key.strip() == public
    r = client.post("/dashboard/keypairs", data={"csrf_token": csrf, "action": "create",
                                                 "name": "broken", "public_key": "not a key"})
    api = cloud.user_session(user).post(cloud.url + "/compute/v2.1/os-keypairs", json={
        "keypair": {"name": "broken", "public_key": "not a key"}}, raise_exc=False)
    assert r.status_code == api.status_code == 400
    assert alert_text(r.text) == api.json()["badRequest"]["message"]
    r = client.post("/dashboard/keypairs", data={"csrf_token": csrf, "action": "create",
                                                 "name": "imported", "public_key": public})
    assert r.status_code == 409 and "imported" in alert_text(r.text)  # the name is taken
    for name in ("generated", "imported"):
        r = client.post("/dashboard/keypairs", data={"csrf_token": csrf, "action": "delete",
                                                     "name": name})
        assert r.status_code == 303
    assert list(conn.compute.keypairs()) == []
    r = client.post("/dashboard/keypairs", data={"csrf_token": csrf, "action": "delete",
                                                 "name": "generated"})
    assert r.status_code == 404 and alert_text(r.text)


def test_images_page_lists_and_deletes_and_a_member_cannot_delete_a_public_image(
        cloud, admin_client, member):
    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images", json={
        "name": f"dash2-del-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
        "container_format": "bare", "visibility": "public"}).json()
    user, client = member
    page = client.get("/dashboard/images")
    assert page.status_code == 200 and f'<th scope="row">{image["name"]}</th>' in page.text
    # Not the member's to delete: no button (a forged delete is glance's 403).
    assert 'value="delete"' not in table_row(page.text, f'<tr data-image="{image["id"]}">')
    r = client.post("/dashboard/images", data={"csrf_token": csrf_token(page.text),
                                               "action": "delete", "image_id": image["id"]})
    assert r.status_code == 403 and alert_text(r.text)  # glance's refusal, shown
    page = admin_client.get("/dashboard/images")
    assert 'value="delete"' in table_row(page.text, f'<tr data-image="{image["id"]}">')
    r = admin_client.post("/dashboard/images", data={
        "csrf_token": csrf_token(page.text), "action": "delete", "image_id": image["id"]})
    assert r.status_code == 303 and r.headers["location"] == "/dashboard/images"
    assert s.get(cloud.url + f"/image/v2/images/{image['id']}",
                 raise_exc=False).status_code == 404
    assert image["name"] not in admin_client.get("/dashboard/images").text


def test_networks_create_with_subnet_and_a_bad_cidr_leaves_no_network_behind(cloud, member):
    user, client = member
    conn = cloud.user_sdk(user)
    page = client.get("/dashboard/networks")
    assert page.status_code == 200
    csrf = csrf_token(page.text)
    r = client.post("/dashboard/networks", data={"csrf_token": csrf, "action": "create",
                                                 "name": "dash2-net", "cidr": "10.77.0.0/24"})
    assert r.status_code == 303 and r.headers["location"] == "/dashboard/networks"
    [net] = [n for n in conn.network.networks() if n.name == "dash2-net"]
    [subnet] = list(conn.network.subnets(network_id=net.id))
    assert subnet.cidr == "10.77.0.0/24" and subnet.name == "dash2-net"
    page = client.get("/dashboard/networks").text
    assert '<th scope="row">dash2-net</th>\n    <td>10.77.0.0/24</td>' in page
    r = client.post("/dashboard/networks", data={"csrf_token": csrf, "action": "create",
                                                 "name": "dash2-bad", "cidr": "10.77.0.0/99"})
    assert r.status_code == 400 and alert_text(r.text) and 'value="10.77.0.0/99"' in r.text
    assert not [n for n in conn.network.networks() if n.name == "dash2-bad"]
    r = client.post("/dashboard/networks", data={"csrf_token": csrf, "action": "delete",
                                                 "network_id": net.id})
    assert r.status_code == 303 and conn.network.find_network(net.id) is None


def test_fault_rules_page_adds_lists_and_deletes_rules_through_the_admin_api(
        cloud, admin_client, member):
    api = cloud.url + "/pocketstack/v1/faults"
    s = cloud.session()
    page = admin_client.get("/dashboard/admin/faults")
    assert page.status_code == 200 and '<option>spawn</option>' in page.text
    csrf = csrf_token(page.text)
    before = {f["id"] for f in s.get(api).json()["faults"]}
    rule = {"csrf_token": csrf, "action_kind": "create", "operation": "spawn",
            "action": "fail", "host": "dash2-no-such-host", "times": "2",
            "hang_seconds": "", "message": "dash2 says no"}
    r = admin_client.post("/dashboard/admin/faults", data=rule)
    assert r.status_code == 303 and r.headers["location"] == "/dashboard/admin/faults"
    [new] = [f for f in s.get(api).json()["faults"] if f["id"] not in before]
    try:
        assert (new["operation"], new["action"], new["host"], new["times"], new["message"]) == (
            "spawn", "fail", "dash2-no-such-host", 2, "dash2 says no")
        page = admin_client.get("/dashboard/admin/faults").text
        row = page.split(f'data-fault="{new["id"]}">')[1].split("</tr>")[0]
        assert "<th scope=\"row\">spawn</th><td>fail</td><td>dash2-no-such-host</td>" in row
        # The API's own validation, shown with its status; nothing is added.
        for bad, word in (({"action": "drop"}, "dropped"), ({"times": "0"}, "times"),
                          ({"times": "many"}, "numbers"), ({"operation": "explode"},
                                                             "explode")):
            r = admin_client.post("/dashboard/admin/faults", data={**rule, **bad})
            assert r.status_code == 400 and word in alert_text(r.text), (bad, r.text)
        assert len(s.get(api).json()["faults"]) == len(before) + 1
        # An empty id is refused here: DELETE on the collection would reset every rule.
        r = admin_client.post("/dashboard/admin/faults", data={
            "csrf_token": csrf, "action_kind": "delete", "fault_id": ""})
        assert r.status_code == 400 and len(s.get(api).json()["faults"]) == len(before) + 1
        user, client = member  # a member gets the API's 403, for the page and the form
        assert client.get("/dashboard/admin/faults").status_code == 403
        r = client.post("/dashboard/admin/faults", data={
            **rule, "csrf_token": csrf_token(client.get("/dashboard/servers").text)})
        assert r.status_code == 403
        r = admin_client.post("/dashboard/admin/faults", data={
            "csrf_token": csrf, "action_kind": "delete", "fault_id": new["id"]})
        assert r.status_code == 303
        assert new["id"] not in {f["id"] for f in s.get(api).json()["faults"]}
        r = admin_client.post("/dashboard/admin/faults", data={
            "csrf_token": csrf, "action_kind": "delete", "fault_id": new["id"]})
        assert r.status_code == 404 and new["id"] in alert_text(r.text)
    finally:
        s.delete(f"{api}/{new['id']}", raise_exc=False)


def test_long_lists_are_paged_with_a_marker(cloud, member):
    from pocketstack.dashboard import pages

    user, client = member
    s = cloud.user_session(user)
    names = {f"dash2-page-{i:02d}" for i in range(pages.PAGE + 1)}
    for name in names:
        s.post(cloud.url + "/image/v2/images", json={
            "name": name, "disk_format": "raw", "container_format": "bare"})
    first = client.get("/dashboard/images")
    assert first.status_code == 200 and first.text.count('<th scope="row">') == pages.PAGE
    marker = re.search(r'<a href="\?marker=([^"]+)">Next page</a>', first.text).group(1)
    second = client.get(f"/dashboard/images?marker={marker}")
    shown = set(re.findall(r'<th scope="row">([^<]+)</th>', first.text + second.text))
    assert names <= shown


@pytest.mark.parametrize("path", ["/dashboard/volumes", "/dashboard/keypairs",
                                  "/dashboard/images", "/dashboard/networks",
                                  "/dashboard/admin/hypervisors", "/dashboard/admin/services",
                                  "/dashboard/admin/servers", "/dashboard/admin/flavors",
                                  "/dashboard/admin/faults", "/dashboard/floating-ips",
                                  "/dashboard/routers", "/dashboard/security-groups",
                                  "/dashboard/volumes/snapshots", "/dashboard/volumes/backups",
                                  "/dashboard/admin/projects", "/dashboard/admin/users"])
def test_every_page_wants_a_login_and_every_form_its_csrf_token(cloud, admin_client, path):
    with httpx.Client(base_url=cloud.url) as anonymous:
        r = anonymous.get(path)
        assert r.status_code == 303 and r.headers["location"] == "/dashboard/login"
    r = admin_client.post(path, json={"action": "delete"})  # not a form: no token in it
    assert r.status_code in (403, 405) and "Traceback" not in r.text
    r = admin_client.post(path, data={"csrf_token": csrf_token(admin_client.get(path).text),
                                      "action": "explode", "action_kind": "explode"})
    assert r.status_code in (400, 405) and 'role="alert"' in r.text
