"""Real routers and floating IPs on this host (network/agent/l3.py), without VMs.
Pretend guests as in test_guestnet_host.py (namespaces gn… on the project network's
bridge); an "outside" namespace gno… on the external network's bridge holds the external
subnet's gateway address and answers HTTP with the address it sees the client as.

Needs root, iproute2, dnsmasq, nftables and busybox. Everything made here is named
gn…/qrouter-<id>/qdhcp-<id>/brq<id> and removed in finally blocks.
"""
from __future__ import annotations

import ipaddress
import json
import os
import shutil
import time

import pytest

from helpers.cloud import wait_for
from helpers.guestnet import (EXTERNAL_CIDR, OUTSIDE_IP, Guest, Outside, Project, echo_server,
                              links, namespaces, running_agent, sh, unique, unique_table)

BRIDGE_HOST = "gn-l3host"
TOOLS = ("ip", "dnsmasq", "nft", "busybox")
missing = [t for t in TOOLS if shutil.which(t) is None]
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or bool(missing),
    reason=f"real routers need root and {', '.join(TOOLS)} "
           f"(missing: {', '.join(missing) or 'root'})")


def seen_as(guest: Guest, server: str = OUTSIDE_IP) -> str:
    """The source address an echo server sees for a TCP connection from the guest."""
    for _ in range(50):  # the echo server may still be starting
        proc = guest.run("busybox", "wget", "-q", "-O", "-", f"http://{server}:8080/",
                         check=False)
        if proc.returncode == 0:
            return proc.stdout.strip()
        time.sleep(0.1)
    raise AssertionError(f"guest cannot reach the outside: {proc.stderr}")


def wait_until(predicate, timeout: float) -> float | None:
    """Seconds until predicate() held, or None if it did not within timeout."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.02)
    return None


def router_links(router_id: str) -> set[str]:
    out = sh("ip", "-n", f"qrouter-{router_id}", "-j", "link", "show").stdout
    return {link["ifname"] for link in json.loads(out)}


def connections(router_id: str) -> str:
    """The router namespace's connection tracking table, as the kernel shows it."""
    return sh("ip", "netns", "exec", f"qrouter-{router_id}", "cat",
              "/proc/net/nf_conntrack").stdout


def nat_table(router_id: str) -> str:
    return sh("ip", "netns", "exec", f"qrouter-{router_id}", "nft", "list", "table", "ip",
              "qrouter", check=False).stdout


@pytest.fixture(scope="module")
def host_agent(cloud):
    with running_agent(BRIDGE_HOST, unique_table("guestnet_l3")) as handle:
        yield handle


class Site:
    """A project network with a router, its gateway on an external network an admin made,
    and the outside namespace on that network."""

    def __init__(self, cloud, host_agent):
        self.project = Project(cloud)
        self.conn, self.admin = self.project.conn, self.project.admin
        self.agent = host_agent
        self.outside = None
        self.external = self.admin.network.create_network(name=unique("gn-ext"),
                                                          is_router_external=True)
        self.admin.network.create_subnet(network_id=self.external.id, ip_version=4,
                                         cidr=EXTERNAL_CIDR, gateway_ip=OUTSIDE_IP,
                                         enable_dhcp=False, name=unique("gn-ext"))
        self.net, self.subnet = self.project.network("10.41.1.0/24")
        self.router = self.new_router(self.subnet)

    def new_router(self, subnet):
        router = self.conn.network.create_router(
            name=unique("gn-r"), external_gateway_info={"network_id": self.external.id})
        self.conn.network.add_interface_to_router(router, subnet=subnet.id)
        return router

    def guest(self, guests, network_id: str, security_groups=None):
        server = self.project.boot(network_id)
        port = self.project.port_of(server.id)
        if security_groups is not None:
            port = self.admin.network.update_port(port, security_groups=security_groups)
        port = self.admin.network.update_port(port, binding_host_id=BRIDGE_HOST)
        self.agent.reconcile()  # the router follows in the background; be sure it did
        if self.outside is None:  # the external bridge exists once a router is plugged
            self.outside = Outside(self.external.id)
        self.outside.attach()
        return guests(port)

    def gateway_ip(self, router) -> str:
        router = self.conn.network.get_router(router.id)
        return router.external_gateway_info["external_fixed_ips"][0]["ip_address"]

    def drop_router(self, router):
        for fip in self.conn.network.ips(router_id=router.id):
            self.conn.network.delete_ip(fip)
        for port in self.admin.network.ports(device_id=router.id,
                                             device_owner="network:router_interface"):
            self.conn.network.remove_interface_from_router(router, port=port.id)
        self.conn.network.delete_router(router, ignore_missing=True)

    def cleanup(self):
        try:
            for fip in self.conn.network.ips():  # the unassociated ones too
                self.conn.network.delete_ip(fip)
            for router in self.conn.network.routers():
                self.drop_router(router)
            self.project.cleanup()
            self.admin.network.delete_network(self.external, ignore_missing=True)
        finally:
            if self.outside is not None:
                self.outside.remove()


@pytest.fixture(scope="module")
def site(cloud, host_agent):
    made = Site(cloud, host_agent)
    try:
        yield made
    finally:
        made.cleanup()


@pytest.fixture
def guests(tmp_path):
    made = []

    def make(port):
        made.append(Guest(port, tmp_path))
        return made[-1]

    try:
        yield make
    finally:
        for guest in made:
            guest.remove()


def test_guest_reaches_its_router_and_the_outside_through_snat(site, guests):
    guest = site.guest(guests, site.net.id)
    lease = guest.dhcp()
    assert lease["router"] == site.subnet.gateway_ip
    assert guest.ping(site.subnet.gateway_ip)  # the router's qr- interface
    assert guest.ping(OUTSIDE_IP)
    assert seen_as(guest) == site.gateway_ip(site.router)  # SNAT to the gateway's address
    ns = f"qrouter-{site.router.id}"
    assert ns in namespaces()
    gw_port = next(site.admin.network.ports(device_id=site.router.id,
                                            device_owner="network:router_gateway"))
    assert {"qr-" + guest_port_id[:11] for guest_port_id in
            [p.id for p in site.admin.network.ports(
                device_id=site.router.id, device_owner="network:router_interface")]} | {
        "qg-" + gw_port.id[:11]} <= router_links(site.router.id)
    routes = sh("ip", "-n", ns, "route", "show", "default").stdout
    assert f"via {OUTSIDE_IP} dev qg-{gw_port.id[:11]}" in routes


def test_a_router_is_plumbed_before_any_guest(site):
    """As neutron's L3 agent: a router with a gateway answers from outside at once, and
    one with only an interface has its namespace, with no guest bound anywhere; a router
    an admin takes off the L3 agent is unplugged."""
    from pocketstack.common import config

    router = site.conn.network.create_router(
        name=unique("gn-r"), external_gateway_info={"network_id": site.external.id})
    net, subnet = site.project.network("10.41.4.0/24")
    inner = site.conn.network.create_router(name=unique("gn-r"))
    site.conn.network.add_interface_to_router(inner, subnet=subnet.id)
    try:
        site.agent.reconcile()
        assert {f"qrouter-{router.id}", f"qrouter-{inner.id}"} <= namespaces()
        interface = next(site.admin.network.ports(device_id=inner.id))
        assert "qr-" + interface.id[:11] in router_links(inner.id)
        if site.outside is None:
            site.outside = Outside(site.external.id)
        site.outside.attach()
        assert wait_until(lambda: site.outside.ping(site.gateway_ip(router)), 5) is not None
        # taken off its L3 agent, the router goes from the network node; put back, it comes
        l3 = next(site.admin.network.agents(agent_type="L3 agent", host=config.CONF.host))
        site.admin.network.remove_router_from_agent(l3, router)
        site.agent.reconcile()
        assert f"qrouter-{router.id}" not in namespaces()
        site.admin.network.add_router_to_agent(l3, router)
        site.agent.reconcile()
        assert f"qrouter-{router.id}" in namespaces()
    finally:
        site.drop_router(router)
        site.drop_router(inner)
    site.agent.reconcile()
    assert not {f"qrouter-{router.id}", f"qrouter-{inner.id}"} & namespaces()


def test_static_routes_follow_the_router(site, guests):
    site.guest(guests, site.net.id)
    ns = f"qrouter-{site.router.id}"
    route = {"destination": "203.0.113.0/24", "nexthop": "10.41.1.250"}
    site.conn.network.update_router(site.router, routes=[route])
    site.agent.reconcile()
    assert "via 10.41.1.250" in sh("ip", "-n", ns, "route", "show", "203.0.113.0/24").stdout
    site.conn.network.update_router(site.router, routes=[])
    site.agent.reconcile()
    assert sh("ip", "-n", ns, "route", "show", "203.0.113.0/24").stdout.strip() == ""


def test_snat_and_admin_state_follow_the_router(site, guests):
    guest = site.guest(guests, site.net.id)
    guest.dhcp()
    network_id = site.external.id
    site.admin.network.update_router(site.router, external_gateway_info={
        "network_id": network_id, "enable_snat": False})
    site.agent.reconcile()
    assert "snat to" not in nat_table(site.router.id)
    assert not guest.ping(OUTSIDE_IP)  # its own address goes out: the outside has no way back
    site.admin.network.update_router(site.router, external_gateway_info={
        "network_id": network_id, "enable_snat": True})
    site.conn.network.update_router(site.router, is_admin_state_up=False)
    site.agent.reconcile()
    assert f"qrouter-{site.router.id}" not in namespaces()  # neutron's agent drops it too
    site.conn.network.update_router(site.router, is_admin_state_up=True)
    site.agent.reconcile()
    assert f"qrouter-{site.router.id}" in namespaces()
    site.outside.attach()
    assert guest.ping(OUTSIDE_IP)


def test_floating_ip_reaches_the_guest_and_security_groups_decide(site, guests):
    pingable = site.conn.network.create_security_group(name=unique("gn-icmp"))
    site.conn.network.create_security_group_rule(
        security_group_id=pingable.id, direction="ingress", ethertype="IPv4",
        protocol="icmp", remote_ip_prefix="0.0.0.0/0")
    open_guest = site.guest(guests, site.net.id, security_groups=[pingable.id])
    closed_guest = site.guest(guests, site.net.id)  # the default group: members only
    open_guest.dhcp(), closed_guest.dhcp()
    fip = site.conn.network.create_ip(floating_network_id=site.external.id)
    assert not site.outside.ping(fip.floating_ip_address)
    site.conn.network.update_ip(fip, port_id=open_guest.port.id)
    # the agent learns of it from the API's change notice, in the background
    took = wait_until(lambda: site.outside.ping(fip.floating_ip_address), 5)
    assert took is not None and took < 2.0, took
    assert seen_as(open_guest) == fip.floating_ip_address  # the SNAT half of the pair
    # a guest inside reaches another by its floating IP too (hairpin through the router:
    # the answer must come back through it, so the router stands in as the sender)
    site.conn.network.create_security_group_rule(
        security_group_id=pingable.id, direction="ingress", ethertype="IPv4",
        protocol="tcp", port_range_min=8080, port_range_max=8080)
    site.agent.reconcile()
    server = echo_server(open_guest.ns)
    try:
        assert seen_as(closed_guest, fip.floating_ip_address) == site.gateway_ip(site.router)
    finally:
        server.kill()
        server.wait(timeout=10)

    closed_fip = site.conn.network.create_ip(floating_network_id=site.external.id,
                                             port_id=closed_guest.port.id)
    site.agent.reconcile()
    assert seen_as(closed_guest) == closed_fip.floating_ip_address
    assert not site.outside.ping(closed_fip.floating_ip_address)  # no ICMP ingress rule

    translated = f"mark={int(ipaddress.IPv4Address(fip.floating_ip_address))} "
    assert translated in connections(site.router.id)  # the pings and TCP above
    site.conn.network.update_ip(fip, port_id=None)
    took = wait_until(lambda: not site.outside.ping(fip.floating_ip_address, wait=1), 5)
    assert took is not None and took < 2.0, took
    site.agent.reconcile()
    # its connections went with it: a ping running on would not reach the guest still
    assert translated not in connections(site.router.id)
    assert not site.outside.ping(fip.floating_ip_address)
    assert seen_as(open_guest) == site.gateway_ip(site.router)  # back to the router's SNAT
    assert fip.floating_ip_address not in nat_table(site.router.id)


def test_port_forwardings_reach_a_guest_port(site, guests):
    web = site.conn.network.create_security_group(name=unique("gn-web"))
    site.conn.network.create_security_group_rule(
        security_group_id=web.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=8080, port_range_max=8082, remote_ip_prefix="0.0.0.0/0")
    guest = site.guest(guests, site.net.id, security_groups=[web.id])
    address = guest.dhcp()["ip"]
    fip = site.conn.network.create_ip(floating_network_id=site.external.id)
    one = site.conn.network.create_floating_ip_port_forwarding(
        fip, internal_port_id=guest.port.id, internal_ip_address=address,
        internal_port=8080, external_port=8081, protocol="tcp")
    # a range to a range of the same size, port by port: 9001 -> 8082
    ranged = site.conn.network.create_floating_ip_port_forwarding(
        fip, internal_port_id=guest.port.id, internal_ip_address=address,
        internal_port_range="8081:8082", external_port_range="9000:9001", protocol="tcp")
    site.agent.reconcile()
    servers = [echo_server(guest.ns), echo_server(guest.ns, 8082)]
    try:
        def answer(port: int) -> str | None:
            for _ in range(30):  # its echo server may still be starting
                got = site.outside.fetch(fip.floating_ip_address, port)
                if got:
                    return got
                time.sleep(0.1)
            return None

        assert answer(8081) == OUTSIDE_IP  # the guest sees who called: no SNAT inbound
        assert answer(9001) == OUTSIDE_IP  # (8082's server started after 8080's)
        assert site.outside.fetch(fip.floating_ip_address, 9000) is None  # 8081: nobody
        site.conn.network.delete_floating_ip_port_forwarding(fip, one)
        site.conn.network.delete_floating_ip_port_forwarding(fip, ranged)
        site.agent.reconcile()
        assert site.outside.fetch(fip.floating_ip_address, 8081) is None
        assert fip.floating_ip_address not in nat_table(site.router.id)
    finally:
        for server in servers:
            server.kill()
            server.wait(timeout=10)


def test_router_teardown_leaves_nothing(site, guests):
    net, subnet = site.project.network("10.41.2.0/24")
    router = site.new_router(subnet)
    guest = site.guest(guests, net.id)
    guest.dhcp()
    assert guest.ping(OUTSIDE_IP)
    ports = {p.device_owner: p for p in site.admin.network.ports(device_id=router.id)}
    interface, gateway = ports["network:router_interface"], ports["network:router_gateway"]
    assert {"tap" + interface.id[:11], "tap" + gateway.id[:11]} <= links()
    assert "snat to" in nat_table(router.id)

    site.conn.network.update_router(router, external_gateway_info=None)  # clear the gateway
    site.agent.reconcile()
    assert "qg-" + gateway.id[:11] not in router_links(router.id)
    assert "tap" + gateway.id[:11] not in links()
    assert "snat to" not in nat_table(router.id)
    assert not guest.ping(OUTSIDE_IP)

    site.conn.network.remove_interface_from_router(router, subnet=subnet.id)
    site.agent.reconcile()
    assert f"qrouter-{router.id}" not in namespaces()  # no port on any network: no router
    assert "tap" + interface.id[:11] not in links()
    site.conn.network.delete_router(router)
    site.agent.reconcile()
    assert f"qrouter-{router.id}" not in namespaces()

    # and a router deleted outright, with its gateway and interface removed the usual way
    router = site.new_router(subnet)
    site.agent.reconcile()
    assert f"qrouter-{router.id}" in namespaces()
    names = {"tap" + p.id[:11] for p in site.admin.network.ports(device_id=router.id)}
    site.drop_router(router)
    site.agent.reconcile()
    assert f"qrouter-{router.id}" not in namespaces() and not names & links()


def test_restart_removes_routers_deleted_meanwhile(site, guests):
    net, subnet = site.project.network("10.41.3.0/24")
    router = site.new_router(subnet)
    site.guest(guests, net.id)
    names = {"tap" + p.id[:11] for p in site.admin.network.ports(device_id=router.id)}
    assert f"qrouter-{router.id}" in namespaces()
    site.agent.stop()
    try:
        site.drop_router(router)
        assert f"qrouter-{router.id}" in namespaces()  # nobody was there to remove it
    finally:
        site.agent.start()
    assert f"qrouter-{router.id}" not in namespaces()
    # the router's veths go with its namespace, which the kernel tears down in the
    # background
    wait_for(lambda: not names & links(), 10, "the deleted router's veths to go")
    # the site's own router is plugged again, as it was
    assert f"qrouter-{site.router.id}" in namespaces()


def test_guests_behind_a_router_read_their_own_metadata_through_it(site, guests):
    """A subnet with a router: DHCP routes 169.254.169.254 to the router, whose namespace
    runs the router's metadata proxy (neutron's L3 agent's). Guests on both networks of
    the router each read their own instance's metadata, never another's."""
    net, subnet = site.project.network("10.41.4.0/24")
    site.conn.network.add_interface_to_router(site.router, subnet=subnet.id)
    try:
        first, second = site.guest(guests, site.net.id), site.guest(guests, site.net.id)
        other = site.guest(guests, net.id)
        for guest, sub in ((first, site.subnet), (second, site.subnet), (other, subnet)):
            lease = guest.dhcp()
            assert f"169.254.169.254/32 {sub.gateway_ip}" in lease["staticroutes"]
            server = site.conn.compute.get_server(guest.port.device_id)
            md = json.loads(guest.fetch("/openstack/latest/meta_data.json"))
            assert (md["uuid"], md["name"]) == (server.id, server.name)
            assert guest.fetch("/latest/meta-data/local-ipv4") == lease["ip"]
            assert guest.fetch("/openstack/latest/user_data") == "#!/bin/sh\necho hi\n"
        # the router's namespace answered: not the network's DHCP namespace
        ns = f"qrouter-{site.router.id}"
        assert "169.254.169.254/32" in sh("ip", "-n", ns, "addr", "show", "lo").stdout
        listening = sh("ip", "netns", "exec", ns, "ss", "-Htln").stdout
        assert "169.254.169.254:80" in listening
    finally:
        site.conn.network.remove_interface_from_router(site.router, subnet=subnet.id)
        site.agent.reconcile()
