"""UDP listeners on the haproxy data plane carry real datagrams (a userspace balancer in
the load balancer's namespace; HAProxy carries no UDP): from outside, through a floating
IP on the VIP, each new flow goes to the next of two backends round robin and the
answers come back; a UDP-CONNECT monitor finds a stopped backend (ICMP port unreachable),
which turns ERROR and gets no datagrams, and ONLINE again once it serves; allowed_cidrs
refuse other sources; the delete leaves no process behind."""
from __future__ import annotations

import os

from lb_helpers import active, gone
from lb_scene import NAMED_UDP, Scene, member_status, needs_haproxy, until

pytestmark = needs_haproxy


def _balancers(lb_id: str) -> list[int]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if b"udp_balancer.py" in cmdline and lb_id.encode() in cmdline:
            out.append(int(pid))
    return out


def test_udp_datagrams_through_the_vip_alternate_backends_and_a_stopped_one_turns_error(
        cloud, host_agent, haproxy_plane, tmp_path):
    with Scene(cloud, host_agent, tmp_path, octet=70) as scene:
        conn = scene.conn
        scene.allow("udp", 5353)
        one, two = scene.guests(2)
        servers = {name: scene.serve(guest.ns, NAMED_UDP, "5353", name)
                   for name, guest in (("one", one), ("two", two))}
        lb = scene.load_balancer(listeners=[{
            "protocol": "UDP", "protocol_port": 53, "default_pool": {
                "protocol": "UDP", "lb_algorithm": "ROUND_ROBIN",
                "healthmonitor": {"type": "UDP-CONNECT", "delay": 1, "timeout": 1,
                                  "max_retries": 1, "max_retries_down": 1},
                "members": [{"address": g.address, "protocol_port": 5353}
                            for g in (one, two)]}}])
        active(conn, lb.id)
        assert len(_balancers(lb.id)) == 1
        address = scene.floating_ip(lb.vip_port_id)
        client = scene.outside("198.51.100.7")
        until(lambda: set(member_status(conn, lb.id).values()) == {"ONLINE"},
              "both members ONLINE")
        until(lambda: client.datagrams(address, 53, ["hello"]) != ["-"],
              "an answer through the floating IP")

        answers = client.datagrams(address, 53, ["a", "b", "c", "d"])
        names = [a.split()[0] for a in answers]
        assert set(names) == {"one", "two"}, answers
        assert names[0] != names[1] and names[0] == names[2] != names[3], answers
        # The backends see the VIP (the balancer's own flow), the payload unchanged.
        assert [a.split()[1:] for a in answers] == [[lb.vip_address, p] for p in "abcd"]
        [listener] = conn.load_balancer.listeners(loadbalancer_id=lb.id)
        # The balancer reports its counters every half second (as the amphora's
        # heartbeat carries its statistics now and then).
        until(lambda: conn.load_balancer.get_listener_statistics(
            listener.id).total_connections >= 5, "the flows counted")
        stats = conn.load_balancer.get_load_balancer_statistics(lb.id)
        assert stats.bytes_in >= 5 and stats.bytes_out > stats.bytes_in

        servers["one"].kill()
        servers["one"].wait(10)
        until(lambda: member_status(conn, lb.id) == {one.address: "ERROR",
                                                     two.address: "ONLINE"},
              "the stopped backend ERROR")
        assert [a.split()[0] for a in client.datagrams(address, 53, list("wxyz"))] == \
            ["two"] * 4
        scene.serve(one.ns, NAMED_UDP, "5353", "one")
        until(lambda: set(member_status(conn, lb.id).values()) == {"ONLINE"},
              "the backend ONLINE again")
        assert {a.split()[0] for a in client.datagrams(address, 53, list("abcd"))} == {
            "one", "two"}

        # allowed_cidrs: another outside source gets nothing.
        conn.load_balancer.update_listener(listener, allowed_cidrs=["198.51.100.7/32"])
        active(conn, lb.id)
        other = scene.outside("198.51.100.9")
        assert other.datagrams(address, 53, ["nope"]) == ["-"]
        assert client.datagrams(address, 53, ["yes"])[0].split()[-1] == "yes"
        assert len(_balancers(lb.id)) == 1  # told to reload, not started again

        conn.load_balancer.delete_load_balancer(lb.id, cascade=True)
        gone(conn, lb.id)
        assert _balancers(lb.id) == []
