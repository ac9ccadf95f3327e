"""The boot path end to end through the real API: openstacksdk create_server +
wait_for_server, the seed-001 state sequence, the trace as instance actions/events and at
/pocketstack/v1, and delete."""
import threading
import time


def test_sdk_create_server_and_wait_for_active(cloud, member, image_id):
    conn = cloud.user_sdk(member)
    server = conn.compute.create_server(name="sdk-vm", image_id=image_id, flavor_id="42",
                                        networks="none")
    server = conn.compute.wait_for_server(server, status="ACTIVE", wait=30, interval=0.05)
    assert server.status == "ACTIVE"
    assert server.power_state == 1 and server.vm_state == "active" and server.task_state is None
    assert server.flavor.original_name == "m1.nano"
    assert server.image.id == image_id
    assert server.launched_at
    actions = list(conn.compute.server_actions(server))
    assert [a.action for a in actions] == ["create"]
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=30, interval=0.05)


def test_states_follow_seed_001_in_order(api, image_id, conf_override):
    # A slow spawn makes every state observable by polling.
    conf_override("fake", "spawn_delay", 0.4)
    sid = api.boot(image_id)
    seen = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        s = api.server(sid)
        state = (s["status"], s["OS-EXT-STS:task_state"], s["OS-EXT-STS:power_state"])
        if not seen or seen[-1] != state:
            seen.append(state)
        if s["status"] == "ACTIVE":
            break
        time.sleep(0.005)
    assert seen[-1] == ("ACTIVE", None, 1)
    order = ["scheduling", "networking", "block_device_mapping", "spawning"]
    tasks = [t for st, t, p in seen if st == "BUILD"]
    assert tasks == sorted(tasks, key=order.index), seen
    assert "spawning" in tasks and all(p == 0 for st, t, p in seen if st == "BUILD")
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_trace_events_cover_the_pipeline(cloud, api, admin_api, image_id):
    sid = api.boot(image_id)
    assert api.wait(sid)["status"] == "ACTIVE"
    actions = api.get(f"/servers/{sid}/os-instance-actions").json()["instanceActions"]
    rid = actions[0]["request_id"]
    # Events are an admin view in nova (2.51+ shows them to owners without tracebacks).
    ev = admin_api.get(f"/servers/{sid}/os-instance-actions/{rid}").json()["instanceAction"]
    names = [e["event"] for e in ev["events"]]
    for step in ("api_validate", "api_create", "conductor_schedule_and_build_instances",
                 "scheduler_select_destinations", "conductor_cast_build",
                 "compute_get_image", "compute_allocate_network", "compute_prep_block_device",
                 "compute_spawn", "compute__do_build_and_run_instance"):
        assert step in names, names
    assert all(e["result"] == "Success" for e in ev["events"])
    assert {e["host"] for e in ev["events"] if e["event"] == "compute_spawn"} == {
        admin_api.server(sid)["OS-EXT-SRV-ATTR:host"]}
    trace = api.s.get(cloud.url + f"/pocketstack/v1/traces/{rid}").json()
    steps = [e["step"] for e in trace["events"]]
    assert steps.index("api_validate") < steps.index("scheduler_select_destinations") < \
        steps.index("compute_spawn")
    assert all(e["seed_step"] for e in trace["events"])
    per_server = api.s.get(cloud.url + f"/pocketstack/v1/servers/{sid}/trace").json()
    assert per_server["actions"][0]["action"] == "create"
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_power_actions_and_console(api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    for action, status in (({"os-stop": None}, "SHUTOFF"), ({"os-start": None}, "ACTIVE"),
                           ({"reboot": {"type": "HARD"}}, "ACTIVE"), ({"pause": None}, "PAUSED"),
                           ({"unpause": None}, "ACTIVE"), ({"suspend": None}, "SUSPENDED"),
                           ({"resume": None}, "ACTIVE")):
        r = api.post(f"/servers/{sid}/action", action)
        assert r.status_code == 202, (action, r.text)
        s = api.wait(sid, (status,))
        assert s["OS-EXT-STS:task_state"] is None
    r = api.post(f"/servers/{sid}/action", {"os-start": None})
    assert r.status_code == 409 and "conflictingRequest" in r.json()
    out = api.post(f"/servers/{sid}/action", {"os-getConsoleOutput": {"length": 50}})
    assert out.status_code == 200 and "login:" in out.json()["output"]
    acts = [a["action"] for a in api.get(f"/servers/{sid}/os-instance-actions").json()[
        "instanceActions"]]
    assert acts[:3] == ["resume", "suspend", "unpause"] and acts[-1] == "create"
    assert api.delete(f"/servers/{sid}").status_code == 204
    api.wait_gone(sid)


def test_lock_blocks_owner_actions(api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    r = api.post(f"/servers/{sid}/action", {"lock": {"locked_reason": "maint"}})
    assert r.status_code == 202
    s = api.server(sid)
    assert s["locked"] is True and s["locked_reason"] == "maint"
    r = api.post(f"/servers/{sid}/action", {"os-stop": None})
    assert r.status_code == 409
    assert api.delete(f"/servers/{sid}").status_code == 409
    assert api.post(f"/servers/{sid}/action", {"unlock": None}).status_code == 202
    assert api.delete(f"/servers/{sid}").status_code == 204
    api.wait_gone(sid)


def test_other_projects_server_is_404(cloud, api, make_api, image_id):
    sid = api.boot(image_id)
    stranger = make_api(cloud.make_user(roles=("member",)))
    for method, path, body in (("GET", f"/servers/{sid}", None),
                               ("DELETE", f"/servers/{sid}", None),
                               ("POST", f"/servers/{sid}/action", {"os-stop": None}),
                               ("GET", f"/servers/{sid}/os-instance-actions", None)):
        r = stranger.req(method, path, json=body)
        assert r.status_code == 404, (method, path, r.text)
        assert r.json()["itemNotFound"]["code"] == 404
    assert sid not in [s["id"] for s in stranger.get("/servers").json()["servers"]]
    api.wait(sid)
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_list_detail_filters_and_paging(api, image_id):
    ids = [api.boot(image_id, name=f"list-{i}", metadata={"i": str(i)}) for i in range(3)]
    for sid in ids:
        api.wait(sid)
    r = api.get("/servers/detail?name=^list-[01]$")
    assert sorted(s["name"] for s in r.json()["servers"]) == ["list-0", "list-1"]
    r = api.get("/servers?limit=2")
    page = r.json()
    assert len(page["servers"]) == 2 and page["servers_links"][0]["rel"] == "next"
    r = api.get(f"/servers?limit=2&marker={page['servers'][-1]['id']}")
    assert r.status_code == 200
    # Walking the pages (list and detail, any sort) gives the unpaged list, in its order.
    for path in ("/servers?sort_key=display_name&sort_dir=asc",
                 "/servers/detail?sort_key=created_at&sort_dir=desc"):
        whole = [s["id"] for s in api.get(path).json()["servers"]]
        walked, marker = [], None
        while True:
            page = api.get(path + "&limit=2" + (f"&marker={marker}" if marker else "")).json()
            walked += [s["id"] for s in page["servers"]]
            if "servers_links" not in page:
                break
            marker = page["servers"][-1]["id"]
        assert walked == whole and set(ids) <= set(whole), (path, walked, whole)
    named = api.get("/servers/detail?name=^list-&sort_key=display_name&sort_dir=asc"
                    "&limit=1").json()["servers"]
    assert [s["name"] for s in named] == ["list-0"]
    assert api.get("/servers?status=ACTIVE").status_code == 200
    assert api.get("/servers?status=BOGUS").status_code == 400
    assert api.get("/servers?sort_key=nope").status_code == 400
    assert api.get("/servers?marker=00000000-0000-0000-0000-000000000000").status_code == 400
    for sid in ids:
        api.delete(f"/servers/{sid}")
    for sid in ids:
        api.wait_gone(sid)


def test_concurrent_boots_from_threads(api, image_id):
    ids, errors = [], []

    def boot():
        try:
            ids.append(api.boot(image_id))
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=boot) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    assert all(api.wait(s)["status"] == "ACTIVE" for s in ids)
    for s in ids:
        api.delete(f"/servers/{s}")
    for s in ids:
        api.wait_gone(s)
