"""Real guest networking on this host, without VMs. A server's port is bound to a
bridge host through the API; the test then plays the guest: a namespace joined to the
network's bridge by a veth named as libvirt's tap would be, with the port's MAC, running
busybox udhcpc, fetching metadata from 169.254.169.254 and pinging other guests.

Needs root, iproute2, dnsmasq (dnsmasq-base), nftables and busybox (busybox-static).
Everything made here is named gn…/qdhcp-<network id>/brq<network id> and removed in
finally blocks.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid

import pytest

from helpers.guestnet import (Guest, Project, links, namespaces, running_agent, sh, unique,
                              unique_table)
from pocketstack.common import processes

BRIDGE_HOST = "gn-realhost"
TOOLS = ("ip", "dnsmasq", "nft", "busybox")
NFT_TABLE = unique_table("guestnet_test")  # its own: another run may share this host
missing = [t for t in TOOLS if shutil.which(t) is None]
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or bool(missing),
    reason=f"real guest networking needs root and {', '.join(TOOLS)} "
           f"(missing: {', '.join(missing) or 'root'})")


@pytest.fixture(scope="module")
def host_agent(cloud):
    with running_agent(BRIDGE_HOST, NFT_TABLE) as handle:
        yield handle


@pytest.fixture(scope="module")
def project(cloud, host_agent):
    p = Project(cloud)
    try:
        yield p
    finally:
        p.cleanup()


@pytest.fixture
def guests(tmp_path):
    made = []

    def make(port):
        guest = Guest(port, tmp_path)
        made.append(guest)
        return guest

    try:
        yield make
    finally:
        for guest in made:
            guest.remove()


def bind_to_bridge_host(project, server):
    """Move the server's port to the bridge host, as a libvirt host's compute would bind
    it; the API answers once the network's bridge and DHCP namespace exist."""
    port = project.port_of(server.id)
    return project.admin.network.update_port(port, binding_host_id=BRIDGE_HOST)


def test_port_on_a_bridge_host_is_a_bridge_vif_and_simulated_hosts_keep_theirs(
        project, host_agent):
    net, _ = project.network("10.40.9.0/24")
    server = project.boot(net.id)
    port = project.port_of(server.id)
    assert port.binding_vif_type == "ovs"  # simulated host: as before
    port = bind_to_bridge_host(project, server)
    assert port.binding_vif_type == "bridge"
    bridge = "brq" + net.id[:11]
    assert port.binding_vif_details == {"port_filter": True, "connectivity": "l2",
                                        "bridge_name": bridge}
    assert bridge in links() and f"qdhcp-{net.id}" in namespaces()
    # the bridge carries no host address, not even an IPv6 link-local one
    addresses = json.loads(sh("ip", "-j", "addr", "show", "dev", bridge).stdout)[0]
    assert addresses["addr_info"] == []


def test_guest_leases_its_address_and_reads_its_metadata(project, host_agent, guests):
    net, sub = project.network("10.40.1.0/24")
    server = project.boot(net.id, user_data=b"#!/bin/sh\necho guestnet\n")
    port = bind_to_bridge_host(project, server)
    guest = guests(port)
    lease = guest.dhcp()
    assert lease["ip"] == port.fixed_ips[0]["ip_address"]
    assert lease["router"] == sub.gateway_ip
    dhcp_port = next(project.admin.network.ports(network_id=net.id,
                                                 device_owner="network:dhcp"))
    assert f"169.254.169.254/32 {dhcp_port.fixed_ips[0]['ip_address']}" in \
        lease["staticroutes"]
    md = json.loads(guest.fetch("/openstack/latest/meta_data.json"))
    assert md["uuid"] == server.id and md["name"] == server.name
    assert guest.fetch("/openstack/latest/user_data") == "#!/bin/sh\necho guestnet\n"
    assert guest.fetch("/latest/meta-data/local-ipv4") == lease["ip"]


def test_guests_reach_each_other_not_another_network(project, host_agent, guests):
    net_a, _ = project.network("10.40.2.0/24")
    net_b, sub_b = project.network("10.40.2.0/24")  # same addresses, other network
    one = guests(bind_to_bridge_host(project, project.boot(net_a.id)))
    two = guests(bind_to_bridge_host(project, project.boot(net_a.id)))
    other = guests(bind_to_bridge_host(project, project.boot(net_b.id,
                                                             fixed_ip="10.40.2.200")))
    ip_one, ip_two = one.dhcp()["ip"], two.dhcp()["ip"]
    ip_other = other.dhcp()["ip"]
    assert ip_other == "10.40.2.200" and len({ip_one, ip_two, ip_other}) == 3
    assert one.ping(ip_two) and two.ping(ip_one)  # the default group: members reach members
    # the other network's guest sees neither, whatever the addresses say
    assert not other.ping(ip_one) and not other.ping(ip_two)
    assert not one.ping(ip_other)


def test_security_group_ingress_rule_permits_and_blocks(project, host_agent, guests):
    net, sub = project.network("10.40.3.0/24")
    client = guests(bind_to_bridge_host(project, project.boot(net.id)))
    web_server = project.boot(net.id)
    group = project.conn.network.create_security_group(name="gn-web")  # egress rules only
    port = project.port_of(web_server.id)
    project.admin.network.update_port(port, security_groups=[group.id])
    web = guests(bind_to_bridge_host(project, web_server))
    ip_client, ip_web = client.dhcp()["ip"], web.dhcp()["ip"]
    host_agent.reconcile()  # the rules are applied in the background; be sure they are
    assert not client.ping(ip_web)  # no ingress rule: dropped
    # the client's default group admits its members only; web left it
    assert not web.ping(ip_client)
    rule = project.conn.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv4",
        protocol="icmp", remote_ip_prefix=sub.cidr)
    host_agent.reconcile()
    assert client.ping(ip_web)  # and the reply passes the client's ingress (conntrack)
    project.conn.network.delete_security_group_rule(rule)
    host_agent.reconcile()
    assert not client.ping(ip_web)


def test_delete_leaves_nothing(project, host_agent, guests):
    from pocketstack.network.agent import plumbing

    net, _ = project.network("10.40.4.0/24")
    server = project.boot(net.id)
    guest = guests(bind_to_bridge_host(project, server))
    guest.dhcp()
    pid = plumbing.dnsmasq_pid(net.id)
    assert pid is not None
    guest.remove()  # libvirt removes the tap with the domain
    project.conn.compute.delete_server(server)
    project.conn.compute.wait_for_delete(server, interval=0.05, wait=30)
    project.conn.network.delete_network(net)
    host_agent.reconcile()
    assert f"qdhcp-{net.id}" not in namespaces()
    assert "brq" + net.id[:11] not in links()
    assert not processes.running(pid)  # dnsmasq stopped (PID 1 may not have reaped it yet)
    from pocketstack.network import dhcp

    assert dhcp.wait(10) and not os.path.exists(dhcp.network_dir(net.id))  # no DHCP entry
    table = sh("nft", "list", "table", "inet", NFT_TABLE, check=False).stdout
    assert net.id[:11] not in table


def test_restart_reconciles_what_changed_meanwhile(project, host_agent, guests):
    """A cloud that was down: a network deleted meanwhile loses its bridge and namespace,
    a dnsmasq that died runs again, and metadata is served again."""
    import signal

    from pocketstack.network.agent import plumbing

    kept, _ = project.network("10.40.5.0/24")
    gone, _ = project.network("10.40.6.0/24")
    kept_server = project.boot(kept.id)
    kept_guest = guests(bind_to_bridge_host(project, kept_server))
    gone_server = project.boot(gone.id)
    bind_to_bridge_host(project, gone_server)
    host_agent.stop()
    try:
        os.kill(plumbing.dnsmasq_pid(kept.id), signal.SIGKILL)
        project.conn.compute.delete_server(gone_server)
        project.conn.compute.wait_for_delete(gone_server, interval=0.05, wait=30)
        project.conn.network.delete_network(gone)
        assert f"qdhcp-{gone.id}" in namespaces()  # nobody was there to remove it
    finally:
        host_agent.start()
    assert f"qdhcp-{gone.id}" not in namespaces() and "brq" + gone.id[:11] not in links()
    assert plumbing.dnsmasq_pid(kept.id) is not None
    lease = kept_guest.dhcp()
    assert json.loads(kept_guest.fetch("/openstack/latest/meta_data.json"))["uuid"] == \
        kept_server.id
    assert lease["ip"] == project.port_of(kept_server.id).fixed_ips[0]["ip_address"]


def host_address() -> str | None:
    """An IPv4 address of this host's root namespace (not one of the guest bridges)."""
    for link in json.loads(sh("ip", "-j", "-4", "addr", "show", "scope", "global").stdout):
        if not link["ifname"].startswith("brq") and link.get("addr_info"):
            return link["addr_info"][0]["local"]
    return None


def test_guest_cannot_spoof_nor_reach_the_host(project, host_agent, guests):
    net, _ = project.network("10.40.7.0/24")
    guest = guests(bind_to_bridge_host(project, project.boot(net.id)))
    guest.dhcp()
    host_agent.reconcile()
    dhcp_port = next(project.admin.network.ports(network_id=net.id,
                                                 device_owner="network:dhcp"))
    dhcp_ip = dhcp_port.fixed_ips[0]["ip_address"]
    assert guest.ping(dhcp_ip)
    # an address that is not the port's: dropped as it enters the bridge
    guest.run("ip", "addr", "add", "10.40.7.99/32", "dev", "eth0")
    assert guest.run("busybox", "ping", "-c", "1", "-W", "2", "-I", "10.40.7.99", dhcp_ip,
                     check=False).returncode != 0
    # the host itself, even when the guest routes to it on-link through the bridge
    address = host_address()
    if address is not None:
        guest.run("ip", "route", "add", address, "dev", "eth0")
        assert not guest.ping(address)
        assert guest.run("busybox", "arping", "-c", "1", "-w", "2", "-I", "eth0", address,
                         check=False).returncode != 0


def test_a_new_subnet_is_served_too(project, host_agent, guests):
    """A subnet added to a plumbed network: the DHCP port's new address appears in the
    namespace and dnsmasq serves the new range (restarted with it)."""
    from pocketstack.network.agent import plumbing

    net, first = project.network("10.40.10.0/24")
    guest = guests(bind_to_bridge_host(project, project.boot(net.id)))
    old_pid = plumbing.dnsmasq_pid(net.id)
    second = project.conn.network.create_subnet(network_id=net.id, ip_version=4,
                                                cidr="10.40.11.0/24", name="gn-second")
    host_agent.reconcile()
    dhcp_port = next(project.admin.network.ports(network_id=net.id,
                                                 device_owner="network:dhcp"))
    wanted = {ip["ip_address"] for ip in dhcp_port.fixed_ips}
    assert len(wanted) == 2
    shown = json.loads(sh("ip", "-n", f"qdhcp-{net.id}", "-j", "addr", "show").stdout)
    have = {a["local"] for link in shown for a in link.get("addr_info", [])}
    assert wanted <= have
    pid = plumbing.dnsmasq_pid(net.id)
    assert pid is not None and pid != old_pid
    with open(f"/proc/{pid}/cmdline") as f:
        cmdline = f.read()
    assert f"subnet-{first.id}" in cmdline and f"subnet-{second.id}" in cmdline
    assert guest.dhcp()["ip"] == project.port_of(
        guest.port.device_id).fixed_ips[0]["ip_address"]


def test_port_created_bound_is_plumbed_before_the_answer(project, host_agent):
    """A port created with binding:host_id (no update): same guarantee as a bind."""
    net, _ = project.network("10.40.12.0/24")
    port = project.admin.network.create_port(
        network_id=net.id, device_owner="compute:nova", device_id=str(uuid.uuid4()),
        binding_host_id=BRIDGE_HOST, project_id=project.user["project_id"])
    try:
        assert port.binding_vif_type == "bridge" and port.status == "ACTIVE"
        assert "brq" + net.id[:11] in links() and f"qdhcp-{net.id}" in namespaces()
    finally:
        project.admin.network.delete_port(port)


def test_a_port_or_network_set_down_passes_no_frame(project, host_agent, guests):
    """admin_state_up false, as neutron's agent takes the tap down: nothing in or out,
    port security or not; set up again, the guest is back."""
    net, _ = project.network("10.40.13.0/24")
    one = guests(bind_to_bridge_host(project, project.boot(net.id)))
    two = guests(bind_to_bridge_host(project, project.boot(net.id)))
    ip_one, ip_two = one.dhcp()["ip"], two.dhcp()["ip"]
    assert one.ping(ip_two)
    admin = project.admin.network
    admin.update_port(two.port.id, admin_state_up=False, port_security_enabled=False,
                      security_group_ids=[])
    host_agent.reconcile()
    assert admin.get_port(two.port.id).status == "DOWN"
    assert not one.ping(ip_two) and not two.ping(ip_one)
    admin.update_port(two.port.id, admin_state_up=True)
    host_agent.reconcile()
    # (two is in no group now: one's default group still keeps two's own pings out)
    assert one.ping(ip_two) and not two.ping(ip_one)
    admin.update_network(net.id, admin_state_up=False)
    host_agent.reconcile()
    assert not one.ping(ip_two) and not two.ping(ip_one)
    admin.update_network(net.id, admin_state_up=True)
    host_agent.reconcile()
    assert one.ping(ip_two)


def test_a_flat_network_no_interface_maps_fails_the_binding_and_the_boot(project,
                                                                         host_agent):
    """As ML2 with the Linux bridge agent: a port of a flat network whose physical
    network the host's agent maps to no interface ([network] physical_interface_mappings)
    is bound as binding_failed, nothing is plumbed for it, and a boot there fails with
    nova's "Binding failed for port" instead of a guest on an island."""
    from pocketstack.common import config

    admin = project.admin.network
    net = admin.create_network(name=unique("gn-flat"), provider_network_type="flat",
                               provider_physical_network="gn-nowhere", shared=True)
    try:
        admin.create_subnet(network_id=net.id, ip_version=4, cidr="10.40.14.0/24")
        port = admin.create_port(
            network_id=net.id, device_owner="compute:nova", device_id=str(uuid.uuid4()),
            binding_host_id=BRIDGE_HOST)
        assert port.binding_vif_type == "binding_failed" and port.status == "DOWN"
        assert port.binding_vif_details == {}
        assert "brq" + net.id[:11] not in links()
        admin.delete_port(port)
        # a compute host whose ports go to bridges: the build fails on the binding
        host = "cmp-1"
        config.CONF.set_override("bridge_hosts", [BRIDGE_HOST, host], group="network")
        try:
            server = project.admin.compute.create_server(
                name=unique("gn-vm"), image_id=project.image_id, flavor_id="42",
                networks=[{"uuid": net.id}], availability_zone=f"nova:{host}")
            server = project.admin.compute.wait_for_server(server, status="ERROR",
                                                           interval=0.05, wait=60)
        finally:
            config.CONF.set_override("bridge_hosts", [BRIDGE_HOST], group="network")
        assert "Binding failed for port" in server.fault["message"], server.fault
        project.admin.compute.delete_server(server)
        project.admin.compute.wait_for_delete(server, interval=0.05, wait=60)
    finally:
        admin.delete_network(net)


def test_guests_resolve_each_others_dns_name_through_the_dhcp_server(project, host_agent,
                                                                      guests):
    """Internal DNS (neutron's dns-integration with dnsmasq): a port's dns_name under its
    network's dns_domain is answered by the dnsmasq of the network's DHCP namespace, to
    another guest asking that server (its DNS server by DHCP), by full and by short name;
    a renamed port answers under its new name only, and a domain change follows."""
    from helpers.cloud import wait_for
    from pocketstack.network.agent import plumbing

    domain = f"{unique('gn')}.example.org"
    conn = project.conn
    net = conn.network.create_network(name=unique("net"), dns_domain=domain + ".")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.40.20.0/24",
                               name=unique("sub"))
    web = bind_to_bridge_host(project, project.boot(net.id))
    web = project.admin.network.update_port(web, dns_name="web1")
    asker = guests(bind_to_bridge_host(project, project.boot(net.id)))
    asker.dhcp()
    dhcp_ip = next(project.admin.network.ports(
        network_id=net.id, device_owner="network:dhcp")).fixed_ips[0]["ip_address"]
    web_ip = web.fixed_ips[0]["ip_address"]

    def answer(name: str) -> str:
        return asker.run("busybox", "nslookup", name, dhcp_ip, check=False).stdout

    wait_for(lambda: web_ip in answer(f"web1.{domain}"), 20, "web1's name answered")
    assert web_ip in answer("web1")
    with open(f"/proc/{plumbing.dnsmasq_pid(net.id)}/cmdline") as f:
        assert f"--domain={domain}" in f.read().split("\0")

    project.admin.network.update_port(web, dns_name="web2")
    wait_for(lambda: web_ip in answer(f"web2.{domain}"), 20, "web2's name answered")
    assert web_ip not in answer(f"web1.{domain}")

    other = f"{unique('gn')}.example.net"
    conn.network.update_network(net, dns_domain=other + ".")
    host_agent.reconcile()
    wait_for(lambda: web_ip in answer(f"web2.{other}"), 20, "the new domain answered")
    assert web_ip not in answer(f"web2.{domain}")
