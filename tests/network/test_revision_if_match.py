"""``If-Match: revision_number=N`` on updates (neutron's revision-if-match): the update
goes ahead at revision N and is 412 RevisionNumberConstraintFailed at any other, through
openstacksdk's ``if_revision=`` as a user sends it."""
from __future__ import annotations

import pytest
from network_helpers import unique
from openstack import exceptions as sdk_exc


def _stale(update, resource, **attrs):
    """An update constrained to a revision the object has left: 412, nothing changed."""
    with pytest.raises(sdk_exc.PreconditionFailedException) as caught:
        # by id: the sdk sends a header again only when its value changed on the object
        update(resource.id, if_revision=resource.revision_number - 1, **attrs)
    assert caught.value.status_code == 412
    assert (f"Constrained to {resource.revision_number - 1}, but current revision is "
            f"{resource.revision_number}") in str(caught.value)


def _round_trip(update, resource, **attrs):
    """At the current revision the update goes through and bumps the revision; the same
    constraint is then stale."""
    before = resource.revision_number  # the sdk updates the object it was given
    updated = update(resource, if_revision=before, **attrs)
    assert updated.revision_number > before
    for key, value in attrs.items():
        assert getattr(updated, key) == value
    _stale(update, updated, description="late")
    return updated


def test_extension_is_listed(member_conn):
    assert member_conn.network.find_extension("revision-if-match") is not None


def test_network_subnet_router_group_updates(member_conn):
    net = member_conn.network
    network = net.create_network(name=unique("n"))
    network = _round_trip(net.update_network, network, name=unique("n2"))
    subnet = net.create_subnet(network_id=network.id, ip_version=4, cidr="10.9.0.0/28")
    _round_trip(net.update_subnet, subnet, name=unique("s2"))
    router = net.create_router(name=unique("r"))
    _round_trip(net.update_router, router, name=unique("r2"))
    group = net.create_security_group(name=unique("g"))
    _round_trip(net.update_security_group, group, description="changed")


def test_port_plain_and_full_updates(member_conn, member_raw):
    net = member_conn.network
    network = net.create_network(name=unique("n"))
    net.create_subnet(network_id=network.id, ip_version=4, cidr="10.9.1.0/28")
    port = net.create_port(network_id=network.id)
    # a name alone takes the compare-and-swap path
    port = _round_trip(net.update_port, port, name=unique("p"))
    # fixed IPs take the locked path
    port = net.get_port(port)
    with pytest.raises(sdk_exc.PreconditionFailedException):
        net.update_port(port, if_revision=port.revision_number + 5, fixed_ips=[])
    assert net.get_port(port).fixed_ips == port.fixed_ips
    updated = net.update_port(port, if_revision=port.revision_number, fixed_ips=[])
    assert updated.fixed_ips == []
    # the raw error is neutron's
    response = member_raw("PUT", f"/ports/{port.id}", {"port": {"name": "x"}},
                          headers={"If-Match": "revision_number=0"})
    assert response.status_code == 412
    assert response.json() == {"NeutronError": {
        "type": "RevisionNumberConstraintFailed",
        "message": f"Constrained to 0, but current revision is {updated.revision_number}",
        "detail": ""}}


def test_floating_ip_update(admin_conn, member_conn):
    public = admin_conn.network.create_network(name=unique("public"), is_router_external=True)
    try:
        admin_conn.network.create_subnet(network_id=public.id, ip_version=4,
                                         cidr="172.24.9.0/28", enable_dhcp=False)
        fip = member_conn.network.create_ip(floating_network_id=public.id)
        _round_trip(member_conn.network.update_ip, fip, description="changed")
        member_conn.network.delete_ip(fip)
    finally:
        admin_conn.network.delete_network(public)


def _raw_round_trip(raw, path: str, key: str, revision: int) -> None:
    """openstacksdk sends If-Match only for its NetworkResource types (not QoS policies,
    subnet pools or trunks): these go through keystoneauth as a client would send it."""
    response = raw("PUT", path, {key: {"description": "changed"}},
                   headers={"If-Match": f"revision_number={revision}"})
    assert response.status_code == 200, response.text
    current = response.json()[key]["revision_number"]
    assert current > revision
    response = raw("PUT", path, {key: {"description": "late"}},
                   headers={"If-Match": f"revision_number={revision}"})
    assert response.status_code == 412
    assert response.json()["NeutronError"] == {
        "type": "RevisionNumberConstraintFailed",
        "message": f"Constrained to {revision}, but current revision is {current}",
        "detail": ""}
    assert raw("GET", path).json()[key]["description"] == "changed"


def test_qos_policy_pool_trunk_updates(admin_conn, member_conn, raw, member_raw):
    policy = admin_conn.network.create_qos_policy(name=unique("q"))  # admin's, as neutron
    _raw_round_trip(raw, f"/qos/policies/{policy.id}", "policy", policy.revision_number)
    admin_conn.network.delete_qos_policy(policy)
    net = member_conn.network
    pool = net.create_subnet_pool(name=unique("pool"), prefixes=["10.200.0.0/16"],
                                  default_prefix_length=24)
    _raw_round_trip(member_raw, f"/subnetpools/{pool.id}", "subnetpool", pool.revision_number)
    network = net.create_network(name=unique("n"))
    parent = net.create_port(network_id=network.id)
    trunk = net.create_trunk(port_id=parent.id, name=unique("t"))
    _raw_round_trip(member_raw, f"/trunks/{trunk.id}", "trunk", trunk.revision_number)


@pytest.mark.parametrize("header, message", [
    ("revision_number=abc", "Revision number etag must be in the format of "
                            "revision_number=<int>"),
    ('"revision_number=1", "revision_number=2"',
     "Multiple revision_number etags are not supported"),
])
def test_bad_if_match_is_400(member_conn, member_raw, header, message):
    network = member_conn.network.create_network(name=unique("n"))
    response = member_raw("PUT", f"/networks/{network.id}", {"network": {"name": "x"}},
                          headers={"If-Match": header})
    assert response.status_code == 400
    fault = response.json()["NeutronError"]
    assert fault["type"] == "BadRequest" and message in fault["message"]
    assert member_conn.network.get_network(network).name == network.name


def test_other_etags_and_missing_objects(member_conn, member_raw):
    network = member_conn.network.create_network(name=unique("n"))
    # a tag that names no revision, and '*', constrain nothing
    for header in ('"abc"', "*", 'W/"revision_number=99"'):
        response = member_raw("PUT", f"/networks/{network.id}", {"network": {"name": "y"}},
                              headers={"If-Match": header})
        assert response.status_code == 200, (header, response.text)
    # an object that does not exist is still 404
    response = member_raw("PUT", "/networks/00000000-0000-0000-0000-000000000000",
                          {"network": {"name": "z"}}, headers={"If-Match": "revision_number=1"})
    assert response.status_code == 404


def _stale_delete(delete, get, resource):
    """A delete constrained to a revision the object has left is 412 and deletes
    nothing; at the current revision it goes through."""
    with pytest.raises(sdk_exc.PreconditionFailedException):
        delete(resource.id, if_revision=resource.revision_number + 1)
    assert get(resource.id).id == resource.id
    delete(resource.id, if_revision=resource.revision_number)
    with pytest.raises(sdk_exc.NotFoundException):
        get(resource.id)


def test_deletes_honour_if_match(member_conn):
    """neutron checks the constraint on every write of the object, deletes included."""
    net = member_conn.network
    network = net.create_network(name=unique("n"))
    subnet = net.create_subnet(network_id=network.id, ip_version=4, cidr="10.9.2.0/28")
    port = net.create_port(network_id=network.id)
    _stale_delete(net.delete_port, net.get_port, net.get_port(port))
    _stale_delete(net.delete_subnet, net.get_subnet, net.get_subnet(subnet))
    router = net.create_router(name=unique("r"))
    _stale_delete(net.delete_router, net.get_router, router)
    group = net.create_security_group(name=unique("g"))
    rule = net.create_security_group_rule(security_group_id=group.id, direction="ingress",
                                          protocol="tcp", port_range_min=22,
                                          port_range_max=22)
    _stale_delete(net.delete_security_group_rule, net.get_security_group_rule, rule)
    _stale_delete(net.delete_security_group, net.get_security_group,
                  net.get_security_group(group))
    _stale_delete(net.delete_network, net.get_network, net.get_network(network))


def test_raw_deletes_honour_if_match(admin_conn, raw):
    """QoS policies, pools and trunks: the sdk sends no If-Match on their deletes."""
    policy = admin_conn.network.create_qos_policy(name=unique("q"))
    path = f"/qos/policies/{policy.id}"
    response = raw("DELETE", path, headers={"If-Match": "revision_number=7"})
    assert response.status_code == 412
    assert response.json()["NeutronError"]["type"] == "RevisionNumberConstraintFailed"
    assert raw("DELETE", path, headers={
        "If-Match": f"revision_number={policy.revision_number}"}).status_code == 204
    pool = admin_conn.network.create_subnet_pool(name=unique("pool"),
                                                 prefixes=["10.201.0.0/16"])
    response = raw("DELETE", f"/subnetpools/{pool.id}",
                   headers={"If-Match": "revision_number=abc"})
    assert response.status_code == 400
    assert raw("DELETE", f"/subnetpools/{pool.id}").status_code == 204
