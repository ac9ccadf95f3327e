"""A server deleted while still building must not have its port bound afterwards
(a late build step bound it and kept it until the wait for network-vif-plugged timed out,
so a prompt subnet delete got 409)."""
import time
import uuid


def _trace(cloud, sid):
    r = cloud.session().get(cloud.url + f"/pocketstack/v1/servers/{sid}/trace",
                            raise_exc=False)
    return r.json().get("events", []) if r.status_code == 200 else []


def _wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not reached")


def test_server_deleted_while_its_ports_are_made_gets_no_bound_port(cloud, api, member,
                                                                     image_id, faults):
    s = cloud.user_session(member)
    base = cloud.url + "/network/v2.0"
    net = s.post(base + "/networks", json={"network": {
        "name": f"ccrace-{uuid.uuid4().hex[:4]}"}}).json()["network"]
    subnet = s.post(base + "/subnets", json={"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.63.0.0/28"}}).json()["subnet"]
    # The build hangs just before it makes ports; the server is deleted meanwhile. Had the
    # build gone on to wait for network-vif-plugged, it would consume the vif_plugged rule.
    hang = faults.add(operation="allocate_network", action="hang", hang_seconds=1.0, times=1)
    plugged = faults.add(operation="vif_plugged", action="fail", times=1)
    sid = api.boot(image_id, networks=[{"uuid": net["id"]}])
    _wait_for(lambda: hang["id"] not in [f["id"] for f in faults.list()])  # hanging now
    assert api.delete(f"/servers/{sid}").status_code == 204
    api.wait_gone(sid)
    _wait_for(lambda: any(e["step"] == "compute__do_build_and_run_instance"
                          for e in _trace(cloud, sid)))
    assert s.get(base + f"/ports?device_id={sid}").json()["ports"] == []
    assert plugged["id"] in [f["id"] for f in faults.list()], "the build waited for vif"
    assert s.delete(base + f"/subnets/{subnet['id']}", raise_exc=False).status_code == 204
    assert s.delete(base + f"/networks/{net['id']}", raise_exc=False).status_code == 204
