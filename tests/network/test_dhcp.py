"""The DHCP agent's files (seed 001): host, addn_hosts, opts and leases, in dnsmasq's
formats, rewritten atomically whenever ports change."""
from __future__ import annotations

import re
import time

from network_helpers import dhcp_files, unique


def _expected_host(entries):
    return "".join(f"{mac},host-{ip.replace('.', '-')}.openstacklocal,{ip}\n"
                   for mac, ip in entries)


def _expected_addn(ips):
    return "".join(f"{ip}\thost-{ip.replace('.', '-').replace(':', '-')}.openstacklocal "
                   f"host-{ip.replace('.', '-').replace(':', '-')}\n" for ip in ips)


def test_files_follow_ports(cloud, member_conn):
    network = member_conn.network.create_network(name=unique("dhcp"))
    assert dhcp_files(cloud, network.id) is None  # no DHCP subnet yet
    subnet = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                               cidr="1.1.1.0/24", gateway_ip="1.1.1.254",
                                               dns_nameservers=["8.8.8.8"])
    dhcp_port = next(iter(member_conn.network.ports(network_id=network.id)))
    assert dhcp_port.device_owner == "network:dhcp"
    assert dhcp_port.fixed_ips == [{"subnet_id": subnet.id, "ip_address": "1.1.1.1"}]
    p2 = member_conn.network.create_port(network_id=network.id,
                                         fixed_ips=[{"ip_address": "1.1.1.2"}])
    p10 = member_conn.network.create_port(network_id=network.id,
                                          fixed_ips=[{"ip_address": "1.1.1.10"}])
    files = dhcp_files(cloud, network.id)
    entries = [(dhcp_port.mac_address, "1.1.1.1"), (p2.mac_address, "1.1.1.2"),
               (p10.mac_address, "1.1.1.10")]
    assert files["host"] == _expected_host(entries)
    assert files["addn_hosts"] == _expected_addn(["1.1.1.1", "1.1.1.2", "1.1.1.10"])
    assert files["opts"] == (f"tag:subnet-{subnet.id},option:dns-server,8.8.8.8\n"
                             f"tag:subnet-{subnet.id},option:router,1.1.1.254")
    leases = files["leases"].splitlines()
    assert [line.split()[1:] for line in leases] == [
        [mac, ip, f"host-{ip.replace('.', '-')}", "*"] for mac, ip in entries]
    expiry = int(leases[0].split()[0])
    assert time.time() + 86000 < expiry < time.time() + 86500

    # update: a new address replaces the old line
    p2 = member_conn.network.update_port(p2, fixed_ips=[{"ip_address": "1.1.1.3"}])
    files = dhcp_files(cloud, network.id)
    assert f"{p2.mac_address},host-1-1-1-3.openstacklocal,1.1.1.3\n" in files["host"]
    assert "1.1.1.2" not in files["host"] + files["addn_hosts"] + files["leases"]
    # a new MAC is written too
    p10 = member_conn.network.update_port(p10, mac_address="fa:16:3e:3c:a3:3e")
    assert "fa:16:3e:3c:a3:3e,host-1-1-1-10.openstacklocal,1.1.1.10\n" in \
        dhcp_files(cloud, network.id)["host"]
    # delete
    member_conn.network.delete_port(p10)
    files = dhcp_files(cloud, network.id)
    assert "1.1.1.10" not in files["host"] + files["addn_hosts"] + files["leases"]
    assert files["host"] == _expected_host([(dhcp_port.mac_address, "1.1.1.1"),
                                            (p2.mac_address, "1.1.1.3")])
    # no DHCP subnet left: the DHCP port and the files go away
    member_conn.network.delete_port(p2)
    member_conn.network.update_subnet(subnet, is_dhcp_enabled=False)
    assert dhcp_files(cloud, network.id) is None
    assert list(member_conn.network.ports(network_id=network.id)) == []
    member_conn.network.update_subnet(subnet, is_dhcp_enabled=True)
    assert dhcp_files(cloud, network.id)["host"].count("\n") == 1
    member_conn.network.delete_network(network)
    assert dhcp_files(cloud, network.id) is None


def test_ipv6_entries(cloud, member_conn):
    network = member_conn.network.create_network(name=unique("dhcp6"))
    v4 = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                           cidr="10.0.0.0/26")
    slaac = member_conn.network.create_subnet(
        network_id=network.id, ip_version=6, cidr="fd3c:90a1:3f1f::/64",
        ipv6_ra_mode="slaac", ipv6_address_mode="slaac")
    stateful = member_conn.network.create_subnet(
        network_id=network.id, ip_version=6, cidr="fd00:1::/64",
        ipv6_ra_mode="dhcpv6-stateful", ipv6_address_mode="dhcpv6-stateful",
        dns_nameservers=["fd00:1::53"])
    port = member_conn.network.create_port(network_id=network.id,
                                           mac_address="fa:16:3e:0b:77:66")
    addresses = {ip["subnet_id"]: ip["ip_address"] for ip in port.fixed_ips}
    assert addresses[slaac.id] == "fd3c:90a1:3f1f:0:f816:3eff:fe0b:7766"
    files = dhcp_files(cloud, network.id)
    v4_ip, v6_ip = addresses[v4.id], addresses[stateful.id]
    host_lines = files["host"].splitlines()
    assert f"fa:16:3e:0b:77:66,host-{v4_ip.replace('.', '-')}.openstacklocal,{v4_ip}" \
        in host_lines
    assert f"fa:16:3e:0b:77:66,host-{v6_ip.replace(':', '-')}.openstacklocal,[{v6_ip}]" \
        in host_lines
    # SLAAC addresses are not handed out by DHCP, but are in DNS
    assert "f816:3eff:fe0b:7766" not in files["host"]
    name = "host-fd3c-90a1-3f1f-0-f816-3eff-fe0b-7766"
    assert (f"fd3c:90a1:3f1f:0:f816:3eff:fe0b:7766\t{name}.openstacklocal {name}"
            in files["addn_hosts"].splitlines())
    assert all("." in line.split()[2] for line in files["leases"].splitlines())  # IPv4 only
    opts = files["opts"].splitlines()
    assert f"tag:subnet-{stateful.id},option6:dns-server,[fd00:1::53]" in opts
    assert f"tag:subnet-{stateful.id},option6:domain-search,openstacklocal" in opts
    assert not any(slaac.id in line for line in opts)
    # every line of every file has the documented shape
    assert all(re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2},host-[0-9a-f-]+\.openstacklocal,"
                            r"(\d+\.\d+\.\d+\.\d+|\[[0-9a-f:]+\])", line)
               for line in host_lines)


def test_router_interface_adds_metadata_route(cloud, member_conn):
    network = member_conn.network.create_network(name=unique("dhcp-r"))
    subnet = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                               cidr="10.1.0.0/24")
    router = member_conn.network.create_router(name=unique("r"))
    member_conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    opts = dhcp_files(cloud, network.id)["opts"].splitlines()
    assert (f"tag:subnet-{subnet.id},option:classless-static-route,"
            "169.254.169.254/32,10.1.0.1,0.0.0.0/0,10.1.0.1") in opts
    assert f"tag:subnet-{subnet.id},249,169.254.169.254/32,10.1.0.1,0.0.0.0/0,10.1.0.1" \
        in opts
    assert opts[-1] == f"tag:subnet-{subnet.id},option:router,10.1.0.1"
    member_conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
    assert dhcp_files(cloud, network.id)["opts"] == \
        f"tag:subnet-{subnet.id},option:router,10.1.0.1"
