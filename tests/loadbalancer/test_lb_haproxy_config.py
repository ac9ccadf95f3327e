"""The haproxy data plane's configuration for a tree using every feature it renders (L7
policies and rules of each kind, each session persistence, monitors with code ranges,
allowed CIDRs, inserted headers) is one HAProxy accepts (`haproxy -c`)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from lb_helpers import active

pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None,
                                reason="needs haproxy (Debian's `haproxy`)")


def test_every_feature_renders_a_configuration_haproxy_accepts(conn, subnet, tmp_path):
    from pocketstack.common import db
    from pocketstack.loadbalancer import haproxy_config, models, tree

    lb_api = conn.load_balancer
    lb = lb_api.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    http = lb_api.create_listener(loadbalancer_id=lb.id, protocol="HTTP", protocol_port=80,
                                  connection_limit=100, allowed_cidrs=["10.0.0.0/8"],
                                  insert_headers={"X-Forwarded-For": "true",
                                                  "X-Forwarded-Port": "true"})
    active(conn, lb.id)
    tcp = lb_api.create_listener(loadbalancer_id=lb.id, protocol="TCP", protocol_port=22)
    active(conn, lb.id)
    lb_api.create_listener(loadbalancer_id=lb.id, protocol="PROMETHEUS", protocol_port=9100)
    active(conn, lb.id)
    pools = {}
    for name, listener, protocol, sp in (
            ("web", http.id, "HTTP", {"type": "HTTP_COOKIE"}),
            ("ssh", tcp.id, "TCP", {"type": "SOURCE_IP"}),
            ("api", None, "HTTP", {"type": "APP_COOKIE", "cookie_name": "sid"}),
            ("tls", None, "HTTPS", None), ("hello", None, "HTTPS", None)):
        kwargs = {"listener_id": listener} if listener else {"loadbalancer_id": lb.id}
        pools[name] = lb_api.create_pool(protocol=protocol, lb_algorithm="LEAST_CONNECTIONS",
                                         session_persistence=sp, **kwargs)
        active(conn, lb.id)
        lb_api.create_member(pools[name], address="10.20.0.50", protocol_port=8000,
                             monitor_port=9000, backup=name == "api")
        active(conn, lb.id)
        monitor = {"web": "HTTP", "api": "HTTP", "ssh": "PING", "tls": "HTTPS",
                   "hello": "TLS-HELLO"}[name]
        extra = {"web": {"expected_codes": "200-204"},
                 "tls": {"http_version": 1.1, "domain_name": "example.org",
                         "url_path": "/health"}}.get(name, {})
        # (openstacksdk has no http_version nor domain_name: the API's own JSON)
        lb_api.post("/lbaas/healthmonitors", json={"healthmonitor": dict(
            pool_id=pools[name].id, type=monitor, delay=2, timeout=1, max_retries=2,
            **extra)}).raise_for_status()
        active(conn, lb.id)
    passthrough = lb_api.create_listener(loadbalancer_id=lb.id, protocol="HTTPS",
                                         protocol_port=443, default_pool_id=pools["tls"].id)
    active(conn, lb.id)
    assert passthrough.default_pool_id == pools["tls"].id
    lb_api.create_listener(loadbalancer_id=lb.id, protocol="TCP", protocol_port=8443,
                           default_pool_id=pools["hello"].id)
    active(conn, lb.id)
    redirect = lb_api.create_l7_policy(listener_id=http.id, action="REDIRECT_TO_POOL",
                                       redirect_pool_id=pools["api"].id)
    active(conn, lb.id)
    for kind, compare, key, value in (("PATH", "STARTS_WITH", None, "/api"),
                                      ("HOST_NAME", "EQUAL_TO", None, "api.example.org"),
                                      ("HEADER", "CONTAINS", "X-Kind", "beta"),
                                      ("COOKIE", "REGEX", "tier", "^gold$"),
                                      ("FILE_TYPE", "EQUAL_TO", None, "json")):
        lb_api.create_l7_rule(redirect, type=kind, compare_type=compare, value=value,
                              **({"key": key} if key else {}))
        active(conn, lb.id)
    for action, extra in (("REJECT", {}), ("REDIRECT_TO_URL",
                                           {"redirect_url": "https://example.org/"}),
                          ("REDIRECT_PREFIX", {"redirect_prefix": "https://example.org"})):
        policy = lb_api.create_l7_policy(listener_id=http.id, action=action, **extra)
        active(conn, lb.id)
        lb_api.create_l7_rule(policy, type="PATH", compare_type="ENDS_WITH", value=".php",
                              invert=True)
        active(conn, lb.id)

    with db.reader() as s:
        text = haproxy_config.render(s, s.get(models.LoadBalancer, lb.id),
                                tree.rows(s, models.Listener, lb.id))
    path = tmp_path / "haproxy.cfg"
    path.write_text(text.replace("@DIR@", str(tmp_path)))
    check = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True,
                           text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr + text
    for expected in (f"use_backend {pools['api'].id} if", "http-request deny if",
                     "redirect code 302 prefix https://example.org", "option forwardfor",
                     "cookie SRV insert", "stick on src", "rstatus ^(200|201|202|203|204)$",
                     "tcp-request connection reject unless allowed_cidr", "port 9000",
                     "use-service prometheus-exporter if { path /metrics }",
                     "check-ssl verify none", "option ssl-hello-chk",
                     "http-check send meth GET uri /health ver HTTP/1.1 hdr Host example.org"):
        assert expected in text, expected
    lb_api.delete_load_balancer(lb.id, cascade=True)
