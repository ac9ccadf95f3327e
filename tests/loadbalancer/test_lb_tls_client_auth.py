"""TLS client authentication and re-encryption to the members on the haproxy data plane,
with real TLS clients from outside through a floating IP on the VIP: a TERMINATED_HTTPS
listener with a client CA (a key manager secret) lets in the clients whose certificate
that CA signed (MANDATORY), refuses the others and those with none, lets the latter in
when OPTIONAL, and refuses a revoked one once given a CRL; its pool speaks TLS to the
member with a client certificate of its own and verifies the member against its CA (a
wrong CA: no answer). The member sees the load balancer's certificate and the client's
name in X-SSL-Client-CN; L7 rules match the client certificate."""
from __future__ import annotations

import datetime as dt

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from lb_helpers import active
from lb_scene import Scene, needs_haproxy, until
from tls_helpers import CA, Barbican

pytestmark = needs_haproxy

# An HTTPS member that wants a client certificate its CA signed; it answers with its
# name, the client certificate's common name and the X-SSL-Client-CN header it got.
MEMBER = """
import http.server, ssl, sys
port, name, cert, key, cafile = sys.argv[1:6]
class Member(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        peer = dict(x[0] for x in self.connection.getpeercert()["subject"])["commonName"]
        body = f"{name} {peer} {self.headers.get('X-SSL-Client-CN', '-')}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ctx.load_verify_locations(cafile)
ctx.verify_mode = ssl.CERT_REQUIRED
server = http.server.ThreadingHTTPServer(("0.0.0.0", int(port)), Member)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"""

# GET https://www.example.test/ at the address, verifying the server against the CA,
# with a client certificate unless given "-": the status and body, or "refused".
CLIENT = """
import http.client, socket, ssl, sys
address, cafile, cert, key = sys.argv[1:5]
ctx = ssl.create_default_context(cafile=cafile)
if cert != "-":
    ctx.load_cert_chain(cert, key)
try:
    conn = http.client.HTTPSConnection(address, 443, context=ctx, timeout=5)
    conn.sock = ctx.wrap_socket(socket.create_connection((address, 443), 5),
                                server_hostname="www.example.test")
    conn.request("GET", "/", headers={"Host": "www.example.test"})
    response = conn.getresponse()
    print(response.status, response.read().decode())
except (OSError, http.client.HTTPException) as error:
    print("refused", type(error).__name__)
"""


def _revoke(ca: CA, cert: x509.Certificate) -> bytes:
    now = dt.datetime.now(dt.UTC)
    revoked = (x509.RevokedCertificateBuilder().serial_number(cert.serial_number)
               .revocation_date(now - dt.timedelta(minutes=1)).build())
    crl = (x509.CertificateRevocationListBuilder().issuer_name(ca.cert.subject)
           .last_update(now - dt.timedelta(minutes=1))
           .next_update(now + dt.timedelta(days=1)).add_revoked_certificate(revoked)
           .sign(ca.key, hashes.SHA256()))
    return crl.public_bytes(serialization.Encoding.PEM)


def _files(folder, name: str, cert_pem: bytes, key_pem: bytes) -> tuple[str, str]:
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    cert.write_bytes(cert_pem)
    key.write_bytes(key_pem)
    return str(cert), str(key)


def test_client_certificates_at_the_vip_and_tls_to_the_member(
        cloud, host_agent, haproxy_plane, tmp_path):
    server_ca, client_ca, rogue_ca = CA("server CA"), CA("client CA"), CA("rogue CA")
    member_ca, lb_ca = CA("member CA"), CA("load balancer CA")
    with Scene(cloud, host_agent, tmp_path, octet=71) as scene:
        conn = scene.conn
        barbican = Barbican(cloud.user_session(scene.user))
        www = barbican.container(*server_ca.issue("www.example.test")[:2])
        client_ca_ref = barbican.secret(client_ca.pem())
        lb_client = barbican.container(*lb_ca.issue("lb-client")[:2])
        member_ca_ref = barbican.secret(member_ca.pem())

        scene.allow("tcp", 8443)
        [backend] = scene.guests(1)
        files = tmp_path / "pki"
        files.mkdir()
        (files / "lb-ca.pem").write_bytes(lb_ca.pem())
        # The member's certificate names the host the clients ask for: HAProxy passes
        # their SNI name on and verifies the member against it (as Octavia's amphora).
        scene.serve(backend.ns, MEMBER, "8443", "member",
                    *_files(files, "member", *member_ca.issue("www.example.test")[:2]),
                    str(files / "lb-ca.pem"))
        alice = client_ca.issue("alice")
        clients = {"alice": _files(files, "alice", *alice[:2]),
                   "bob": _files(files, "bob", *client_ca.issue("bob")[:2]),
                   "carol": _files(files, "carol", *client_ca.issue("carol")[:2]),
                   "rogue": _files(files, "rogue", *rogue_ca.issue("rogue")[:2]),
                   "none": ("-", "-")}
        (files / "server-ca.pem").write_bytes(server_ca.pem())

        lb = scene.load_balancer(listeners=[{
            "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
            "default_tls_container_ref": www, "client_ca_tls_container_ref": client_ca_ref,
            "client_authentication": "MANDATORY",
            "insert_headers": {"X-SSL-Client-CN": "true"},
            "default_pool": {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                             "tls_enabled": True, "tls_container_ref": lb_client,
                             "ca_tls_container_ref": member_ca_ref,
                             "members": [{"address": backend.address,
                                          "protocol_port": 8443}]}}])
        active(conn, lb.id)
        # (openstacksdk has no client_* nor a pool's tls_container_ref: the API's JSON)
        [listener] = conn.load_balancer.listeners(loadbalancer_id=lb.id)
        shown = conn.load_balancer.get(f"/lbaas/listeners/{listener.id}").json()["listener"]
        assert shown["client_ca_tls_container_ref"] == client_ca_ref
        assert shown["client_authentication"] == "MANDATORY"
        assert shown["client_crl_container_ref"] is None
        [pool] = conn.load_balancer.pools(loadbalancer_id=lb.id)
        shown = conn.load_balancer.get(f"/lbaas/pools/{pool.id}").json()["pool"]
        assert shown["tls_container_ref"] == lb_client and shown["tls_enabled"]
        assert shown["ca_tls_container_ref"] == member_ca_ref

        def update(kind: str, obj_id: str, **fields):
            conn.load_balancer.put(f"/lbaas/{kind}s/{obj_id}",
                                   json={kind: fields}).raise_for_status()
            active(conn, lb.id)
        address = scene.floating_ip(lb.vip_port_id)
        outside = scene.outside("198.51.100.7")

        def fetch(who: str) -> str:
            proc = outside.run("timeout", "10", "python3", "-c", CLIENT, address,
                               str(files / "server-ca.pem"), *clients[who],
                               check=False)
            return proc.stdout.strip()

        until(lambda: fetch("alice") == '200 member lb-client alice',
              "alice through the VIP to the member over TLS")
        assert fetch("bob") == '200 member lb-client bob'
        assert fetch("rogue").startswith("refused")
        assert fetch("none").startswith("refused")

        update("listener", listener.id, client_authentication="OPTIONAL")
        until(lambda: fetch("none").startswith("200 member lb-client"),
              "a client without a certificate let in when OPTIONAL")
        assert fetch("rogue").startswith("refused")  # a certificate given is verified
        update("listener", listener.id, client_authentication="MANDATORY")

        crl = barbican.secret(_revoke(client_ca, alice[2]))
        update("listener", listener.id, client_crl_container_ref=crl)
        until(lambda: fetch("alice").startswith("refused"), "alice's revoked certificate")
        assert fetch("bob") == '200 member lb-client bob'

        # The member verified against another CA: HAProxy has no member to send to.
        update("pool", pool.id, ca_tls_container_ref=barbican.secret(rogue_ca.pem()))
        until(lambda: fetch("bob").startswith("503"), "no member verified")
        update("pool", pool.id, ca_tls_container_ref=member_ca_ref)
        until(lambda: fetch("bob") == '200 member lb-client bob', "the member again")

        # L7 rules on the client certificate: with OPTIONAL, one without a certificate
        # and bob by name are rejected, carol goes through.
        update("listener", listener.id, client_authentication="OPTIONAL")
        for rule in ({"type": "SSL_CONN_HAS_CERT", "compare_type": "EQUAL_TO",
                      "value": "True", "invert": True},
                     {"type": "SSL_DN_FIELD", "compare_type": "EQUAL_TO", "key": "CN",
                      "value": "bob"}):
            policy = conn.load_balancer.create_l7_policy(listener_id=listener.id,
                                                         action="REJECT")
            active(conn, lb.id)
            conn.load_balancer.create_l7_rule(policy, **rule)
            active(conn, lb.id)
        until(lambda: fetch("bob").startswith("403"), "bob rejected by his name")
        assert fetch("none").startswith("403")
        assert fetch("carol") == "200 member lb-client carol"
