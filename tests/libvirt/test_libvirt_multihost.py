"""Real QEMU guests on two compute hosts of one machine: a controller cloud (RPC
over unix sockets), two compute hosts and a network node, each host a network namespace
with its own underlay address on a test switch (tests/helpers/overlay_hosts.py). Each compute
host runs its network agent inside its namespace and its compute agent (`pocketstack
service compute`, libvirt driver, the machine's libvirtd) with ``[libvirt] host_netns``:
libvirtd makes the guests' taps outside, the driver moves them onto the host's bridges.

The guest on host A, from its own user data: leases its address from dnsmasq on the
network node over VXLAN, pings the guest on host B and its router, reads its own
metadata from 169.254.169.254 (which DHCP routes to the router: the router's metadata
proxy on the network node answers), and reaches an "outside" namespace through SNAT
(the outside sees the router's address). The outside
reaches guest B on its floating IP once B's security group lets ICMP in. Deleting the
guests leaves no tap on either host.
"""
from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import uuid

import pytest

from libvirt_helpers import real_guests_missing
from helpers.overlay_hosts import (Outside, fabric_cloud, floating_ip_opened_by_its_group,
                                   routed_network, router_plugged, vteps, wait)

TOOLS = ("ip", "bridge", "nft", "busybox", "dnsmasq")
BOOT_TIMEOUT = 180.0  # two guests under QEMU's software emulation on a loaded machine


SKIP = real_guests_missing(TOOLS)
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")


def _console(admin, server_id) -> str:
    return admin.compute.get_server_console_output(server_id)["output"]


def _tiny_image(cloud) -> str:
    name = f"ovq-tiny-{uuid.uuid4().hex[:6]}"
    exe = os.path.join(os.path.dirname(sys.executable), "pocketstack")
    proc = subprocess.run([exe, "image", "tiny", "--data-dir", cloud.data_dir, "--name", name],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return cloud.sdk().image.find_image(name).id


def test_real_guests_on_two_hosts_meet_over_vxlan_and_reach_the_outside():
    from pocketstack.common import config

    with fabric_cloud() as (cloud, hosts):
        admin = cloud.sdk()
        tag = hosts.tag
        host_a, host_b, node = (hosts.add_host(f"{tag}-{x}") for x in ("a", "b", "net"))
        config.CONF.set_override("dhcp_agent_host", node.name, group="network")
        try:
            _flow(cloud, admin, hosts, host_a, host_b, node)
        finally:
            config.CONF.clear_override("dhcp_agent_host", group="network")


def _flow(cloud, admin, hosts, host_a, host_b, node):
    tag = hosts.tag
    image_id = _tiny_image(cloud)
    node.reach_metadata(cloud)
    for host in (host_a, host_b, node):
        host.start()
    for host in (host_a, host_b):
        host.start_compute(cloud)
    names = {h.name for h in (host_a, host_b, node)}
    wait(lambda: all(h.alive() for h in (host_a, host_b, node)) and
         len(vteps(admin, names)) == 3, 60, "the three network agents")
    wait(lambda: {h.name for h in admin.compute.hypervisors()} >=
         {host_a.name, host_b.name}, 60, "the two libvirt compute hosts")

    external, net, subnet, router = routed_network(admin, tag, "10.95.0.0/24")
    port_a, port_b = (admin.network.create_port(network_id=net.id) for _ in "ab")
    address_a, address_b = (p.fixed_ips[0]["ip_address"] for p in (port_a, port_b))

    # A waits for B to answer, then reports B, its router and what the outside saw
    script = (
        "#!/bin/sh\n"
        f"for i in $(seq 90); do ping -c 1 -W 1 {address_b} >/dev/null && break; done\n"
        f"ping -c 3 -W 2 {address_b} >/tmp/p && echo PING-B-OK || echo PING-B-FAILED\n"
        "grep round-trip /tmp/p\n"
        f"ping -c 1 -W 2 {subnet.gateway_ip} >/dev/null && echo PING-ROUTER-OK "
        "|| echo PING-ROUTER-FAILED\n"
        # the outside and the router's SNAT may still be coming up: ask until it answers
        "for i in $(seq 60); do seen=$(printf 'GET / HTTP/1.0\\r\\n\\r\\n' "
        "| nc -w 2 198.51.100.1 8080 | tail -n 1); [ -n \"$seen\" ] && break; sleep 1; done\n"
        "echo \"OUTSIDE-SAW $seen\"\n"
        # the metadata service, through the router on the network node
        "for i in $(seq 30); do md=$(printf 'GET /openstack/latest/meta_data.json "
        "HTTP/1.0\\r\\n\\r\\n' | nc -w 5 169.254.169.254 80 "
        "| grep -o '\"uuid\": *\"[^\"]*\"'); [ -n \"$md\" ] && break; sleep 1; done\n"
        "echo \"METADATA $md\"\n")
    servers = []
    try:
        for host, port, user_data in ((host_b, port_b, None), (host_a, port_a, script)):
            extra = {"user_data": base64.b64encode(user_data.encode()).decode()} \
                if user_data else {}
            servers.append(admin.compute.create_server(
                name=f"{tag}-{host.name[-1]}", image_id=image_id, flavor_id="42",
                networks=[{"port": port.id}], availability_zone=f"nova:{host.name}",
                config_drive=True, **extra))
        server_b, server_a = servers
        # the router goes to the network node with the network's first bound port; the
        # outside must be there before A's user data asks it
        wait(lambda: router_plugged(node, router.id, external.id), 60,
             "the router's gateway on the network node")
        outside = Outside(node, external.id, "198.51.100.1/24")
        gateway_ip = admin.network.get_router(router.id).external_gateway_info[
            "external_fixed_ips"][0]["ip_address"]
        for server, host, port in ((server_a, host_a, port_a), (server_b, host_b, port_b)):
            active = admin.compute.wait_for_server(server, interval=0.5, wait=BOOT_TIMEOUT)
            assert active.hypervisor_hostname == host.name
            tap = "tap" + port.id[:11]
            links = host.links()  # the tap is on its bridge in the host's namespace
            assert links[tap]["master"] == "brq" + net.id[:11], links[tap]
            assert not os.path.exists(f"/sys/class/net/{tap}")  # not the machine's
        log_b = wait(lambda: (lambda out: out if "leased" in out else None)(
            _console(admin, server_b.id)), BOOT_TIMEOUT, "guest B's lease")
        assert f"eth0 leased {address_b}/24" in log_b, log_b
        log_a = wait(lambda: (lambda out: out if "METADATA" in out else None)(
            _console(admin, server_a.id)), BOOT_TIMEOUT, "guest A's user data")
        assert f"eth0 leased {address_a}/24" in log_a, log_a  # DHCP from the network node
        assert "PING-B-OK" in log_a, log_a                     # across hosts, over VXLAN
        assert "PING-ROUTER-OK" in log_a, log_a
        assert f"OUTSIDE-SAW {gateway_ip}" in log_a, log_a     # SNAT on the network node
        # its own metadata, from the router's proxy on the network node
        assert re.search(rf'METADATA "uuid": *"{server_a.id}"', log_a), log_a
        rtt = re.search(r"round-trip min/avg/max = [\d.]+/([\d.]+)/", log_a)
        print(f"cross-host guest ping, avg rtt {rtt and rtt.group(1)} ms")

        floating_ip_opened_by_its_group(admin, node, outside, router.id, external.id, port_b)
    finally:
        for server in servers:
            admin.compute.delete_server(server, ignore_missing=True)
        for server in servers:
            admin.compute.wait_for_delete(server, interval=0.5, wait=120)
    for host, port in ((host_a, port_a), (host_b, port_b)):
        assert "tap" + port.id[:11] not in host.links()
