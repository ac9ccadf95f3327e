"""Subnets' service_types (subnet-service-types) through openstacksdk: ports take
addresses from the subnets that serve their device owner, as neutron's IPAM."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


def test_service_types_steer_addresses(admin_conn, member_conn, member_raw):
    net = member_conn.network
    network = net.create_network(name=unique("n"))
    general = net.create_subnet(network_id=network.id, ip_version=4, cidr="10.70.0.0/24")
    fip_only = net.create_subnet(network_id=network.id, ip_version=4, cidr="10.71.0.0/24",
                                 service_types=["network:floatingip"], enable_dhcp=False)
    assert fip_only.service_types == ["network:floatingip"]
    assert net.get_subnet(general.id).service_types == []
    plain = net.create_port(network_id=network.id)
    assert [ip["subnet_id"] for ip in plain.fixed_ips] == [general.id]
    # a subnet for the port's owner comes first
    compute = net.create_subnet(network_id=network.id, ip_version=4, cidr="10.72.0.0/24",
                                service_types=["compute:nova"], enable_dhcp=False)
    server_port = net.create_port(network_id=network.id, device_owner="compute:nova",
                                  device_id=unique("server"))
    assert [ip["subnet_id"] for ip in server_port.fixed_ips] == [compute.id]
    # a subnet that does not serve the owner cannot be asked for
    with pytest.raises(sdk_exc.BadRequestException) as caught:
        net.create_port(network_id=network.id, fixed_ips=[{"subnet_id": fip_only.id}])
    assert "fixed_ips included invalid subnet" in str(caught.value)
    # changed by update; new ports follow
    net.update_subnet(general, service_types=["compute:nova"])
    response = member_raw("POST", "/ports", {"port": {"network_id": network.id}})
    assert response.status_code == 400
    fault = response.json()["NeutronError"]
    assert fault["type"] == "IpAddressGenerationFailureNoMatchingSubnet"
    assert fault["message"] == (f"No valid service subnet for the given device owner, "
                                f"network {network.id}, service type .")
    assert net.update_subnet(general, service_types=[]).service_types == []


@pytest.mark.parametrize("value, kind", [
    (["bogus"], "InvalidSubnetServiceType"),
    ([1], "InvalidInputSubnetServiceType"),
    ("network:dhcp", "HTTPBadRequest"),
])
def test_bad_service_types(member_conn, member_raw, value, kind):
    network = member_conn.network.create_network(name=unique("n"))
    response = member_raw("POST", "/subnets", {"subnet": {
        "network_id": network.id, "ip_version": 4, "cidr": "10.73.0.0/24",
        "service_types": value}})
    assert response.status_code == 400, response.text
    assert response.json()["NeutronError"]["type"] == kind
    assert member_conn.network.find_extension("subnet-service-types") is not None
