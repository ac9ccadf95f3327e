"""Subnet pools: PUT add_prefixes / remove_prefixes (neutron's subnetpool-prefix-ops, sent
through keystoneauth as openstacksdk has no call for them) and one default pool per IP
family (default-subnetpools)."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


def test_extension_is_listed(member_conn):
    assert member_conn.network.find_extension("subnetpool-prefix-ops") is not None


def test_add_and_remove_prefixes(member_conn, member_raw):
    net = member_conn.network
    pool = net.create_subnet_pool(name=unique("pool"), prefixes=["10.210.0.0/24"],
                                  default_prefix_length=26)
    path, revision = f"/subnetpools/{pool.id}", pool.revision_number
    response = member_raw("PUT", f"{path}/add_prefixes",
                          {"prefixes": ["10.210.1.0/24", "10.220.0.0/24"]})
    assert response.status_code == 200, response.text
    # merged as neutron's IPSet.compact() does
    assert response.json() == {"prefixes": ["10.210.0.0/23", "10.220.0.0/24"]}
    after_add = net.get_subnet_pool(pool)
    assert after_add.prefixes == ["10.210.0.0/23", "10.220.0.0/24"]
    assert after_add.revision_number > revision

    # a subnet in 10.210.0.0/26 keeps that part of the pool
    network = net.create_network(name=unique("n"))
    net.create_subnet(network_id=network.id, ip_version=4, subnetpool_id=pool.id,
                      cidr="10.210.0.0/26")
    response = member_raw("PUT", f"{path}/remove_prefixes", {"prefixes": ["10.210.0.0/24"]})
    assert response.status_code == 400
    assert response.json()["NeutronError"] == {
        "type": "IllegalSubnetPoolPrefixUpdate",
        "message": "Illegal update to prefixes: One or more the prefixes to be removed is "
                   "in use by a subnet..",
        "detail": ""}
    response = member_raw("PUT", f"{path}/remove_prefixes",
                          {"prefixes": ["10.210.1.0/25", "10.220.0.0/24"]})
    assert response.status_code == 200, response.text
    assert response.json() == {"prefixes": ["10.210.0.0/24", "10.210.1.128/25"]}
    # prefixes outside the pool: nothing changes
    response = member_raw("PUT", f"{path}/remove_prefixes", {"prefixes": ["192.0.2.0/24"]})
    assert response.json() == {"prefixes": ["10.210.0.0/24", "10.210.1.128/25"]}


@pytest.mark.parametrize("body, status, kind", [
    ({}, 400, "HTTPBadRequest"),
    ({"prefixes": []}, 400, "HTTPBadRequest"),
    ({"prefixes": "10.0.0.0/8"}, 400, "HTTPBadRequest"),
    ({"prefixes": ["not-a-cidr"]}, 400, "HTTPBadRequest"),
    ({"prefixes": ["2001:db8::/64"]}, 400, "InvalidInput"),
])
def test_bad_prefix_bodies(member_conn, member_raw, body, status, kind):
    pool = member_conn.network.create_subnet_pool(name=unique("pool"),
                                                  prefixes=["10.211.0.0/24"])
    response = member_raw("PUT", f"/subnetpools/{pool.id}/add_prefixes", body)
    assert response.status_code == status, response.text
    assert response.json()["NeutronError"]["type"] == kind
    assert member_conn.network.get_subnet_pool(pool).prefixes == ["10.211.0.0/24"]


def test_prefix_ops_on_others_pools(admin_conn, member_conn, member_raw):
    missing = "00000000-0000-0000-0000-000000000000"
    response = member_raw("PUT", f"/subnetpools/{missing}/add_prefixes",
                          {"prefixes": ["10.0.0.0/24"]})
    assert response.status_code == 404
    assert response.json()["NeutronError"]["type"] == "SubnetPoolNotFound"
    shared = admin_conn.network.create_subnet_pool(name=unique("pool"), shared=True,
                                                   prefixes=["10.212.0.0/24"])
    try:
        response = member_raw("PUT", f"/subnetpools/{shared.id}/add_prefixes",
                              {"prefixes": ["10.212.1.0/24"]})
        assert response.status_code == 403
        assert response.json()["NeutronError"]["type"] == "PolicyNotAuthorized"
    finally:
        admin_conn.network.delete_subnet_pool(shared)


def test_one_default_pool_per_family(admin_conn, member_conn):
    net = admin_conn.network
    v4 = net.create_subnet_pool(name=unique("pool"), prefixes=["10.213.0.0/16"],
                                is_default=True, default_prefix_length=24, shared=True)
    other = net.create_subnet_pool(name=unique("pool"), prefixes=["10.214.0.0/16"])
    v6 = None
    try:
        assert v4.is_default is True
        with pytest.raises(sdk_exc.BadRequestException) as caught:
            net.create_subnet_pool(name=unique("pool"), prefixes=["10.215.0.0/16"],
                                   is_default=True)
        assert "Only one default may exist per IP family" in str(caught.value)
        with pytest.raises(sdk_exc.BadRequestException):
            net.update_subnet_pool(other, is_default=True)
        assert net.get_subnet_pool(other).is_default is False
        # the other family has its own default
        v6 = net.create_subnet_pool(name=unique("pool"), prefixes=["2001:db8:1::/48"],
                                    is_default=True)
        # a member's subnet without a CIDR comes from the default pool
        network = member_conn.network.create_network(name=unique("n"))
        subnet = member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                                   use_default_subnet_pool=True)
        with pytest.raises(sdk_exc.BadRequestException):
            member_conn.network.create_subnet(network_id=network.id, ip_version=4,
                                              use_default_subnet_pool=True,
                                              subnet_pool_id=v4.id)
        assert subnet.cidr.startswith("10.213.") and subnet.subnet_pool_id == v4.id
        member_conn.network.delete_network(network)
        # a member may not make a pool the default
        mine = member_conn.network.create_subnet_pool(name=unique("pool"),
                                                      prefixes=["10.216.0.0/16"])
        with pytest.raises(sdk_exc.ForbiddenException):
            member_conn.network.update_subnet_pool(mine, is_default=True)
        # unset, another may be the default
        net.update_subnet_pool(v4, is_default=False)
        assert net.update_subnet_pool(other, is_default=True).is_default is True
    finally:
        for pool in (v4, other, v6):
            if pool is not None:
                net.update_subnet_pool(pool.id, is_default=False)
                net.delete_subnet_pool(pool.id)
