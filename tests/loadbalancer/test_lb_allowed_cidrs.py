"""A listener's allowed_cidrs on the haproxy data plane, with real traffic: through a
floating IP on the VIP, a client at an allowed address gets through and one at another
address of the same outside network is refused; an update turns it round."""
from __future__ import annotations

from lb_helpers import active
from lb_scene import NAMED_HTTP, Scene, needs_haproxy, until

pytestmark = needs_haproxy


def test_allowed_cidrs_let_one_outside_source_in_and_refuse_another(
        cloud, host_agent, haproxy_plane, tmp_path):
    with Scene(cloud, host_agent, tmp_path, octet=68) as scene:
        scene.allow("tcp", 8080)
        [backend] = scene.guests(1)
        scene.serve(backend.ns, NAMED_HTTP, "8080", "backend")
        lb = scene.load_balancer(listeners=[{
            "protocol": "HTTP", "protocol_port": 80, "allowed_cidrs": ["198.51.100.7/32"],
            "default_pool": {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                             "members": [{"address": backend.address,
                                          "protocol_port": 8080}]}}])
        active(scene.conn, lb.id)
        address = scene.floating_ip(lb.vip_port_id)
        allowed, other = scene.outside("198.51.100.7"), scene.outside("198.51.100.9")
        until(lambda: allowed.fetch(address) == "backend", "the allowed source through")
        assert other.fetch(address) is None

        [listener] = scene.conn.load_balancer.listeners(loadbalancer_id=lb.id)
        scene.conn.load_balancer.update_listener(listener, allowed_cidrs=["198.51.100.9/32"])
        active(scene.conn, lb.id)
        until(lambda: other.fetch(address) == "backend", "the newly allowed source through")
        assert allowed.fetch(address) is None

        scene.conn.load_balancer.update_listener(listener, allowed_cidrs=None)
        active(scene.conn, lb.id)
        until(lambda: allowed.fetch(address) == "backend", "any source once unrestricted")
        assert other.fetch(address) == "backend"
