"""neutron's vlan-transparent extension: a network may be asked to pass VLAN-tagged frames
at create (the Linux bridges do), the flag shows on every view and filters lists, and it
cannot change afterwards."""
from __future__ import annotations

from network_helpers import unique


def test_vlan_transparent_networks(member_conn, member_raw, raw):
    assert raw("GET", "/extensions/vlan-transparent").status_code == 200
    tagged = member_conn.network.create_network(name=unique("qinq"), is_vlan_transparent=True)
    plain = member_conn.network.create_network(name=unique("plain"))
    assert member_conn.network.get_network(tagged.id).is_vlan_transparent is True
    assert member_conn.network.get_network(plain.id).is_vlan_transparent is False
    listed = {n["id"] for n in member_raw("GET", "/networks?vlan_transparent=True")
              .json()["networks"]}
    assert tagged.id in listed and plain.id not in listed

    status, fault = member_raw.error("PUT", f"/networks/{tagged.id}",
                                     {"network": {"vlan_transparent": False}})
    assert status == 400 and "vlan_transparent" in fault["message"], fault
    status, fault = member_raw.error("POST", "/networks",
                                     {"network": {"vlan_transparent": "maybe"}})
    assert status == 400 and "vlan_transparent" in fault["message"], fault
    assert member_conn.network.get_network(tagged.id).is_vlan_transparent is True
    for network in (tagged, plain):
        member_conn.network.delete_network(network)
