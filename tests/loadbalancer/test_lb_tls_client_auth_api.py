"""Client authentication of TERMINATED_HTTPS listeners and TLS to the members of pools,
through the API on the simulated provider: the refs are kept and shown, the octavia user
may read them, and every bad combination or unusable ref is Octavia's 400 with nothing
changed."""
from __future__ import annotations

import datetime as dt

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from lb_helpers import active
from tls_helpers import CA, Barbican

FAIL = "Validation failure: "


def _crl(ca: CA) -> bytes:
    now = dt.datetime.now(dt.UTC)
    return (x509.CertificateRevocationListBuilder().issuer_name(ca.cert.subject)
            .last_update(now).next_update(now + dt.timedelta(days=1))
            .sign(ca.key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))


def test_listener_client_authentication_refs_and_their_400s(cloud, conn, raw, member,
                                                            subnet):
    ca, other = CA(), CA("other CA")
    barbican = Barbican(cloud.user_session(member))
    www = barbican.container(*ca.issue("www.example.test")[:2])
    client_ca, crl = barbican.secret(ca.pem()), barbican.secret(_crl(ca))
    foreign = Barbican(cloud.user_session(cloud.make_user())).secret(ca.pem())
    garbage = barbican.secret(b"not a certificate")
    other_crl = barbican.secret(_crl(other))
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)

    def post(**fields):
        return raw.error("POST", "/v2/lbaas/listeners", {"listener": {
            "loadbalancer_id": lb.id, "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
            **fields}})

    assert post(default_tls_container_ref=www, client_authentication="MANDATORY") == (
        400, FAIL + "Client authentication setting MANDATORY requires a client CA "
                    "container reference.")
    assert post(default_tls_container_ref=www, client_crl_container_ref=crl) == (
        400, FAIL + "A client authentication CA reference is required to specify a client "
                    "authentication revocation list.")
    assert post(client_ca_tls_container_ref=client_ca) == (
        400, FAIL + "An SNI or default certificate container reference must be provided "
                    "with a client CA container reference.")
    assert post(default_tls_container_ref=www, client_ca_tls_container_ref=foreign) == (
        400, f"Could not retrieve certificate: ['{foreign}']")
    status, text = post(default_tls_container_ref=www, client_ca_tls_container_ref=garbage)
    assert status == 400 and text.startswith(
        FAIL + "The client authentication CA certificate is invalid. It must be a valid "
               "x509 PEM format certificate. Error: "), text
    status, text = post(default_tls_container_ref=www, client_ca_tls_container_ref=client_ca,
                        client_crl_container_ref=garbage)
    assert status == 400 and text.startswith(
        FAIL + "The client authentication certificate revocation list is invalid."), text
    assert post(default_tls_container_ref=www, client_ca_tls_container_ref=client_ca,
                client_crl_container_ref=other_crl) == (
        400, FAIL + "The CRL specified is not valid for client certificate authority "
                    "reference supplied.")
    status, text = post(default_tls_container_ref=www, client_ca_tls_container_ref=client_ca,
                        client_authentication="SOMETIMES")
    assert status == 400 and "client_authentication" in text, text
    assert list(conn.load_balancer.listeners(loadbalancer_id=lb.id)) == []

    r = raw("POST", "/v2/lbaas/listeners", {"listener": {
        "loadbalancer_id": lb.id, "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
        "default_tls_container_ref": www}})
    assert r.status_code == 201, r.text
    listener = r.json()["listener"]
    assert (listener["client_ca_tls_container_ref"], listener["client_authentication"],
            listener["client_crl_container_ref"]) == (None, "NONE", None)
    active(conn, lb.id)
    path = f"/v2/lbaas/listeners/{listener['id']}"
    assert raw.error("PUT", path, {"listener": {"client_authentication": "OPTIONAL"}}) == (
        400, FAIL + "Client authentication setting OPTIONAL requires a client CA "
                    "container reference.")
    assert raw.error("PUT", path, {"listener": {"client_crl_container_ref": crl}}) == (
        400, FAIL + "A client authentication CA reference is required to specify a client "
                    "authentication revocation list.")
    r = raw("PUT", path, {"listener": {"client_ca_tls_container_ref": client_ca,
                                       "client_authentication": "MANDATORY"}})
    assert r.status_code == 200, r.text
    active(conn, lb.id)
    r = raw("PUT", path, {"listener": {"client_crl_container_ref": crl}})
    assert r.status_code == 200, r.text
    shown = r.json()["listener"]
    assert (shown["client_ca_tls_container_ref"], shown["client_authentication"],
            shown["client_crl_container_ref"]) == (client_ca, "MANDATORY", crl)
    active(conn, lb.id)
    assert raw.error("PUT", path, {"listener": {"client_crl_container_ref": other_crl}}) == (
        400, FAIL + "The CRL specified is not valid for client certificate authority "
                    "reference supplied.")
    # The octavia user may read the CA and the CRL (Octavia's barbican_acl auth).
    octavia = next(cloud.sdk().identity.users(name="octavia"))
    for ref in (client_ca, crl):
        assert octavia.id in barbican.req("GET", ref + "/acl").json()["read"]["users"]
    # client_authentication null is NONE again.
    r = raw("PUT", path, {"listener": {"client_authentication": None}})
    assert r.status_code == 200 and r.json()["listener"]["client_authentication"] == "NONE"


def test_pool_tls_refs_and_their_400s(cloud, conn, raw, member, subnet):
    ca, other = CA(), CA("other CA")
    barbican = Barbican(cloud.user_session(member))
    client_cert = barbican.container(*ca.issue("lb-client")[:2])
    ca_ref, crl = barbican.secret(ca.pem()), barbican.secret(_crl(ca))
    foreign = Barbican(cloud.user_session(cloud.make_user())).container(
        *ca.issue("x")[:2])
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)

    def post(**fields):
        return raw.error("POST", "/v2/lbaas/pools", {"pool": {
            "loadbalancer_id": lb.id, "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
            "tls_enabled": True, **fields}})

    assert post(crl_container_ref=crl) == (
        400, FAIL + "A CA certificate reference is required to specify a revocation list.")
    assert post(tls_container_ref=foreign) == (
        400, f"Could not retrieve certificate: ['{foreign}']")
    assert post(ca_tls_container_ref=ca_ref,
                crl_container_ref=barbican.secret(_crl(other))) == (
        400, FAIL + "The CRL specified is not valid for client certificate authority "
                    "reference supplied.")
    assert list(conn.load_balancer.pools(loadbalancer_id=lb.id)) == []

    r = raw("POST", "/v2/lbaas/pools", {"pool": {
        "loadbalancer_id": lb.id, "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
        "tls_enabled": True, "tls_container_ref": client_cert, "ca_tls_container_ref": ca_ref,
        "crl_container_ref": crl}})
    assert r.status_code == 201, r.text
    pool = r.json()["pool"]
    assert (pool["tls_enabled"], pool["tls_container_ref"], pool["ca_tls_container_ref"],
            pool["crl_container_ref"]) == (True, client_cert, ca_ref, crl)
    active(conn, lb.id)
    path = f"/v2/lbaas/pools/{pool['id']}"
    assert raw.error("PUT", path, {"pool": {"ca_tls_container_ref": None}}) == (
        400, FAIL + "A CA reference cannot be removed when a certificate revocation list is "
                    "present.")
    assert raw.error("PUT", path, {"pool": {"tls_container_ref": foreign}}) == (
        400, f"Could not retrieve certificate: ['{foreign}']")
    r = raw("PUT", path, {"pool": {"ca_tls_container_ref": None, "crl_container_ref": None,
                                   "tls_enabled": False}})
    assert r.status_code == 200, r.text
    assert (r.json()["pool"]["ca_tls_container_ref"], r.json()["pool"]["tls_enabled"]) == (
        None, False)
    active(conn, lb.id)
    assert raw.error("PUT", path, {"pool": {"crl_container_ref": crl}}) == (
        400, FAIL + "A CA reference is required to specify a certificate revocation list.")
    assert conn.load_balancer.get_pool(pool["id"]).tls_enabled is False


def test_client_certificate_l7_rules_and_their_400s(conn, raw, subnet):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                                  protocol_port=80)
    active(conn, lb.id)
    policy = conn.load_balancer.create_l7_policy(listener_id=listener.id, action="REJECT")
    active(conn, lb.id)
    path = f"/v2/lbaas/l7policies/{policy.id}/rules"
    error = "Error parsing L7Rule: Invalid L7 Rule: "
    for rule, message in (
            ({"type": "SSL_CONN_HAS_CERT", "compare_type": "EQUAL_TO", "value": "True",
              "key": "x"}, 'L7rule type SSL_CONN_HAS_CERT does not use the "key" field.'),
            ({"type": "SSL_CONN_HAS_CERT", "compare_type": "EQUAL_TO", "value": "yes"},
             "L7rule value yes is not a boolean True string."),
            ({"type": "SSL_CONN_HAS_CERT", "compare_type": "CONTAINS", "value": "true"},
             "L7rule type SSL_CONN_HAS_CERT only supports the EQUAL_TO compare type."),
            ({"type": "SSL_VERIFY_RESULT", "compare_type": "EQUAL_TO", "value": "-1"},
             "L7rule type SSL_VERIFY_RESULT needs a int value, which is >= 0"),
            ({"type": "SSL_DN_FIELD", "compare_type": "EQUAL_TO", "value": "bob"},
             "L7rule type SSL_DN_FIELD needs to specify a key and a value."),
            ({"type": "SSL_DN_FIELD", "compare_type": "EQUAL_TO", "value": "bob",
              "key": "-CN"}, "Invalid L7rule distinguished name field.")):
        assert raw.error("POST", path, {"rule": rule}) == (400, error + message), rule
    assert list(conn.load_balancer.l7_rules(policy)) == []
    for rule in ({"type": "SSL_CONN_HAS_CERT", "compare_type": "EQUAL_TO", "value": "True"},
                 {"type": "SSL_VERIFY_RESULT", "compare_type": "EQUAL_TO", "value": "0"},
                 {"type": "SSL_DN_FIELD", "compare_type": "REGEX", "key": "OU",
                  "value": "^ops$"}):
        r = raw("POST", path, {"rule": rule})
        assert r.status_code == 201, r.text
        active(conn, lb.id)
