"""Failure handling: reschedule with cleanup, ERROR after max_attempts with a
fault naming the attempts, NoValidHost that explains itself, lost build messages, delete
during BUILD, quota exceeded leaving nothing behind."""
import time
import types

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.compute.models import ComputeNode, Instance
from pocketstack.compute.scheduler import claims


def _alloc(uuid):
    host = claims.holder_host(uuid)
    return None if host is None else types.SimpleNamespace(host=host)


def _used():
    with db.reader() as s:
        return {n.host: (n.memory_mb_used, n.vcpus_used, n.running_vms)
                for n in s.scalars(sa.select(ComputeNode)).all()}


def test_spawn_failure_reschedules_to_another_host(api, admin_api, image_id, faults):
    faults.add(operation="spawn", action="fail", times=1, message="disk on fire")
    sid = api.boot(image_id)
    s = api.wait(sid)
    assert s["status"] == "ACTIVE"
    host = admin_api.server(sid)["OS-EXT-SRV-ATTR:host"]
    rid = api.get(f"/servers/{sid}/os-instance-actions").json()["instanceActions"][0]["request_id"]
    events = admin_api.get(f"/servers/{sid}/os-instance-actions/{rid}").json()[
        "instanceAction"]["events"]
    builds = [e for e in events if e["event"] == "compute__do_build_and_run_instance"]
    assert [e["result"] for e in builds] == ["Error", "Success"]
    failed_host = builds[0]["host"]
    assert failed_host != host
    assert any(e["event"] == "conductor_reschedule" for e in events)
    assert _alloc(sid).host == host
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert _alloc(sid) is None


def test_all_hosts_failing_goes_to_error_with_the_attempts(api, image_id, faults):
    faults.add(operation="spawn", action="fail", times=None, message="hypervisor says no")
    before = _used()
    sid = api.boot(image_id)
    s = api.wait(sid)
    assert s["status"] == "ERROR"
    message = s["fault"]["message"]
    assert "3 attempt" in message and message.count("hypervisor says no") == 3, message
    assert s["fault"]["code"] == 500
    assert _alloc(sid) is None and _used() == before
    assert api.delete(f"/servers/{sid}").status_code == 204
    api.wait_gone(sid)


def test_no_valid_host_explains_which_filter_removed_what(api, admin_api, member, image_id):
    admin_api.req("PUT", f"/os-quota-sets/{member['project_id']}",
                  json={"quota_set": {"ram": -1}})
    r = admin_api.post("/flavors", {"flavor": {"name": "huge-test", "ram": 10 ** 6, "vcpus": 1,
                                               "disk": 1}})
    assert r.status_code == 200, r.text
    fid = r.json()["flavor"]["id"]
    sid = api.boot(image_id, flavor=fid)
    s = api.wait(sid)
    assert s["status"] == "ERROR"
    msg = s["fault"]["message"]
    assert msg.startswith("No valid host: ") and "resource fit removed" in msg, msg
    assert "need 1000000 MB RAM, most free is" in msg
    api.delete(f"/servers/{sid}")
    admin_api.delete(f"/flavors/{fid}")


def test_host_down_is_skipped_and_named(api, admin_api, image_id, faults):
    faults.add(host="cmp-4", operation="host", action="down")
    services = admin_api.get("/os-services?binary=nova-compute").json()["services"]
    assert {s["host"]: s["state"] for s in services}["cmp-4"] == "down"
    sid = api.boot(image_id)
    api.wait(sid)
    assert admin_api.server(sid)["OS-EXT-SRV-ATTR:host"] != "cmp-4"
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_lost_build_message_is_rescheduled_after_the_deadline(api, admin_api, image_id,
                                                               faults, conf_override):
    conf_override("compute", "build_timeout", 1.0)
    conf_override("compute", "periodic_interval", 0.2)
    faults.add(operation="build_message", action="drop", times=1)
    sid = api.boot(image_id)
    s = api.wait(sid, timeout=20)
    assert s["status"] == "ACTIVE"
    rid = api.get(f"/servers/{sid}/os-instance-actions").json()["instanceActions"][-1]["request_id"]
    events = admin_api.get(f"/servers/{sid}/os-instance-actions/{rid}").json()[
        "instanceAction"]["events"]
    assert "conductor_build_timeout" in [e["event"] for e in events]
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_lost_build_messages_everywhere_end_in_error_not_build(api, image_id, faults,
                                                                conf_override):
    conf_override("compute", "build_timeout", 0.5)
    conf_override("compute", "periodic_interval", 0.2)
    faults.add(operation="build_message", action="drop", times=None)
    sid = api.boot(image_id)
    s = api.wait(sid, timeout=30)
    assert s["status"] == "ERROR"
    assert "did not finish within" in s["fault"]["message"]
    assert _alloc(sid) is None
    api.delete(f"/servers/{sid}")


def test_delete_during_build_leaves_nothing(api, image_id, faults):
    faults.add(operation="spawn", action="hang", hang_seconds=1.0, times=1)
    before = _used()
    sid = api.boot(image_id)
    deadline = time.monotonic() + 10
    while api.server(sid)["OS-EXT-STS:task_state"] != "spawning":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert api.delete(f"/servers/{sid}").status_code == 204
    api.wait_gone(sid)
    time.sleep(1.5)  # the hung spawn returns, notices, and undoes its guest
    assert _alloc(sid) is None
    assert _used() == before
    with db.reader() as s:
        row = s.get(Instance, sid)
    assert row.deleted and row.vm_state == "deleted"


def test_quota_exceeded_is_403_and_writes_nothing(cloud, make_api, admin_api, image_id):
    user = cloud.make_user(roles=("member",))
    api = make_api(user)
    r = admin_api.req("PUT", f"/os-quota-sets/{user['project_id']}",
                      json={"quota_set": {"instances": 1}})
    assert r.status_code == 200, r.text
    sid = api.boot(image_id)
    r = api.post("/servers", {"server": {"name": "over", "imageRef": image_id, "flavorRef": "42",
                                         "networks": "none"}})
    assert r.status_code == 403
    assert "Quota exceeded for instances" in r.json()["forbidden"]["message"]
    with db.reader() as s:
        count = s.scalar(sa.select(sa.func.count()).select_from(Instance).where(
            Instance.project_id == user["project_id"]))
    assert count == 1
    r = api.post("/servers", {"server": {"name": "many", "imageRef": image_id, "flavorRef": "42",
                                         "networks": "none", "min_count": 2}})
    assert r.status_code == 403
    api.wait(sid)
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
