"""Resize + confirmResize + revertResize: nova's states (RESIZE →
VERIFY_RESIZE → ACTIVE / REVERT_RESIZE → ACTIVE), claims on the destination while the
source keeps its own until confirm or revert, same-host resize, failures that roll back or
end in ERROR without leaking a claim, and the bad inputs nova answers with a 4xx."""
import time

import pytest
import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.compute.models import Migration
from pocketstack.placement import direct

NANO, MICRO, TINY = "42", "84", "1"


def _allocs(instance_uuid):
    """{consumer: (host, vcpus, memory_mb)} for the server and its migrations, as
    placement holds them (the claims are placement allocations)."""
    with db.reader() as s:
        migrations = s.scalars(sa.select(Migration.uuid)
                               .where(Migration.instance_uuid == instance_uuid)).all()
    out = {}
    for consumer in [instance_uuid, *migrations]:
        for entry in direct.held(consumer).values():
            out["instance" if consumer == instance_uuid else "migration"] = (
                entry["name"], entry["resources"]["VCPU"], entry["resources"]["MEMORY_MB"])
    return out


def _migration(instance_uuid):
    with db.reader() as s:
        return s.scalars(sa.select(Migration).where(Migration.instance_uuid == instance_uuid)
                         .order_by(Migration.id.desc())).first()


def _wait_status(api, sid, *statuses, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = api.server(sid)
        if s["status"] in statuses and s["OS-EXT-STS:task_state"] is None:
            return s
        time.sleep(0.02)
    raise AssertionError(f"{sid} not in {statuses}: {s['status']}/{s['OS-EXT-STS:task_state']}")


def _action(api, sid, body):
    return api.post(f"/servers/{sid}/action", body)


@pytest.fixture
def server(api, image_id):
    sid = api.boot(image_id)
    assert api.wait(sid)["status"] == "ACTIVE"
    yield sid
    api.delete(f"/servers/{sid}")


def test_resize_then_confirm(api, admin_api, server):
    source = admin_api.server(server)["OS-EXT-SRV-ATTR:host"]
    r = _action(api, server, {"resize": {"flavorRef": MICRO}})
    assert r.status_code == 202 and r.content == b"", r.text
    s = _wait_status(api, server, "VERIFY_RESIZE")
    assert s["OS-EXT-STS:vm_state"] == "resized" and s["flavor"]["original_name"] == "m1.micro"
    assert s["OS-EXT-STS:power_state"] == 1
    dest = admin_api.server(server)["OS-EXT-SRV-ATTR:host"]
    # The destination holds the new flavor for the server, the source the old one.
    assert _allocs(server) == {"instance": (dest, 1, 256), "migration": (source, 1, 192)}
    assert _migration(server).status == "finished"

    r = _action(api, server, {"confirmResize": None})
    assert r.status_code == 204, r.text
    s = _wait_status(api, server, "ACTIVE")
    assert s["flavor"]["original_name"] == "m1.micro"
    assert _allocs(server) == {"instance": (dest, 1, 256)}
    assert _migration(server).status == "confirmed"
    # Confirming twice: the server is no longer resized (nova's check_instance_state).
    assert _action(api, server, {"confirmResize": None}).status_code == 409
    names = [a["action"] for a in api.get(f"/servers/{server}/os-instance-actions")
             .json()["instanceActions"]]
    assert names[:2] == ["confirmResize", "resize"]


def test_resize_then_revert_restores_flavor_host_and_claims(api, admin_api, server):
    source = admin_api.server(server)["OS-EXT-SRV-ATTR:host"]
    before = _allocs(server)
    assert _action(api, server, {"resize": {"flavorRef": MICRO}}).status_code == 202
    _wait_status(api, server, "VERIFY_RESIZE")
    # as nova: the resized guest's console is readable while the user verifies it
    assert "Resized on" in api.post(f"/servers/{server}/action",
                                    {"os-getConsoleOutput": {}}).json()["output"]
    r = _action(api, server, {"revertResize": None})
    assert r.status_code == 202, r.text
    s = _wait_status(api, server, "ACTIVE")
    assert s["flavor"]["original_name"] == "m1.nano"
    assert admin_api.server(server)["OS-EXT-SRV-ATTR:host"] == source
    assert _allocs(server) == before
    assert _migration(server).status == "reverted"
    out = api.post(f"/servers/{server}/action", {"os-getConsoleOutput": {}}).json()["output"]
    assert "Resize reverted" in out


def test_resize_to_the_same_host(api, admin_api, server):
    host = admin_api.server(server)["OS-EXT-SRV-ATTR:host"]
    services = admin_api.get("/os-services?binary=nova-compute").json()["services"]
    others = [sv for sv in services if sv["host"] != host]
    try:
        for sv in others:
            assert admin_api.req("PUT", f"/os-services/{sv['id']}",
                                 json={"status": "disabled"}).status_code == 200
        assert _action(api, server, {"resize": {"flavorRef": MICRO}}).status_code == 202
        _wait_status(api, server, "VERIFY_RESIZE")
    finally:
        for sv in others:
            admin_api.req("PUT", f"/os-services/{sv['id']}", json={"status": "enabled"})
    assert _allocs(server) == {"instance": (host, 1, 256), "migration": (host, 1, 192)}
    assert admin_api.server(server)["OS-EXT-SRV-ATTR:host"] == host
    assert _action(api, server, {"revertResize": None}).status_code == 202
    _wait_status(api, server, "ACTIVE")
    assert _allocs(server) == {"instance": (host, 1, 192)}
    assert _action(api, server, {"os-stop": None}).status_code == 202  # the guest is back
    _wait_status(api, server, "SHUTOFF")


def test_resize_a_stopped_server_stays_stopped(api, server):
    _action(api, server, {"os-stop": None})
    _wait_status(api, server, "SHUTOFF")
    assert _action(api, server, {"resize": {"flavorRef": MICRO}}).status_code == 202
    s = _wait_status(api, server, "VERIFY_RESIZE")
    assert s["OS-EXT-STS:power_state"] == 4
    assert _action(api, server, {"confirmResize": None}).status_code == 204
    s = _wait_status(api, server, "SHUTOFF")
    assert s["flavor"]["original_name"] == "m1.micro"


def test_sdk_resize_and_confirm(cloud, member, image_id):
    conn = cloud.user_sdk(member)
    server = conn.compute.create_server(name="sdk-resize", image_id=image_id, flavor_id=NANO,
                                        networks="none")
    server = conn.compute.wait_for_server(server, wait=30, interval=0.05)
    conn.compute.resize_server(server, MICRO)
    server = conn.compute.wait_for_server(server, status="VERIFY_RESIZE", wait=30,
                                          interval=0.05)
    conn.compute.confirm_server_resize(server)
    server = conn.compute.wait_for_server(server, status="ACTIVE", wait=30, interval=0.05)
    assert server.flavor.original_name == "m1.micro"
    conn.compute.delete_server(server)


def test_delete_while_verify_resize_releases_both_claims(api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    assert _action(api, sid, {"resize": {"flavorRef": MICRO}}).status_code == 202
    _wait_status(api, sid, "VERIFY_RESIZE")
    assert len(_allocs(sid)) == 2
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    deadline = time.monotonic() + 10
    while _allocs(sid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _allocs(sid) == {}


def test_no_valid_host_rolls_back_and_explains(api, admin_api, server):
    r = admin_api.post("/flavors", {"flavor": {"name": "huge-resize", "ram": 256,
                                               "vcpus": 1, "disk": 5000}})
    assert r.status_code == 200, r.text
    fid = r.json()["flavor"]["id"]
    try:
        before = _allocs(server)
        assert _action(api, server, {"resize": {"flavorRef": fid}}).status_code == 202
        s = _wait_status(api, server, "ACTIVE")
        assert s["flavor"]["original_name"] == "m1.nano"
        assert _allocs(server) == before
        assert _migration(server).status == "error"
        actions = api.get(f"/servers/{server}/os-instance-actions").json()["instanceActions"]
        assert actions[0]["action"] == "resize" and actions[0]["message"] == "Error"
        trace = api.s.get(api.cloud.url + f"/pocketstack/v1/traces/"
                                          f"{actions[0]['request_id']}").json()
        failed = [e for e in trace["events"] if e["result"] == "Error"]
        assert failed[0]["step"] == "scheduler_select_destinations"
        assert "No valid host" in failed[0]["detail"] and "disk" in failed[0]["detail"]
    finally:
        admin_api.delete(f"/flavors/{fid}")


def test_disk_shrink_fails_on_the_source_and_rolls_back(api, admin_api, image_id):
    sid = api.boot(image_id, flavor=TINY)
    api.wait(sid)
    small = admin_api.post("/flavors", {"flavor": {"name": "shrink-resize", "ram": 512,
                                                   "vcpus": 1, "disk": 0}}).json()["flavor"]
    try:
        # root_gb 0 from a non-zero disk: nova refuses up front.
        r = _action(api, sid, {"resize": {"flavorRef": small["id"]}})
        assert r.status_code == 400 and "zero disk" in r.json()["badRequest"]["message"]
    finally:
        admin_api.delete(f"/flavors/{small['id']}")
    bigger = admin_api.post("/flavors", {"flavor": {"name": "shrink-resize-2", "ram": 1024,
                                                    "vcpus": 1, "disk": 1}}).json()["flavor"]
    try:
        # Growing the disk works; shrinking it fails on the source (as libvirt refuses),
        # which rolls back: the server keeps its flavor, host and claim.
        r = _action(api, sid, {"resize": {"flavorRef": "2"}})  # m1.small, 20 GB
        assert r.status_code == 202
        _wait_status(api, sid, "VERIFY_RESIZE")
        assert _action(api, sid, {"confirmResize": None}).status_code == 204
        _wait_status(api, sid, "ACTIVE")
        before = _allocs(sid)
        r = _action(api, sid, {"resize": {"flavorRef": bigger["id"]}})  # 20 GB → 1 GB
        assert r.status_code == 202
        s = _wait_status(api, sid, "ACTIVE")
        assert s["flavor"]["original_name"] == "m1.small"
        assert _allocs(sid) == before and _migration(sid).status == "error"
    finally:
        admin_api.delete(f"/flavors/{bigger['id']}")
        api.delete(f"/servers/{sid}")


def test_failure_on_the_destination_ends_in_error_on_the_source(api, admin_api, server,
                                                                faults):
    source = admin_api.server(server)["OS-EXT-SRV-ATTR:host"]
    before = _allocs(server)
    faults.add(operation="finish_migration", action="fail", times=1,
               message="disk copy failed")
    assert _action(api, server, {"resize": {"flavorRef": MICRO}}).status_code == 202
    s = _wait_status(api, server, "ERROR")
    assert "disk copy failed" in s["fault"]["message"]
    assert s["flavor"]["original_name"] == "m1.nano"
    assert admin_api.server(server)["OS-EXT-SRV-ATTR:host"] == source
    assert _allocs(server) == before
    # The guest is back on the source: a hard reboot recovers the server.
    assert _action(api, server, {"reboot": {"type": "HARD"}}).status_code == 202
    _wait_status(api, server, "ACTIVE")


def test_bad_resize_requests(cloud, api, admin_api, make_api, server, member):
    def code(body, sid=server, who=api):
        r = _action(who, sid, body)
        return r.status_code, r.text

    assert code({"resize": {"flavorRef": NANO}})[0] == 400  # same flavor
    status, text = code({"resize": {"flavorRef": "no-such-flavor"}})
    assert status == 400 and "badRequest" in text
    assert code({"resize": {}})[0] == 400
    assert code({"resize": {"flavorRef": MICRO, "extra": 1}})[0] == 400
    assert code({"resize": None})[0] == 400
    assert code({"resize": {"flavorRef": ""}})[0] == 400
    assert code({"resize": {"flavorRef": MICRO, "OS-DCF:diskConfig": "SOMETIMES"}})[0] == 400
    assert code({"confirmResize": None})[0] == 409  # not resized
    assert code({"revertResize": None})[0] == 409
    assert code({"confirmResize": {}})[0] == 400
    assert code({"revertResize": {"x": 1}})[0] == 400
    stranger = make_api(cloud.make_user(roles=("member",)))
    assert code({"resize": {"flavorRef": MICRO}}, who=stranger)[0] == 404
    reader = make_api(cloud.make_user(roles=("reader",)))
    assert code({"resize": {"flavorRef": MICRO}}, who=reader)[0] == 404
    # locked by its owner: 409 for the owner's resize as well (nova's check_instance_lock)
    assert _action(api, server, {"lock": None}).status_code == 202
    assert code({"resize": {"flavorRef": MICRO}})[0] == 409
    assert _action(api, server, {"unlock": None}).status_code == 202
    # quota: cores for a bigger flavor
    project = member["project_id"]
    admin_api.req("PUT", f"/os-quota-sets/{project}", json={"quota_set": {"ram": 300}})
    try:
        status, text = code({"resize": {"flavorRef": "1"}})  # 512 MB
        assert status == 403 and "ram" in text
    finally:
        admin_api.req("DELETE", f"/os-quota-sets/{project}")
    # nothing above started a resize
    assert _migration(server) is None
    assert api.server(server)["status"] == "ACTIVE"


def test_resize_while_building_is_409(api, image_id, conf_override):
    conf_override("fake", "spawn_delay", 0.5)
    sid = api.boot(image_id)
    r = _action(api, sid, {"resize": {"flavorRef": MICRO}})
    assert r.status_code == 409 and "conflictingRequest" in r.text
    api.wait(sid)
    api.delete(f"/servers/{sid}")


@pytest.mark.cli
def test_openstack_cli_resize_and_confirm(cloud, image_id):
    name = "cli-resize"
    server = cloud.cli("server", "create", "--flavor", "m1.nano", "--image", image_id,
                       "--nic", "none", "--wait", name, "-f", "json")
    cloud.cli("server", "resize", "--flavor", "m1.micro", "--wait", server["id"])
    cloud.cli("server", "resize", "confirm", server["id"])
    shown = cloud.cli("server", "show", server["id"], "-f", "json")
    assert shown["status"] in ("ACTIVE", "VERIFY_RESIZE")
    cloud.cli("server", "delete", "--wait", server["id"])
