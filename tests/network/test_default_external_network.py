"""A network's is_default (auto-allocated-topology's attribute on networks): one default
external network at most, shown and kept on external networks only, set by admins -
through openstacksdk."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


@pytest.fixture
def made(admin_conn):
    networks = []
    yield networks
    for network in networks:
        admin_conn.network.delete_network(network)


def test_one_default_external_network(admin_conn, member_conn, made, raw):
    net = admin_conn.network
    first = net.create_network(name=unique("pub"), is_router_external=True, is_default=True)
    made.append(first)
    assert first.is_default is True
    assert net.get_network(first.id).is_default is True
    # a second default is neutron's 409, on create and on update
    status, fault = raw.error("POST", "/networks", {"network": {
        "name": unique("pub"), "router:external": True, "is_default": True}})
    assert (status, fault["type"]) == (409, "DefaultExternalNetworkExists")
    assert first.id in fault["message"]
    second = net.create_network(name=unique("pub"), is_router_external=True)
    made.append(second)
    assert second.is_default is False
    status, fault = raw.error("PUT", f"/networks/{second.id}",
                              {"network": {"is_default": True}})
    assert (status, fault["type"]) == (409, "DefaultExternalNetworkExists")
    # the default moves
    assert net.update_network(first, is_default=False).is_default is False
    assert net.update_network(second, is_default=True).is_default is True
    assert [n.id for n in net.networks(is_default=True)] == [second.id]
    assert second.id not in {n.id for n in net.networks(is_default=False)}
    assert first.id in {n.id for n in net.networks(is_default=False)}
    # every project sees it on the external network; only admins set it
    assert member_conn.network.get_network(second.id).is_default is True
    with pytest.raises(sdk_exc.ForbiddenException):
        member_conn.network.update_network(second, is_default=False)
    with pytest.raises(sdk_exc.ForbiddenException):
        member_conn.network.create_network(name=unique("n"), is_default=True)
    # an internal network is no default: ignored, not shown, as neutron
    internal = net.create_network(name=unique("n"), is_default=True)
    made.append(internal)
    assert "is_default" not in raw("GET", f"/networks/{internal.id}").json()["network"]
    # made internal, the default is gone; external again, it is not the default
    net.update_network(second, is_router_external=False)
    net.update_network(second, is_router_external=True)
    assert net.get_network(second.id).is_default is False
    assert list(net.networks(is_default=True)) == []
    for body in ({"is_default": "maybe"}, {"is_default": None}):
        assert raw("PUT", f"/networks/{first.id}", {"network": body}).status_code == 400
    assert raw("GET", "/networks?is_default=maybe").status_code == 400
