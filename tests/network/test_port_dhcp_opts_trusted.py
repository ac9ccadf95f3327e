"""Ports' ``extra_dhcp_opts`` (neutron's extra_dhcp_opt: stored, merged on update, and
written into the DHCP files as neutron's dnsmasq driver tags them) and ``trusted``
(port-trusted-vif: admin-only, shown in binding:profile), through openstacksdk."""
from __future__ import annotations

import pytest
from network_helpers import dhcp_files, unique
from openstack import exceptions as sdk_exc


def _opts(port) -> set:
    return {(o["opt_name"], o["opt_value"], o["ip_version"]) for o in port.extra_dhcp_opts}


@pytest.fixture
def dhcp_network(member_conn):
    network = member_conn.network.create_network(name=unique("edo"))
    subnet = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                               cidr="10.70.0.0/24")
    return network, subnet


def test_extensions_listed(member_conn):
    aliases = {e.alias for e in member_conn.network.extensions()}
    assert {"extra_dhcp_opt", "port-trusted-vif"} <= aliases


def test_extra_dhcp_opts_round_trip_and_files(cloud, member_conn, dhcp_network):
    net = member_conn.network
    network, subnet = dhcp_network
    port = net.create_port(network_id=network.id, fixed_ips=[{"ip_address": "10.70.0.20"}],
                           extra_dhcp_opts=[
                               {"opt_name": "bootfile-name", "opt_value": "pxelinux.0"},
                               {"opt_name": "tftp-server", "opt_value": "10.70.0.5"},
                               {"opt_name": "66", "opt_value": "10.70.0.6"},
                               {"opt_name": "dns-server", "opt_value": "[2001:db8::1]",
                                "ip_version": 6}])
    assert _opts(port) == {("bootfile-name", "pxelinux.0", 4), ("tftp-server", "10.70.0.5", 4),
                           ("66", "10.70.0.6", 4), ("dns-server", "[2001:db8::1]", 6)}
    assert _opts(net.get_port(port)) == _opts(port)
    assert port.trusted is None
    plain = net.create_port(network_id=network.id, fixed_ips=[{"ip_address": "10.70.0.21"}])
    assert plain.extra_dhcp_opts == []

    files = dhcp_files(cloud, network.id)
    host_lines = files["host"].splitlines()
    assert (f"{port.mac_address},host-10-70-0-20.openstacklocal,10.70.0.20,"
            f"set:port-{port.id}") in host_lines
    assert f"{plain.mac_address},host-10-70-0-21.openstacklocal,10.70.0.21" in host_lines
    opts = files["opts"].splitlines()
    assert f"tag:port-{port.id},option:bootfile-name,pxelinux.0" in opts
    assert f"tag:port-{port.id},option:tftp-server,10.70.0.5" in opts
    assert f"tag:port-{port.id},66,10.70.0.6" in opts  # by number: no option: prefix
    # the port has no IPv6 address: its IPv6 option is not served (as neutron)
    assert not any("option6:" in line for line in opts)

    # update: merged by (name, version); None removes, a new name adds
    port = net.update_port(port, extra_dhcp_opts=[
        {"opt_name": "bootfile-name", "opt_value": "grub.efi"},
        {"opt_name": "tftp-server", "opt_value": None},
        {"opt_name": "client-id", "opt_value": "abc123"}])
    assert _opts(port) == {("bootfile-name", "grub.efi", 4), ("66", "10.70.0.6", 4),
                           ("dns-server", "[2001:db8::1]", 6), ("client-id", "abc123", 4)}
    files = dhcp_files(cloud, network.id)
    assert (f"{port.mac_address},id:abc123,host-10-70-0-20.openstacklocal,10.70.0.20,"
            f"set:port-{port.id}") in files["host"].splitlines()
    opts = files["opts"].splitlines()
    assert f"tag:port-{port.id},option:bootfile-name,grub.efi" in opts
    assert not any("tftp-server" in line or "client-id" in line for line in opts)
    # an update without the attribute (or with an empty list) leaves the options alone
    port = net.update_port(port, name="renamed")
    port = net.update_port(port, extra_dhcp_opts=[])
    assert len(port.extra_dhcp_opts) == 4
    # removing every option removes the port's tag
    port = net.update_port(port, extra_dhcp_opts=[
        {"opt_name": n, "opt_value": None, "ip_version": v}
        for n, _, v in _opts(port)])
    assert port.extra_dhcp_opts == []
    files = dhcp_files(cloud, network.id)
    assert f"port-{port.id}" not in files["host"] + files["opts"]


@pytest.mark.parametrize("opt", [
    {"opt_name": "bootfile-name"},                                   # no value key
    {"opt_name": "", "opt_value": "x"},                              # blank name
    {"opt_name": "bootfile-name", "opt_value": ""},                  # blank value
    {"opt_name": "bootfile-name", "opt_value": "a\ndhcp-range=1"},   # line break
    {"opt_name": "bootfile-name", "opt_value": "x", "ip_version": 5},
    {"opt_name": "bootfile-name", "opt_value": "x", "ip_version": "four"},
    {"opt_name": "bootfile-name", "opt_value": "x", "extra": 1},
    {"opt_name": "x" * 65, "opt_value": "x"},
    {"opt_name": "bootfile-name", "opt_value": 7},
    "bootfile-name",
])
def test_bad_extra_dhcp_opts_are_400(member_raw, dhcp_network, opt):
    network, _ = dhcp_network
    status, fault = member_raw.error("POST", "/ports", {"port": {
        "network_id": network.id, "extra_dhcp_opts": [opt]}})
    assert status == 400 and fault["type"] == "HTTPBadRequest"
    assert "extra_dhcp_opts" in fault["message"]


def test_blankable_router_option(cloud, member_conn, dhcp_network):
    network, _ = dhcp_network
    port = member_conn.network.create_port(
        network_id=network.id, fixed_ips=[{"ip_address": "10.70.0.30"}],
        extra_dhcp_opts=[{"opt_name": "router", "opt_value": ""}])
    assert _opts(port) == {("router", "", 4)}
    assert f"tag:port-{port.id},option:router," in dhcp_files(cloud, network.id)[
        "opts"].splitlines()


def test_trusted_is_admin_only(admin_conn, member_conn, member_raw, dhcp_network):
    network, _ = dhcp_network
    status, fault = member_raw.error("POST", "/ports", {"port": {
        "network_id": network.id, "trusted": True}})
    assert (status, fault["type"]) == (403, "PolicyNotAuthorized")
    port = member_conn.network.create_port(network_id=network.id)
    with pytest.raises(sdk_exc.ForbiddenException):
        member_conn.network.update_port(port, trusted=True)

    port = admin_conn.network.update_port(port.id, trusted=True)
    assert port.trusted is True
    assert port.binding_profile == {"trusted": True}
    assert member_conn.network.get_port(port.id).trusted is True
    port = admin_conn.network.update_port(port.id, trusted=False)
    assert port.trusted is False and port.binding_profile == {"trusted": False}
    created = admin_conn.network.create_port(network_id=network.id, trusted=True)
    assert admin_conn.network.get_port(created).trusted is True
    status, fault = member_raw.error("PUT", f"/ports/{port.id}", {"port": {"trusted": "x"}})
    assert status == 400
