"""A PING health monitor on the haproxy data plane sends real ICMP (an external check in
the load balancer's namespace, as Octavia's amphora does): a member whose namespace stops
answering echo requests turns ERROR in the status tree and gets no traffic although its
HTTP server still runs, and comes back ONLINE once it answers again; a member's
monitor_address is what is pinged."""
from __future__ import annotations

from lb_helpers import active
from lb_scene import NAMED_HTTP, Scene, member_status, needs_haproxy, status_tree, until

pytestmark = needs_haproxy


def test_a_member_that_stops_answering_ping_turns_error_and_comes_back(
        cloud, host_agent, haproxy_plane, tmp_path):
    with Scene(cloud, host_agent, tmp_path, octet=69) as scene:
        scene.allow("tcp", 8080)
        scene.allow("icmp")
        one, two = scene.guests(2)
        for name, guest in (("one", one), ("two", two)):
            scene.serve(guest.ns, NAMED_HTTP, "8080", name)
        lb = scene.load_balancer(listeners=[{
            "protocol": "HTTP", "protocol_port": 80, "default_pool": {
                "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                "healthmonitor": {"type": "PING", "delay": 1, "timeout": 1,
                                  "max_retries": 1, "max_retries_down": 1},
                "members": [{"address": g.address, "protocol_port": 8080}
                            for g in (one, two)]}}])
        active(scene.conn, lb.id)
        address = scene.floating_ip(lb.vip_port_id)
        client = scene.outside("198.51.100.7")
        until(lambda: set(member_status(scene.conn, lb.id).values()) == {"ONLINE"},
              "both members ONLINE by ping")
        until(lambda: client.fetch(address) is not None, "the listener through the FIP")
        assert {client.fetch(address) for _ in range(4)} == {"one", "two"}

        two.run("sysctl", "-qw", "net.ipv4.icmp_echo_ignore_all=1")
        until(lambda: member_status(scene.conn, lb.id) == {one.address: "ONLINE",
                                                           two.address: "ERROR"},
              "the member that answers no ping ERROR")
        assert status_tree(scene.conn, lb.id)["listeners"][0]["pools"][0][
            "operating_status"] == "DEGRADED"
        assert two.run("busybox", "wget", "-q", "-O", "-", "http://127.0.0.1:8080/"
                       ).stdout == "two"  # its server still runs: the check was ICMP
        assert {client.fetch(address) for _ in range(4)} == {"one"}

        two.run("sysctl", "-qw", "net.ipv4.icmp_echo_ignore_all=0")
        until(lambda: set(member_status(scene.conn, lb.id).values()) == {"ONLINE"},
              "the member ONLINE again once it answers")
        assert {client.fetch(address) for _ in range(4)} == {"one", "two"}

        # A monitor_address is what gets pinged: an address nobody holds turns the
        # member ERROR although the member itself answers.
        [pool] = scene.conn.load_balancer.pools(loadbalancer_id=lb.id)
        [member] = [m for m in scene.conn.load_balancer.members(pool)
                    if m.address == two.address]
        scene.conn.load_balancer.update_member(member, pool, monitor_address="10.69.0.99")
        active(scene.conn, lb.id)
        until(lambda: member_status(scene.conn, lb.id) == {one.address: "ONLINE",
                                                           two.address: "ERROR"},
              "the member whose monitor address answers nothing ERROR")
