"""Network: rbac-policies (networks, QoS policies, security groups shared with one
project or all) and QoS policies bound to ports and networks — through openstacksdk, the
`openstack network rbac` / `port set --qos-policy` CLI, and plain HTTP for error bodies."""
from __future__ import annotations

import uuid

import pytest
from openstack import exceptions as sdk_exc


def _name(prefix="rbac"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def owner(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture(scope="module")
def friend(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture(scope="module")
def stranger(cloud):
    return cloud.make_user(roles=("member",))


def _error(conn, method, path, body=None) -> tuple[int, dict]:
    resp = conn.session.request(f"/v2.0{path}", method, json=body, raise_exc=False,
                                endpoint_filter={"service_type": "network"})
    assert resp.status_code >= 400, resp.text
    return resp.status_code, resp.json()["NeutronError"]


def test_network_shared_with_one_project(cloud, owner, friend, stranger):
    mine, theirs, other = (cloud.user_sdk(u) for u in (owner, friend, stranger))
    net = mine.network.create_network(name=_name())
    subnet = mine.network.create_subnet(network_id=net.id, cidr="10.61.0.0/24", ip_version=4)
    with pytest.raises(sdk_exc.NotFoundException):
        theirs.network.get_network(net.id)
    policy = mine.network.create_rbac_policy(object_type="network", object_id=net.id,
                                             action="access_as_shared",
                                             target_project_id=friend["project_id"])
    assert (policy.project_id, policy.target_project_id) == (owner["project_id"],
                                                             friend["project_id"])
    # the friend sees it (as shared) and can use it; a third project cannot
    seen = theirs.network.get_network(net.id)
    assert seen.is_shared is True
    assert net.id in [n.id for n in theirs.network.networks()]
    assert net.id in [n.id for n in theirs.network.networks(is_shared=True)]
    assert net.id not in [n.id for n in theirs.network.networks(is_shared=False)]
    assert mine.network.get_network(net.id).is_shared is False  # not shared with everyone
    assert net.id not in [n.id for n in other.network.networks()]
    with pytest.raises(sdk_exc.NotFoundException):
        other.network.create_port(network_id=net.id)
    port = theirs.network.create_port(network_id=net.id)
    assert port.project_id == friend["project_id"] and port.fixed_ips[0]["subnet_id"] == \
        subnet.id
    assert theirs.network.get_subnet(subnet.id).network_id == net.id
    assert subnet.id not in [x.id for x in other.network.subnets()]
    # a policy the friend's port depends on cannot go, as neutron's RbacPolicyInUse
    status, error = _error(mine, "DELETE", f"/rbac-policies/{policy.id}")
    assert (status, error["type"]) == (409, "RbacPolicyInUse")
    # ... nor be moved to another project; a '*' policy is for admins only
    status, error = _error(mine, "PUT", f"/rbac-policies/{policy.id}",
                           {"rbac_policy": {"target_tenant": stranger["project_id"]}})
    assert (status, error["type"]) == (409, "RbacPolicyInUse")
    status, _ = _error(mine, "POST", "/rbac-policies", {"rbac_policy": {
        "object_type": "network", "object_id": net.id, "action": "access_as_shared",
        "target_tenant": "*"}})
    assert status == 403
    status, error = _error(mine, "POST", "/rbac-policies", {"rbac_policy": {
        "object_type": "network", "object_id": net.id, "action": "access_as_shared",
        "target_tenant": friend["project_id"]}})
    assert (status, error["type"]) == (409, "DuplicateRbacPolicy")
    # only the owner manages the network's policies, and sees them
    status, _ = _error(theirs, "POST", "/rbac-policies", {"rbac_policy": {
        "object_type": "network", "object_id": net.id, "action": "access_as_shared",
        "target_tenant": stranger["project_id"]}})
    assert status == 400
    assert [p.id for p in mine.network.rbac_policies(object_id=net.id)] == [policy.id]
    assert list(theirs.network.rbac_policies(object_id=net.id)) == []
    theirs.network.delete_port(port)
    mine.network.delete_rbac_policy(policy)
    with pytest.raises(sdk_exc.NotFoundException):
        theirs.network.get_network(net.id)
    mine.network.delete_network(net)


def test_bad_rbac_requests(cloud, owner):
    conn = cloud.user_sdk(owner)
    net = conn.network.create_network(name=_name())
    for body, status in (
            ({"object_type": "router", "object_id": net.id, "action": "access_as_shared",
              "target_tenant": "x"}, 400),
            ({"object_type": "qos_policy", "object_id": str(uuid.uuid4()),
              "action": "access_as_external", "target_tenant": "x"}, 400),
            ({"object_type": "network", "object_id": "not-a-uuid",
              "action": "access_as_shared", "target_tenant": "x"}, 400),
            ({"object_type": "network", "object_id": net.id, "action": "access_as_shared"},
             400),
            ({"object_type": "network", "object_id": str(uuid.uuid4()),
              "action": "access_as_shared", "target_tenant": "x"}, 404)):
        assert _error(conn, "POST", "/rbac-policies", {"rbac_policy": body})[0] == status
    assert _error(conn, "GET", f"/rbac-policies/{uuid.uuid4()}")[0] == 404
    conn.network.delete_network(net)


def test_shared_flag_and_wildcard_policy_agree(cloud, stranger):
    admin = cloud.sdk()
    net = admin.network.create_network(name=_name(), is_shared=True)
    wildcard = list(admin.network.rbac_policies(object_id=net.id))
    assert [(p.action, p.target_project_id) for p in wildcard] == [("access_as_shared", "*")]
    other = cloud.user_sdk(stranger)
    assert other.network.get_network(net.id).is_shared is True
    admin.network.delete_rbac_policy(wildcard[0])  # unshares it
    assert admin.network.get_network(net.id).is_shared is False
    with pytest.raises(sdk_exc.NotFoundException):
        other.network.get_network(net.id)
    admin.network.update_network(net.id, is_shared=True)
    assert len(list(admin.network.rbac_policies(object_id=net.id))) == 1
    admin.network.delete_network(net)
    assert list(admin.network.rbac_policies(object_id=net.id)) == []


def test_external_for_one_project(cloud, owner, stranger):
    admin = cloud.sdk()
    ext = admin.network.create_network(name=_name("ext"))
    admin.network.create_subnet(network_id=ext.id, cidr="10.62.0.0/24", ip_version=4)
    admin.network.create_rbac_policy(object_type="network", object_id=ext.id,
                                     action="access_as_external",
                                     target_project_id=owner["project_id"])
    mine = cloud.user_sdk(owner)
    assert mine.network.get_network(ext.id).is_router_external is True
    assert ext.id in [n.id for n in mine.network.networks(is_router_external=True)]
    fip = mine.network.create_ip(floating_network_id=ext.id)
    with pytest.raises(sdk_exc.NotFoundException):
        cloud.user_sdk(stranger).network.create_ip(floating_network_id=ext.id)
    policy = next(iter(admin.network.rbac_policies(object_id=ext.id)))
    status, error = _error(admin, "DELETE", f"/rbac-policies/{policy.id}")
    assert (status, error["type"]) == (409, "RbacPolicyInUse")
    mine.network.delete_ip(fip)
    admin.network.delete_rbac_policy(policy)
    admin.network.delete_network(ext)


def test_security_group_and_qos_policy_shared(cloud, owner, friend):
    admin, mine, theirs = cloud.sdk(), cloud.user_sdk(owner), cloud.user_sdk(friend)
    group = mine.network.create_security_group(name=_name("sg"))
    qos = admin.network.create_qos_policy(name=_name("qos"), project_id=owner["project_id"])
    theirs_net = theirs.network.create_network(name=_name())
    theirs.network.create_subnet(network_id=theirs_net.id, cidr="10.63.0.0/24", ip_version=4)
    with pytest.raises(sdk_exc.NotFoundException):
        theirs.network.create_port(network_id=theirs_net.id, security_group_ids=[group.id])
    with pytest.raises(sdk_exc.NotFoundException):
        theirs.network.create_port(network_id=theirs_net.id, qos_policy_id=qos.id)
    sg_policy = mine.network.create_rbac_policy(object_type="security_group",
                                                object_id=group.id, action="access_as_shared",
                                                target_project_id=friend["project_id"])
    qos_policy = admin.network.create_rbac_policy(object_type="qos_policy", object_id=qos.id,
                                                  action="access_as_shared",
                                                  target_project_id=friend["project_id"])
    assert theirs.network.get_security_group(group.id).is_shared is True
    assert mine.network.get_security_group(group.id).is_shared is False
    assert theirs.network.get_qos_policy(qos.id).is_shared is True
    assert admin.network.get_qos_policy(qos.id).is_shared is False
    port = theirs.network.create_port(network_id=theirs_net.id, security_group_ids=[group.id],
                                      qos_policy_id=qos.id)
    assert port.security_group_ids == [group.id] and port.qos_policy_id == qos.id
    for policy, conn in ((sg_policy, mine), (qos_policy, admin)):
        status, error = _error(conn, "DELETE", f"/rbac-policies/{policy.id}")
        assert (status, error["type"]) == (409, "RbacPolicyInUse")
    theirs.network.delete_port(port)
    mine.network.delete_rbac_policy(sg_policy)
    admin.network.delete_rbac_policy(qos_policy)
    with pytest.raises(sdk_exc.NotFoundException):
        theirs.network.get_security_group(group.id)
    theirs.network.delete_network(theirs_net)
    mine.network.delete_security_group(group)
    admin.network.delete_qos_policy(qos)


def test_qos_policy_on_ports_and_networks(cloud, owner):
    admin, mine = cloud.sdk(), cloud.user_sdk(owner)
    qos = admin.network.create_qos_policy(name=_name("qos"), project_id=owner["project_id"])
    other_qos = admin.network.create_qos_policy(name=_name("qos"),
                                                project_id=owner["project_id"])
    net = mine.network.create_network(name=_name(), qos_policy_id=qos.id)
    assert net.qos_policy_id == qos.id
    mine.network.create_subnet(network_id=net.id, cidr="10.64.0.0/24", ip_version=4)
    port = mine.network.create_port(network_id=net.id)
    assert (port.qos_policy_id, port.qos_network_policy_id) == (None, qos.id)
    port = mine.network.update_port(port, qos_policy_id=other_qos.id)
    assert port.qos_policy_id == other_qos.id
    assert [p.id for p in mine.network.ports(qos_policy_id=other_qos.id)] == [port.id]
    # a bound policy cannot be deleted, as neutron's QosPolicyInUse
    for policy in (qos, other_qos):
        status, error = _error(admin, "DELETE", f"/qos/policies/{policy.id}")
        assert (status, error["type"]) == (409, "QosPolicyInUse")
    assert mine.network.update_port(port, qos_policy_id=None).qos_policy_id is None
    mine.network.update_network(net, qos_policy_id=None)
    assert mine.network.get_port(port.id).qos_network_policy_id is None
    status, _ = _error(mine, "PUT", f"/ports/{port.id}",
                       {"port": {"qos_policy_id": str(uuid.uuid4())}})
    assert status == 404
    mine.network.delete_port(port)
    mine.network.delete_network(net)
    admin.network.delete_qos_policy(qos)
    admin.network.delete_qos_policy(other_qos)


def test_default_qos_policy_applies_to_new_networks(cloud, owner):
    admin, mine = cloud.sdk(), cloud.user_sdk(owner)
    # the SDK's cloud layer (what Ansible's modules call) asks for the qos extensions first
    qos = admin.create_qos_policy(name=_name("qos"), project_id=owner["project_id"],
                                  default=True)
    assert qos.is_default is True
    net = mine.network.create_network(name=_name())
    assert net.qos_policy_id == qos.id
    mine.network.delete_network(net)
    admin.network.delete_qos_policy(qos)


def test_rbac_and_qos_cli_flows(cloud, friend):
    net = cloud.cli("network", "create", _name("cli"), "-f", "json")
    created = cloud.cli("network", "rbac", "create", "--type", "network", "--action",
                        "access_as_shared", "--target-project", friend["project_id"],
                        net["id"], "-f", "json")
    assert created["target_project_id"] == friend["project_id"]
    listed = cloud.cli("network", "rbac", "list", "-f", "json")
    assert created["id"] in [p["ID"] for p in listed]
    shown = cloud.cli("network", "rbac", "show", created["id"], "-f", "json")
    assert shown["object_id"] == net["id"]
    cloud.cli("network", "rbac", "delete", created["id"])
    policy = cloud.cli("network", "qos", "policy", "create", _name("qos"), "-f", "json")
    cloud.cli("network", "qos", "rule", "create", "--type", "bandwidth-limit", "--max-kbps",
              "1000", policy["id"])
    port = cloud.cli("port", "create", "--network", net["id"], _name("port"), "-f", "json")
    cloud.cli("port", "set", "--qos-policy", policy["id"], port["id"])
    assert cloud.cli("port", "show", port["id"], "-f", "json")["qos_policy_id"] == policy["id"]
    refused = cloud.cli("network", "qos", "policy", "delete", policy["id"], check=False)
    assert refused.returncode != 0
    cloud.cli("port", "unset", "--qos-policy", port["id"])
    cloud.cli("port", "delete", port["id"])
    cloud.cli("network", "qos", "policy", "delete", policy["id"])
    cloud.cli("network", "delete", net["id"])


def test_server_boots_on_a_network_shared_with_its_project(cloud, owner, friend, stranger):
    mine, theirs = cloud.user_sdk(owner), cloud.user_sdk(friend)
    net = mine.network.create_network(name=_name())
    mine.network.create_subnet(network_id=net.id, cidr="10.65.0.0/24", ip_version=4)
    policy = mine.network.create_rbac_policy(object_type="network", object_id=net.id,
                                             action="access_as_shared",
                                             target_project_id=friend["project_id"])
    admin = cloud.sdk()
    image = admin.image.create_image(name=_name("img"), data=b"x" * 64, disk_format="raw",
                                     container_format="bare", visibility="public")
    with pytest.raises(sdk_exc.BadRequestException):  # not shared with this project
        cloud.user_sdk(stranger).compute.create_server(
            name=_name("vm"), image_id=image.id, flavor_id="42", networks=[{"uuid": net.id}])
    server = theirs.compute.create_server(name=_name("vm"), image_id=image.id, flavor_id="42",
                                          networks=[{"uuid": net.id}])
    server = theirs.compute.wait_for_server(server, status="ACTIVE", wait=60)
    assert list(server.addresses) == [net.name]
    status, error = _error(mine, "DELETE", f"/rbac-policies/{policy.id}")
    assert (status, error["type"]) == (409, "RbacPolicyInUse")
    theirs.compute.delete_server(server)
    theirs.compute.wait_for_delete(server, wait=60)
    mine.network.delete_rbac_policy(policy)
    mine.network.delete_network(net)
    admin.image.delete_image(image)


def test_segment_rename_and_the_first_stays(cloud, owner):
    admin = cloud.sdk()
    net = admin.network.create_network(name=_name("seg"))
    [segment] = admin.network.segments(network_id=net.id)
    renamed = admin.network.update_segment(segment, name="rack-1", description="first rack")
    assert (renamed.name, renamed.description) == ("rack-1", "first rack")
    assert admin.network.get_segment(segment.id).name == "rack-1"
    second = admin.network.create_segment(network_id=net.id, network_type="vlan",
                                          physical_network="physnet1")
    assert second.segmentation_id is not None
    admin.network.delete_segment(second)  # a further segment goes; the first stays
    status, error = _error(admin, "DELETE", f"/segments/{segment.id}")
    assert (status, error["type"]) == (409, "SegmentInUse")
    member = cloud.user_sdk(owner)
    assert _error(member, "PUT", f"/segments/{segment.id}", {"segment": {"name": "x"}})[0] \
        == 403
    assert _error(admin, "PUT", f"/segments/{segment.id}", {"segment": {"mtu": 1}})[0] == 400
    assert _error(admin, "PUT", f"/segments/{uuid.uuid4()}", {"segment": {"name": "x"}})[0] \
        == 404
    admin.network.delete_network(net)


def test_unsharing_keeps_projects_with_their_own_policy(cloud, friend, stranger):
    admin = cloud.sdk()
    net = admin.network.create_network(name=_name(), is_shared=True)
    admin.network.create_subnet(network_id=net.id, cidr="10.66.0.0/24", ip_version=4)
    admin.network.create_rbac_policy(object_type="network", object_id=net.id,
                                     action="access_as_shared",
                                     target_project_id=friend["project_id"])
    theirs, other = cloud.user_sdk(friend), cloud.user_sdk(stranger)
    kept = theirs.network.create_port(network_id=net.id)
    lost = other.network.create_port(network_id=net.id)
    status, error = _error(admin, "PUT", f"/networks/{net.id}", {"network": {"shared": False}})
    assert (status, error["type"]) == (409, "InvalidSharedSetting")
    other.network.delete_port(lost)
    assert admin.network.update_network(net.id, is_shared=False).is_shared is False
    assert theirs.network.get_network(net.id).is_shared is True  # its own policy remains
    theirs.network.delete_port(kept)
    admin.network.delete_network(net)
