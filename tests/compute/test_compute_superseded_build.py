"""A build that wakes up after the conductor rescheduled it (its host hung past the build
deadline — or, scaled out, was cut off and came back) gives up without touching the
server's new attempt: the port and the claim on the new host stay (nothing leaks,
and nothing a live server needs is taken away)."""
import time
import uuid

import pytest

from pocketstack.compute.scheduler import claims


@pytest.fixture(scope="module")
def net(cloud, member):
    s = cloud.user_session(member)
    r = s.post(cloud.url + "/network/v2.0/networks",
               json={"network": {"name": f"late-{uuid.uuid4().hex[:4]}"}}, raise_exc=False)
    if r.status_code == 404:
        pytest.skip("the network service is not mounted in this tree")
    network = r.json()["network"]
    s.post(cloud.url + "/network/v2.0/subnets",
           json={"subnet": {"network_id": network["id"], "ip_version": 4,
                            "cidr": "10.9.0.0/24"}})
    return network


def _ports(cloud, sid):
    return cloud.session().get(cloud.url + "/network/v2.0/ports",
                               params={"device_id": sid}).json()["ports"]


def test_a_build_that_wakes_after_its_reschedule_leaves_the_new_attempt_alone(
        cloud, api, admin_api, image_id, net, faults, conf_override):
    conf_override("compute", "build_timeout", 2.0)
    conf_override("compute", "periodic_interval", 0.2)
    faults.add(operation="spawn", action="hang", hang_seconds=5.0, times=1)
    sid = api.boot(image_id, networks=[{"uuid": net["id"]}])
    assert api.wait(sid, timeout=30)["status"] == "ACTIVE"
    host = admin_api.server(sid)["OS-EXT-SRV-ATTR:host"]

    def gave_up():
        trace = cloud.session().get(cloud.url + f"/pocketstack/v1/servers/{sid}/trace").json()
        return any(e["step"] == "compute__do_build_and_run_instance"
                   and "superseded" in (e["detail"] or "") for e in trace["events"])

    deadline = time.monotonic() + 20
    while not gave_up():  # the hung spawn returns, finds the server moved on, undoes its own
        assert time.monotonic() < deadline, "the hung build never gave up"
        time.sleep(0.1)
    ports = _ports(cloud, sid)
    assert [(p["binding:host_id"], p["status"]) for p in ports] == [(host, "ACTIVE")]
    assert claims.holder_host(sid) == host
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert _ports(cloud, sid) == []
    assert claims.holder_host(sid) is None


def test_an_expired_build_is_timed_out_once_however_many_conductors_look(
        cloud, api, admin_api, image_id, net, faults, conf_override):
    """Two conductors (scale-out) that both read the same expired build: the second, late
    one must not clean up — it would take the rescheduled attempt's claim and ports."""
    from pocketstack.compute.conductor.manager import ConductorManager

    conf_override("compute", "build_timeout", 0.5)
    conf_override("compute", "periodic_interval", 60.0)  # the cloud's own conductor waits
    faults.add(operation="build_message", action="drop", times=1)
    sid = api.boot(image_id, networks=[{"uuid": net["id"]}])
    deadline = time.monotonic() + 10
    while not (stale := [i for i in ConductorManager._expired_builds() if i.uuid == sid]):
        assert time.monotonic() < deadline, "the build never expired"
        time.sleep(0.05)
    first, second = ConductorManager(), ConductorManager()
    assert first._time_out_build(stale[0]) is True
    s = api.wait(sid, timeout=30)
    assert s["status"] == "ACTIVE"
    assert second._time_out_build(stale[0]) is False  # it read the row before the first
    host = admin_api.server(sid)["OS-EXT-SRV-ATTR:host"]
    ports = _ports(cloud, sid)
    assert [(p["binding:host_id"], p["status"]) for p in ports] == [(host, "ACTIVE")]
    assert claims.holder_host(sid) == host
    trace = cloud.session().get(cloud.url + f"/pocketstack/v1/servers/{sid}/trace").json()
    assert [e["step"] for e in trace["events"]].count("conductor_build_timeout") == 1
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
