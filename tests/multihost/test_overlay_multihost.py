"""The overlay between hosts, on one machine: a controller cloud (RPC over unix
sockets) and three "compute hosts", each a network namespace with its own underlay
address on a test switch, running `pocketstack service network-agent` inside with
``[network] local_ip``. Guests are stand-ins (a namespace with the port's MAC and
address on a veth named as libvirt's tap). Real processes, real kernel VXLAN.

Checks: the agents report their VTEPs; a vxlan network's bridge on each host with a port
gets ``vxlan-<vni>`` (local_ip, port 4789, no learning, MTU 1450); guest A pings guest
B; hostA's forwarding database has B's MAC -> hostB and floods to hostB only (hostC
runs an agent but has no port on the network); a restarted agent removes what it no
longer wants; deleting port B removes its entries and hostB's device; deleting the
network leaves no device anywhere. Everything lives in namespaces removed at the end.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import uuid

import pytest

from helpers.overlay_hosts import (PHYSNET, PHYSNET_IFACE, Guest, Outside, fabric_cloud,
                                   floating_ip_opened_by_its_group, routed_network, router_plugged,
                                   sh, vteps, wait)

FLOOD = "00:00:00:00:00:00"
TOOLS = ("ip", "bridge", "nft", "busybox", "dnsmasq")
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in TOOLS),
    reason=f"needs root and {', '.join(TOOLS)}")


@pytest.fixture
def fabric():
    with fabric_cloud() as made:
        yield made


def test_vxlan_overlay_between_hosts(fabric):
    cloud, hosts = fabric
    admin = cloud.sdk()
    tag = hosts.tag
    host_a, host_b, host_c = (hosts.add_host(f"{tag}-{x}") for x in "abc")
    for host in (host_a, host_b, host_c):
        host.start()
    names = {h.name: h for h in (host_a, host_b, host_c)}
    wait(lambda: all(h.alive() for h in names.values()) and
         vteps(admin, names) == {n: h.address for n, h in names.items()}, 60,
         "the three agents to report their VTEPs")
    agent = next(iter(admin.network.agents(host=host_a.name)))
    assert agent.configuration["l2_population"] is True
    assert agent.configuration["tunnel_types"] == ["vxlan"]

    network = admin.network.create_network(name=f"{tag}-net", provider_network_type="vxlan")
    vni = network.provider_segmentation_id
    assert network.provider_network_type == "vxlan" and vni and network.mtu == 1450
    admin.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.98.0.0/24",
                                enable_dhcp=False)
    dev, bridge = f"vxlan-{vni}", "brq" + network.id[:11]
    port_a = admin.network.create_port(network_id=network.id, binding_host_id=host_a.name)
    port_b = admin.network.create_port(network_id=network.id, binding_host_id=host_b.name)
    assert port_a.binding_vif_type == port_b.binding_vif_type == "bridge", (
        port_a.binding_vif_type, port_b.binding_vif_type, list(admin.network.agents()))

    # the device on each host with a port, on the network's bridge, before the API answered
    for host in (host_a, host_b):
        link = host.links()[dev]
        info = link["linkinfo"]["info_data"]
        assert (info["id"], info["local"], info["port"], info["learning"]) == (
            vni, host.address, 4789, False)
        assert link["master"] == bridge and link["mtu"] == 1450
    assert dev not in host_c.links()  # no port there: no bridge, no device

    # l2population: A floods to B only, and knows B's port is behind B (and vice versa)
    wait(lambda: host_a.fdb(dev) == {(FLOOD, host_b.address),
                                     (port_b.mac_address, host_b.address)}, 20,
         f"hostA's entries for hostB (have {host_a.fdb(dev)})")
    wait(lambda: host_b.fdb(dev) == {(FLOOD, host_a.address),
                                     (port_a.mac_address, host_a.address)}, 20,
         f"hostB's entries for hostA (have {host_b.fdb(dev)})")

    guest_a = Guest(host_a, port_a, 24, network.mtu)
    guest_b = Guest(host_b, port_b, 24, network.mtu)
    # the security groups (default: members may talk) reach both hosts in the background
    wait(lambda: guest_a.ping(guest_b.address).returncode == 0, 30, "A to ping B")
    assert guest_b.ping(guest_a.address).returncode == 0
    # the full overlay MTU passes without fragments (1450 - 28 bytes of IP and ICMP)
    big = sh("ip", "netns", "exec", guest_a.ns, "busybox", "ping", "-c", "1", "-W", "2",
             "-s", "1422", guest_b.address, check=False)
    assert big.returncode == 0, big.stdout + big.stderr

    # a restarted agent removes what a crash left and keeps what is wanted
    host_a.proc.send_signal(signal.SIGKILL)
    host_a.proc.wait(timeout=10)
    host_a.run("bridge", "fdb", "append", FLOOD, "dev", dev, "dst", "10.99.0.77")
    host_a.run("bridge", "fdb", "append", "fa:16:3e:77:77:77", "dev", dev, "dst",
               "10.99.0.77")
    host_a.run("ip", "link", "add", "vxlan-4242", "type", "vxlan", "id", "4242", "local",
               host_a.address, "dstport", "4789", "nolearning")
    host_a.start()
    wait(lambda: host_a.alive() and "vxlan-4242" not in host_a.links() and
         host_a.fdb(dev) == {(FLOOD, host_b.address), (port_b.mac_address, host_b.address)},
         60, "the restarted agent to remove the stale device and entries")
    wait(lambda: guest_a.ping(guest_b.address).returncode == 0, 30, "A to ping B again")

    # port B goes: A forgets it and floods nowhere; hostB drops the network
    admin.network.delete_port(port_b)
    wait(lambda: host_a.fdb(dev) == set(), 20,
         f"hostA to drop hostB's entries (have {host_a.fdb(dev)})")
    wait(lambda: dev not in host_b.links() and bridge not in host_b.links(), 20,
         "hostB to remove the network's bridge and device")

    # the network goes: no device, no bridge on any host
    admin.network.delete_port(port_a)
    admin.network.delete_network(network)
    wait(lambda: all(dev not in h.links() and bridge not in h.links()
                     for h in (host_a, host_b, host_c)), 20,
         "every host to remove the network's device")
    for host in (host_a, host_b, host_c):
        host.alive()


def test_network_node_on_another_host_serves_dhcp_and_routes(fabric):
    """The network node is a host of its own (``[network] dhcp_agent_host``): its agent,
    another process without the database, gets the DHCP files over RPC and runs dnsmasq
    and the router there. Guests on two compute hosts lease their addresses from it over
    VXLAN, reach each other and their router, read their own servers' metadata through
    the router's metadata proxy there, reach the outside through SNAT, and are reached on
    a floating IP once their security group allows it."""
    from pocketstack.common import config

    cloud, hosts = fabric
    admin = cloud.sdk()
    tag = hosts.tag
    host_a, host_b, node = (hosts.add_host(f"{tag}-{x}") for x in ("a", "b", "net"))
    node.reach_metadata(cloud)
    config.CONF.set_override("dhcp_agent_host", node.name, group="network")
    try:
        for host in (host_a, host_b, node):
            host.start()
        names = {h.name for h in (host_a, host_b, node)}
        wait(lambda: all(h.alive() for h in (host_a, host_b, node)) and
             len(vteps(admin, names)) == 3, 60, "the three agents")
        external, net, subnet, router = routed_network(admin, tag, "10.97.0.0/24")
        port_a, port_b = (admin.network.create_port(network_id=net.id,
                                                    binding_host_id=h.name)
                          for h in (host_a, host_b))
        # DHCP: dnsmasq on the network node, the files fetched over RPC after each bind
        wait(lambda: any(f"qdhcp-{net.id}" == n for n in sh(
            "ip", "netns", "list").stdout.split()), 30, "the network node's DHCP namespace")
        guest_a = Guest(host_a, port_a, 24, net.mtu, static=False)
        guest_b = Guest(host_b, port_b, 24, net.mtu, static=False)
        for guest, port in ((guest_a, port_a), (guest_b, port_b)):
            lease = guest.dhcp()
            assert lease["ip"] == port.fixed_ips[0]["ip_address"], lease
            assert lease["router"] == subnet.gateway_ip
        wait(lambda: guest_a.ping(guest_b.address).returncode == 0, 30, "A to ping B")
        # the router on the network node, reached over VXLAN from both compute hosts
        for guest in (guest_a, guest_b):
            wait(lambda: guest.ping(subnet.gateway_ip).returncode == 0, 30,
                 "a guest to ping its router")
        wait(lambda: router_plugged(node, router.id, external.id), 30,
             "the router's gateway on the network node")
        _metadata_through_the_router(admin, tag, subnet, (guest_a, port_a),
                                     (guest_b, port_b))
        outside = Outside(node, external.id, "198.51.100.1/24")
        gateway_ip = admin.network.get_router(router.id).external_gateway_info[
            "external_fixed_ips"][0]["ip_address"]
        seen = wait(lambda: guest_a.fetch("http://198.51.100.1:8080/").stdout.strip(), 30,
                    "guest A to reach the outside")
        assert seen == gateway_ip  # SNAT to the router's gateway address

        fip = floating_ip_opened_by_its_group(admin, node, outside, router.id, external.id,
                                              port_b)
        admin.network.delete_ip(fip)
        admin.network.remove_interface_from_router(router, subnet_id=subnet.id)
        admin.network.delete_router(router)
        wait(lambda: f"qrouter-{router.id}" not in sh("ip", "netns", "list").stdout, 30,
             "the router's namespace to go")
    finally:
        config.CONF.clear_override("dhcp_agent_host", group="network")


def _metadata_through_the_router(admin, tag, subnet, *guests):
    """Each stand-in guest's port becomes a server's (booted on a simulated host); the
    guest reads that server's metadata from 169.254.169.254, which its lease routes to
    the router on the network node."""
    image = admin.image.create_image(name=f"{tag}-img", disk_format="raw",
                                     container_format="bare", data=b"\0" * 1024)
    for guest, port in guests:
        server = admin.compute.wait_for_server(admin.compute.create_server(
            name=f"{tag}-{port.id[:6]}", image_id=image.id, flavor_id="42",
            networks="none"), interval=0.1, wait=60)
        admin.network.update_port(port, device_id=server.id, device_owner="compute:nova")
        assert f"169.254.169.254/32 {subnet.gateway_ip}" in guest.dhcp()["staticroutes"]
        url = "http://169.254.169.254/openstack/latest/meta_data.json"
        answer = wait(lambda: guest.fetch(url).stdout, 30,
                      "the guest's metadata through the network node's router")
        assert json.loads(answer)["uuid"] == server.id, answer


def _vlan_devices_work() -> bool:
    """Can this kernel make VLAN subinterfaces (8021q)? Tried in a namespace of its own."""
    ns = "ovprobe" + uuid.uuid4().hex[:6]
    try:
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "add", "va", "type", "veth", "peer", "name", "vb")
        return sh("ip", "-n", ns, "link", "add", "link", "va", "name", "va.5", "type", "vlan",
                  "id", "5", check=False).returncode == 0
    finally:
        sh("ip", "netns", "del", ns, check=False)


@pytest.mark.parametrize("kind", ["flat", "vlan"])
def test_provider_network_on_a_mapped_interface(fabric, kind):
    """[network] physical_interface_mappings = physnet1:ph0 on each host (a link to the
    test switch without an address): a flat network's bridge gets ph0 itself, a vlan
    network's ph0.<vid>, and guests on two hosts meet through the switch; deleting the
    network deletes the subinterface and frees ph0."""
    if kind == "vlan" and not _vlan_devices_work():
        pytest.skip("this kernel has no VLAN devices (8021q)")
    cloud, hosts = fabric
    admin = cloud.sdk()
    host_a, host_b = (hosts.add_host(f"{hosts.tag}-{x}") for x in "ab")
    for host in (host_a, host_b):
        host.start()
    wait(lambda: host_a.alive() and host_b.alive() and len(vteps(admin, {
        host_a.name, host_b.name})) == 2, 60, "both agents")
    agent = next(iter(admin.network.agents(host=host_a.name)))
    assert agent.configuration["interface_mappings"] == {PHYSNET: PHYSNET_IFACE}

    extra = {"provider_segmentation_id": 101} if kind == "vlan" else {}
    net = admin.network.create_network(name=f"{hosts.tag}-{kind}",
                                       provider_network_type=kind,
                                       provider_physical_network=PHYSNET, **extra)
    admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.96.1.0/24",
                                enable_dhcp=False)
    port_a, port_b = (admin.network.create_port(network_id=net.id, binding_host_id=h.name)
                      for h in (host_a, host_b))
    uplink = f"{PHYSNET_IFACE}.101" if kind == "vlan" else PHYSNET_IFACE
    for host in (host_a, host_b):
        links = host.links()
        assert links[uplink].get("master") == "brq" + net.id[:11], links[uplink]
        if kind == "vlan":
            assert links[uplink]["linkinfo"]["info_data"]["id"] == 101
        assert not [name for name in links if name.startswith("vxlan-")]

    guest_a = Guest(host_a, port_a, 24, net.mtu)
    guest_b = Guest(host_b, port_b, 24, net.mtu)
    wait(lambda: guest_a.ping(guest_b.address).returncode == 0, 30,
         f"A to ping B on the {kind} network")

    for port in (port_a, port_b):
        admin.network.delete_port(port)
    admin.network.delete_network(net)
    wait(lambda: all(f"{PHYSNET_IFACE}.101" not in h.links() and
                     not h.links()[PHYSNET_IFACE].get("master") for h in (host_a, host_b)),
         20, "the hosts to free ph0 (and delete ph0.101)")
