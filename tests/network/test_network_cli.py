"""The network user flow with the real `openstack` CLI, as a project member."""
from __future__ import annotations

import ipaddress
import re

import pytest

pytestmark = pytest.mark.cli


def _eui64(prefix: str, mac: str) -> str:
    octets = bytes(int(x, 16) for x in mac.split(":"))
    iid = bytes([octets[0] ^ 2]) + octets[1:3] + b"\xff\xfe" + octets[3:]
    return str(ipaddress.ip_network(prefix)[int.from_bytes(iid, "big")])


def test_network_user_flow(cloud, member):
    def cli(*args):
        return cloud.cli(*args, "-f", "json", user=member)

    net = cli("network", "create", "private")
    assert net["status"] == "ACTIVE" and net["name"] == "private"
    v4 = cli("subnet", "create", "--network", "private", "--subnet-range", "10.0.0.0/26",
             "private-subnet")
    assert v4["gateway_ip"] == "10.0.0.1"
    assert v4["allocation_pools"] == [{"start": "10.0.0.2", "end": "10.0.0.62"}]
    v6 = cli("subnet", "create", "--network", "private", "--ip-version", "6",
             "--ipv6-ra-mode", "slaac", "--ipv6-address-mode", "slaac",
             "--subnet-range", "fd3c:90a1:3f1f::/64", "ipv6-private-subnet")
    assert v6["ipv6_address_mode"] == "slaac" and v6["cidr"] == "fd3c:90a1:3f1f::/64"
    port = cli("port", "create", "--network", "private", "p1")
    mac = port["mac_address"]
    assert re.fullmatch(r"fa:16:3e(:[0-9a-f]{2}){3}", mac)
    addresses = {ip["subnet_id"]: ip["ip_address"] for ip in port["fixed_ips"]}
    assert ipaddress.ip_address(addresses[v4["id"]]) in ipaddress.ip_network("10.0.0.0/26")
    assert addresses[v6["id"]] == _eui64("fd3c:90a1:3f1f::/64", mac)
    groups = cli("security", "group", "list")
    assert [g["Name"] for g in groups] == ["default"]
    rule = cli("security", "group", "rule", "create", "--protocol", "tcp", "--dst-port", "22",
               "default")
    assert (rule["protocol"], rule["port_range_min"], rule["port_range_max"]) == \
        ("tcp", 22, 22)
    listed = cli("port", "list", "--network", "private", "--long")
    by_name = {p["Name"]: p for p in listed}
    assert set(by_name) == {"p1", ""}  # ours and the DHCP port
    assert by_name["p1"]["MAC Address"] == mac
    assert by_name["p1"]["Security Groups"] == [groups[0]["ID"]]
    assert by_name[""]["Device Owner"] == "network:dhcp"
    duplicate = cloud.cli("security", "group", "rule", "create", "--protocol", "tcp",
                          "--dst-port", "22", "default", user=member, check=False)
    assert duplicate.returncode != 0 and "already exists" in duplicate.stderr
    cloud.cli("port", "delete", "p1", user=member)
    cloud.cli("network", "delete", "private", user=member)


def test_quota_show_and_set_for_the_network_part(cloud, member):
    project = member["project_id"]
    cloud.cli("quota", "set", "--networks", "7", "--ports", "42", project)
    shown = cloud.cli("quota", "show", "--network", project, "-f", "json")
    limits = {row["Resource"]: row["Limit"] for row in shown}
    assert (limits["networks"], limits["ports"], limits["subnets"]) == (7, 42, 100)
    cloud.cli("network", "create", "n", user=member)
    cloud.cli("quota", "set", "--networks", "1", project)
    refused = cloud.cli("network", "create", "n2", user=member, check=False)
    assert refused.returncode != 0 and "Quota exceeded" in refused.stderr
