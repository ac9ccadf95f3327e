"""Networks of several segments (network/segments.py): a segment added to an existing
network (POST /v2.0/segments) and the multi-provider ``segments`` of a network at create
and show - through openstacksdk."""
from __future__ import annotations

import random

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


def _ids(count: int) -> list[int]:
    """VNIs/VLAN ids no other test asks for."""
    return random.sample(range(3000, 4000), count)


def _provider(network_type, physnet, seg_id) -> dict:
    return {"provider:network_type": network_type, "provider:physical_network": physnet,
            "provider:segmentation_id": seg_id}


def test_segment_added_to_a_network(admin_conn, member_conn, raw, member_raw):
    net = admin_conn.network
    vni, vlan = _ids(2)
    network = net.create_network(name=unique("n"), provider_network_type="vxlan",
                                 provider_segmentation_id=vni)
    first = list(net.segments(network_id=network.id))
    assert [(x.network_type, x.segmentation_id) for x in first] == [("vxlan", vni)]
    second = net.create_segment(network_id=network.id, network_type="vlan",
                                physical_network="physnet-seg", segmentation_id=vlan,
                                name="second")
    assert (second.network_id, second.name, second.segmentation_id) == (
        network.id, "second", vlan)
    listed = {x.id: x for x in net.segments(network_id=network.id)}
    assert set(listed) == {first[0].id, second.id}
    assert net.get_segment(second.id).physical_network == "physnet-seg"
    # the network shows both, as multi-provider's segments (admins only)
    shown = net.get_network(network.id)
    assert shown.segments == [_provider("vxlan", None, vni),
                              _provider("vlan", "physnet-seg", vlan)]
    assert shown.provider_network_type is None
    seen = member_raw("GET", f"/networks/{network.id}").status_code
    assert seen == 404  # not shared: members do not see it at all
    # a segment is used once, whichever network holds it, and ids are allocated past it
    status, fault = raw.error("POST", "/segments", {"segment": {
        "network_id": network.id, "network_type": "vlan",
        "physical_network": "physnet-seg", "segmentation_id": vlan}})
    assert (status, fault["type"]) == (409, "SegmentationIdInUse")
    with pytest.raises(sdk_exc.ConflictException):
        net.create_network(name=unique("n"), provider_network_type="vlan",
                           provider_physical_network="physnet-seg",
                           provider_segmentation_id=vlan)
    third = net.create_segment(network_id=network.id, network_type="vxlan",
                               project_id=network.project_id)
    assert third.segmentation_id not in (None, vni)
    assert net.update_segment(third, name="third").name == "third"
    # further segments go; the first one stays with the network
    net.delete_segment(third)
    net.delete_segment(second)
    shown = net.get_network(network.id)
    assert (shown.segments, shown.provider_segmentation_id) == (None, vni)
    status, fault = raw.error("DELETE", f"/segments/{first[0].id}")
    assert (status, fault["type"]) == (409, "SegmentInUse")
    net.create_segment(network_id=network.id, network_type="vxlan")
    net.delete_network(network)
    assert list(net.segments(network_id=network.id)) == []
    # bad requests, as neutron's
    for body, status in (({"network_type": "vxlan"}, 400),
                         ({"network_id": network.id, "network_type": "vxlan"}, 404),
                         ({"network_id": first[0].network_id}, 400),
                         ({"network_id": "x", "network_type": "vxlan"}, 400),
                         ({"network_id": network.id, "network_type": "gre"}, 400)):
        assert raw("POST", "/segments", {"segment": body}).status_code == status, body
    assert member_raw("POST", "/segments", {"segment": {
        "network_id": network.id, "network_type": "vxlan"}}).status_code == 403
    for alias in ("segment", "multi-provider"):
        assert net.find_extension(alias) is not None, alias


def test_multi_provider_network(admin_conn, member_conn, raw):
    net = admin_conn.network
    vni, vlan = _ids(2)
    segments = [_provider("vxlan", None, vni), _provider("vlan", "physnet-mp", vlan)]
    network = net.create_network(name=unique("n"), segments=segments, shared=True)
    assert network.segments == segments
    assert net.get_network(network.id).segments == segments
    assert {(x.network_type, x.segmentation_id)
            for x in net.segments(network_id=network.id)} == {("vxlan", vni), ("vlan", vlan)}
    # members see the network, not its segments
    assert "segments" not in raw.__class__(member_conn.session)(
        "GET", f"/networks/{network.id}").json()["network"]
    # a segment without an id gets one
    partial = net.create_network(name=unique("n"), segments=[
        _provider("vxlan", None, None), _provider("vxlan", None, None)])
    got = [x["provider:segmentation_id"] for x in partial.segments]
    assert None not in got and len(set(got)) == 2
    net.delete_network(partial)
    # neutron's 400s and 409s
    for body, status, kind in (
            ({"segments": segments, "provider:network_type": "vxlan"}, 400,
             "SegmentsSetInConjunctionWithProviders"),
            ({"segments": [segments[0], segments[0]]}, 400, "SegmentsContainDuplicateEntry"),
            ({"segments": [{"provider:network_type": "vlan"}]}, 400, "InvalidInput"),
            ({"segments": [{"network_type": "vxlan"}]}, 400, "HTTPBadRequest"),
            ({"segments": "vxlan"}, 400, "HTTPBadRequest"),
            ({"segments": [segments[1]]}, 409, "SegmentationIdInUse")):
        status_seen, fault = raw.error("POST", "/networks", {"network": body})
        assert (status_seen, fault["type"]) == (status, kind), body
    with pytest.raises(sdk_exc.ForbiddenException):
        member_conn.network.create_network(name=unique("n"), segments=segments[:1])
    assert raw("PUT", f"/networks/{network.id}",
               {"network": {"segments": segments[:1]}}).status_code == 400
    net.delete_network(network)
