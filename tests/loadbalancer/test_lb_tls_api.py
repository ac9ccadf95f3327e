"""TERMINATED_HTTPS listeners with certificates from the key manager, on the simulated
provider: refs to a certificate container or a PKCS12 secret are read for the user and
kept; the octavia user is granted read on them; refs the user cannot read, certificates
that do not parse and keys that do not match are Octavia's 400."""
from __future__ import annotations

from lb_helpers import active
from tls_helpers import CA, Barbican


def _lb(conn, subnet):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    return lb


def _post(raw, lb_id, port, **fields):
    return raw("POST", "/v2/lbaas/listeners", {"listener": {
        "loadbalancer_id": lb_id, "protocol": "TERMINATED_HTTPS", "protocol_port": port,
        **fields}})


def test_a_container_and_a_pkcs12_secret_make_a_tls_listener(cloud, conn, raw, member,
                                                             subnet):
    ca, barbican = CA(), Barbican(cloud.user_session(member))
    cert, key, _, _ = ca.issue("www.example.test")
    default = barbican.container(cert, key)
    _, _, other_cert, other_key = ca.issue("api.example.test")
    sni = barbican.pkcs12(other_cert, other_key)
    lb = _lb(conn, subnet)

    r = _post(raw, lb.id, 443, default_tls_container_ref=default, sni_container_refs=[sni])
    assert r.status_code == 201, r.text
    listener = r.json()["listener"]
    assert listener["default_tls_container_ref"] == default
    assert listener["sni_container_refs"] == [sni]
    active(conn, lb.id)
    shown = conn.load_balancer.get_listener(listener["id"])
    assert shown.default_tls_container_ref == default and shown.sni_container_refs == [sni]

    # The octavia user may now read them (Octavia's barbican_acl auth).
    admin = cloud.sdk()
    octavia = next(admin.identity.users(name="octavia"))
    acl = barbican.req("GET", default + "/acl").json()
    assert octavia.id in acl["read"]["users"]
    assert octavia.id in barbican.req("GET", sni + "/acl").json()["read"]["users"]

    # An update to another certificate is read and kept too.
    third = barbican.container(*ca.issue("new.example.test")[:2])
    r = raw("PUT", f"/v2/lbaas/listeners/{listener['id']}",
            {"listener": {"default_tls_container_ref": third}})
    assert r.status_code == 200, r.text
    assert r.json()["listener"]["default_tls_container_ref"] == third
    assert r.json()["listener"]["sni_container_refs"] == [sni]
    active(conn, lb.id)
    r = raw("PUT", f"/v2/lbaas/listeners/{listener['id']}", {"listener": {"name": "tls"}})
    assert r.status_code == 200, r.text


def test_unusable_certificates_are_octavias_400(cloud, conn, raw, member, subnet):
    ca, barbican = CA(), Barbican(cloud.user_session(member))
    cert, key, _, _ = ca.issue("www.example.test")
    _, wrong_key, _, _ = ca.issue("other.example.test")
    stranger = Barbican(cloud.user_session(cloud.make_user()))
    foreign = stranger.container(cert, key)
    mismatched = barbican.container(cert, wrong_key)
    garbage = barbican.container(b"not a certificate", key)
    missing = foreign.rsplit("/", 1)[0] + "/00000000-0000-0000-0000-000000000000"
    lb = _lb(conn, subnet)

    for ref in (foreign, mismatched, garbage, missing):
        status, text = raw.error("POST", "/v2/lbaas/listeners", {"listener": {
            "loadbalancer_id": lb.id, "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
            "default_tls_container_ref": ref}})
        assert (status, text) == (400, f"Could not retrieve certificate: ['{ref}']")
    good = barbican.container(cert, key)
    status, text = raw.error("POST", "/v2/lbaas/listeners", {"listener": {
        "loadbalancer_id": lb.id, "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
        "default_tls_container_ref": good, "sni_container_refs": [good, mismatched]}})
    assert (status, text) == (400, f"Could not retrieve certificate: ['{mismatched}']")

    not_pkcs12 = barbican.secret(b"\x00junk", "application/octet-stream")
    status, text = raw.error("POST", "/v2/lbaas/listeners", {"listener": {
        "loadbalancer_id": lb.id, "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
        "default_tls_container_ref": not_pkcs12}})
    assert status == 400 and text.startswith("The PKCS12 bundle is unreadable."), text

    status, text = raw.error("POST", "/v2/lbaas/listeners", {"listener": {
        "loadbalancer_id": lb.id, "protocol": "HTTP", "protocol_port": 80,
        "default_tls_container_ref": good}})
    assert (status, text) == (400, ("Validation failure: Certificate container references "
                                    "are only allowed on TERMINATED_HTTPS protocol listeners."))
    # Nothing was made by the failures: the load balancer has no listener.
    assert list(conn.load_balancer.listeners(loadbalancer_id=lb.id)) == []
    assert conn.load_balancer.get_load_balancer(lb.id).provisioning_status == "ACTIVE"

    r = _post(raw, lb.id, 443, default_tls_container_ref=good)
    assert r.status_code == 201, r.text
    active(conn, lb.id)
    status, text = raw.error("PUT", f"/v2/lbaas/listeners/{r.json()['listener']['id']}",
                             {"listener": {"sni_container_refs": [foreign]}})
    assert (status, text) == (400, f"Could not retrieve certificate: ['{foreign}']")


def test_a_fully_populated_create_reads_its_certificates(cloud, conn, raw, member, subnet):
    ca, barbican = CA(), Barbican(cloud.user_session(member))
    cert, key, _, _ = ca.issue("www.example.test")
    good = barbican.container(cert, key)
    foreign = Barbican(cloud.user_session(cloud.make_user())).container(cert, key)

    def graph(ref):
        return {"loadbalancer": {"vip_subnet_id": subnet.id, "listeners": [{
            "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
            "default_tls_container_ref": ref}]}}

    status, text = raw.error("POST", "/v2/lbaas/loadbalancers", graph(foreign))
    assert (status, text) == (400, f"Could not retrieve certificate: ['{foreign}']")
    assert list(conn.load_balancer.load_balancers()) == []
    r = raw("POST", "/v2/lbaas/loadbalancers", graph(good))
    assert r.status_code == 201, r.text
    lb = r.json()["loadbalancer"]
    assert lb["listeners"][0]["default_tls_container_ref"] == good
    active(conn, lb["id"])
