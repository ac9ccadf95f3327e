"""Compute's calls to the services this process serves go straight to the app
(wsgi/inprocess.py): the same answers as over HTTP, a boot's port calls take that
way, and what cannot run inline (async handlers, an open transaction, the option off) goes
over HTTP as before."""
import uuid

import pytest
import requests

from pocketstack.common import db
from pocketstack.wsgi import inprocess


@pytest.fixture(scope="module")
def net(cloud, member):
    s = cloud.user_session(member)
    base = cloud.url + "/network/v2.0"
    network = s.post(base + "/networks", json={"network": {"name": "inline-net"}}).json()["network"]
    s.post(base + "/subnets", json={"subnet": {"network_id": network["id"], "ip_version": 4,
                                               "cidr": "10.7.0.0/26"}})
    return network


@pytest.fixture
def inline_calls(monkeypatch):
    """The requests that ran inline: the real ``_run``, watched."""
    seen = []
    real = inprocess._run

    def watching(app, scope, body):
        seen.append((scope["method"], scope["path"]))
        return real(app, scope, body)

    monkeypatch.setattr(inprocess, "_run", watching)
    return seen


def _inline(cloud, method, path, token, json=None, params=None):
    with cloud.cloud.runtime.activated():
        return inprocess.call(method, path, headers={"X-Auth-Token": token,
                                                     "Accept": "application/json"},
                              json=json, params=params)


def test_inline_answers_are_the_http_answers(cloud, member, net):
    token = cloud.user_session(member).get_token()
    missing = str(uuid.uuid4())
    cases = [
        ("GET", f"/network/v2.0/networks/{net['id']}", token, None, None),
        ("GET", f"/network/v2.0/ports/{missing}", token, None, None),  # neutron's 404
        ("GET", "/network/v2.0/ports", token, None, {"device_id": missing}),
        ("GET", "/network/v2.0/networks", token, None, {"id": [net["id"], missing]}),
        ("POST", "/network/v2.0/ports", token, {"port": {"network_id": "nope"}}, None),
        ("GET", f"/image/v2/images/{missing}", token, None, None),  # glance's 404
        ("GET", f"/network/v2.0/networks/{net['id']}", "not-a-token", None, None),  # 401
    ]
    for method, path, tok, body, params in cases:
        inline = _inline(cloud, method, path, tok, json=body, params=params)
        http = requests.request(method, cloud.url + path, json=body, params=params,
                                headers={"X-Auth-Token": tok, "Accept": "application/json"})
        assert inline is not None, path
        assert inline.status_code == http.status_code, (path, inline.text, http.text)
        assert inline.json() == http.json(), path
        assert inline.headers["x-openstack-request-id"].startswith("req-")


def test_a_boot_creates_and_binds_its_port_inline(cloud, api, member, image_id, net,
                                                  inline_calls):
    sid = api.boot(image_id, networks=[{"uuid": net["id"]}])
    server = api.wait(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    ports = cloud.user_session(member).get(
        cloud.url + f"/network/v2.0/ports?device_id={sid}").json()["ports"]
    assert len(ports) == 1 and ports[0]["status"] == "ACTIVE"
    assert ("POST", "/network/v2.0/ports") in inline_calls
    assert ("PUT", f"/network/v2.0/ports/{ports[0]['id']}") in inline_calls
    assert [a["addr"] for a in server["addresses"][net["name"]]] == \
        [ip["ip_address"] for ip in ports[0]["fixed_ips"]]
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_with_local_calls_off_a_boot_goes_over_http(cloud, api, image_id, net, inline_calls,
                                                    conf_override):
    conf_override(None, "local_service_calls", False)
    sid = api.boot(image_id, networks=[{"uuid": net["id"]}])
    assert api.wait(sid)["status"] == "ACTIVE"
    assert inline_calls == []
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_what_needs_the_event_loop_or_its_own_transaction_is_left_to_http(cloud, member,
                                                                          image_id,
                                                                          inline_calls):
    token = cloud.user_session(member).get_token()
    # async handlers: version discovery, image data
    assert _inline(cloud, "GET", "/network/v2.0", token) is None
    assert _inline(cloud, "GET", f"/image/v2/images/{image_id}/file", token) is None
    with cloud.cloud.runtime.activated(), db.transaction():
        # the handler's transaction would join this one: over HTTP it is its own
        assert inprocess.call("GET", "/network/v2.0/networks",
                              headers={"X-Auth-Token": token}) is None
    # (the session cloud's event notifier may run inline meanwhile: another test's server)
    asked = {"/network/v2.0", f"/image/v2/images/{image_id}/file", "/network/v2.0/networks"}
    assert [call for call in inline_calls if call[1] in asked] == []


def test_a_child_forked_from_the_serving_process_goes_over_http(cloud, member, monkeypatch,
                                                               inline_calls):
    token = cloud.user_session(member).get_token()
    headers = {"X-Auth-Token": token}
    with cloud.cloud.runtime.activated():
        assert inprocess.call("GET", "/network/v2.0/networks", headers=headers) is not None
        served = inprocess._served()
        # What a forked child sees: the app was built by another pid (its parent).
        monkeypatch.setattr(served, "pid", served.pid + 1)
        assert inprocess.call("GET", "/network/v2.0/networks", headers=headers) is None
    assert [c for c in inline_calls if c[1] == "/network/v2.0/networks"] == [
        ("GET", "/network/v2.0/networks")]
