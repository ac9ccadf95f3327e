"""Compute microversions 2.80 and up, each through the REST API as a client
speaking that version would, with the error cases nova answers."""
import os
import time

import pytest



_CLS = []


@pytest.fixture(autouse=True)
def _remember_cls(api):
    _CLS[:] = [type(api)]


def _at(cloud, session, version):
    """Compute REST (tests/compute/conftest.py's helper) speaking ``version``."""
    return _CLS[0](cloud, session, version)


@pytest.fixture(scope="module")
def server(api, image_id):
    sid = api.boot(image_id)
    assert api.wait(sid)["status"] == "ACTIVE"
    yield sid
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def _wait_task_done(api, sid, *statuses, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = api.server(sid)
        if s["status"] in statuses and s["OS-EXT-STS:task_state"] is None:
            return s
        time.sleep(0.02)
    raise AssertionError(f"{sid}: {s['status']}/{s['OS-EXT-STS:task_state']}")


# --- 2.80: migrations carry and filter by user_id / project_id -----------------------------

def test_280_migrations_user_and_project(cloud, api, member, server):
    r = api.post(f"/servers/{server}/action", {"resize": {"flavorRef": "84"}})
    assert r.status_code == 202, r.text
    _wait_task_done(api, server, "VERIFY_RESIZE")
    assert api.post(f"/servers/{server}/action", {"confirmResize": None}).status_code == 204
    _wait_task_done(api, server, "ACTIVE")
    admin = _at(cloud, cloud.session(), "2.80")
    mine = admin.get(f"/os-migrations?instance_uuid={server}").json()["migrations"]
    assert mine and mine[0]["user_id"] == member["id"]
    assert mine[0]["project_id"] == member["project_id"]
    by_user = admin.get(f"/os-migrations?user_id={member['id']}").json()["migrations"]
    assert {m["instance_uuid"] for m in by_user} == {server}
    by_project = admin.get(f"/os-migrations?project_id={member['project_id']}"
                           ).json()["migrations"]
    assert {m["instance_uuid"] for m in by_project} == {server}
    assert admin.get("/os-migrations?user_id=nobody").json()["migrations"] == []
    old = _at(cloud, cloud.session(), "2.79")
    listed = old.get(f"/os-migrations?instance_uuid={server}").json()["migrations"]
    assert "user_id" not in listed[0] and "project_id" not in listed[0]


# --- 2.81: image precache on an aggregate's hosts ------------------------------------------

def test_281_aggregate_image_precache(cloud, api, image_id):
    admin = _at(cloud, cloud.session(), "2.81")
    host = admin.get("/os-services?binary=nova-compute").json()["services"][0]["host"]
    agg = admin.post("/os-aggregates", {"aggregate": {"name": "precache-281"}}).json()
    agg_id = agg["aggregate"]["id"]
    try:
        assert admin.post(f"/os-aggregates/{agg_id}/action",
                          {"add_host": {"host": host}}).status_code == 200
        manager = next(w.manager for w in cloud.cloud.workers
                       if getattr(getattr(w, "manager", None), "host", None) == host)
        cached = os.path.join(manager.image_cache, image_id)
        if os.path.exists(cached):
            os.unlink(cached)
        r = admin.post(f"/os-aggregates/{agg_id}/images", {"cache": [{"id": image_id}]})
        assert r.status_code == 202 and r.content == b"", r.text
        deadline = time.monotonic() + 10
        while not os.path.exists(cached) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert os.path.exists(cached), "the host did not cache the image"
        for bad in ({"cache": []}, {"cache": [{"id": "not-a-uuid"}]}, {},
                    {"cache": [{"id": image_id, "name": "x"}]},
                    {"cache": [{"id": image_id}, {"id": image_id}]}):
            assert admin.post(f"/os-aggregates/{agg_id}/images", bad).status_code == 400, bad
        assert admin.post("/os-aggregates/99999999/images",
                          {"cache": [{"id": image_id}]}).status_code == 404
        assert admin.post("/os-aggregates/abc/images",
                          {"cache": [{"id": image_id}]}).status_code == 400
        old = _at(cloud, cloud.session(), "2.80")
        assert old.post(f"/os-aggregates/{agg_id}/images",
                        {"cache": [{"id": image_id}]}).status_code == 404
        member = _at(cloud, api.s, "2.81")
        assert member.post(f"/os-aggregates/{agg_id}/images",
                           {"cache": [{"id": image_id}]}).status_code == 403
    finally:
        admin.post(f"/os-aggregates/{agg_id}/action", {"remove_host": {"host": host}})
        admin.delete(f"/os-aggregates/{agg_id}")


# --- 2.82: the accelerator-request-bound external event ------------------------------------

def test_282_accelerator_request_bound_event(cloud, server):
    event = {"server_uuid": server, "name": "accelerator-request-bound",
             "tag": "5b5e6fb8-4a3a-4ff1-9bcd-2b3c40b2a4c5", "status": "completed"}
    admin = _at(cloud, cloud.session(), "2.82")
    r = admin.post("/os-server-external-events", {"events": [event]})
    assert r.status_code == 200, r.text
    assert r.json()["events"][0]["code"] == 200
    untagged = {k: v for k, v in event.items() if k != "tag"}
    r = admin.post("/os-server-external-events", {"events": [event, untagged]})
    assert r.status_code == 207
    assert [e["code"] for e in r.json()["events"]] == [200, 400]
    old = _at(cloud, cloud.session(), "2.81")
    assert old.post("/os-server-external-events", {"events": [event]}).status_code == 400
    # volume-reimaged (the volume service's answer to a 2.93 rebuild) from 2.93 only
    reimaged = dict(event, name="volume-reimaged")
    assert _at(cloud, cloud.session(), "2.92").post(
        "/os-server-external-events", {"events": [reimaged]}).status_code == 400
    r = _at(cloud, cloud.session(), "2.93").post("/os-server-external-events",
                                                 {"events": [reimaged]})
    assert r.status_code == 200 and r.json()["events"][0]["code"] == 200, r.text


# --- 2.83: more server list filters for non-admins -----------------------------------------

def test_283_member_filters(cloud, api, member, server):
    new = _at(cloud, api.s, "2.83")
    old = _at(cloud, api.s, "2.82")
    shown = new.get(f"/servers/{server}").json()["server"]

    def ids(client, query):
        r = client.get(f"/servers?{query}")
        assert r.status_code == 200, r.text
        return {s["id"] for s in r.json()["servers"]}

    created_day = shown["created"][:10]
    for query in ("vm_state=active", "vm_state=stopped&vm_state=active", "power_state=1",
                  f"user_id={member['id']}", f"created_at={created_day}", "progress=0",
                  f"availability_zone={shown['OS-EXT-AZ:availability_zone']}"):
        assert server in ids(new, query), query
    for query in ("vm_state=stopped", "power_state=4", "user_id=someone-else",
                  "key_name=no-such-key", "created_at=1999-01-01", "task_state=deleting",
                  "launched_at=1999-01-01", "terminated_at=2", "config_drive=True"):
        assert server not in ids(new, query), query
        # below 2.83 a member's filter on these is dropped, as nova drops it
        assert server in ids(old, query), query


# --- 2.84: a failed instance action event carries its fault message as `details` -----------

def test_284_action_event_details(cloud, api, image_id, faults):
    faults.add(operation="spawn", action="fail", times=None, message="hypervisor says no")
    sid = api.boot(image_id)
    try:
        assert api.wait(sid)["status"] == "ERROR"
        admin = _at(cloud, cloud.session(), "2.84")
        req_id = admin.get(f"/servers/{sid}/os-instance-actions").json()[
            "instanceActions"][-1]["request_id"]
        events = admin.get(f"/servers/{sid}/os-instance-actions/{req_id}").json()[
            "instanceAction"]["events"]
        failed = [e for e in events if e["result"] == "Error"]
        assert failed and all("hypervisor says no" in e["details"] for e in failed), events
        assert all(e["details"] is None for e in events if e["result"] == "Success")
        old = _at(cloud, cloud.session(), "2.83")
        events = old.get(f"/servers/{sid}/os-instance-actions/{req_id}").json()[
            "instanceAction"]["events"]
        assert all("details" not in e for e in events)
        # details are admin-only by default (os-instance-actions:events:details)
        mine = _at(cloud, api.s, "2.84").get(f"/servers/{sid}/os-instance-actions/{req_id}")
        assert all("details" not in e for e in mine.json()["instanceAction"]["events"])
    finally:
        api.delete(f"/servers/{sid}")


# --- 2.86: flavor extra specs in a namespace nova knows are validated ----------------------

def test_286_extra_spec_validation(cloud):
    import uuid

    admin = _at(cloud, cloud.session(), "2.86")
    r = admin.post("/flavors", {"flavor": {"name": f"f286-{uuid.uuid4().hex[:6]}",
                                           "ram": 64, "vcpus": 1, "disk": 1}})
    fid = r.json()["flavor"]["id"]
    specs = f"/flavors/{fid}/os-extra_specs"
    try:
        good = {"hw:cpu_policy": "dedicated", "hw:numa_nodes": "2", "quota:cpu_quota": "10",
                "resources1:VCPU": "1", "trait:HW_CPU_X86_AVX2": "required",
                "hw_rng:allowed": "true", "aggregate_instance_extra_specs:ssd": "yes",
                "my-own:anything": "goes", "plainkey": "x"}
        r = admin.post(specs, {"extra_specs": good})
        assert r.status_code == 200, r.text
        for bad in ({"hw:cpu_policy": "sometimes"}, {"hw:numa_nodes": "two"},
                    {"hw:no_such_thing": "1"}, {"trait:HW_CPU_X86_AVX2": "maybe"},
                    {"hw_rng:allowed": "perhaps"}, {"resources:VCPU": "many"}):
            r = admin.post(specs, {"extra_specs": bad})
            assert r.status_code == 400 and "Validation failed" in r.text, (bad, r.text)
        r = admin.req("PUT", f"{specs}/hw:cpu_policy", json={"hw:cpu_policy": "bogus"})
        assert r.status_code == 400
        r = admin.req("PUT", f"{specs}/hw:cpu_policy", json={"hw:cpu_policy": "shared"})
        assert r.status_code == 200, r.text
        assert admin.get(f"{specs}/hw:cpu_policy").json() == {"hw:cpu_policy": "shared"}
        # below 2.86 nothing is checked
        old = _at(cloud, cloud.session(), "2.85")
        assert old.post(specs, {"extra_specs": {"hw:no_such_thing": "1"}}).status_code == 200
    finally:
        admin.delete(f"/flavors/{fid}")


# --- 2.88: hypervisors lose the resource fields, statistics and uptime; show has uptime ---

def test_288_hypervisors(cloud):
    new = _at(cloud, cloud.session(), "2.88")
    old = _at(cloud, cloud.session(), "2.87")
    gone = {"current_workload", "cpu_info", "vcpus", "vcpus_used", "free_disk_gb", "local_gb",
            "local_gb_used", "disk_available_least", "free_ram_mb", "memory_mb",
            "memory_mb_used", "running_vms"}
    detail = new.get("/os-hypervisors/detail").json()["hypervisors"]
    assert detail and all(not gone & set(h) for h in detail)
    hyp = next(h for h in detail if h["state"] == "up")
    assert " up " in hyp["uptime"]
    shown = new.get(f"/os-hypervisors/{hyp['id']}").json()["hypervisor"]
    assert " up " in shown["uptime"] and not gone & set(shown)
    assert "uptime" not in new.get("/os-hypervisors").json()["hypervisors"][0]
    assert new.get("/os-hypervisors/statistics").status_code == 404
    assert new.get(f"/os-hypervisors/{hyp['id']}/uptime").status_code == 404
    # 2.87 still has all of it
    assert old.get("/os-hypervisors/statistics").json()["hypervisor_statistics"]["count"] >= 1
    assert old.get(f"/os-hypervisors/{hyp['id']}/uptime").status_code == 200
    shown = old.get(f"/os-hypervisors/{hyp['id']}").json()["hypervisor"]
    assert gone <= set(shown) and "uptime" not in shown


# --- 2.90: hostname on create, update and rebuild; shown to everyone ------------------------

def test_290_hostname(cloud, api, image_id):
    new = _at(cloud, api.s, "2.90")
    old = _at(cloud, api.s, "2.89")
    sid = new.boot(image_id, name="Named Server", hostname="my-host-1")
    try:
        shown = new.wait(sid)
        assert shown["OS-EXT-SRV-ATTR:hostname"] == "my-host-1"
        assert "OS-EXT-SRV-ATTR:hostname" not in old.server(sid)  # a member's view
        listed = new.get("/servers/detail?hostname=my-host-1").json()["servers"]
        assert [s["id"] for s in listed] == [sid]
        r = new.req("PUT", f"/servers/{sid}", json={"server": {"hostname": "renamed"}})
        assert r.status_code == 200, r.text
        assert r.json()["server"]["OS-EXT-SRV-ATTR:hostname"] == "renamed"
        r = new.post(f"/servers/{sid}/action", {"rebuild": {"imageRef": image_id,
                                                            "hostname": "rebuilt"}})
        assert r.status_code == 202, r.text
        assert r.json()["server"]["OS-EXT-SRV-ATTR:hostname"] == "rebuilt"
        new.wait(sid)
        for bad in ("-dash", "a", "under_score", "x" * 64, "has.dot", 5):
            r = new.req("PUT", f"/servers/{sid}", json={"server": {"hostname": bad}})
            assert r.status_code == 400, bad
        assert new.post("/servers", {"server": {
            "name": "x", "imageRef": image_id, "flavorRef": "42", "networks": "none",
            "hostname": "bad_name"}}).status_code == 400
        r = new.post("/servers", {"server": {
            "name": "x", "imageRef": image_id, "flavorRef": "42", "networks": "none",
            "hostname": "one-name", "max_count": 2}})
        assert r.status_code == 400 and "single hostname" in r.text, r.text
        # before 2.90 hostname is an unknown field
        r = old.req("PUT", f"/servers/{sid}", json={"server": {"hostname": "later"}})
        assert r.status_code == 400
        assert old.post("/servers", {"server": {
            "name": "x", "imageRef": image_id, "flavorRef": "42", "networks": "none",
            "hostname": "fine"}}).status_code == 400
        r = old.post(f"/servers/{sid}/action", {"rebuild": {"imageRef": image_id,
                                                            "hostname": "rebuilt"}})
        assert r.status_code == 400
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)


# --- 2.91: unshelve to a host (admin), and availability_zone null unpins -------------------

def test_291_unshelve_to_host_and_unpin(cloud, api, image_id):
    admin = _at(cloud, cloud.session(), "2.91")
    member = _at(cloud, api.s, "2.91")
    sid = member.boot(image_id)
    member.wait(sid)
    hyps = _at(cloud, cloud.session(), "2.87").get("/os-hypervisors/detail").json()
    free = sorted(h["service"]["host"] for h in hyps["hypervisors"]
                  if h["state"] == "up" and h["running_vms"] == 0)
    assert len(free) >= 2, hyps
    inside, outside = free[0], free[1]
    agg = admin.post("/os-aggregates", {"aggregate": {"name": "agg-291",
                                                      "availability_zone": "az-291"}})
    agg_id = agg.json()["aggregate"]["id"]
    action = f"/servers/{sid}/action"

    def shelve():
        assert member.post(action, {"shelve": None}).status_code == 202
        assert member.wait(sid, ("SHELVED_OFFLOADED", "ERROR"))["status"] == \
            "SHELVED_OFFLOADED"
    try:
        assert admin.post(f"/os-aggregates/{agg_id}/action",
                          {"add_host": {"host": inside}}).status_code == 200
        shelve()
        # below 2.91: no host, and the zone cannot be null
        old = _at(cloud, cloud.session(), "2.90")
        assert old.post(action, {"unshelve": {"host": inside}}).status_code == 400
        assert old.post(action, {"unshelve": {"availability_zone": None}}).status_code == 400
        # a host is for admins; it must exist and be in the zone asked for
        assert member.post(action, {"unshelve": {"host": inside}}).status_code == 403
        assert admin.post(action, {"unshelve": {"host": "no-such-host"}}).status_code == 400
        r = admin.post(action, {"unshelve": {"availability_zone": "az-291",
                                             "host": outside}})
        assert r.status_code == 409, r.text
        assert admin.post(action, {"unshelve": {"availability_zone": "no-such-az"}}
                          ).status_code == 400
        assert admin.post(action, {"unshelve": {"host": 5}}).status_code == 400
        r = admin.post(action, {"unshelve": {"availability_zone": "az-291", "host": inside}})
        assert r.status_code == 202, r.text
        s = admin.wait(sid)
        assert s["status"] == "ACTIVE" and s["OS-EXT-SRV-ATTR:host"] == inside
        assert s["OS-EXT-AZ:availability_zone"] == "az-291"
        shelve()
        # pinned to az-291 now: another zone's host is refused until the pin is dropped
        assert admin.post(action, {"unshelve": {"host": outside}}).status_code == 409
        r = admin.post(action, {"unshelve": {"availability_zone": None, "host": outside}})
        assert r.status_code == 202, r.text
        s = admin.wait(sid)
        assert s["status"] == "ACTIVE" and s["OS-EXT-SRV-ATTR:host"] == outside
        assert s["OS-EXT-AZ:availability_zone"] != "az-291"
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
        admin.post(f"/os-aggregates/{agg_id}/action", {"remove_host": {"host": inside}})
        admin.delete(f"/os-aggregates/{agg_id}")


# --- 2.92: keypairs are imported only (public_key required); names may have '@' and '.' ---

def test_292_keypair_import_only(cloud, api):
    import uuid

    new = _at(cloud, api.s, "2.92")
    old = _at(cloud, api.s, "2.91")
    made = old.post("/os-keypairs", {"keypair": {"name": f"gen-{uuid.uuid4().hex[:6]}"}})
    assert made.status_code == 201 and "private_key" in made.json()["keypair"]
    public = made.json()["keypair"]["public_key"]
    r = new.post("/os-keypairs", {"keypair": {"name": f"gen2-{uuid.uuid4().hex[:6]}"}})
    assert r.status_code == 400, r.text
    name = f"me@host.example-{uuid.uuid4().hex[:4]}"
    r = new.post("/os-keypairs", {"keypair": {"name": name, "public_key": public}})
    assert r.status_code == 201, r.text
    assert "private_key" not in r.json()["keypair"] and r.json()["keypair"]["type"] == "ssh"
    assert new.get(f"/os-keypairs/{name}").json()["keypair"]["name"] == name
    r = old.post("/os-keypairs", {"keypair": {"name": "at@sign", "public_key": public}})
    assert r.status_code == 400
    r = new.post("/os-keypairs", {"keypair": {"name": "bad/name", "public_key": public}})
    assert r.status_code == 400
    assert new.delete(f"/os-keypairs/{name}").status_code == 204
    assert new.delete(f"/os-keypairs/{made.json()['keypair']['name']}").status_code == 204


# --- 2.94: the hostname may be a fully qualified domain name --------------------------------

def test_294_fqdn_hostname(cloud, api, image_id):
    new = _at(cloud, api.s, "2.94")
    old = _at(cloud, api.s, "2.93")
    sid = new.boot(image_id, hostname="web-1.example.org")
    try:
        assert new.wait(sid)["OS-EXT-SRV-ATTR:hostname"] == "web-1.example.org"
        r = new.req("PUT", f"/servers/{sid}", json={"server": {"hostname": "db.example.org"}})
        assert r.status_code == 200, r.text
        assert r.json()["server"]["OS-EXT-SRV-ATTR:hostname"] == "db.example.org"
        r = new.post(f"/servers/{sid}/action", {"rebuild": {"imageRef": image_id,
                                                            "hostname": "x_y.example.org"}})
        assert r.status_code == 202, r.text
        new.wait(sid)
        for bad in ("", "has space.org", "a" * 256, "semi;colon"):
            r = new.req("PUT", f"/servers/{sid}", json={"server": {"hostname": bad}})
            assert r.status_code == 400, bad
        # 2.90 .. 2.93: a plain hostname only
        r = old.req("PUT", f"/servers/{sid}", json={"server": {"hostname": "db.example.org"}})
        assert r.status_code == 400
        assert old.req("PUT", f"/servers/{sid}",
                       json={"server": {"hostname": "plain"}}).status_code == 200
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)


# --- 2.95: an evacuated server comes up stopped ---------------------------------------------

def test_295_evacuate_leaves_server_stopped(cloud, api, image_id):
    admin_s = cloud.session()
    services = _at(cloud, admin_s, "2.53")

    def force_down(host, down):
        svc = [x for x in services.get("/os-services?binary=nova-compute").json()["services"]
               if x["host"] == host][0]
        r = services.req("PUT", f"/os-services/{svc['id']}", json={"forced_down": down})
        assert r.status_code == 200, r.text

    sid = api.boot(image_id)
    downed = []
    try:
        api.wait(sid)
        for version, expected in (("2.94", "ACTIVE"), ("2.95", "SHUTOFF")):
            admin = _at(cloud, admin_s, version)
            source = admin.server(sid)["OS-EXT-SRV-ATTR:host"]
            force_down(source, True)
            downed.append(source)
            r = admin.post(f"/servers/{sid}/action", {"evacuate": {}})
            assert r.status_code == 200, r.text
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                after = admin.server(sid)
                if after["OS-EXT-STS:task_state"] is None:
                    break
                time.sleep(0.05)
            assert after["status"] == expected, (version, after["status"])
            assert after["OS-EXT-SRV-ATTR:host"] != source
    finally:
        for host in downed:
            force_down(host, False)
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)


# --- 2.96: pinned_availability_zone in show, detail list, update and rebuild ---------------

def test_296_pinned_availability_zone(cloud, api, image_id):
    new = _at(cloud, api.s, "2.96")
    old = _at(cloud, api.s, "2.95")
    pinned = new.boot(image_id, availability_zone="nova")
    loose = new.boot(image_id)
    try:
        assert new.wait(pinned)["pinned_availability_zone"] == "nova"
        assert new.wait(loose)["pinned_availability_zone"] is None
        listed = {s["id"]: s for s in new.get("/servers/detail").json()["servers"]}
        assert listed[pinned]["pinned_availability_zone"] == "nova"
        assert listed[loose]["pinned_availability_zone"] is None
        assert "pinned_availability_zone" not in new.get("/servers").json()["servers"][0]
        r = new.req("PUT", f"/servers/{pinned}", json={"server": {"name": "renamed"}})
        assert r.json()["server"]["pinned_availability_zone"] == "nova"
        r = new.post(f"/servers/{pinned}/action", {"rebuild": {"imageRef": image_id}})
        assert r.status_code == 202 and r.json()["server"]["pinned_availability_zone"] == "nova"
        new.wait(pinned)
        assert "pinned_availability_zone" not in old.server(pinned)
        assert all("pinned_availability_zone" not in s
                   for s in old.get("/servers/detail").json()["servers"])
        # unshelving with availability_zone null (2.91) unpins
        assert new.post(f"/servers/{pinned}/action", {"shelve": None}).status_code == 202
        new.wait(pinned, ("SHELVED_OFFLOADED", "ERROR"))
        r = new.post(f"/servers/{pinned}/action", {"unshelve": {"availability_zone": None}})
        assert r.status_code == 202, r.text
        assert new.wait(pinned)["pinned_availability_zone"] is None
    finally:
        for sid in (pinned, loose):
            api.delete(f"/servers/{sid}")
        for sid in (pinned, loose):
            api.wait_gone(sid)
