"""Scheduler over 10,000 hosts: with more hosts than [scheduler]
max_placement_results the scheduler filters and weighs only the candidates the database
finds (up, enabled, room enough), as nova does with placement. Forced here with a limit of
one candidate on the all-in-one's four hosts: boots still land, a host that is down is
never a candidate, and NoValidHost still explains itself over every host."""
from __future__ import annotations


def _host(admin_api, sid):
    return admin_api.get(f"/servers/{sid}").json()["server"]["OS-EXT-SRV-ATTR:host"]


def _force_down(admin_api, host, down: bool):
    r = admin_api.req("PUT", "/os-services/force-down",
                      json={"host": host, "binary": "nova-compute", "forced_down": down},
                      headers={"OpenStack-API-Version": "compute 2.11"})
    assert r.status_code == 200, r.text


def test_candidates_only_boot_and_skip_a_down_host(api, admin_api, image_id, conf_override):
    conf_override("scheduler", "max_placement_results", 1)
    sid = api.boot(image_id)
    assert api.wait(sid)["status"] == "ACTIVE"
    first = _host(admin_api, sid)
    _force_down(admin_api, first, True)
    try:
        other = api.boot(image_id)
        assert api.wait(other)["status"] == "ACTIVE"
        assert _host(admin_api, other) != first
        api.delete(f"/servers/{other}")
    finally:
        _force_down(admin_api, first, False)
    api.delete(f"/servers/{sid}")


def test_no_valid_host_still_counts_every_host(api, admin_api, member, image_id,
                                               conf_override):
    conf_override("scheduler", "max_placement_results", 1)
    admin_api.req("PUT", f"/os-quota-sets/{member['project_id']}",
                  json={"quota_set": {"ram": -1}})
    r = admin_api.post("/flavors", {"flavor": {"name": "huge-candidates", "ram": 10 ** 6,
                                               "vcpus": 1, "disk": 1}})
    assert r.status_code == 200, r.text
    fid = r.json()["flavor"]["id"]
    try:
        sid = api.boot(image_id, flavor=fid)
        s = api.wait(sid)
        assert s["status"] == "ERROR"
        msg = s["fault"]["message"]
        hosts = len(admin_api.get("/os-hypervisors").json()["hypervisors"])
        assert msg.startswith(f"No valid host: {hosts} hosts; "), msg
        assert "need 1000000 MB RAM, most free is" in msg
        api.delete(f"/servers/{sid}")
    finally:
        admin_api.delete(f"/flavors/{fid}")
