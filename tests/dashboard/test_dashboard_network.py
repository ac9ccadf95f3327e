"""The dashboard's network pages over real HTTP: floating IPs, routers and security groups.
Each form is posted as a browser would, and the cloud's state is checked through
openstacksdk; bad input shows the API's own message on the page and leaves nothing made."""
from __future__ import annotations

import re
import uuid

import pytest

from helpers.cloud import wait_for
from helpers.dashboard import alert_text, csrf_token


@pytest.fixture(scope="module")
def external_net(cloud):
    """A shared external network with a subnet, as an admin would make it."""
    admin = cloud.sdk()
    net = admin.network.create_network(name=f"dash-ext-{uuid.uuid4().hex[:6]}",
                                       is_router_external=True)
    admin.network.create_subnet(network_id=net.id, cidr="203.0.113.0/24", ip_version=4,
                                name="dash-ext-subnet")
    yield net
    for fip in admin.network.ips(floating_network_id=net.id):
        admin.network.delete_ip(fip)
    for router in admin.network.routers():
        if (router.external_gateway_info or {}).get("network_id") == net.id:
            admin.network.update_router(router, external_gateway_info={})
    admin.network.delete_network(net)


def _post(client, path, **data):
    page = client.get(path)
    assert page.status_code == 200, page.text
    return client.post(path, data={"csrf_token": csrf_token(page.text), **data})


def _wait_active(conn, server_id):
    import time
    deadline = time.monotonic() + 60
    while (server := conn.compute.get_server(server_id)).status not in ("ACTIVE", "ERROR"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return server


def test_routers_create_with_gateway_interfaces_routes_and_delete(cloud, member,
                                                                   external_net):
    user, client = member
    conn = cloud.user_sdk(user)
    net = conn.network.create_network(name="dash-rnet")
    subnet = conn.network.create_subnet(network_id=net.id, cidr="10.71.0.0/24", ip_version=4,
                                        name="dash-rsub")
    r = _post(client, "/dashboard/routers", action="create", name="dash-r1",
              gateway_network_id=external_net.id)
    assert r.status_code == 303
    router = conn.network.find_router("dash-r1")
    assert router.external_gateway_info["network_id"] == external_net.id
    page = client.get("/dashboard/routers").text
    assert f'data-gateway="{router.id}">{external_net.name}' in page

    r = _post(client, "/dashboard/routers", action="add_interface", router_id=router.id,
              subnet_id=subnet.id)
    assert r.status_code == 303
    ports = list(conn.network.ports(device_id=router.id,
                                    device_owner="network:router_interface"))
    assert [p.fixed_ips[0]["subnet_id"] for p in ports] == [subnet.id]
    assert f'data-interface="{subnet.id}">dash-rsub 10.71.0.0/24: 10.71.0.1' in \
        client.get("/dashboard/routers").text

    r = _post(client, "/dashboard/routers", action="add_route", router_id=router.id,
              destination="10.99.0.0/24", nexthop="10.71.0.5")
    assert r.status_code == 303
    assert conn.network.get_router(router.id).routes == [
        {"destination": "10.99.0.0/24", "nexthop": "10.71.0.5"}]
    assert 'data-route="10.99.0.0/24">10.99.0.0/24 via 10.71.0.5' in \
        client.get("/dashboard/routers").text
    # A next hop outside the router's subnets: the API's message, no route added.
    bad = _post(client, "/dashboard/routers", action="add_route", router_id=router.id,
                destination="10.98.0.0/24", nexthop="192.0.2.1")
    api = cloud.user_session(user).put(
        f"{cloud.url}/network/v2.0/routers/{router.id}/add_extraroutes",
        json={"router": {"routes": [{"destination": "10.98.0.0/24",
                                     "nexthop": "192.0.2.1"}]}}, raise_exc=False)
    assert bad.status_code == api.status_code == 400
    assert alert_text(bad.text) == api.json()["NeutronError"]["message"]
    assert len(conn.network.get_router(router.id).routes) == 1
    r = _post(client, "/dashboard/routers", action="remove_route", router_id=router.id,
              destination="10.99.0.0/24", nexthop="10.71.0.5")
    assert r.status_code == 303 and conn.network.get_router(router.id).routes == []

    # Deleting a router with an interface: the API refuses, the page says why.
    refused = _post(client, "/dashboard/routers", action="delete", router_id=router.id)
    assert refused.status_code == 409 and "still has ports" in alert_text(refused.text)
    for action, data in (("remove_interface", {"subnet_id": subnet.id}),
                         ("clear_gateway", {}), ("delete", {})):
        r = _post(client, "/dashboard/routers", action=action, router_id=router.id, **data)
        assert r.status_code == 303, (action, r.text)
        if action == "clear_gateway":
            assert not conn.network.get_router(router.id).external_gateway_info
    assert conn.network.find_router("dash-r1") is None
    conn.network.delete_network(net)


def test_a_router_refused_at_create_is_not_made(cloud, member):
    user, client = member
    conn = cloud.user_sdk(user)
    bad = _post(client, "/dashboard/routers", action="create", name="dash-r-bad",
                gateway_network_id="no-such-network")
    assert bad.status_code in (400, 404) and alert_text(bad.text)
    assert 'value="dash-r-bad"' in bad.text  # the form keeps what was typed
    assert conn.network.find_router("dash-r-bad") is None
    assert _post(client, "/dashboard/routers", action="add_interface",
                 router_id="", subnet_id="x").status_code == 400


def test_floating_ip_allocate_associate_disassociate_release(cloud, member, external_net,
                                                             image_id):
    user, client = member
    conn = cloud.user_sdk(user)
    net = conn.network.create_network(name="dash-fnet")
    subnet = conn.network.create_subnet(network_id=net.id, cidr="10.72.0.0/24", ip_version=4)
    router = conn.network.create_router(name="dash-frouter",
                                        external_gateway_info={"network_id": external_net.id})
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    server = conn.compute.create_server(name="dash-fvm", image_id=image_id, flavor_id="42",
                                        networks=[{"uuid": net.id}])
    try:
        assert _wait_active(conn, server.id).status == "ACTIVE"
        r = _post(client, "/dashboard/floating-ips", action="allocate",
                  network_id=external_net.id)
        assert r.status_code == 303
        (fip,) = conn.network.ips(project_id=user["project_id"])
        assert fip.floating_network_id == external_net.id and fip.port_id is None
        page = client.get("/dashboard/floating-ips").text
        assert f"<th scope=\"row\">{fip.floating_ip_address}</th>" in page
        (port,) = conn.network.ports(device_id=server.id)
        assert f'<option value="{port.id}">dash-fvm 10.72.0.' in page

        r = _post(client, "/dashboard/floating-ips", action="associate",
                  floatingip_id=fip.id, port_id=port.id)
        assert r.status_code == 303
        assert conn.network.get_ip(fip.id).port_id == port.id
        page = client.get("/dashboard/floating-ips").text
        assert re.search(rf'data-associated="{fip.id}">dash-fvm 10\.72\.0\.\d+<', page)
        # The server list and the server page label it as a floating IP, once compute has
        # taken neutron's network-changed event (asynchronous, as nova's info cache: a
        # user may need to reload the page once).
        label = (f'data-floating-ip="{fip.floating_ip_address}">'
                 f'{fip.floating_ip_address} (floating IP)')
        wait_for(lambda: label in client.get("/dashboard/servers").text, 10,
                 "the floating IP on the servers list", 0.1)
        assert "(floating IP)" in client.get(f"/dashboard/servers/{server.id}").text

        r = _post(client, "/dashboard/floating-ips", action="disassociate",
                  floatingip_id=fip.id)
        assert r.status_code == 303 and conn.network.get_ip(fip.id).port_id is None
        # A port that is not there: the API's message on the page, the IP stays free.
        bad = _post(client, "/dashboard/floating-ips", action="associate",
                    floatingip_id=fip.id, port_id="no-such-port")
        api = cloud.user_session(user).put(
            f"{cloud.url}/network/v2.0/floatingips/{fip.id}",
            json={"floatingip": {"port_id": "no-such-port"}}, raise_exc=False)
        assert bad.status_code == api.status_code and api.status_code in (400, 404)
        assert alert_text(bad.text) == api.json()["NeutronError"]["message"]
        assert conn.network.get_ip(fip.id).port_id is None
        r = _post(client, "/dashboard/floating-ips", action="release", floatingip_id=fip.id)
        assert r.status_code == 303 and conn.network.find_ip(fip.id) is None
        assert _post(client, "/dashboard/floating-ips", action="allocate",
                     network_id="").status_code == 400
        bad = _post(client, "/dashboard/floating-ips", action="allocate",
                    network_id=net.id)  # not external: refused, nothing allocated
        assert bad.status_code == 400 and alert_text(bad.text)
        assert list(conn.network.ips(project_id=user["project_id"])) == []
    finally:
        conn.compute.delete_server(server.id)
        conn.compute.wait_for_delete(server, wait=60)
        conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
        conn.network.update_router(router, external_gateway_info={})
        conn.network.delete_router(router)
        conn.network.delete_network(net)


def test_security_groups_and_rules_create_delete_and_bad_input(cloud, member):
    user, client = member
    conn = cloud.user_sdk(user)
    r = _post(client, "/dashboard/security-groups", action="create", name="dash-web",
              description="web servers")
    assert r.status_code == 303
    group = conn.network.find_security_group("dash-web", project_id=user["project_id"])
    assert group.description == "web servers"
    r = _post(client, "/dashboard/security-groups", action="add_rule", group_id=group.id,
              direction="ingress", ethertype="IPv4", protocol="tcp", port_range_min="80",
              port_range_max="443", remote_ip_prefix="198.51.100.0/24")
    assert r.status_code == 303
    rules = [rule for rule in conn.network.security_group_rules(security_group_id=group.id)
             if rule.direction == "ingress"]
    assert [(x.protocol, x.port_range_min, x.port_range_max, x.remote_ip_prefix)
            for x in rules] == [("tcp", 80, 443, "198.51.100.0/24")]
    page = client.get("/dashboard/security-groups").text
    assert (f'<tr data-rule="{rules[0].id}">\n      <td>ingress</td><td>IPv4</td><td>tcp</td>'
            f'\n      <td>80-443</td>\n      <td>198.51.100.0/24</td>') in page
    # Bad input: a port range upside down, and a port that is not a number.
    for low, high in (("443", "80"), ("http", "")):
        bad = _post(client, "/dashboard/security-groups", action="add_rule",
                    group_id=group.id, direction="ingress", ethertype="IPv4",
                    protocol="tcp", port_range_min=low, port_range_max=high)
        assert bad.status_code == 400 and alert_text(bad.text), bad.text[:300]
    assert [x.id for x in conn.network.security_group_rules(security_group_id=group.id)
            if x.direction == "ingress"] == [rules[0].id]
    r = _post(client, "/dashboard/security-groups", action="delete_rule",
              rule_id=rules[0].id)
    assert r.status_code == 303
    assert not [x for x in conn.network.security_group_rules(security_group_id=group.id)
                if x.direction == "ingress"]
    r = _post(client, "/dashboard/security-groups", action="delete", group_id=group.id)
    assert r.status_code == 303
    assert conn.network.find_security_group("dash-web", project_id=user["project_id"]) is None
    # A group name the API refuses (too long): its message, no group.
    bad = _post(client, "/dashboard/security-groups", action="create", name="x" * 300)
    assert bad.status_code == 400 and alert_text(bad.text)
    assert conn.network.find_security_group("x" * 300, project_id=user["project_id"]) is None


def test_topology_routers_between_networks_floating_ips_external_volumes_on_servers(
        cloud, member, external_net, image_id):
    user, client = member
    conn = cloud.user_sdk(user)
    net = conn.network.create_network(name="dash-tnet")
    subnet = conn.network.create_subnet(network_id=net.id, cidr="10.73.0.0/24", ip_version=4)
    v6 = conn.network.create_subnet(network_id=net.id, cidr="fd00:1234:5678:9abc::/64",
                                    ip_version=6)
    router = conn.network.create_router(name="dash-trouter",
                                        external_gateway_info={"network_id": external_net.id})
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    server = conn.compute.create_server(name="dash-tvm", image_id=image_id, flavor_id="42",
                                        networks=[{"uuid": net.id}])
    volume = conn.block_storage.create_volume(name="dash-tvol", size=1)
    try:
        assert _wait_active(conn, server.id).status == "ACTIVE"
        conn.block_storage.wait_for_status(volume, "available", wait=60)
        conn.compute.create_volume_attachment(server, volume_id=volume.id)
        conn.block_storage.wait_for_status(volume, "in-use", wait=60)
        (port,) = conn.network.ports(device_id=server.id)
        fip = conn.network.create_ip(floating_network_id=external_net.id, port_id=port.id)
        page = client.get("/dashboard/networks/topology")
        assert page.status_code == 200
        svg = page.text.split("<svg", 1)[1].split("</svg>")[0]
        bars = {m[0]: int(m[1]) for m in re.findall(
            r'data-network="([^"]+)">\s*<title>[^<]*</title>\s*<rect x="(\d+)"', svg)}
        # The external network is the first column, the router stands between it and the
        # network it joins it to.
        assert bars[external_net.id] < bars[net.id]
        rt = svg.split(f'data-device="{router.id}"')[1].split('<g class="device')[0]
        box_x = int(re.search(r'<rect x="(\d+)"', rt)[1])
        assert bars[external_net.id] + 10 < box_x and box_x + 150 < bars[net.id]
        vm = svg.split(f'data-device="{server.id}"')[1].split('<g class="device')[0]
        # The floating IP is a joint on the external network, the volume in the box.
        assert f'data-floating-ip="{fip.floating_ip_address}"' in vm
        joint = re.search(r'class="floating-ip"[^>]*>.*?<circle cx="(\d+)"', vm, re.S)[1]
        assert int(joint) == bars[external_net.id] + 5
        assert ">⛁ dash-tvol</text>" in vm
        desc = svg.split('<desc id="topology-desc">')[1].split("</desc>")[0]
        assert f"floating IP {fip.floating_ip_address} on {external_net.name}" in desc
        assert "volumes dash-tvol" in desc
        # The IPv6 address's label is cut to its room beside the bar (whole in the title).
        v6_ip = next(ip["ip_address"] for ip in port.fixed_ips if ip["subnet_id"] == v6.id)
        assert v6_ip in vm
    finally:
        if "fip" in locals():
            conn.network.delete_ip(fip)
        conn.compute.delete_server(server.id)
        conn.compute.wait_for_delete(server, wait=60)
        conn.block_storage.wait_for_status(volume, "available", wait=60)
        conn.block_storage.delete_volume(volume)
        conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
        conn.network.update_router(router, external_gateway_info={})
        conn.network.delete_router(router)
        conn.network.delete_network(net)


def test_overview_shows_floating_ips_security_groups_and_volume_gigabytes_against_quota(
        cloud, member, external_net):
    user, client = member
    s = cloud.session()
    project = user["project_id"]
    s.put(f"{cloud.url}/network/v2.0/quotas/{project}",
          json={"quota": {"floatingip": 3, "security_group": 5}})
    s.put(f"/os-quota-sets/{project}", endpoint_filter={"service_type": "block-storage"},
          json={"quota_set": {"gigabytes": 10}})
    conn = cloud.user_sdk(user)
    fip = conn.network.create_ip(floating_network_id=external_net.id)
    group = conn.network.create_security_group(name="dash-overview")
    volume = conn.block_storage.create_volume(name="dash-overview", size=2)
    try:
        conn.block_storage.wait_for_status(volume, "available", wait=60)
        page = client.get("/dashboard/overview").text
        rows = {m[0]: m[1] for m in re.findall(
            r'<th scope="row" id="quota-\d+">([^<]+)</th>\s*<td>([^<]+)</td>', page)}
        groups = len(list(conn.network.security_groups(project_id=project)))  # + default
        assert rows["Floating IPs"] == "1 of 3"
        assert rows["Security groups"] == f"{groups} of 5" and groups == 2
        assert rows["Volume gigabytes"] == "2 of 10"
        for name, limit, used in (("Floating IPs", 3, 1), ("Security groups", 5, 2),
                                  ("Volume gigabytes", 10, 2)):
            row = page.split(f'">{name}</th>')[1].split("</tr>")[0]
            assert f'min="0" max="{limit}"' in row and f'value="{used}"' in row
    finally:
        conn.network.delete_ip(fip)
        conn.network.delete_security_group(group)
        conn.block_storage.delete_volume(volume)
