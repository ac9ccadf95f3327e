"""Neutron's DNS integration: dns_domain on networks, ports and floating IPs, dns_name on
ports and floating IPs; a floating IP on a port with a dns_name publishes its A record in
the project's zone of that domain (as neutron's designate driver does), served by the
DNS server, and the record goes when the floating IP or the port does."""
from __future__ import annotations

import uuid

import pytest

from dns_helpers import Designate, dig, eventually, short, status_of


@pytest.fixture(scope="module")
def project(cloud):
    """A member's project with a zone, a network in its domain, a router to an external
    network (made by the admin) and the member's openstacksdk connection."""
    admin = cloud.sdk().network
    suffix = uuid.uuid4().hex[:8]
    external = admin.create_network(name=f"ext-{suffix}", is_router_external=True)
    admin.create_subnet(network_id=external.id, ip_version=4, cidr="10.201.0.0/24")
    user = cloud.make_user()
    conn = cloud.user_sdk(user)
    designate = Designate(cloud.user_session(user))
    domain = f"p{suffix}.example.com."
    zone = designate.zone(domain)
    designate.active(zone["id"])
    net = conn.network
    internal = net.create_network(name=f"n-{suffix}", dns_domain=domain)
    subnet = net.create_subnet(network_id=internal.id, ip_version=4, cidr="10.202.0.0/24")
    router = net.create_router(name=f"r-{suffix}",
                               external_gateway_info={"network_id": external.id})
    net.add_interface_to_router(router, subnet_id=subnet.id)
    yield {"conn": conn, "net": internal, "external": external, "domain": domain,
           "zone": zone, "designate": designate}
    for port in net.ports(network_id=internal.id, device_owner=""):
        net.delete_port(port)
    net.remove_interface_from_router(router, subnet_id=subnet.id)
    net.delete_router(router)
    net.delete_network(internal)
    admin.delete_network(external)


def test_the_dns_extensions_are_listed(cloud):
    aliases = {e.alias for e in cloud.sdk().network.extensions()}
    assert {"dns-integration", "dns-domain-ports",
            "dns-integration-domain-keywords"} <= aliases


def test_a_floating_ip_on_a_named_port_is_published_and_withdrawn(cloud, project):
    net, domain = project["conn"].network, project["domain"]
    assert net.get_network(project["net"].id).dns_domain == domain
    port = net.create_port(network_id=project["net"].id, dns_name="vm1")
    assert port.dns_name == "vm1" and port.dns_assignment
    fip = net.create_ip(floating_network_id=project["external"].id)
    address = fip.floating_ip_address
    assert status_of(dig(cloud, "vm1." + domain)) == "NXDOMAIN"

    net.update_ip(fip, port_id=port.id)
    eventually(lambda: short(cloud, "vm1." + domain) == [address], "the A record")
    # and its PTR record (neutron's allow_reverse_dns_lookup), in the reverse zone the
    # DNS service's reverse API shows
    eventually(lambda: dig(cloud, "-x", address, "+short").split() == ["vm1." + domain],
               "the PTR record")
    ptrs = project["designate"].get(f"/v2/reverse/floatingips/RegionOne:{fip.id}").json()
    assert ptrs["ptrdname"] == "vm1." + domain
    rows = project["designate"].get(
        f"/v2/zones/{project['zone']['id']}/recordsets?type=A").json()["recordsets"]
    assert [(r["name"], r["records"]) for r in rows] == [("vm1." + domain, [address])]

    net.update_ip(fip, port_id=None)  # disassociated: the records go
    eventually(lambda: status_of(dig(cloud, "vm1." + domain)) == "NXDOMAIN", "withdrawn")
    eventually(lambda: status_of(dig(cloud, "-x", address)) == "NXDOMAIN", "no PTR")

    net.update_ip(fip, port_id=port.id)
    eventually(lambda: short(cloud, "vm1." + domain) == [address], "published again")
    net.update_port(port, dns_name="vm2")  # renamed: the record follows
    eventually(lambda: short(cloud, "vm2." + domain) == [address], "the new name")
    assert status_of(dig(cloud, "vm1." + domain)) == "NXDOMAIN"

    net.delete_port(port)  # the port goes: so does its record
    eventually(lambda: status_of(dig(cloud, "vm2." + domain)) == "NXDOMAIN", "port gone")
    net.delete_ip(fip)


def test_a_floating_ips_own_name_and_a_ports_own_domain(cloud, project):
    net, domain = project["conn"].network, project["domain"]
    fip = net.create_ip(floating_network_id=project["external"].id, dns_name="ownname",
                        dns_domain=domain)
    assert (fip.dns_name, fip.dns_domain) == ("ownname", domain)
    eventually(lambda: short(cloud, "ownname." + domain) == [fip.floating_ip_address],
               "the floating IP's own record")
    net.delete_ip(fip)
    eventually(lambda: status_of(dig(cloud, "ownname." + domain)) == "NXDOMAIN", "deleted")

    sub = f"sub.{domain}"
    project["designate"].active(project["designate"].zone(sub)["id"])
    port = net.create_port(network_id=project["net"].id, dns_name="web", dns_domain=sub)
    assert port.dns_domain == sub
    fip = net.create_ip(floating_network_id=project["external"].id, port_id=port.id)
    eventually(lambda: short(cloud, "web." + sub) == [fip.floating_ip_address],
               "the record in the port's own domain")
    net.delete_ip(fip)
    eventually(lambda: status_of(dig(cloud, "web." + sub)) == "NXDOMAIN", "deleted")
    net.delete_port(port)


def test_domain_keywords_are_filled_in(cloud, project):
    net = project["conn"].network
    project_id = project["conn"].current_project_id
    domain = "<project_id>.example.org."
    zone = project["designate"].zone(f"{project_id}.example.org.")
    project["designate"].active(zone["id"])
    port = net.create_port(network_id=project["net"].id, dns_name="kw", dns_domain=domain)
    assert port.dns_domain == domain
    fip = net.create_ip(floating_network_id=project["external"].id, port_id=port.id)
    eventually(lambda: short(cloud, f"kw.{project_id}.example.org.")
               == [fip.floating_ip_address], "the record in the filled-in domain")
    net.delete_ip(fip)
    net.delete_port(port)


def test_a_bad_dns_domain_is_a_400(project):
    from openstack import exceptions as sdk_exc

    with pytest.raises(sdk_exc.BadRequestException):
        project["conn"].network.create_port(network_id=project["net"].id,
                                            dns_domain="bad domain!")
