"""Helpers of the load balancer tests (a module of its own: ``from conftest import`` can
resolve to another directory's conftest), and what the haproxy data plane's tests share:
their skip mark, backends and clean-up (their fixtures are in conftest.py)."""
from __future__ import annotations

import os
import shutil
import uuid

import pytest

from helpers.cloud import wait_for
from helpers import guestnet
from helpers.guestnet import Guest


class Raw:
    """Plain HTTP on the load-balancer endpoint, for status codes and Octavia's bodies."""

    def __init__(self, session):
        self.session = session

    def __call__(self, method: str, path: str, body=None, **kwargs):
        return self.session.request(path, method, json=body, raise_exc=False,
                                    endpoint_filter={"service_type": "load-balancer",
                                                     "interface": "public"}, **kwargs)

    def error(self, method: str, path: str, body=None) -> tuple[int, str]:
        response = self(method, path, body)
        assert 400 <= response.status_code < 500 or response.status_code == 501, (
            response.status_code, response.text)
        assert response.headers["content-type"].startswith("application/json")
        fault = response.json()
        assert set(fault) == {"faultcode", "faultstring", "debuginfo"}, fault
        assert fault["faultcode"] == ("Client" if response.status_code < 500 else "Server")
        assert fault["debuginfo"] is None
        return response.status_code, fault["faultstring"]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_subnet(conn, cidr: str = "10.20.0.0/24"):
    network = conn.network.create_network(name=unique("lbnet"))
    return conn.network.create_subnet(network_id=network.id, ip_version=4, cidr=cidr,
                                      name=unique("lbsub"))


def active(conn, lb_id: str, timeout: float = 30):
    """The load balancer once ACTIVE (ERROR fails the test)."""
    def ready():
        lb = conn.load_balancer.get_load_balancer(lb_id)
        assert lb.provisioning_status != "ERROR", lb
        return lb if lb.provisioning_status == "ACTIVE" else None
    return wait_for(ready, timeout, f"load balancer {lb_id} ACTIVE", interval=0.05)


def http_pool(conn, lb_id: str):
    """(listener, pool): an HTTP listener on port 80 of the load balancer and a round
    robin HTTP pool behind it, the load balancer ACTIVE after each."""
    listener = conn.load_balancer.create_listener(loadbalancer_id=lb_id, protocol="HTTP",
                                                  protocol_port=80)
    active(conn, lb_id)
    pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb_id)
    return listener, pool


def gone(conn, lb_id: str, timeout: float = 30):
    """Once the load balancer is deleted; a delete that failed (ERROR) fails at once, and
    one not applied in time fails with its status and what the provider's thread is
    doing (the test's cloud runs in this process)."""
    last = []

    def deleted():
        lb = conn.load_balancer.find_load_balancer(lb_id)
        assert lb is None or lb.provisioning_status != "ERROR", f"the delete failed: {lb}"
        last[:] = [lb]
        return lb is None
    try:
        return wait_for(deleted, timeout, f"load balancer {lb_id} deleted", interval=0.05)
    except AssertionError as error:
        raise AssertionError(f"{error}; it is {last[0] and last[0].provisioning_status}; "
                             f"the provider's threads:\n{driver_stacks()}") from None


def driver_stacks() -> str:
    """The stacks of this process's load balancer provider threads."""
    import sys
    import threading
    import traceback

    frames = sys._current_frames()
    return "\n".join(f"{t.name} ({t.ident}):\n" + "".join(traceback.format_stack(
        frames[t.ident])) for t in threading.enumerate()
        if t.name == "loadbalancer-driver" and t.ident in frames) or "(none running)"


# --- the haproxy data plane on this host ----------------------------------------------------

BRIDGE_HOST = "lb-haproxy-host"
HAPROXY_TOOLS = ("ip", "dnsmasq", "nft", "busybox", "haproxy")
_missing = [t for t in HAPROXY_TOOLS if shutil.which(t) is None]
needs_haproxy = pytest.mark.skipif(
    os.geteuid() != 0 or bool(_missing),
    reason=f"the haproxy data plane needs root and {', '.join(HAPROXY_TOOLS)} "
           f"(missing: {', '.join(_missing) or 'root'})")

# Answers every GET with its own name: which backend served the request.
NAMED_SERVER = guestnet.ECHO_SERVER  # argv: port, the name it answers with


def namespace_of(lb_id: str) -> str:
    from pocketstack.loadbalancer import dataplane

    return dataplane.namespace(lb_id)


def haproxy_pids(marker: str) -> list[int]:
    """The HAProxy processes whose command line holds ``marker`` (a load balancer's id,
    or a cloud's data dir)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if b"haproxy" in cmdline.split(b"\0")[0] and marker.encode() in cmdline:
            out.append(int(pid))
    return out


def plug_backends(conn, admin, user, host_agent, subnet, addresses: list[str], tmp_path,
                  guests: list) -> None:
    """Pretend guests on ``subnet`` at ``addresses`` (compute ports of ``user``'s bound to
    BRIDGE_HOST, their default security group open to TCP 8080, the backends' port);
    each is appended to ``guests`` once made, for the caller to remove."""
    ports = [admin.network.create_port(
        network_id=subnet.network_id, project_id=user["project_id"],
        binding_host_id=BRIDGE_HOST, device_owner="compute:nova", device_id=str(uuid.uuid4()),
        fixed_ips=[{"subnet_id": subnet.id, "ip_address": address}])
        for address in addresses]
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


def remove_backends(conn, admin, net, lb, guests: list) -> None:
    """What a haproxy test made on ``net``: its load balancer (None: deleted already), its
    guests and their ports, and the network."""
    if lb is not None:
        conn.load_balancer.delete_load_balancer(lb.id, cascade=True, ignore_missing=True)
        gone(conn, lb.id)
    for guest in guests:
        guest.remove()
    for port in admin.network.ports(network_id=net.id, device_owner="compute:nova"):
        admin.network.delete_port(port)
    conn.network.delete_network(net)
