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
import uuid

from helpers.cloud import wait_for
from helpers.guestnet import Guest, namespaces, unique
from lb_helpers import active, gone
from test_lb_haproxy import (  # noqa: F401
    BRIDGE_HOST,
    NAMED_SERVER,
    haproxy_plane,
    host_agent,
    namespace_of,
    pytestmark,
)
from tls_helpers import CA, Barbican

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
        cloud, host_agent, haproxy_plane, tmp_path):  # noqa: F811
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
        ports = [admin.network.create_port(
            network_id=net.id, project_id=user["project_id"], binding_host_id=BRIDGE_HOST,
            device_owner="compute:nova", device_id=str(uuid.uuid4()),
            fixed_ips=[{"subnet_id": subnet.id, "ip_address": f"10.62.0.{20 + i}"}])
            for i in range(2)]
        default = next(conn.network.security_groups(name="default",
                                                    project_id=user["project_id"]))
        conn.network.create_security_group_rule(
            security_group_id=default.id, direction="ingress", ethertype="IPv4",
            protocol="tcp", port_range_min=8080, port_range_max=8080)
        host_agent.reconcile()
        for port in ports:
            port = admin.network.get_port(port.id)
            guest = Guest(port, tmp_path)
            guests.append(guest)
            guest.run("ip", "addr", "add", f"{port.fixed_ips[0]['ip_address']}/24", "dev",
                      "eth0")
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
        if lb is not None:
            conn.load_balancer.delete_load_balancer(lb.id, cascade=True, ignore_missing=True)
            gone(conn, lb.id)
        for guest in guests:
            guest.remove()
        for port in admin.network.ports(network_id=net.id, device_owner="compute:nova"):
            admin.network.delete_port(port)
        conn.network.delete_network(net)
