"""The web dashboard over real HTTP: login with Keystone credentials, CSRF, the servers list
and the boot waterfall of servers booted with openstacksdk, logout revoking the token."""
from __future__ import annotations

import re
import time
import uuid

import httpx
import markupsafe
import pytest

from pocketstack.common import trace_steps
from pocketstack.dashboard import waterfall


@pytest.fixture(scope="module")
def image_id(cloud):
    s = cloud.session()
    r = s.post(cloud.url + "/image/v2/images",
               json={"name": f"dash-cirros-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
                     "container_format": "bare", "visibility": "public"})
    image = r.json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"\0" * 4096,
          headers={"Content-Type": "application/octet-stream"})
    return image["id"]


@pytest.fixture(scope="module")
def user(cloud):
    return cloud.make_user()


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def login(cloud, user, **overrides) -> httpx.Client:
    client = httpx.Client(base_url=cloud.url, timeout=60)
    page = client.get("/dashboard/login")
    assert page.status_code == 200
    form = {"csrf_token": _csrf(page.text), "domain": "Default", "username": user["name"],
            "password": user["password"], **overrides}
    r = client.post("/dashboard/login", data=form)
    return client, r


def _wait(conn, sid, statuses=("ACTIVE", "ERROR"), timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server = conn.compute.get_server(sid)
        if server.status in statuses:
            return server
        time.sleep(0.05)
    raise AssertionError(f"server {sid} stayed {server.status}")


def test_root_redirects_browsers_but_answers_api_clients_json(cloud):
    with httpx.Client(base_url=cloud.url) as client:
        r = client.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        assert r.status_code == 302 and r.headers["location"] == "/dashboard/"
        r = client.get("/", headers={"Accept": "application/json"})
        assert r.status_code == 200 and "services" in r.json()
        r = client.get("/dashboard/servers")  # not logged in
        assert r.status_code == 303 and r.headers["location"] == "/dashboard/login"


def test_login_sets_an_httponly_strict_session_cookie_and_keeps_the_token_server_side(
        cloud, user):
    client, r = login(cloud, user)
    assert r.status_code == 303 and r.headers["location"] == "/dashboard/servers"
    cookie = [h for h in r.headers.get_list("set-cookie") if "pocketstack_dashboard=" in h][0]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    page = client.get("/dashboard/servers")
    assert page.status_code == 200
    assert user["name"] in page.text and user["project_name"] in page.text
    # The keystone token never reaches the browser: only the opaque session id does.
    token = _dashboard_store(cloud).get(client.cookies["pocketstack_dashboard"]).token
    assert token not in r.text + str(r.headers) + page.text + str(page.headers)


def test_wrong_password_and_unknown_project_show_an_error_not_a_500(cloud, user):
    _, r = login(cloud, user, password="wrong")
    assert r.status_code == 401 and "password is wrong" in r.text
    _, r = login(cloud, user, project="no-such-project")
    assert r.status_code == 401 and 'role="alert"' in r.text
    _, r = login(cloud, user, username="")
    assert r.status_code == 400 and "required" in r.text


def test_login_and_logout_refused_without_the_csrf_token(cloud, user):
    with httpx.Client(base_url=cloud.url) as client:
        client.get("/dashboard/login")
        r = client.post("/dashboard/login", data={"domain": "Default", "username": user["name"],
                                                  "password": user["password"]})
        assert r.status_code == 403 and "pocketstack_dashboard" not in client.cookies
    client, r = login(cloud, user)
    r = client.post("/dashboard/logout", data={})
    assert r.status_code == 403
    r = client.post("/dashboard/logout", data={"csrf_token": "forged"})
    assert r.status_code == 403
    assert client.get("/dashboard/servers").status_code == 200  # still logged in


def test_servers_page_lists_a_server_booted_with_openstacksdk_and_shows_its_waterfall(
        cloud, user, image_id):
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name=f"dash-{uuid.uuid4().hex[:6]}", image_id=image_id,
                                        flavor_id="42", networks="none")
    try:
        assert _wait(conn, server.id).status == "ACTIVE"
        client, _ = login(cloud, user)
        page = client.get("/dashboard/servers")
        assert server.name in page.text and f"/dashboard/servers/{server.id}" in page.text
        assert "status-ACTIVE" in page.text
        detail = client.get(f"/dashboard/servers/{server.id}")
        assert detail.status_code == 200
        trace = cloud.user_session(user).get(
            f"{cloud.url}/pocketstack/v1/servers/{server.id}/trace").json()
        assert trace["events"]
        for event in trace["events"]:  # every step is a bar, in the CLI's words
            assert f'data-step="{event["step"]}"' in detail.text
            assert f"<strong>{markupsafe.escape(trace_steps.label(event['step']))}</strong>" \
                in detail.text
        assert "compute__do_build_and_run_instance</" not in detail.text
        assert "seed step" not in detail.text
        # One waterfall per request, the boot first, on its own time axis.
        requests = trace_steps.requests(trace)
        titles = [re.sub("<[^>]+>", "", t) for t in
                  re.findall(r'<h3 id="request-\d+">(.+?)</h3>', detail.text)]
        assert titles[0].startswith(f"server create: {requests[0]['total_ms']:.1f} ms")
        assert len(titles) == len(requests)
        assert 'class="bar"' in detail.text and "failed" not in detail.text.split(
            'id="waterfall"')[1]
        # The boot path diagram lights the stops this boot went through, and only those.
        states = {node: state for state, node in re.findall(
            r'<li class="node (\w+)" data-node="([\w-]+)"', detail.text)}
        assert states["nova-scheduler"] == states["hypervisor"] == states["glance"] == "done"
        assert states["neutron"] == states["cinder"] == "unused"  # networks "none", no volume
        # Another project's user sees neither the server nor its page.
        other, _ = login(cloud, cloud.make_user())
        assert server.name not in other.get("/dashboard/servers").text
        assert other.get(f"/dashboard/servers/{server.id}").status_code == 404
    finally:
        conn.compute.delete_server(server.id)


def test_no_valid_host_is_red_in_the_waterfall_with_a_table_per_filter(cloud, image_id):
    user = cloud.make_user()
    admin = cloud.sdk()
    cloud.session().put(f"{cloud.url}/compute/v2.1/os-quota-sets/{user['project_id']}",
                        json={"quota_set": {"ram": -1}})
    flavor = admin.compute.create_flavor(name=f"dash-huge-{uuid.uuid4().hex[:6]}",
                                         ram=10_000_000, vcpus=1, disk=1)
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name="dash-nvh", image_id=image_id,
                                        flavor_id=flavor.id, networks="none")
    try:
        assert _wait(conn, server.id).status == "ERROR"
        client, _ = login(cloud, user)
        page = client.get(f"/dashboard/servers/{server.id}").text
        assert "Why no host was found" in page
        table = page.split("Why no host was found")[1].split("</table>")[0]
        assert "resource fit" in table and "10000000 MB RAM" in table
        assert 'class="step failed"' in page  # the scheduler's step, red, with its reason
        assert '<li class="node failed" data-node="nova-scheduler"' in page
        assert '<li class="node unused" data-node="hypervisor"' in page
    finally:
        conn.compute.delete_server(server.id)
        admin.compute.delete_flavor(flavor.id)


def test_logout_revokes_the_token(cloud, user):
    client, _ = login(cloud, user)
    session = _dashboard_store(cloud).get(client.cookies["pocketstack_dashboard"])
    admin = cloud.session()
    for token in (session.token, session.unscoped):
        assert admin.get(cloud.auth_url + "/v3/auth/tokens", raise_exc=False,
                         headers={"X-Subject-Token": token}).status_code == 200
    page = client.get("/dashboard/servers")
    r = client.post("/dashboard/logout", data={"csrf_token": _csrf(page.text)})
    assert r.status_code == 303 and r.headers["location"] == "/dashboard/login"
    for token in (session.token, session.unscoped):  # every token of the login is revoked
        assert admin.get(cloud.auth_url + "/v3/auth/tokens", raise_exc=False,
                         headers={"X-Subject-Token": token}).status_code == 404
    assert client.get("/dashboard/servers").status_code == 303


def test_unknown_pages_and_servers_are_404_pages(cloud, user):
    client, _ = login(cloud, user)
    assert client.get("/dashboard/nothing-here").status_code == 404
    r = client.get("/dashboard/servers/" + uuid.uuid4().hex)
    assert r.status_code == 404 and 'role="alert"' in r.text
    assert client.get("/dashboard/servers/%2e%2e%2fx").status_code == 404


def _dashboard_store(cloud):
    return cloud.cloud.app._dashboard().store


def test_no_valid_host_message_parsing():
    msg = ("No valid host: 4 hosts; availability zone removed 2 (not in zone nova2); "
           "resource fit removed 2 (need 3900 MB RAM, 1 vCPUs, 1 GB disk; the last fitting "
           "hosts were taken by concurrent requests)")
    parsed = waterfall.no_valid_host(msg)
    assert parsed["hosts"] == "4 hosts"
    assert [(f["filter"], f["removed"]) for f in parsed["filters"]] == [
        ("availability zone", 2), ("resource fit", 2)]
    assert parsed["filters"][1]["reason"].endswith("concurrent requests")
    assert waterfall.no_valid_host("Build failed") is None


def test_launch_form_boots_a_server_and_shows_the_api_message_on_bad_input(
        cloud, image_id):
    user = cloud.make_user()
    client, _ = login(cloud, user)
    page = client.get("/dashboard/servers/launch")
    assert page.status_code == 200 and f'value="{image_id}"' in page.text
    csrf = _csrf(page.text)
    r = client.post("/dashboard/servers/launch", data={
        "csrf_token": csrf, "name": "from-the-form", "image": image_id, "flavor": "42",
        "network": "none"})
    assert r.status_code == 303
    sid = r.headers["location"].rsplit("/", 1)[1]
    conn = cloud.user_sdk(user)
    try:
        assert _wait(conn, sid).status == "ACTIVE"
        assert "from-the-form" in client.get(r.headers["location"]).text
        # Bad input: the API's own message, with the API's status, and the form kept.
        r = client.post("/dashboard/servers/launch", data={
            "csrf_token": csrf, "name": "bad", "image": image_id, "flavor": "no-such-flavor",
            "network": "none"})
        assert r.status_code == 400 and 'role="alert"' in r.text
        assert "no-such-flavor" in r.text.split('role="alert"')[1].split("</p>")[0]
        r = client.post("/dashboard/servers/launch", data={
            "name": "x", "image": image_id, "flavor": "42", "network": "none"})
        assert r.status_code == 403  # no CSRF token: refused, nothing created
        assert [s.name for s in conn.compute.servers()] == ["from-the-form"]
    finally:
        conn.compute.delete_server(sid)


def test_overview_shows_quota_usage_from_the_apis(cloud, image_id):
    user = cloud.make_user()
    cloud.session().put(f"{cloud.url}/compute/v2.1/os-quota-sets/{user['project_id']}",
                        json={"quota_set": {"instances": 4}})
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name="quota-vm", image_id=image_id, flavor_id="42",
                                        networks="none")
    try:
        _wait(conn, server.id)
        client, _ = login(cloud, user)
        page = client.get("/dashboard/overview")
        assert page.status_code == 200
        rows = {m[0]: m[1] for m in re.findall(
            r'<th scope="row" id="quota-\d+">([^<]+)</th>\s*<td>([^<]+)</td>', page.text)}
        limits = cloud.user_session(user).get(f"{cloud.url}/compute/v2.1/limits").json()
        absolute = limits["limits"]["absolute"]
        assert rows["Instances"] == "1 of 4"
        assert rows["vCPUs"] == f"{absolute['totalCoresUsed']} of {absolute['maxTotalCores']}"
        assert {"Volumes", "Ports"} <= set(rows)
        assert '<meter aria-labelledby="quota-1" min="0" max="4"' in page.text
    finally:
        conn.compute.delete_server(server.id)


def _add_project(user) -> str:
    """A second project the user is a member of (direct database writes, as make_user)."""
    from pocketstack.common import db
    from pocketstack.identity.models import Assignment, Project, Role

    project_id = uuid.uuid4().hex
    with db.transaction() as s:
        s.add(Project(id=project_id, name=f"zz-second-{project_id[:6]}", domain_id="default"))
        s.flush()
        role_id = s.query(Role.id).filter_by(name="member", domain_id=None).scalar()
        s.add(Assignment(type="UserProject", actor_id=user["id"], target_id=project_id,
                         role_id=role_id, inherited=False))
    return project_id


def test_project_switcher_rescopes_and_revokes_the_old_token(cloud, image_id):
    user = cloud.make_user(project_name=f"aa-first-{uuid.uuid4().hex[:6]}")
    second = _add_project(user)
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name="first-project-vm", image_id=image_id,
                                        flavor_id="42", networks="none")
    try:
        _wait(conn, server.id)
        client, _ = login(cloud, user)
        page = client.get("/dashboard/servers")
        assert "first-project-vm" in page.text and f'value="{second}"' in page.text
        old = _dashboard_store(cloud).get(client.cookies["pocketstack_dashboard"]).token
        csrf = _csrf(page.text)
        foreign = cloud.make_user()["project_id"]  # a project the user has no role on
        assert client.post("/dashboard/project", data={"csrf_token": csrf,
                                                       "project_id": foreign}).status_code == 400
        assert client.post("/dashboard/project", data={"project_id": second}).status_code == 403
        r = client.post("/dashboard/project", data={"csrf_token": csrf, "project_id": second})
        assert r.status_code == 303
        page = client.get("/dashboard/servers")
        assert "first-project-vm" not in page.text and "No servers in this project" in page.text
        assert cloud.session().get(cloud.auth_url + "/v3/auth/tokens",
                                   headers={"X-Subject-Token": old},
                                   raise_exc=False).status_code == 404
        page = client.get("/dashboard/servers")  # the new project's token still works
        assert page.status_code == 200 and "No servers in this project" in page.text
    finally:
        conn.compute.delete_server(server.id)


def test_server_actions_stop_start_delete_and_conflicts_show_the_api_message(cloud, image_id):
    user = cloud.make_user()
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name="acted-on", image_id=image_id, flavor_id="42",
                                        networks="none")
    try:
        _wait(conn, server.id)
        client, _ = login(cloud, user)
        page = client.get(f"/dashboard/servers/{server.id}")
        csrf = _csrf(page.text)
        action = f"/dashboard/servers/{server.id}/action"
        assert client.post(action, data={"action": "stop"}).status_code == 403  # no CSRF
        assert client.post(action, data={"csrf_token": csrf,
                                          "action": "rm -rf"}).status_code == 400
        r = client.post(action, data={"csrf_token": csrf, "action": "stop"})
        assert r.status_code == 303 and r.headers["location"] == f"/dashboard/servers/{server.id}"
        assert _wait(conn, server.id, statuses=("SHUTOFF",)).status == "SHUTOFF"
        r = client.post(action, data={"csrf_token": csrf, "action": "stop"})  # already off
        assert r.status_code == 409 and 'role="alert"' in r.text
        r = client.post(action, data={"csrf_token": csrf, "action": "start"})
        assert _wait(conn, server.id, statuses=("ACTIVE",)).status == "ACTIVE"
        r = client.post(action, data={"csrf_token": csrf, "action": "delete"})
        assert r.status_code == 303 and r.headers["location"] == "/dashboard/servers"
        deadline = time.monotonic() + 30
        while conn.compute.find_server(server.id) is not None:
            assert time.monotonic() < deadline, "the server was not deleted"
            time.sleep(0.05)
    finally:
        if conn.compute.find_server(server.id) is not None:
            conn.compute.delete_server(server.id)


def test_status_json_for_live_updates_is_per_project_and_needs_a_login(cloud, image_id):
    user = cloud.make_user()
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name="live", image_id=image_id, flavor_id="42",
                                        networks="none")
    try:
        _wait(conn, server.id)
        with httpx.Client(base_url=cloud.url) as anonymous:
            assert anonymous.get("/dashboard/servers/status").status_code == 401
        client, _ = login(cloud, user)
        assert client.get("/dashboard/servers/status").json() == {server.id: "ACTIVE"}
        other, _ = login(cloud, cloud.make_user())
        assert other.get("/dashboard/servers/status").json() == {}
        js = client.get("/dashboard/static/live.js")
        assert js.status_code == 200 and "data-server-status" in js.text
        assert 'src="/dashboard/static/live.js"' in client.get("/dashboard/servers").text
    finally:
        conn.compute.delete_server(server.id)


def test_boot_path_lights_neutron_and_cinder_only_when_the_boot_used_them():
    def event(step, detail="", result="Success"):
        return {"step": step, "detail": detail, "result": result}

    with_both = {"events": [event("compute_allocate_network", "p1 on private"),
                            event("compute_prep_block_device", "1 volume(s)"),
                            event("compute_spawn", "boom", "Error")]}
    states = {n["node"]: n["state"] for n in waterfall.boot_path(with_both)}
    assert states["neutron"] == states["cinder"] == "done"
    assert states["hypervisor"] == states["nova-compute"] == "failed"
    assert states["keystone"] == "unused"


def test_each_request_is_its_own_waterfall_with_gaps_and_the_clis_words():
    """An attach minutes after a 122 ms boot no longer squashes the boot into a pixel."""
    def event(request_id, step, service, offset, duration):
        return {"request_id": request_id, "step": step, "service": service, "host": "h1",
                "offset_ms": offset, "duration_ms": duration, "result": "Success",
                "detail": ""}
    trace = {"server_id": "s1", "actions": [
        {"request_id": "req-boot", "action": "create", "start_time": "t0"},
        {"request_id": "req-attach", "action": "attach_volume", "start_time": "t1"}],
        "events": [
            event("req-attach", "compute_attach_volume", "compute", 371_600.0, 100.0),
            event("req-boot", "api_validate", "api", 0.0, 2.0),
            event("req-boot", "conductor_schedule_and_build_instances", "conductor", 10.0, 2.0),
            event("req-boot", "compute__do_build_and_run_instance", "compute", 20.0, 102.0)]}
    boot, attach = waterfall.requests(trace)
    assert (boot["title"], boot["total_ms"], boot["steps"]) == ("server create", 122.0, 3)
    assert (attach["title"], attach["total_ms"]) == ("server add volume", 100.0)
    assert boot["open"] and not attach["open"]  # the boot open, later requests one line
    assert attach["rows"][0]["left"] == 0 and attach["rows"][0]["width"] == 100
    kinds = [r["kind"] for r in boot["rows"]]
    assert kinds == ["step", "gap", "step", "gap", "step"]
    gap = boot["rows"][1]
    assert gap["start_ms"] == 2.0 and gap["duration_ms"] == 8.0
    assert "hand-off api → conductor" in gap["label"]
    assert boot["rows"][4]["label"] == trace_steps.STEP_LABELS[
        "compute__do_build_and_run_instance"]
    assert boot["rows"][4]["left"] == round(20 / 122 * 100, 2)


def test_the_boot_path_is_the_boots_request_only():
    def event(request_id, step, detail=""):
        return {"request_id": request_id, "step": step, "detail": detail,
                "result": "Success"}
    trace = {"actions": [{"request_id": "boot", "action": "create"},
                         {"request_id": "later", "action": "attach_volume"}],
             "events": [event("boot", "compute_spawn"),
                        event("later", "compute_attach_volume")]}
    states = {n["node"]: n["state"] for n in waterfall.boot_path(trace)}
    assert states["hypervisor"] == "done" and states["cinder"] == "unused"


def test_the_server_page_opens_the_boot_and_shows_later_requests_as_cli_lines(
        cloud, user, image_id):
    """A soft reboot of a guest that ignores the power button waits out [libvirt]
    shutdown_timeout (60 s by default; here 0.2 s, with the fake driver's reboot held 0.4 s
    by a fault rule): its line says the time is mostly that timeout."""
    from pocketstack.common import config

    conn = cloud.user_sdk(user)
    s = cloud.session()
    server = conn.compute.create_server(name=f"dash-rb-{uuid.uuid4().hex[:6]}",
                                        image_id=image_id, flavor_id="42", networks="none")
    rule = None
    config.CONF.set_override("shutdown_timeout", 0.2, group="libvirt")
    try:
        assert _wait(conn, server.id).status == "ACTIVE"
        rule = s.post(cloud.url + "/pocketstack/v1/faults", json={"fault": {
            "operation": "reboot", "action": "hang", "hang_seconds": 0.4,
            "times": 1}}).json()["fault"]
        conn.compute.reboot_server(server.id, "SOFT")
        trace_url = f"{cloud.url}/pocketstack/v1/servers/{server.id}/trace"
        deadline = time.monotonic() + 60
        while not any(e["step"] == "compute_reboot_instance" for e in
                      cloud.user_session(user).get(trace_url).json()["events"]):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        _wait(conn, server.id, ("ACTIVE",))
        client, _ = login(cloud, user)
        page = client.get(f"/dashboard/servers/{server.id}").text
        lanes = re.findall(r'<details class="lane[^"]*" [^>]*?( open)?>\s*<summary>(.+?)'
                           r'</summary>', page)
        lines = [(bool(is_open), re.sub("<[^>]+>", "", summary)) for is_open, summary in lanes]
        assert lines[0][0] and lines[0][1].startswith("server create: ")
        [reboot] = [line for line in lines if line[1].startswith("server reboot: ")]
        assert reboot[0] is False  # one line, opened on a click
        assert ("mostly a timeout: 0.2 s of it waited for the guest to shut down for a "
                "soft reboot ([libvirt] shutdown_timeout)") in reboot[1]
        assert not lines[0][1].count("mostly a timeout")
        assert "api reboot" not in page and "Reboot:" not in page
    finally:
        config.CONF.clear_override("shutdown_timeout", group="libvirt")
        if rule:
            s.delete(cloud.url + f"/pocketstack/v1/faults/{rule['id']}", raise_exc=False)
        conn.compute.delete_server(server.id)
