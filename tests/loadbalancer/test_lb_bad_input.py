"""Bad input gets Octavia's 4xx (WSME's fault body) and changes nothing."""
from __future__ import annotations

import pytest

from lb_helpers import active

FAKE = "6c0a7bcc-8a4a-4a58-9f3c-4d1e4b0e2f11"


@pytest.fixture
def tree(conn, subnet):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                                  protocol_port=80)
    active(conn, lb.id)
    pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    udp = conn.load_balancer.create_pool(loadbalancer_id=lb.id, protocol="UDP",
                                         lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    conn.load_balancer.create_member(pool, address="10.20.0.40", protocol_port=80)
    active(conn, lb.id)
    return {"lb": lb.id, "listener": listener.id, "pool": pool.id, "udp": udp.id,
            "subnet": subnet.id, "vip": lb.vip_address, "network": subnet.network_id}


CASES = [
    # (method, path, body, status, message or fragment)
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"name": "x"}}, 400,
     "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id."),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": "nope"}}, 400,
     "Invalid input for field/attribute vip_subnet_id. Value: 'nope'. Value should be UUID format"),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": FAKE}}, 400,
     f"Subnet {FAKE} not found."),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": "{subnet}",
                                                           "provider": "f5"}}, 400,
     "Provider 'f5' is not enabled."),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": "{subnet}",
                                                           "flavor_id": FAKE}}, 400,
     "Validation failure: Invalid flavor_id."),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": "{subnet}",
                                                           "bogus": 1}}, 400,
     "Unknown attribute for argument loadbalancer: bogus"),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": "{subnet}",
                                                           "admin_state_up": "yes"}}, 400,
     "Wrong type"),
    ("POST", "/v2/lbaas/loadbalancers", [], 400, "JSON object"),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": "{subnet}",
                                                           "vip_address": "{vip}"}}, 409,
     "IP address {vip} already allocated in subnet {subnet}"),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": "{subnet}",
                                                           "vip_address": "192.0.2.5"}}, 400,
     "Validation failure: IP address 192.0.2.5 is not a valid IP for the specified subnet."),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_network_id": "{network}",
                                                           "vip_subnet_id": FAKE}}, 400,
     f"Subnet {FAKE} not found."),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "HTTP",
                                                  "protocol_port": 65536}}, 400,
     "Invalid input for field/attribute protocol_port. Value: '65536'. "
     "Value should be lower or equal to 65535"),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "FTP",
                                                  "protocol_port": 21}}, 400,
     "Value should be one of"),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "TCP",
                                                  "protocol_port": 80}}, 409,
     "Another Listener on this Load Balancer is already using protocol TCP and protocol_port 80"),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": FAKE, "protocol": "TCP",
                                                  "protocol_port": 81}}, 404,
     f"Load Balancer {FAKE} not found."),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "UDP",
                                                  "protocol_port": 53,
                                                  "default_pool_id": "{pool}"}}, 400,
     "Validation failure: The pool protocol 'HTTP' is invalid while the listener protocol "
     "is 'UDP'."),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "TCP",
                                                  "protocol_port": 81,
                                                  "default_pool_id": FAKE}}, 404,
     f"Pool {FAKE} not found."),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}",
                                                  "protocol": "TERMINATED_HTTPS",
                                                  "protocol_port": 443}}, 400,
     "Validation failure: An SNI or default certificate container reference must be "
     "provided for TERMINATED_HTTPS listeners."),
    ("POST", "/v2/lbaas/listeners", {"listener": {
        "loadbalancer_id": "{lb}", "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
        "default_tls_container_ref": "http://barbican/v1/containers/x"}}, 400,
     "Could not retrieve certificate: ['http://barbican/v1/containers/x']"),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "TCP",
                                                  "protocol_port": 81, "insert_headers": {
                                                      "X-Forwarded-For": "true"}}}, 400,
     "headers are not supported for TCP listeners"),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "TCP",
                                                  "protocol_port": 81,
                                                  "allowed_cidrs": ["10.0.0.0/33"]}}, 400,
     "CIDR format"),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "TCP",
                                                  "protocol_port": 81,
                                                  "allowed_cidrs": ["fd00::/64"]}}, 400,
     "IP version incompatible"),
    ("POST", "/v2/lbaas/listeners", {"listener": {"loadbalancer_id": "{lb}", "protocol": "TCP",
                                                  "protocol_port": 81,
                                                  "timeout_client_data": -1}}, 400,
     "Value should be greater or equal to 0"),
    ("POST", "/v2/lbaas/pools", {"pool": {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"}},
     400, "Validation failure: Must provide at least one of: loadbalancer_id, listener_id"),
    ("POST", "/v2/lbaas/pools", {"pool": {"listener_id": "{listener}", "protocol": "HTTP",
                                          "lb_algorithm": "ROUND_ROBIN"}}, 409,
     "This listener already has a default pool"),
    ("POST", "/v2/lbaas/pools", {"pool": {"loadbalancer_id": "{lb}", "protocol": "HTTP",
                                          "lb_algorithm": "RANDOM"}}, 400,
     "Value should be one of"),
    ("POST", "/v2/lbaas/pools", {"pool": {"loadbalancer_id": "{lb}", "protocol": "HTTP",
                                          "lb_algorithm": "SOURCE_IP_PORT"}}, 501,
     "Provider 'amphora' does not support a requested option"),
    ("POST", "/v2/lbaas/pools", {"pool": {"loadbalancer_id": "{lb}", "protocol": "HTTP",
                                          "lb_algorithm": "ROUND_ROBIN",
                                          "session_persistence": {"type": "APP_COOKIE"}}}, 400,
     "cookie_name"),
    ("POST", "/v2/lbaas/pools", {"pool": {"loadbalancer_id": "{lb}", "protocol": "UDP",
                                          "lb_algorithm": "ROUND_ROBIN",
                                          "session_persistence": {"type": "HTTP_COOKIE"}}}, 400,
     "not supported for UDP/SCTP protocol pools"),
    ("POST", "/v2/lbaas/pools/{pool}/members", {"member": {"address": "10.20.0.40",
                                                          "protocol_port": 80}}, 409,
     "Another member on this pool is already using ip 10.20.0.40 on protocol_port 80"),
    ("POST", "/v2/lbaas/pools/{pool}/members", {"member": {"address": "10.20.0.999",
                                                          "protocol_port": 80}}, 400,
     "IPv4 or IPv6"),
    ("POST", "/v2/lbaas/pools/{pool}/members", {"member": {"address": "10.20.0.41",
                                                          "protocol_port": 0}}, 400,
     "Value should be greater or equal to 1"),
    ("POST", "/v2/lbaas/pools/{pool}/members", {"member": {"address": "10.20.0.41",
                                                          "protocol_port": 80,
                                                          "weight": 257}}, 400,
     "Value should be lower or equal to 256"),
    ("POST", "/v2/lbaas/pools/{pool}/members", {"member": {"address": "169.254.169.254",
                                                          "protocol_port": 80}}, 400,
     "169.254.169.254 is not a valid option for member address"),
    ("POST", f"/v2/lbaas/pools/{FAKE}/members", {"member": {"address": "10.20.0.41",
                                                           "protocol_port": 80}}, 404,
     f"Pool {FAKE} not found."),
    ("PUT", "/v2/lbaas/pools/{pool}/members", {"members": [
        {"address": "10.20.0.50", "protocol_port": 80},
        {"address": "10.20.0.50", "protocol_port": 80}]}, 400,
     "Member must be updated only once in the same request."),
    ("PUT", "/v2/lbaas/pools/{pool}/members", {"members": [
        {"address": "10.20.0.50", "protocol_port": 99999}]}, 400,
     "Value should be lower or equal to 65535"),
    ("POST", "/v2/lbaas/healthmonitors", {"healthmonitor": {
        "pool_id": "{udp}", "type": "HTTPS", "delay": 1, "timeout": 1, "max_retries": 1}}, 400,
     "The associated pool protocol is UDP"),
    ("POST", "/v2/lbaas/healthmonitors", {"healthmonitor": {
        "pool_id": "{pool}", "type": "UDP-CONNECT", "delay": 1, "timeout": 1,
        "max_retries": 1}}, 400, "The associated pool protocol is HTTP"),
    ("POST", "/v2/lbaas/healthmonitors", {"healthmonitor": {
        "pool_id": "{pool}", "type": "TCP", "delay": 1, "timeout": 1, "max_retries": 1,
        "url_path": "/x"}}, 400, "url_path is not a valid option for health monitors of type TCP"),
    ("POST", "/v2/lbaas/healthmonitors", {"healthmonitor": {
        "pool_id": "{pool}", "type": "HTTP", "delay": 1, "timeout": 1, "max_retries": 11}}, 400,
     "Value should be lower or equal to 10"),
    ("POST", "/v2/lbaas/healthmonitors", {"healthmonitor": {
        "pool_id": "{pool}", "type": "HTTP", "delay": 1, "timeout": 1, "max_retries": 1,
        "expected_codes": "abc"}}, 400, "expected_codes"),
    ("POST", "/v2/lbaas/l7policies", {"l7policy": {"listener_id": "{listener}",
                                                   "action": "REDIRECT_TO_URL"}}, 400,
     "Invalid L7 Policy arguments: redirect_url must not be None"),
    ("POST", "/v2/lbaas/l7policies", {"l7policy": {"listener_id": "{listener}",
                                                   "action": "REDIRECT_TO_URL",
                                                   "redirect_url": "not a url"}}, 400,
     "Not a valid URL"),
    ("POST", "/v2/lbaas/l7policies", {"l7policy": {"listener_id": "{listener}",
                                                   "action": "REDIRECT_TO_POOL",
                                                   "redirect_pool_id": "{udp}"}}, 400,
     "The pool protocol 'UDP' is invalid while the listener protocol is 'HTTP'."),
    ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {"vip_subnet_id": "{subnet}",
                                                           "vip_qos_policy_id": FAKE}}, 400,
     f"QoS Policy {FAKE} not found."),
    ("PUT", "/v2/lbaas/loadbalancers/{lb}", {"loadbalancer": {"vip_qos_policy_id": FAKE}}, 400,
     f"QoS Policy {FAKE} not found."),
    ("PUT", "/v2/lbaas/loadbalancers/{lb}", {"loadbalancer": {"vip_address": "10.0.0.9"}}, 400,
     "Unknown attribute for argument loadbalancer: vip_address"),
    ("PUT", "/v2/lbaas/quotas/{project}", {"quota": {"pool": 1}}, 403, "Policy"),
    ("GET", "/v2/lbaas/loadbalancers?limit=x", None, 400,
     "Supplied pagination limit 'x' is not valid."),
    ("GET", f"/v2/lbaas/listeners/{FAKE}", None, 404, f"Listener {FAKE} not found."),
    ("GET", "/v2/lbaas/nothing", None, 404, ""),
    ("DELETE", "/v2/lbaas/loadbalancers", None, 405, ""),
]


def _fill(value, ids):
    if isinstance(value, str):
        for key, real in ids.items():
            value = value.replace("{" + key + "}", real)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    return value


def _snapshot(raw):
    out = {}
    for kind in ("loadbalancers", "listeners", "pools", "members", "healthmonitors",
                 "l7policies"):
        if kind == "members":
            continue
        body = raw("GET", f"/v2/lbaas/{kind}").json()[kind]
        out[kind] = sorted((o["id"], o.get("provisioning_status"), o.get("updated_at"))
                           for o in body)
    return out


def test_bad_input_gets_octavia_errors_and_changes_nothing(conn, tree, raw):
    ids = dict(tree, project=conn.current_project_id)
    pool_members = lambda: sorted(m["id"] for m in raw(  # noqa: E731
        "GET", f"/v2/lbaas/pools/{tree['pool']}/members").json()["members"])
    ports = lambda: sorted(p.id for p in conn.network.ports())  # noqa: E731
    before, members, before_ports = _snapshot(raw), pool_members(), ports()
    failures = []
    for method, path, body, status, message in CASES:
        code, text = raw.error(method, _fill(path, ids), _fill(body, ids))
        if code != status or _fill(message, ids) not in text:
            failures.append((method, path, body, code, text))
    assert failures == []
    assert _snapshot(raw) == before
    assert pool_members() == members
    assert ports() == before_ports  # no VIP port left behind by a refused create
