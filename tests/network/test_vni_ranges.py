"""VXLAN networks take their VNI from [network] vni_ranges (ML2's
[ml2_type_vxlan] vni_ranges): the lowest free one; all taken is neutron's 503
NoNetworkAvailable; an admin may still name any VNI (a taken one is a 409); a malformed
setting stops start-up instead of failing creates. The ranges used here are far from
what other tests' networks take (the lowest free ids)."""
from __future__ import annotations

import pytest
from network_helpers import unique

RANGE = ["700001:700002"]


@pytest.fixture
def vni_override():
    from pocketstack.common import config

    conf = config.CONF

    def override(name, value):
        conf.set_override(name, value, group="network")

    try:
        yield override
    finally:
        for name in ("vni_ranges", "tenant_network_type"):
            conf.clear_override(name, group="network")


def test_vxlan_networks_take_vnis_from_the_ranges(admin_conn, member_conn, raw, member_raw,
                                                  vni_override):
    vni_override("vni_ranges", RANGE)
    made = []
    try:
        for _ in range(2):
            made.append(admin_conn.network.create_network(name=unique("vx"),
                                                          provider_network_type="vxlan"))
        assert sorted(n.provider_segmentation_id for n in made) == [700001, 700002]
        assert {(n.provider_network_type, n.provider_physical_network, n.mtu)
                for n in made} == {("vxlan", None, 1450)}
        status, fault = raw.error("POST", "/networks", {"network": {
            "name": unique("vx"), "provider:network_type": "vxlan"}})
        assert status == 503 and fault["type"] == "NoNetworkAvailable"
        assert fault["message"] == ("Unable to create the network. No tenant network is "
                                    "available for allocation.")
        # an admin names a VNI outside the ranges; a taken one is a conflict
        made.append(admin_conn.network.create_network(
            name=unique("vx"), provider_network_type="vxlan",
            provider_segmentation_id=700010))
        assert made[-1].provider_segmentation_id == 700010
        status, fault = raw.error("POST", "/networks", {"network": {
            "provider:network_type": "vxlan", "provider:segmentation_id": 700001}})
        assert status == 409 and fault["type"] == "SegmentationIdInUse"
        # a deleted network's VNI is free again; a member's network (tenant type vxlan)
        # takes it, and only admins see it, as in neutron
        freed = made.pop(0)
        admin_conn.network.delete_network(freed)
        vni_override("tenant_network_type", "vxlan")
        mine = member_conn.network.create_network(name=unique("vx"))
        made.append(mine)
        shown = raw("GET", f"/networks/{mine.id}").json()["network"]
        assert (shown["provider:network_type"], shown["provider:segmentation_id"]) == (
            "vxlan", freed.provider_segmentation_id)
        assert "provider:segmentation_id" not in member_raw(
            "GET", f"/networks/{mine.id}").json()["network"]
        segment = next(admin_conn.network.segments(network_id=mine.id))
        assert (segment.network_type, segment.segmentation_id) == (
            "vxlan", freed.provider_segmentation_id)
        # the member has no say in it
        status, _ = member_raw.error("POST", "/networks", {"network": {
            "provider:network_type": "vxlan", "provider:segmentation_id": 700020}})
        assert status == 403
    finally:
        for network in made:
            admin_conn.network.delete_network(network, ignore_missing=True)


def test_several_ranges_are_used_in_order(admin_conn, vni_override):
    vni_override("vni_ranges", ["700031:700031", " 700040:700041"])
    made = []
    try:
        for _ in range(3):
            made.append(admin_conn.network.create_network(name=unique("vx"),
                                                          provider_network_type="vxlan"))
        assert [n.provider_segmentation_id for n in made] == [700031, 700040, 700041]
    finally:
        for network in made:
            admin_conn.network.delete_network(network, ignore_missing=True)


@pytest.mark.parametrize("bad", [["5"], ["9:1"], ["0:10"], ["1:16777216"], ["a:b"], [":"]])
def test_malformed_ranges_stop_start_up(vni_override, bad):
    from pocketstack.common import config
    from pocketstack.network import networks, service

    vni_override("vni_ranges", bad)
    with pytest.raises(config.ConfigError, match="vni_ranges"):
        networks.vni_ranges()
    with pytest.raises(config.ConfigError, match="vni_ranges"):
        service.start(None)  # before it touches anything
