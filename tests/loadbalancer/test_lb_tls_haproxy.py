"""TERMINATED_HTTPS on the haproxy data plane: the certificates come from key manager
containers (read as the octavia user, written owner-only into the load balancer's
directory), HAProxy terminates TLS at the VIP for a client that verifies the chain
against the CA, picks the certificate by the SNI name, and the files go with the load
balancer. Needs what test_lb_haproxy needs."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

from helpers.cloud import wait_for
from helpers.guestnet import namespaces, unique
from lb_helpers import (NAMED_SERVER, active, gone, namespace_of, needs_haproxy, plug_backends,
                        remove_backends)
from tls_helpers import CA, Barbican

pytestmark = needs_haproxy

# GET / over TLS, verifying the server against the CA for the given name: the body and
# the common name of the certificate served.
CLIENT = """
import http.client, ssl, sys
vip, name, cafile = sys.argv[1:4]
ctx = ssl.create_default_context(cafile=cafile)
conn = http.client.HTTPSConnection(vip, 443, context=ctx, timeout=5)
conn.sock = ctx.wrap_socket(__import__("socket").create_connection((vip, 443), 5),
                            server_hostname=name)
conn.request("GET", "/", headers={"Host": name})
body = conn.getresponse().read().decode()
subject = dict(x[0] for x in conn.sock.getpeercert()["subject"])
print(body, subject["commonName"])
"""


def test_https_through_the_vip_with_certificates_from_the_key_manager(
        cloud, host_agent, haproxy_plane, tmp_path):
    user = cloud.make_user()
    conn, admin = cloud.user_sdk(user), cloud.sdk()
    ca, barbican = CA(), Barbican(cloud.user_session(user))
    www = barbican.container(*ca.issue("www.example.test")[:2])
    api = barbican.container(*ca.issue("api.example.test")[:2])
    cafile = tmp_path / "ca.pem"
    cafile.write_bytes(ca.pem())
    net = conn.network.create_network(name=unique("lbtls"))
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.62.0.0/24")
    guests, server, lb = [], None, None
    try:
        plug_backends(conn, admin, user, host_agent, subnet,
                      [f"10.62.0.{20 + i}" for i in range(2)], tmp_path, guests)
        backend, client = guests
        server = subprocess.Popen(["ip", "netns", "exec", backend.ns, sys.executable, "-c",
                                   NAMED_SERVER, "8080", "backend"])

        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
        active(conn, lb.id)
        listener = conn.load_balancer.create_listener(
            loadbalancer_id=lb.id, protocol="TERMINATED_HTTPS", protocol_port=443,
            default_tls_container_ref=www, sni_container_refs=[www, api])
        active(conn, lb.id)
        assert namespace_of(lb.id) in namespaces()
        pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                              lb_algorithm="ROUND_ROBIN")
        active(conn, lb.id)
        conn.load_balancer.create_member(pool, address="10.62.0.20", protocol_port=8080,
                                         subnet_id=subnet.id)
        active(conn, lb.id)

        def fetch(name):
            proc = client.run("timeout", "10", sys.executable, "-c", CLIENT, lb.vip_address,
                              name, str(cafile), check=False)
            return proc.stdout.strip() if proc.returncode == 0 else proc.stderr[-300:]

        wait_for(lambda: fetch("www.example.test") == "backend www.example.test", 30,
                 "HTTPS through the VIP", interval=0.3)
        assert fetch("api.example.test") == "backend api.example.test"
        # A name no certificate has gets the default one, which the client rejects.
        assert "CERTIFICATE_VERIFY_FAILED" in fetch("other.example.test")

        folder = os.path.join(cloud.data_dir, "loadbalancer", lb.id, "certs")
        files = os.listdir(folder)
        assert len(files) == 2
        for name in files:
            mode = stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode)
            assert mode == 0o600, oct(mode)
            with open(os.path.join(folder, name), "rb") as f:
                assert b"PRIVATE KEY" in f.read()

        # Dropping the SNI certificate: the name now gets the default certificate.
        conn.load_balancer.update_listener(listener.id, sni_container_refs=[])
        active(conn, lb.id)
        assert fetch("www.example.test") == "backend www.example.test"
        assert "CERTIFICATE_VERIFY_FAILED" in fetch("api.example.test")
        assert len(os.listdir(folder)) == 1

        conn.load_balancer.delete_load_balancer(lb.id, cascade=True)
        gone(conn, lb.id)
        lb_id, lb = lb.id, None
        assert not os.path.exists(os.path.dirname(folder))
        assert namespace_of(lb_id) not in namespaces()
    finally:
        if server is not None:
            server.kill()
            server.wait(10)
        remove_backends(conn, admin, net, lb, guests)
