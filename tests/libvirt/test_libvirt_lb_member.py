"""A real guest as a load balancer member: the tiny guest (libvirt/QEMU) serves HTTP with
busybox httpd, the haproxy data plane on this host balances to it, and a client
namespace on the guest's network gets the guest's page through the VIP. Needs what
test_libvirt_guests needs, and haproxy."""
from __future__ import annotations

import base64
import shutil
import uuid

import pytest
from helpers.cloud import wait_for
from helpers.guestnet import Guest
from libvirt_helpers import BOOT_TIMEOUT, GUEST_TOOLS, console, real_guests_missing

SKIP = real_guests_missing(GUEST_TOOLS)

pytestmark = pytest.mark.skipif(SKIP is not None or shutil.which("haproxy") is None,
                                reason=SKIP or "needs haproxy")

WEB = ("#!/bin/sh\nmkdir -p /www\necho guest-page > /www/index.html\n"
       "busybox httpd -p 8080 -h /www\necho HTTPD-STARTED\n")


def _plugged(admin, port_id):
    port = admin.network.get_port(port_id)
    return port if (port.binding_vif_details or {}).get("bridge_name") else None


def test_a_tiny_guest_serves_through_a_load_balancer(cloud, real_host, tiny_image,
                                                     member, tmp_path):
    from pocketstack.common import config

    user, conn = member
    admin = cloud.sdk()
    config.CONF.set_override("data_plane", "haproxy", group="loadbalancer")
    config.CONF.set_override("haproxy_host", real_host.name, group="loadbalancer")
    net = conn.network.create_network(name=f"lvt-lb-{uuid.uuid4().hex[:4]}")
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.79.0.0/24")
    server, client, lb = None, None, None
    try:
        default = next(conn.network.security_groups(name="default",
                                                    project_id=user["project_id"]))
        conn.network.create_security_group_rule(
            security_group_id=default.id, direction="ingress", ethertype="IPv4",
            protocol="tcp", port_range_min=8080, port_range_max=8080)
        server = conn.compute.create_server(
            name="lvt-lb-web", image_id=tiny_image.id, flavor_id="42",
            networks=[{"uuid": net.id}], user_data=base64.b64encode(WEB.encode()).decode())
        server = conn.compute.wait_for_server(server, interval=0.2, wait=BOOT_TIMEOUT)
        address = next(iter(server.addresses.values()))[0]["addr"]
        wait_for(lambda: "HTTPD-STARTED" in console(conn, server.id), BOOT_TIMEOUT,
                 "the guest's httpd")
        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id, listeners=[{
            "protocol": "HTTP", "protocol_port": 80, "default_pool": {
                "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                "members": [{"address": address, "protocol_port": 8080}]}}])
        wait_for(lambda: conn.load_balancer.get_load_balancer(lb.id).provisioning_status
                 == "ACTIVE", 60, "the load balancer ACTIVE", interval=0.2)
        port = admin.network.create_port(
            network_id=net.id, project_id=user["project_id"], binding_host_id=real_host.name,
            device_owner="compute:nova", device_id=str(uuid.uuid4()),
            fixed_ips=[{"subnet_id": subnet.id, "ip_address": "10.79.0.250"}])
        port = wait_for(lambda: _plugged(admin, port.id), 30, "client plugged")
        client = Guest(port, tmp_path)
        client.run("ip", "addr", "add", "10.79.0.250/24", "dev", "eth0")

        def fetch():
            proc = client.run("timeout", "5", "busybox", "wget", "-q", "-O", "-",
                              f"http://{lb.vip_address}/index.html", check=False)
            return proc.stdout.strip() if proc.returncode == 0 else None

        wait_for(lambda: fetch() == "guest-page", 60, "the guest's page through the VIP",
                 interval=0.5)
    finally:
        if client is not None:
            client.remove()
        if lb is not None:
            conn.load_balancer.delete_load_balancer(lb.id, cascade=True, ignore_missing=True)
            wait_for(lambda: conn.load_balancer.find_load_balancer(lb.id) is None, 60,
                     "the load balancer gone", interval=0.2)
        if server is not None:
            conn.compute.delete_server(server)
            conn.compute.wait_for_delete(server, interval=0.2, wait=60)
        for p in admin.network.ports(network_id=net.id, device_owner="compute:nova"):
            admin.network.delete_port(p)
        conn.network.delete_network(net)
        config.CONF.clear_override("data_plane", group="loadbalancer")
        config.CONF.clear_override("haproxy_host", group="loadbalancer")
