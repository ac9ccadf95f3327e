"""Ports: MACs, fixed IPs from pools or as asked, SLAAC (EUI-64) addresses, IPAM conflicts,
release on delete, project isolation, port security, binding and status."""
from __future__ import annotations

import ipaddress
import re

import pytest
from network_helpers import Raw, unique

MAC = re.compile(r"^fa:16:3e(:[0-9a-f]{2}){3}$")


@pytest.fixture
def net(member_conn):
    network = member_conn.network.create_network(name=unique("ports"))
    v4 = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                           cidr="10.0.0.0/26", name="v4")
    v6 = member_conn.network.create_subnet(network_id=network.id, ip_version=6,
                                           cidr="fd3c:90a1:3f1f::/64", ipv6_ra_mode="slaac",
                                           ipv6_address_mode="slaac", name="v6")
    return network, v4, v6


def eui64(prefix: str, mac: str) -> str:
    octets = bytes(int(x, 16) for x in mac.split(":"))
    iid = bytes([octets[0] ^ 2]) + octets[1:3] + b"\xff\xfe" + octets[3:]
    return str(ipaddress.ip_network(prefix)[int.from_bytes(iid, "big")])


def test_port_gets_mac_ipv4_and_eui64(member_conn, net):
    network, v4, v6 = net
    port = member_conn.network.create_port(network_id=network.id, name="p1")
    assert MAC.match(port.mac_address)
    by_subnet = {ip["subnet_id"]: ip["ip_address"] for ip in port.fixed_ips}
    assert ipaddress.ip_address(by_subnet[v4.id]) in ipaddress.ip_network("10.0.0.0/26")
    assert by_subnet[v6.id] == eui64("fd3c:90a1:3f1f::/64", port.mac_address)
    assert port.status == "DOWN" and port.device_owner == ""
    assert len(port.security_group_ids) == 1
    default = member_conn.network.get_security_group(port.security_group_ids[0])
    assert default.name == "default"


def test_seed_eui64_address(member_conn, net):
    network, v4, v6 = net
    port = member_conn.network.create_port(network_id=network.id,
                                           mac_address="fa:16:3e:0b:77:66")
    assert {"subnet_id": v6.id, "ip_address": "fd3c:90a1:3f1f:0:f816:3eff:fe0b:7766"} \
        in port.fixed_ips


def test_fixed_ips_by_subnet_and_address(member_conn, net):
    network, v4, v6 = net
    by_address = member_conn.network.create_port(
        network_id=network.id, fixed_ips=[{"ip_address": "10.0.0.40"}])
    assert by_address.fixed_ips == [{"subnet_id": v4.id, "ip_address": "10.0.0.40"}]
    by_both = member_conn.network.create_port(
        network_id=network.id, fixed_ips=[{"subnet_id": v4.id, "ip_address": "10.0.0.41"}])
    assert by_both.fixed_ips[0]["ip_address"] == "10.0.0.41"
    by_subnet = member_conn.network.create_port(network_id=network.id,
                                                fixed_ips=[{"subnet_id": v4.id}])
    assert len(by_subnet.fixed_ips) == 1 and by_subnet.fixed_ips[0]["subnet_id"] == v4.id
    none = member_conn.network.create_port(network_id=network.id, fixed_ips=[])
    # As ML2, a port without an address still gets the default group
    assert none.fixed_ips == [] and len(none.security_group_ids) == 1


def test_fixed_ip_errors(member_raw, member_conn, net):
    network, v4, v6 = net
    member_conn.network.create_port(network_id=network.id, fixed_ips=[{"ip_address":
                                                                       "10.0.0.50"}])

    def post(fixed_ips):
        return member_raw.error("POST", "/ports", {"port": {"network_id": network.id,
                                                            "fixed_ips": fixed_ips}})

    status, fault = post([{"ip_address": "10.0.0.50"}])
    assert (status, fault["type"]) == (409, "IpAddressAlreadyAllocated")
    assert fault["message"] == f"IP address 10.0.0.50 already allocated in subnet {v4.id}"
    # Outside every subnet: neutron answers 400 (InvalidIpForNetwork/-Subnet), not 409.
    status, fault = post([{"ip_address": "192.168.1.5"}])
    assert (status, fault["type"]) == (400, "InvalidIpForNetwork")
    status, fault = post([{"subnet_id": v4.id, "ip_address": "10.0.0.200"}])
    assert (status, fault["type"]) == (400, "InvalidIpForSubnet")
    status, fault = post([{"subnet_id": v4.id, "ip_address": "10.0.0.0"}])
    assert (status, fault["type"]) == (400, "InvalidIpForSubnet")
    status, fault = post([{"subnet_id": v6.id, "ip_address": "fd3c:90a1:3f1f::99"}])
    assert status == 400 and "automatic addresses" in fault["message"]
    status, fault = post([{"ip_address": "not-an-ip"}])
    assert status == 400
    status, fault = post([{"subnet_id": "11111111-2222-3333-4444-555555555555"}])
    assert (status, fault["type"]) == (404, "SubnetNotFound")
    status, fault = post([{"ip_address": "10.0.0.51"}, {"ip_address": "10.0.0.51"}])
    assert status == 409
    status, fault = post([{}])
    assert status == 400
    status, fault = post("10.0.0.5")
    assert status == 400


def test_exhausted_pool_is_409_and_released_address_is_reused(member_conn, member_raw):
    network = member_conn.network.create_network(name=unique("small"))
    subnet = member_conn.network.create_subnet(
        network_id=network.id, ip_version=4, cidr="10.9.0.0/29", enable_dhcp=False,
        allocation_pools=[{"start": "10.9.0.2", "end": "10.9.0.4"}])
    ports = [member_conn.network.create_port(network_id=network.id) for _ in range(3)]
    addresses = sorted(p.fixed_ips[0]["ip_address"] for p in ports)
    assert addresses == ["10.9.0.2", "10.9.0.3", "10.9.0.4"]
    status, fault = member_raw.error("POST", "/ports", {"port": {"network_id": network.id}})
    assert (status, fault["type"]) == (409, "IpAddressGenerationFailure")
    assert fault["message"] == f"No more IP addresses available on network {network.id}."
    # An address outside the pools but inside the cidr may still be asked for.
    explicit = member_conn.network.create_port(network_id=network.id,
                                               fixed_ips=[{"ip_address": "10.9.0.6"}])
    assert explicit.fixed_ips[0]["subnet_id"] == subnet.id
    member_conn.network.delete_port(ports[1])
    again = member_conn.network.create_port(network_id=network.id)
    assert again.fixed_ips[0]["ip_address"] == ports[1].fixed_ips[0]["ip_address"]


def test_mac_address_rules(member_conn, member_raw, net):
    network, _, _ = net
    port = member_conn.network.create_port(network_id=network.id,
                                           mac_address="FA-16-3E-AA-BB-CC")
    assert port.mac_address == "fa:16:3e:aa:bb:cc"
    status, fault = member_raw.error("POST", "/ports", {"port": {
        "network_id": network.id, "mac_address": "fa:16:3e:aa:bb:cc"}})
    assert (status, fault["type"]) == (409, "MacAddressInUse")
    for bad in ("zz:16:3e:aa:bb:cc", "fa:16:3e:aa:bb", "00:00:00:00:00:00",
                "ff:ff:ff:ff:ff:ff", 42, ""):
        status, fault = member_raw.error("POST", "/ports", {"port": {
            "network_id": network.id, "mac_address": bad}})
        assert status == 400, bad
        assert fault["type"] == "HTTPBadRequest"
    # The same MAC on another network is fine.
    other = member_conn.network.create_network(name=unique("other"))
    assert member_conn.network.create_port(network_id=other.id,
                                           mac_address="fa:16:3e:aa:bb:cc")


def test_other_projects_port_is_404(cloud, member_conn, net):
    network, _, _ = net
    port = member_conn.network.create_port(network_id=network.id)
    stranger = cloud.make_user(roles=("member",))
    raw_stranger = Raw(cloud.user_session(stranger))
    for method, body in (("GET", None), ("PUT", {"port": {"name": "x"}}), ("DELETE", None)):
        status, fault = raw_stranger.error(method, f"/ports/{port.id}", body)
        assert (status, fault["type"]) == (404, "PortNotFound")
    assert port.id not in [p["id"] for p in raw_stranger("GET", "/ports").json()["ports"]]
    # ... nor may the stranger create ports on a network it cannot see.
    status, fault = raw_stranger.error("POST", "/ports", {"port": {"network_id": network.id}})
    assert (status, fault["type"]) == (404, "NetworkNotFound")


def test_reader_cannot_write(cloud, member, net):
    reader = cloud.make_user(roles=("reader",))
    raw_reader = Raw(cloud.user_session(reader))
    status, fault = raw_reader.error("POST", "/networks", {"network": {"name": "r"}})
    assert status == 403 and fault["type"] == "PolicyNotAuthorized"


def test_delete_network_with_ports_in_use_is_409(member_conn, member_raw, net, cloud):
    network, v4, _ = net
    port = member_conn.network.create_port(network_id=network.id)
    status, fault = member_raw.error("DELETE", f"/networks/{network.id}")
    assert (status, fault["type"]) == (409, "NetworkInUse")
    status, fault = member_raw.error("DELETE", f"/subnets/{v4.id}")
    assert (status, fault["type"]) == (409, "SubnetInUse")
    member_conn.network.delete_port(port)
    member_conn.network.delete_network(network)  # the DHCP port goes with it
    assert member_raw("GET", f"/ports?network_id={network.id}").json()["ports"] == []


def test_update_fixed_ips_and_mac(member_conn, member_raw, net):
    network, v4, v6 = net
    port = member_conn.network.create_port(network_id=network.id,
                                           fixed_ips=[{"subnet_id": v4.id,
                                                       "ip_address": "10.0.0.20"}])
    port = member_conn.network.update_port(port, fixed_ips=[
        {"subnet_id": v4.id, "ip_address": "10.0.0.20"}, {"ip_address": "10.0.0.21"}])
    assert [ip["ip_address"] for ip in port.fixed_ips] == ["10.0.0.20", "10.0.0.21"]
    port = member_conn.network.update_port(port, fixed_ips=[{"ip_address": "10.0.0.21"}])
    assert [ip["ip_address"] for ip in port.fixed_ips] == ["10.0.0.21"]
    taker = member_conn.network.create_port(network_id=network.id,
                                            fixed_ips=[{"ip_address": "10.0.0.20"}])
    assert taker.fixed_ips[0]["ip_address"] == "10.0.0.20"  # released by the update
    slaac = member_conn.network.create_port(network_id=network.id)
    moved = member_conn.network.update_port(slaac, mac_address="fa:16:3e:01:02:03")
    assert {"subnet_id": v6.id, "ip_address": eui64("fd3c:90a1:3f1f::/64",
                                                    "fa:16:3e:01:02:03")} in moved.fixed_ips
    status, fault = member_raw.error("PUT", f"/ports/{port.id}",
                                     {"port": {"network_id": network.id}})
    assert status == 400 and "read-only" in fault["message"]


def test_binding_status_and_admin_only_attributes(admin_conn, member_conn, member_raw, net,
                                                  recorder):
    network, _, _ = net
    port = member_conn.network.create_port(network_id=network.id, device_owner="compute:nova",
                                           device_id="5e3898d7-11be-483e-9732-b2f5eccd2b2e")
    body = member_raw("GET", f"/ports/{port.id}").json()["port"]
    assert "binding:host_id" not in body and body["binding:vnic_type"] == "normal"
    status, _ = member_raw.error("PUT", f"/ports/{port.id}",
                                 {"port": {"binding:host_id": "compute-1"}})
    assert status == 403
    created_revision = port.revision_number  # the SDK updates `port` in place below
    bound = admin_conn.network.update_port(port, binding_host_id="compute-1")
    assert bound.status == "ACTIVE" and bound.binding_vif_type == "ovs"
    assert bound.binding_vif_details["port_filter"] is True
    # One update, one revision; what the next read sees is what the update answered.
    assert bound.revision_number == created_revision + 1
    shown = admin_conn.network.get_port(port.id)
    assert (shown.status, shown.binding_host_id, shown.binding_vif_type) == (
        "ACTIVE", "compute-1", "ovs")
    assert shown.revision_number == bound.revision_number
    assert recorder.names_for(port.id) == ["network-vif-plugged"]
    assert recorder.events[-1] == {"name": "network-vif-plugged",
                                   "server_uuid": "5e3898d7-11be-483e-9732-b2f5eccd2b2e",
                                   "tag": port.id, "status": "completed"}
    # Unbinding together with a name and address pairs: status and pairs both stick.
    unbound = admin_conn.network.update_port(
        port, binding_host_id="", name="unbound",
        allowed_address_pairs=[{"ip_address": "10.0.0.60"}])
    assert unbound.status == "DOWN" and unbound.binding_vif_type == "unbound"
    assert unbound.revision_number == created_revision + 2
    shown = admin_conn.network.get_port(port.id)
    assert (shown.status, shown.name, shown.binding_vif_type) == ("DOWN", "unbound", "unbound")
    assert [p["ip_address"] for p in shown.allowed_address_pairs] == ["10.0.0.60"]
    member_conn.network.delete_port(port)
    assert recorder.names_for(port.id) == ["network-vif-plugged", "network-vif-unplugged",
                                           "network-vif-deleted"]


def test_port_security_and_address_pairs(member_conn, member_raw, net):
    network, _, _ = net
    group = member_conn.network.create_security_group(name=unique("sg"))
    port = member_conn.network.create_port(
        network_id=network.id, security_group_ids=[group.id],
        allowed_address_pairs=[{"ip_address": "10.0.0.100/30"}])
    assert port.security_group_ids == [group.id]
    assert port.allowed_address_pairs == [{"ip_address": "10.0.0.100/30",
                                           "mac_address": port.mac_address}]
    status, fault = member_raw.error("PUT", f"/ports/{port.id}",
                                     {"port": {"port_security_enabled": False}})
    assert status == 409
    cleared = member_conn.network.update_port(port, security_group_ids=[],
                                              allowed_address_pairs=[],
                                              port_security_enabled=False)
    assert cleared.is_port_security_enabled is False and cleared.security_group_ids == []
    status, fault = member_raw.error("PUT", f"/ports/{port.id}",
                                     {"port": {"security_groups": [group.id]}})
    assert status == 400 and fault["type"] == "PortSecurityAndIPRequiredForSecurityGroups"
    status, fault = member_raw.error("POST", "/ports", {"port": {
        "network_id": network.id,
        "security_groups": ["11111111-2222-3333-4444-555555555555"]}})
    assert (status, fault["type"]) == (404, "SecurityGroupNotFound")
    status, fault = member_raw.error("POST", "/ports", {"port": {
        "network_id": network.id,
        "allowed_address_pairs": [{"ip_address": "10.0.0.9"}, {"ip_address": "10.0.0.9"}]}})
    assert status == 400


def test_list_ports_filters(member_conn, member_raw, net):
    network, v4, _ = net
    port = member_conn.network.create_port(network_id=network.id, name="findme",
                                           fixed_ips=[{"ip_address": "10.0.0.33"}])
    found = list(member_conn.network.ports(fixed_ips=["ip_address=10.0.0.33"]))
    assert [p.id for p in found] == [port.id]
    found = member_raw("GET", "/ports?fixed_ips=ip_address_substr%3D0.0.33").json()["ports"]
    assert [p["id"] for p in found] == [port.id]
    found = list(member_conn.network.ports(network_id=network.id,
                                           device_owner="network:dhcp"))
    assert len(found) == 1 and found[0].status == "ACTIVE"
    assert member_raw.error("GET", "/ports?fixed_ips=colour%3Dred")[0] == 400


def test_list_with_plain_fields_answers_only_those(member_conn, member_raw, net):
    """?fields= naming only columns of the port (compute's look-up of a server's ports by
    device_id asks for ids): exactly those keys, the same values as the full listing."""
    network, _, _ = net
    port = member_conn.network.create_port(network_id=network.id, name="plain",
                                           device_id="dev-plain", device_owner="compute:nova")
    full = member_raw("GET", "/ports?device_id=dev-plain").json()["ports"]
    assert [p["id"] for p in full] == [port.id]
    ids = member_raw("GET", "/ports?device_id=dev-plain&fields=id").json()["ports"]
    assert ids == [{"id": port.id}]
    some = member_raw("GET", "/ports?device_id=dev-plain&fields=device_owner,name"
                             "&fields=status").json()["ports"]
    assert some == [{k: full[0][k] for k in ("name", "status", "device_owner")}]
    # a field the rows alone cannot answer still comes from the full view
    ips = member_raw("GET", "/ports?device_id=dev-plain&fields=id&fields=fixed_ips").json()
    assert ips["ports"] == [{"id": port.id, "fixed_ips": full[0]["fixed_ips"]}]
