"""A floating IP on a load balancer's VIP port (the haproxy data plane) reaches its
listener through the project's router from an "outside" namespace on the external
network, as users expose an Octavia load balancer. Needs what test_lb_haproxy needs."""
from __future__ import annotations

import subprocess
import sys

from helpers.cloud import wait_for
from helpers.guestnet import EXTERNAL_CIDR, OUTSIDE_IP, Outside, unique
from lb_helpers import NAMED_SERVER, active, gone, needs_haproxy, plug_backends

pytestmark = needs_haproxy


def test_a_floating_ip_on_the_vip_reaches_the_listener_from_outside(
        cloud, host_agent, haproxy_plane, tmp_path):
    user = cloud.make_user()
    conn, admin = cloud.user_sdk(user), cloud.sdk()
    external = admin.network.create_network(name=unique("lbext"), is_router_external=True)
    admin.network.create_subnet(network_id=external.id, ip_version=4, cidr=EXTERNAL_CIDR,
                                gateway_ip=OUTSIDE_IP, enable_dhcp=False)
    net = conn.network.create_network(name=unique("lbfip"))
    subnet = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.66.0.0/24")
    router = conn.network.create_router(name=unique("lbr"),
                                        external_gateway_info={"network_id": external.id})
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    guests, server, lb, outside, fip = [], None, None, None, None
    try:
        plug_backends(conn, admin, user, host_agent, subnet, ["10.66.0.20"], tmp_path, guests)
        server = subprocess.Popen(["ip", "netns", "exec", guests[0].ns, sys.executable, "-c",
                                   NAMED_SERVER, "8080", "backend"])
        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id, listeners=[{
            "protocol": "HTTP", "protocol_port": 80, "default_pool": {
                "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                "members": [{"address": "10.66.0.20", "protocol_port": 8080}]}}])
        active(conn, lb.id)
        fip = conn.network.create_ip(floating_network_id=external.id,
                                     port_id=lb.vip_port_id)
        host_agent.reconcile()
        outside = Outside(external.id)
        address = fip.floating_ip_address
        wait_for(lambda: outside.fetch(address, 80) == "backend", 30,
                 "the listener through the floating IP", interval=0.3)
        conn.network.update_ip(fip, port_id=None)
        host_agent.reconcile()
        wait_for(lambda: outside.fetch(address, 80) is None, 30,
                 "nothing at the floating IP once it is off the VIP", interval=0.3)
    finally:
        if server is not None:
            server.kill()
            server.wait(10)
        if fip is not None:
            conn.network.delete_ip(fip)
        if lb is not None:
            conn.load_balancer.delete_load_balancer(lb.id, cascade=True, ignore_missing=True)
            gone(conn, lb.id)
        for guest in guests:
            guest.remove()
        for p in admin.network.ports(network_id=net.id, device_owner="compute:nova"):
            admin.network.delete_port(p)
        conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
        conn.network.delete_router(router)
        conn.network.delete_network(net)
        admin.network.delete_network(external)
        if outside is not None:
            outside.remove()
