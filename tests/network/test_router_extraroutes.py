"""PUT /routers/{id}/add_extraroutes and remove_extraroutes (extraroute-atomic), through
openstacksdk's add_extra_routes_to_router / remove_extra_routes_from_router."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


@pytest.fixture
def router(member_conn):
    net = member_conn.network
    network = net.create_network(name=unique("xr"))
    subnet = net.create_subnet(network_id=network.id, ip_version=4, cidr="10.80.0.0/24")
    router = net.create_router(name=unique("xr"))
    net.add_interface_to_router(router, subnet_id=subnet.id)
    return router


def _routes(router) -> list[tuple]:
    return sorted((r["destination"], r["nexthop"]) for r in router.routes)


def _body(*routes):
    return {"router": {"routes": [{"destination": d, "nexthop": n} for d, n in routes]}}


def test_add_and_remove(member_conn, router):
    net = member_conn.network
    assert net.find_extension("extraroute-atomic", ignore_missing=False)
    updated = net.add_extra_routes_to_router(router, _body(("10.1.0.0/16", "10.80.0.5"),
                                                           ("10.2.0.0/16", "10.80.0.6")))
    assert _routes(updated) == [("10.1.0.0/16", "10.80.0.5"), ("10.2.0.0/16", "10.80.0.6")]
    # a duplicate is merged; the same destination through another nexthop is kept
    updated = net.add_extra_routes_to_router(router, _body(("10.1.0.0/16", "10.80.0.5"),
                                                           ("10.1.0.0/16", "10.80.0.7")))
    assert _routes(updated) == [("10.1.0.0/16", "10.80.0.5"), ("10.1.0.0/16", "10.80.0.7"),
                                ("10.2.0.0/16", "10.80.0.6")]
    assert _routes(net.get_router(router.id)) == _routes(updated)
    # removing a route the router lacks is no error; host bits are masked as on add
    updated = net.remove_extra_routes_from_router(
        router, _body(("10.1.0.0/16", "10.80.0.5"), ("10.2.0.1/16", "10.80.0.6"),
                      ("10.9.0.0/16", "10.80.0.9")))
    assert _routes(updated) == [("10.1.0.0/16", "10.80.0.7")]
    revision = net.get_router(router.id).revision_number
    updated = net.remove_extra_routes_from_router(router, _body(("10.9.0.0/16", "10.80.0.9")))
    assert updated.revision_number == revision  # nothing changed, nothing bumped


def test_errors(member_conn, member_raw, router, cloud):
    net = member_conn.network
    with pytest.raises(sdk_exc.BadRequestException, match="not connected"):
        net.add_extra_routes_to_router(router, _body(("10.1.0.0/16", "192.168.1.1")))
    assert net.get_router(router.id).routes == []
    path = f"/routers/{router.id}/add_extraroutes"
    for body in ({}, {"router": {}}, {"router": {"routes": "x"}},
                 {"router": {"routes": [{"destination": "10.1.0.0/16"}]}},
                 {"router": {"routes": [{"destination": "bad", "nexthop": "10.80.0.5"}]}},
                 {"router": {"routes": [], "name": "x"}}, []):
        status, fault = member_raw.error("PUT", path, body)
        assert status == 400, (body, fault)
    missing = "00000000-0000-0000-0000-000000000000"
    status, _ = member_raw.error("PUT", f"/routers/{missing}/remove_extraroutes", _body())
    assert status == 404
    # another project's router is not found
    other = cloud.user_sdk(cloud.make_user(roles=("member",)))
    with pytest.raises(sdk_exc.NotFoundException):
        other.network.add_extra_routes_to_router(router.id, _body(("10.1.0.0/16",
                                                                    "10.80.0.5")))
    # a stale If-Match is 412 here too
    response = member_raw("PUT", path, _body(("10.1.0.0/16", "10.80.0.5")),
                          headers={"If-Match": "revision_number=999"})
    assert response.status_code == 412


def _many(count: int, first: int = 0) -> dict:
    """``count`` distinct routes through one connected nexthop."""
    return _body(*((f"172.{16 + (i >> 8)}.{i & 255}.0/24", "10.80.0.5")
                   for i in range(first, first + count)))


def test_routes_are_limited_to_max_routes(member_conn, member_raw, router):
    net = member_conn.network
    add = f"/routers/{router.id}/add_extraroutes"
    message = (f"Unable to complete operation for {router.id}. The number of routes "
               "exceeds the maximum 30.")
    # 1,500 in one call, and 31: neutron's RoutesExhausted, nothing stored
    for count in (1500, 31):
        status, fault = member_raw.error("PUT", add, _many(count))
        assert (status, fault["type"], fault["message"]) == (400, "RoutesExhausted",
                                                             message)
    status, fault = member_raw.error("PUT", f"/routers/{router.id}", _many(31))
    assert (status, fault["type"]) == (400, "RoutesExhausted")
    assert net.get_router(router.id).routes == []
    # up to the limit is fine, one more is not: the resulting set counts
    assert len(net.add_extra_routes_to_router(router, _many(20)).routes) == 20
    assert len(net.add_extra_routes_to_router(router, _many(10, first=20)).routes) == 30
    status, fault = member_raw.error("PUT", add, _many(1, first=30))
    assert fault["type"] == "RoutesExhausted"
    # a route already there is no new one
    assert len(net.add_extra_routes_to_router(router, _many(5)).routes) == 30
    assert len(net.get_router(router.id).routes) == 30


def test_a_router_above_a_lowered_limit_may_shed_routes(member_conn, member_raw, router):
    from pocketstack.common import config

    net = member_conn.network
    net.add_extra_routes_to_router(router, _many(10))
    config.CONF.set_override("max_routes", 5, group="network")
    try:
        status, fault = member_raw.error("PUT", f"/routers/{router.id}/add_extraroutes",
                                         _many(1, first=10))
        assert fault["message"].endswith("exceeds the maximum 5.")
        shed = net.remove_extra_routes_from_router(router, _many(3))
        assert len(shed.routes) == 7
        assert len(net.update_router(router, routes=_many(6)["router"]["routes"])
                   .routes) == 6
    finally:
        config.CONF.clear_override("max_routes", group="network")
