"""A server's security groups through openstacksdk — the os-security-groups
sub-resource (every re-run of Ansible's server module reads it) and the add/remove actions."""
import uuid

import pytest


@pytest.fixture(scope="module")
def conn(cloud, member):
    return cloud.user_sdk(member)


@pytest.fixture(scope="module")
def net(conn):
    network = conn.network.create_network(name=f"ccsg-{uuid.uuid4().hex[:6]}")
    subnet = conn.network.create_subnet(network_id=network.id, ip_version=4,
                                        cidr="10.61.0.0/24")
    yield network, subnet
    conn.network.delete_network(network, ignore_missing=True)


def _boot(conn, image_id, network):
    server = conn.compute.create_server(name=f"ccsg-{uuid.uuid4().hex[:6]}", image_id=image_id,
                                        flavor_id="42", networks=[{"uuid": network.id}])
    return conn.compute.wait_for_server(server, wait=60, interval=0.2)


def test_server_security_groups_list_add_remove(conn, image_id, net):
    network, _ = net
    extra = conn.network.create_security_group(name=f"ccsg-web-{uuid.uuid4().hex[:4]}")
    conn.network.create_security_group_rule(security_group_id=extra.id, direction="ingress",
                                            protocol="tcp", port_range_min=80,
                                            port_range_max=80, remote_ip_prefix="10.0.0.0/8")
    server = _boot(conn, image_id, network)
    try:
        groups = conn.list_server_security_groups(server)
        assert [g["name"] for g in groups] == ["default"]

        conn.compute.add_security_group_to_server(server, extra)
        groups = {g["name"]: g for g in conn.list_server_security_groups(server)}
        assert set(groups) == {"default", extra.name}
        rule = groups[extra.name]["rules"][0]
        assert (rule["ip_protocol"], rule["from_port"], rule["to_port"]) == ("tcp", 80, 80)
        assert rule["ip_range"] == {"cidr": "10.0.0.0/8"}
        port = next(conn.network.ports(device_id=server.id))
        assert extra.id in port.security_group_ids
        shown = conn.compute.get_server(server.id)
        assert {g["name"] for g in shown.security_groups} == {"default", extra.name}

        conn.compute.remove_security_group_from_server(server, extra)
        assert [g["name"] for g in conn.list_server_security_groups(server)] == ["default"]
        # removing it again: nova's 400, not associated
        with pytest.raises(Exception) as err:
            conn.compute.remove_security_group_from_server(server, extra)
        assert getattr(err.value, "status_code", None) == 400
    finally:
        conn.compute.delete_server(server)
        conn.compute.wait_for_delete(server, wait=30, interval=0.2)
        conn.network.delete_security_group(extra)


def test_add_unknown_security_group_is_404(cloud, api, image_id, net):
    network, _ = net
    sid = api.boot(image_id, networks=[{"uuid": network.id}])
    api.wait(sid)
    try:
        r = api.post(f"/servers/{sid}/action", {"addSecurityGroup": {"name": "no-such"}})
        assert r.status_code == 404 and "itemNotFound" in r.json(), r.text
        r = api.post(f"/servers/{sid}/action", {"addSecurityGroup": {}})
        assert r.status_code == 400 and "badRequest" in r.json(), r.text
        r = api.get(f"/servers/{uuid.uuid4()}/os-security-groups")
        assert r.status_code == 404
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)


def test_create_echoes_the_groups_as_the_request_named_them(conn, api, image_id, net):
    """Nova's create answer names the groups as sent (an id stays an id), "default" when
    none was named - what clients that compare request and answer expect."""
    network, _ = net
    group = conn.network.create_security_group(name=f"ccsg-echo-{uuid.uuid4().hex[:4]}")
    made = []
    try:
        for named, echoed in (([{"name": group.id}], [{"name": group.id}]),
                              ([{"name": group.name}], [{"name": group.name}]),
                              (None, [{"name": "default"}])):
            extra = {"security_groups": named} if named is not None else {}
            r = api.post("/servers", {"server": {
                "name": "ccsg-echo", "imageRef": image_id, "flavorRef": "42",
                "networks": [{"uuid": network.id}], **extra}})
            assert r.status_code == 202, r.text
            made.append(r.json()["server"]["id"])
            assert r.json()["server"]["security_groups"] == echoed
        api.wait(made[0])
        assert [g["name"] for g in conn.list_server_security_groups(made[0])] == [group.name]
    finally:
        for sid in made:
            api.delete(f"/servers/{sid}")
        for sid in made:
            api.wait_gone(sid)
        conn.network.delete_security_group(group)


def test_server_without_ports_has_no_security_groups(api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    try:
        r = api.get(f"/servers/{sid}/os-security-groups")
        assert r.status_code == 200 and r.json() == {"security_groups": []}
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)


@pytest.fixture
def routed_net(cloud, conn, net):
    """An external network (admin) and the member's router with its gateway on it."""
    admin = cloud.sdk()
    public = admin.network.create_network(name=f"ccsg-public-{uuid.uuid4().hex[:4]}",
                                          is_router_external=True)
    admin.network.create_subnet(network_id=public.id, ip_version=4, cidr="172.24.61.0/24")
    router = conn.network.create_router(name=f"ccsg-r-{uuid.uuid4().hex[:4]}",
                                        external_gateway_info={"network_id": public.id})
    conn.network.add_interface_to_router(router, subnet_id=net[1].id)
    try:
        yield net[0], public
    finally:
        for fip in admin.network.ips(floating_network_id=public.id):
            admin.network.delete_ip(fip)
        conn.network.remove_interface_from_router(router, subnet_id=net[1].id)
        conn.network.delete_router(router)
        admin.network.delete_network(public)


def test_auto_ip_floating_ip_in_addresses_and_deleted_with_server(conn, image_id, routed_net):
    """openstacksdk's create_server(auto_ip=True) waits for the floating IP to show in the
    server's addresses; delete_server(delete_ips=True) finds it there and deletes it."""
    network, public = routed_net
    # ip_pool names our external network: with auto_ip alone the SDK takes the first
    # external network by id, and other tests of the session may have made one this
    # project's router does not reach.
    server = conn.create_server(name=f"ccsg-fip-{uuid.uuid4().hex[:4]}", image=image_id,
                                flavor="42", network=network.id, auto_ip=True,
                                ip_pool=public.name, wait=True, timeout=60)
    floating = [a for addrs in server.addresses.values() for a in addrs
                if a["OS-EXT-IPS:type"] == "floating"]
    assert len(floating) == 1 and floating[0]["addr"].startswith("172.24.61.")
    assert conn.get_server(server.id).public_v4 == floating[0]["addr"]
    assert conn.delete_server(server.id, wait=True, delete_ips=True, timeout=60)
    assert list(conn.network.ips(floating_network_id=public.id)) == []
