"""Whatever a client sends, the load balancer API answers with a result or a 4xx in
Octavia's format — never a 500: creates and updates of every object with any JSON in
any of its fields, and list queries."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lb_helpers import Raw, active, make_subnet

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=False) | st.text(max_size=12)
    | st.sampled_from(["HTTP", "TCP", "UDP", "ROUND_ROBIN", "10.0.0.1", "10.0.0.0/8",
                       "REJECT", "PATH", "EQUAL_TO", "/x", "http://a/", "true"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                  max_size=3),
    max_leaves=5)
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
FIELDS = {
    "loadbalancer": ["name", "vip_subnet_id", "vip_network_id", "vip_port_id", "vip_address",
                     "provider", "flavor_id", "admin_state_up", "tags", "listeners", "pools"],
    "listener": ["protocol", "protocol_port", "connection_limit", "insert_headers",
                 "allowed_cidrs", "default_pool_id", "timeout_client_data",
                 "default_tls_container_ref", "sni_container_refs", "tags"],
    "pool": ["protocol", "lb_algorithm", "session_persistence", "listener_id", "name"],
    "member": ["address", "protocol_port", "weight", "backup", "subnet_id",
               "monitor_address", "monitor_port"],
    "healthmonitor": ["type", "delay", "timeout", "max_retries", "max_retries_down",
                      "http_method", "url_path", "expected_codes", "http_version",
                      "domain_name"],
    "l7policy": ["action", "position", "redirect_pool_id", "redirect_url", "redirect_prefix",
                 "redirect_http_code"],
    "rule": ["type", "compare_type", "key", "value", "invert"],
}


@pytest.fixture(scope="module")
def site(cloud):
    user = cloud.make_user()
    conn = cloud.user_sdk(user)
    subnet = make_subnet(conn, cidr="10.80.0.0/24")
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                                  protocol_port=80)
    active(conn, lb.id)
    pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    policy = conn.load_balancer.create_l7_policy(listener_id=listener.id, action="REJECT")
    active(conn, lb.id)
    yield {"raw": Raw(cloud.user_session(user)), "conn": conn, "lb": lb.id,
           "listener": listener.id, "pool": pool.id, "policy": policy.id,
           "subnet": subnet.id}
    conn.load_balancer.delete_load_balancer(lb.id, cascade=True)


def _send(site, method, path, body):
    response = site["raw"](method, path, body)
    assert response.status_code < 500 or response.status_code == 501, (
        f"{method} {path} {body!r}: {response.status_code} {response.text}")
    if response.status_code >= 400:
        fault = response.json()
        assert set(fault) == {"faultcode", "faultstring", "debuginfo"}
    return response


def _settle(site, response):
    """A change that worked is undone once applied, so the next example starts alike."""
    if response.status_code not in (201, 200, 202):
        return
    active(site["conn"], site["lb"])


@given(kind=st.sampled_from(sorted(FIELDS)), data=st.data())
@FUZZ
def test_creates_and_updates_with_any_values_never_fail_with_a_500(site, kind, data):
    fields = data.draw(st.lists(st.sampled_from(FIELDS[kind]), max_size=4, unique=True))
    body = {field: data.draw(json_values) for field in fields}
    base = {"loadbalancer": {"vip_subnet_id": site["subnet"]},
            "listener": {"loadbalancer_id": site["lb"]},
            "pool": {"loadbalancer_id": site["lb"]},
            "healthmonitor": {"pool_id": site["pool"]},
            "l7policy": {"listener_id": site["listener"]}}.get(kind, {})
    path = {"loadbalancer": "/v2/lbaas/loadbalancers", "listener": "/v2/lbaas/listeners",
            "pool": "/v2/lbaas/pools", "member": f"/v2/lbaas/pools/{site['pool']}/members",
            "healthmonitor": "/v2/lbaas/healthmonitors", "l7policy": "/v2/lbaas/l7policies",
            "rule": f"/v2/lbaas/l7policies/{site['policy']}/rules"}[kind]
    created = _send(site, "POST", path, {kind: {**base, **body}})
    if created.status_code == 201:
        obj = created.json()[kind]
        _settle(site, created)
        if kind == "loadbalancer":  # a new one: a delete while PENDING_CREATE is a 409
            active(site["conn"], obj["id"])
        suffix = "?cascade=true" if kind == "loadbalancer" else ""
        deleted = _send(site, "DELETE", f"{path}/{obj['id']}{suffix}", None)
        _settle(site, deleted)
        if kind == "loadbalancer":
            from lb_helpers import gone
            assert deleted.status_code == 204, deleted.text
            gone(site["conn"], obj["id"])
        else:
            active(site["conn"], site["lb"])
    target = {"loadbalancer": site["lb"], "listener": site["listener"],
              "pool": site["pool"], "l7policy": site["policy"]}.get(kind)
    if target is not None:
        updated = _send(site, "PUT", f"{path}/{target}", {kind: body})
        _settle(site, updated)
    queried = site["raw"]("GET", path + "?" + "&".join(
        f"{f}={v}" for f, v in zip(fields, ["x", "1", "true", "%", ""])))
    assert queried.status_code < 500, queried.text
