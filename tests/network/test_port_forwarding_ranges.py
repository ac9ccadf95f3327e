"""Port forwardings of port ranges (floating-ip-port-forwarding-port-ranges) through
openstacksdk, with neutron's range checks as 400s."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


@pytest.fixture(scope="module")
def setup(admin_conn):
    net = admin_conn.network
    external = net.create_network(name=unique("ext"), is_router_external=True)
    net.create_subnet(network_id=external.id, ip_version=4, cidr="10.196.0.0/24")
    internal = net.create_network(name=unique("n"))
    subnet = net.create_subnet(network_id=internal.id, ip_version=4, cidr="10.197.0.0/24")
    router = net.create_router(name=unique("r"),
                               external_gateway_info={"network_id": external.id})
    net.add_interface_to_router(router, subnet_id=subnet.id)
    port = net.create_port(network_id=internal.id)
    fip = net.create_ip(floating_network_id=external.id)
    yield fip, port, port.fixed_ips[0]["ip_address"]
    net.delete_ip(fip)
    net.delete_port(port)
    net.remove_interface_from_router(router, subnet_id=subnet.id)
    net.delete_router(router)
    net.delete_network(internal)
    net.delete_network(external)


def _pf(conn, fip, port, address, **ports):
    return conn.network.create_port_forwarding(
        floatingip_id=fip.id, internal_port_id=port.id, internal_ip_address=address,
        protocol="tcp", **ports)


def test_ranges(admin_conn, raw, setup):
    fip, port, address = setup
    net = admin_conn.network
    many = _pf(admin_conn, fip, port, address, internal_port_range="8000:8010",
               external_port_range="9000:9010")
    assert (many.internal_port_range, many.external_port_range) == ("8000:8010", "9000:9010")
    assert many.internal_port is None and many.external_port is None
    # 1-N: one internal port behind several external ones
    one_to_many = _pf(admin_conn, fip, port, address, internal_port_range="22",
                      external_port_range="2200:2205")
    assert one_to_many.internal_port_range == "22:22" and one_to_many.internal_port == 22
    single = _pf(admin_conn, fip, port, address, internal_port=80, external_port=8080)
    assert (single.internal_port_range, single.external_port_range) == ("80:80",
                                                                        "8080:8080")
    shown = net.get_port_forwarding(many, fip.id)
    assert shown.external_port_range == "9000:9010"
    updated = net.update_port_forwarding(many, fip.id, external_port_range="9100:9110")
    assert updated.external_port_range == "9100:9110"
    assert updated.internal_port_range == "8000:8010"
    listed = {p.id for p in net.port_forwardings(fip)}
    assert listed == {many.id, one_to_many.id, single.id}
    for pf in (many, one_to_many, single):
        net.delete_port_forwarding(pf, fip.id)


@pytest.mark.parametrize("ports, message", [
    ({"internal_port_range": "8000:8010", "external_port_range": "9000:9005"},
     "The relation between internal and external ports must be N-N or 1-N"),
    ({"internal_port_range": "90:80", "external_port_range": "90:80"},
     "First port in a port range must be lower than the second port"),
    ({"internal_port_range": "1:2:3", "external_port_range": "1:2"},
     "Port range must be two integers separated by a colon"),
    ({"internal_port_range": "0:1", "external_port_range": "1:2"},
     "Invalid port: 0, the port must be in the range [1, 65535]"),
    ({"internal_port": 22}, "Required attribute 'external_port' not specified"),
    # digits int() refuses: a superscript, and more than its 4,300
    ({"internal_port_range": "\u00b2", "external_port_range": "1"},
     "Invalid port: \u00b2, the port must be in the range [1, 65535]"),
    ({"internal_port_range": "1", "external_port_range": "9" * 5000},
     "the port must be in the range [1, 65535]"),
])
def test_bad_ranges(raw, setup, ports, message):
    fip, port, address = setup
    response = raw("POST", f"/floatingips/{fip.id}/port_forwardings", {"port_forwarding": {
        "internal_port_id": port.id, "internal_ip_address": address, "protocol": "udp",
        **ports}})
    assert response.status_code == 400, response.text
    assert message in response.json()["NeutronError"]["message"]


def test_collisions(admin_conn, raw, setup):
    fip, port, address = setup
    first = _pf(admin_conn, fip, port, address, internal_port_range="3000:3009",
                external_port_range="4000:4009")
    with pytest.raises(sdk_exc.BadRequestException) as caught:
        _pf(admin_conn, fip, port, address, internal_port=5000, external_port=4005)
    assert ("There is a port collision with the external_port_range. The following ranges "
            "collide: 4000:4009 and 4005:4005") in str(caught.value)
    with pytest.raises(sdk_exc.BadRequestException) as caught:
        _pf(admin_conn, fip, port, address, internal_port_range="3009:3010",
            external_port_range="4100:4101")
    assert "collision with the internal_port_range" in str(caught.value)
    # another protocol is another space
    other = admin_conn.network.create_port_forwarding(
        floatingip_id=fip.id, internal_port_id=port.id, internal_ip_address=address,
        protocol="udp", internal_port_range="3000:3009", external_port_range="4000:4009")
    admin_conn.network.delete_port_forwarding(other, fip.id)
    admin_conn.network.delete_port_forwarding(first, fip.id)
    assert admin_conn.network.find_extension(
        "floating-ip-port-forwarding-port-ranges") is not None
