"""No project member can write into haproxy.cfg (run as root): every value the data plane
writes is checked by the API as Octavia checks it (a health monitor's domain_name against
its pattern, L7 rule keys and values against the header, cookie and regex checks), with
no control character anywhere, so a newline gets Octavia's 400; and the renderer refuses a
stored value that would break a line or a word rather than write it."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from lb_helpers import active
from lb_scene import NAMED_HTTP, Scene, needs_haproxy, until


NEWLINE_DIRECTIVE = "\n    stats socket ipv4@0.0.0.0:9999 level admin"
DOMAIN_PATTERN = (r"^(?=.{1,253}\.?$)(?:(?!-|[^.]+_)[A-Za-z0-9-_]{1,63}(?<!-)"
                  r"(?:\.|$))+$")


@pytest.fixture
def scene(conn, subnet):
    lb_api = conn.load_balancer
    lb = lb_api.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    listener = lb_api.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                      protocol_port=80)
    active(conn, lb.id)
    pool = lb_api.create_pool(listener_id=listener.id, protocol="HTTP",
                              lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    udp = lb_api.create_pool(loadbalancer_id=lb.id, protocol="UDP",
                             lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    member = lb_api.create_member(pool, address="10.20.0.40", protocol_port=80)
    active(conn, lb.id)
    monitor = lb_api.create_health_monitor(pool_id=pool.id, type="HTTP", delay=2, timeout=1,
                                           max_retries=2)
    active(conn, lb.id)
    policy = lb_api.create_l7_policy(listener_id=listener.id, action="REJECT")
    active(conn, lb.id)
    rule = lb_api.create_l7_rule(policy, type="PATH", compare_type="STARTS_WITH",
                                 value="/admin")
    active(conn, lb.id)
    return {"lb": lb, "listener": listener, "pool": pool, "udp": udp, "member": member,
            "monitor": monitor, "policy": policy, "rule": rule, "subnet": subnet}


def _monitor(pool_id, **fields):
    return {"healthmonitor": {"pool_id": pool_id, "type": "HTTP", "delay": 2, "timeout": 1,
                              "max_retries": 2, **fields}}


def test_the_reported_injections_get_octavias_400(conn, raw, scene):
    """The two reported: a domain_name and an L7 HEADER value with a newline and a
    directive of the caller's were 201 and written into haproxy.cfg verbatim."""
    code, text = raw.error("POST", "/v2/lbaas/healthmonitors", _monitor(
        scene["udp"].id, http_version=1.1, domain_name="example.com" + NEWLINE_DIRECTIVE))
    assert code == 400
    assert text == ("Invalid input for field/attribute domain_name. Value: "
                    f"'example.com{NEWLINE_DIRECTIVE}'. Value should match the pattern "
                    f"{DOMAIN_PATTERN}"), text
    code, text = raw.error("POST", f"/v2/lbaas/l7policies/{scene['policy'].id}/rules",
                           {"rule": {"type": "HEADER", "compare_type": "EQUAL_TO",
                                     "key": "X-Kind",
                                     "value": "v\nglobal\n    insecure-fork-wanted"}})
    assert (code, text) == (400, "Error parsing L7Rule: Invalid characters in header value")
    # A domain name that ends in a newline matched Octavia's pattern with Python's $.
    code, text = raw.error("PUT", f"/v2/lbaas/healthmonitors/{scene['monitor'].id}",
                           {"healthmonitor": {"http_version": 1.1,
                                              "domain_name": "example.com\n"}})
    assert code == 400 and "Value should match the pattern" in text, text
    assert raw("GET", f"/v2/lbaas/healthmonitors/{scene['monitor'].id}").json()[
        "healthmonitor"]["domain_name"] is None


RULE_CASES = [
    # (type, compare_type, key, value, message)
    ("HEADER", "EQUAL_TO", "X-Kind", "a\nb", "Invalid characters in header value"),
    ("HEADER", "CONTAINS", "X-Kind", '"a\tb"', "Invalid characters in header value"),
    ("HEADER", "REGEX", "X-Kind", "^a\n", "Invalid characters in regular expression"),
    ("HEADER", "EQUAL_TO", "X-Kind\n", "a", "Invalid characters in key"),
    ("HEADER", "EQUAL_TO", "X-A,B", "a", "Invalid characters in key"),
    ("COOKIE", "EQUAL_TO", "tier", "gold\n", "Invalid characters in cookie value"),
    ("COOKIE", "STARTS_WITH", "tier", "go ld", "Invalid characters in cookie value"),
    ("COOKIE", "REGEX", "tier", "^gold$\nglobal", "Invalid characters in regular expression"),
    ("COOKIE", "EQUAL_TO", "tier\n", "gold", "Invalid characters in key"),
    ("PATH", "STARTS_WITH", None, "/api\n", "Invalid characters in comparison value"),
    ("PATH", "REGEX", None, "^/api\r\n", "Invalid characters in regular expression"),
    ("HOST_NAME", "EQUAL_TO", None, "a.example\x0b", "Invalid characters in comparison value"),
    ("FILE_TYPE", "EQUAL_TO", None, "js\non", "Invalid characters in comparison value"),
    ("FILE_TYPE", "REGEX", None, "js\x1b", "Invalid characters in regular expression"),
    ("SSL_DN_FIELD", "EQUAL_TO", "CN", "www\n", "Invalid characters in comparison value"),
    ("SSL_DN_FIELD", "EQUAL_TO", "CN\n", "www", "Invalid L7 Rule: Invalid L7rule "
                                                "distinguished name field."),
]


def test_a_control_character_in_any_l7_rule_key_or_value_is_refused(conn, raw, scene):
    rules = f"/v2/lbaas/l7policies/{scene['policy'].id}/rules"
    failures = []
    for rtype, compare, key, value, message in RULE_CASES:
        body = {"type": rtype, "compare_type": compare, "value": value,
                **({"key": key} if key else {})}
        for method, path in (("POST", rules), ("PUT", f"{rules}/{scene['rule'].id}")):
            code, text = raw.error(method, path, {"rule": body})
            if (code, text) != (400, f"Error parsing L7Rule: {message}"):
                failures.append((method, rtype, compare, repr(value), code, text))
    assert failures == []
    kept = conn.load_balancer.get_l7_rule(scene["rule"].id, scene["policy"].id)
    assert (kept.type, kept.rule_value) == ("PATH", "/admin")
    assert [r.id for r in conn.load_balancer.l7_rules(scene["policy"].id)] == [kept.id]


def test_a_newline_in_any_other_rendered_value_is_refused(conn, raw, scene):
    pool, udp, lb = scene["pool"].id, scene["udp"].id, scene["lb"]
    monitor = f"/v2/lbaas/healthmonitors/{scene['monitor'].id}"
    member = f"/v2/lbaas/pools/{pool}/members/{scene['member'].id}"
    cases = [
        ("POST", "/v2/lbaas/healthmonitors", _monitor(udp, url_path="/health\n"),
         "Invalid input for field/attribute url_path. Value: '/health\n'. Value must be a "
         "valid URL Path string"),
        ("PUT", monitor, {"healthmonitor": {"url_path": "/\n    insecure-fork-wanted"}},
         "Value must be a valid URL Path string"),
        ("PUT", monitor, {"healthmonitor": {"expected_codes": "200\n"}},
         r"Value should match the pattern ^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$"),
        ("PUT", monitor, {"healthmonitor": {"expected_codes": "200\n,201"}},
         "expected_codes"),
        ("PUT", monitor, {"healthmonitor": {"http_method": "GET\n"}},
         "Invalid input for field/attribute http_method. Value: 'GET\n'. Value should be "
         "one of"),
        ("POST", "/v2/lbaas/l7policies", {"l7policy": {
            "listener_id": scene["listener"].id, "action": "REDIRECT_TO_URL",
            "redirect_url": "https://example.org/\n    insecure-fork-wanted"}},
         "Not a valid URL: https://example.org/\n"),
        ("POST", "/v2/lbaas/l7policies", {"l7policy": {
            "listener_id": scene["listener"].id, "action": "REDIRECT_PREFIX",
            "redirect_prefix": "https://example.org\x7f"}}, "Not a valid URL"),
        ("PUT", f"/v2/lbaas/l7policies/{scene['policy'].id}", {"l7policy": {
            "action": "REDIRECT_PREFIX", "redirect_prefix": "https://example.org\n"}},
         "Not a valid URL"),
        ("POST", "/v2/lbaas/pools", {"pool": {
            "loadbalancer_id": lb.id, "protocol": "HTTP",
            "lb_algorithm": "ROUND_ROBIN",
            "session_persistence": {"type": "APP_COOKIE", "cookie_name": "sid\n"}}},
         "Invalid characters in cookie_name"),
        # Python's ipaddress takes an IPv6 scope id of any characters; the ping check's
        # script (run as root) and haproxy.cfg would take it whole.
        ("POST", f"/v2/lbaas/pools/{pool}/members", {"member": {
            "address": "fe80::1%eth0\ntouch /tmp/owned", "protocol_port": 80}},
         "Value should be IPv4 or IPv6 format"),
        ("PUT", member, {"member": {"monitor_address": "fe80::1%x;reboot"}},
         "Value should be IPv4 or IPv6 format"),
        ("PUT", f"/v2/lbaas/listeners/{scene['listener'].id}", {"listener": {
            "allowed_cidrs": ["fe80::1%x\n    insecure-fork-wanted/128"]}},
         "Value should be IPv4 or IPv6 CIDR format"),
        ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {
            "vip_subnet_id": scene["subnet"].id, "vip_address": "fe80::1%x\n"}},
         "Value should be IPv4 or IPv6 format"),
        # The fully populated create checks its tree as the single creates do.
        ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {
            "vip_subnet_id": scene["subnet"].id, "pools": [{
                "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN", "healthmonitor": {
                    "type": "HTTP", "delay": 1, "timeout": 1, "max_retries": 1,
                    "http_version": 1.1, "domain_name": "a.example\nglobal"}}]}},
         "Invalid input for field/attribute domain_name."),
        ("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {
            "vip_subnet_id": scene["subnet"].id, "listeners": [{
                "protocol": "HTTP", "protocol_port": 81, "l7policies": [{
                    "action": "REJECT", "rules": [{
                        "type": "COOKIE", "compare_type": "EQUAL_TO", "key": "tier",
                        "value": "gold\nglobal"}]}]}]}},
         "Error parsing L7Rule: Invalid characters in cookie value"),
        ("PUT", f"/v2/lbaas/listeners/{scene['listener'].id}", {"listener": {
            "insert_headers": {"X-Forwarded-For": "true\n"}}},
         "Header X-Forwarded-For value must be true or false."),
    ]
    for field in ("tls_versions", "tls_ciphers", "alpn_protocols"):
        value = "TLSv1.2\n    insecure-fork-wanted"
        cases.append(("PUT", f"/v2/lbaas/listeners/{scene['listener'].id}",
                      {"listener": {field: [value] if field != "tls_ciphers" else value}},
                      f"Unknown attribute for argument listener: {field}"))
        cases.append(("PUT", f"/v2/lbaas/pools/{pool}",
                      {"pool": {field: [value] if field != "tls_ciphers" else value}},
                      f"Unknown attribute for argument pool: {field}"))
    failures = []
    for method, path, body, message in cases:
        code, text = raw.error(method, path, body)
        if code != 400 or message not in text:
            failures.append((method, path, body, code, text))
    assert failures == []
    hm = conn.load_balancer.get_health_monitor(scene["monitor"].id)
    assert (hm.url_path, hm.expected_codes, hm.http_method) == ("/", "200", "GET")
    assert conn.load_balancer.get_member(scene["member"].id, pool).monitor_address is None


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="needs haproxy")
def test_names_and_escaped_values_stay_out_of_or_within_one_word_of_haproxy_cfg(
        conn, scene, tmp_path):
    """Names and descriptions (newlines and all) never reach the configuration; the
    values the checks let in with characters HAProxy's parser reads specially (a #, a
    quote, a blank, a backslash) are escaped so that HAProxy accepts the file."""
    from pocketstack.common import db
    from pocketstack.loadbalancer import haproxy_config, models, tree

    lb_api, lb = conn.load_balancer, scene["lb"]
    odd = "x\n    insecure-fork-wanted"
    lb_api.update_listener(scene["listener"].id, name=odd, description=odd)
    active(conn, lb.id)
    lb_api.update_pool(scene["pool"].id, name=odd, description=odd)
    active(conn, lb.id)
    lb_api.update_health_monitor(scene["monitor"].id, name=odd)
    active(conn, lb.id)
    policy = lb_api.create_l7_policy(listener_id=scene["listener"].id, name=odd,
                                     description=odd, action="REDIRECT_TO_URL",
                                     redirect_url="https://example.org/#top")
    active(conn, lb.id)
    for rtype, compare, key, value in (("HEADER", "EQUAL_TO", "X-Kind", "a#b"),
                                       ("HEADER", "CONTAINS", "X-Kind", '"a b"'),
                                       ("COOKIE", "REGEX", "tier", r"^g\d 'x'$"),
                                       ("PATH", "ENDS_WITH", None, "'.php")):
        lb_api.create_l7_rule(policy, type=rtype, compare_type=compare, value=value,
                              **({"key": key} if key else {}))
        active(conn, lb.id)
    with db.reader() as s:
        text = haproxy_config.render(s, s.get(models.LoadBalancer, lb.id),
                                tree.rows(s, models.Listener, lb.id))
    assert "insecure-fork-wanted" not in text
    for expected in ("location https://example.org/\\#top if", "-m str a\\#b",
                     '-m sub \\"a\\ b\\"', "-m reg ^g\\\\d\\ \\'x\\'$", "-m end \\'.php"):
        assert expected in text, (expected, text)
    path = tmp_path / "haproxy.cfg"
    path.write_text(text.replace("@DIR@", str(tmp_path)))
    check = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True,
                           text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr + text


def test_the_renderer_refuses_a_stored_value_that_would_break_the_configuration(
        conn, scene):
    """The last line of defence: a row written around the API's checks (or from before
    them) makes the change fail (the load balancer ERROR) with nothing written."""
    from pocketstack.common import db
    from pocketstack.loadbalancer import haproxy_config, models, tree

    lb_id = scene["lb"].id

    def rendered():
        with db.reader() as s:
            lb = s.get(models.LoadBalancer, lb_id)
            listeners = tree.rows(s, models.Listener, lb_id)
            return (haproxy_config.render(s, lb, listeners),
                    haproxy_config.udp_config(s, lb, listeners))

    rendered()
    for model, row_id, field, bad in (
            (models.HealthMonitor, scene["monitor"].id, "http_version", 1.1),
            (models.HealthMonitor, scene["monitor"].id, "domain_name",
             "example.com" + NEWLINE_DIRECTIVE),
            (models.HealthMonitor, scene["monitor"].id, "url_path", "/a\tb"),
            (models.HealthMonitor, scene["monitor"].id, "expected_codes", "200\n"),
            (models.L7Rule, scene["rule"].id, "value", "v\nglobal"),
            (models.Member, scene["member"].id, "address", "fe80::1%x\ny")):
        with db.transaction() as s:
            setattr(s.get(model, row_id), field, bad)
        if field == "http_version":
            continue
        with pytest.raises(haproxy_config.UnsafeValue):
            rendered()
        with db.transaction() as s:
            setattr(s.get(model, row_id), field, {
                "domain_name": None, "url_path": "/", "expected_codes": "200",
                "value": "/admin", "address": "10.20.0.40"}[field])
        rendered()
    with pytest.raises(haproxy_config.UnsafeValue):
        haproxy_config.ping_script({scene["member"].id: "10.0.0.1\nreboot"})
    assert "address=10.0.0.1 ;;" in haproxy_config.ping_script({scene["member"].id: "10.0.0.1"})


@needs_haproxy
def test_with_real_haproxy_an_escaped_value_matches_whole_and_a_bad_row_fails_the_change(
        cloud, host_agent, haproxy_plane, tmp_path):
    """A header value with a # (a comment to HAProxy's parser, so the rule matched only
    what came before it) matches whole; a row holding a newline, written around the API,
    makes the next change fail (ERROR) while HAProxy keeps serving the last good
    configuration, which never holds the caller's directive."""
    from pocketstack.common import db
    from pocketstack.loadbalancer import dataplane, models

    with Scene(cloud, host_agent, tmp_path, octet=74) as scene:
        scene.allow("tcp", 8080)
        [backend] = scene.guests(1)
        scene.serve(backend.ns, NAMED_HTTP, "8080", "backend")
        lb = scene.load_balancer(listeners=[{
            "protocol": "HTTP", "protocol_port": 80,
            "default_pool": {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                             "members": [{"address": backend.address,
                                          "protocol_port": 8080}]},
            "l7policies": [{"action": "REJECT", "rules": [{
                "type": "HEADER", "compare_type": "EQUAL_TO", "key": "X-Kind",
                "value": "a#b"}]}]}])
        active(scene.conn, lb.id)
        address = scene.floating_ip(lb.vip_port_id)
        client = scene.outside("198.51.100.74")

        def fetch(kind: str) -> str | None:
            proc = client.run("timeout", "3", "busybox", "wget", "-q", "-O", "-",
                              "--header", f"X-Kind: {kind}", f"http://{address}:80/",
                              check=False)
            return proc.stdout.strip() if proc.returncode == 0 else None

        until(lambda: fetch("a") == "backend", "a request the rule does not match")
        assert fetch("a#b") is None  # refused: 403
        assert fetch("a#bc") == "backend"

        [pool] = scene.conn.load_balancer.pools(loadbalancer_id=lb.id)
        monitor = scene.conn.load_balancer.create_health_monitor(
            pool_id=pool.id, type="HTTP", delay=5, timeout=2, max_retries=2)
        active(scene.conn, lb.id)
        with db.transaction() as s:
            row = s.get(models.HealthMonitor, monitor.id)
            row.http_version, row.domain_name = 1.1, "example.com" + NEWLINE_DIRECTIVE
        [listener] = scene.conn.load_balancer.listeners(loadbalancer_id=lb.id)
        scene.conn.load_balancer.update_listener(listener, name="changed")
        until(lambda: scene.conn.load_balancer.get_load_balancer(
            lb.id).provisioning_status == "ERROR", "the change failed")
        plane = dataplane.HAProxyPlane(cloud.data_dir)
        text = open(f"{plane._dir(lb.id)}/haproxy.cfg").read()
        assert "stats socket ipv4@" not in text and "hdr Host" not in text
        assert fetch("a") == "backend" and fetch("a#b") is None
