"""Network flavors and service profiles (/v2.0/flavors, /v2.0/service_profiles and their
association) through openstacksdk, admin-only writes as in neutron."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


def test_flavors_profiles_and_association(admin_conn, member_conn, raw, member_raw):
    net = admin_conn.network
    flavor = net.create_flavor(name=unique("fl"), service_type="L3_ROUTER_NAT",
                               description="gold routers")
    assert (flavor.service_type, flavor.is_enabled, flavor.service_profile_ids) == (
        "L3_ROUTER_NAT", True, [])
    profile = net.create_service_profile(description="p", meta_info="{'x': 1}")
    assert profile.meta_info == "{'x': 1}" and profile.driver == ""
    net.associate_flavor_with_service_profile(flavor, profile)
    assert net.get_flavor(flavor.id).service_profile_ids == [profile.id]
    response = raw("GET", f"/flavors/{flavor.id}/service_profiles/{profile.id}")
    assert response.json() == {"service_profile": {"service_profile_id": profile.id,
                                                   "flavor_id": flavor.id}}
    # the sdk's associate/disassociate raise nothing: the errors are seen raw
    response = raw("POST", f"/flavors/{flavor.id}/service_profiles",
                   {"service_profile": {"id": profile.id}})
    assert response.status_code == 409
    assert response.json()["NeutronError"]["type"] == "FlavorServiceProfileBindingExists"
    with pytest.raises(sdk_exc.ConflictException):  # in use by the flavor
        net.delete_service_profile(profile)
    # members read flavors, not profiles, and write neither
    assert flavor.id in {f.id for f in member_conn.network.flavors()}
    assert list(member_conn.network.service_profiles()) == []
    assert member_raw("GET", f"/service_profiles/{profile.id}").status_code == 403
    with pytest.raises(sdk_exc.ForbiddenException):
        member_conn.network.create_flavor(name="x", service_type="L3_ROUTER_NAT")
    updated = net.update_flavor(flavor, name="renamed", is_enabled=False)
    assert (updated.name, updated.is_enabled) == ("renamed", False)
    net.disassociate_flavor_from_service_profile(flavor, profile)
    response = raw("DELETE", f"/flavors/{flavor.id}/service_profiles/{profile.id}")
    assert response.status_code == 404
    assert response.json()["NeutronError"]["type"] == "FlavorServiceProfileBindingNotFound"
    net.delete_service_profile(profile)
    net.delete_flavor(flavor)
    with pytest.raises(sdk_exc.NotFoundException):
        net.get_flavor(flavor.id)
    assert admin_conn.network.find_extension("flavors") is not None


@pytest.mark.parametrize("service_type", ["FLAVORS", "QOS", "trunk", "segments"])
def test_every_loaded_service_type(admin_conn, service_type):
    """neutron's type:service_plugin_type: any loaded plugin, the flavors plugin too."""
    flavor = admin_conn.network.create_flavor(name=unique("fl"), service_type=service_type)
    assert admin_conn.network.get_flavor(flavor.id).service_type == service_type
    admin_conn.network.delete_flavor(flavor)


@pytest.mark.parametrize("path, body, status, kind", [
    ("/flavors", {"flavor": {"name": "x"}}, 400, "HTTPBadRequest"),
    ("/flavors", {"flavor": {"service_type": "NOPE"}}, 400, "InvalidServiceType"),
    ("/flavors", {"flavor": {"service_type": "VPN"}}, 400, "InvalidServiceType"),
    ("/service_profiles", {"service_profile": {"description": "empty"}}, 400,
     "ServiceProfileEmpty"),
    ("/service_profiles", {"service_profile": {"driver": "some.Driver"}}, 404,
     "ServiceProfileDriverNotFound"),
])
def test_bad_requests(raw, path, body, status, kind):
    response = raw("POST", path, body)
    assert response.status_code == status, response.text
    assert response.json()["NeutronError"]["type"] == kind
