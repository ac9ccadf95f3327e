"""Quotas per project through /v2.0/quotas, and 409 OverQuota when one is exceeded."""
from __future__ import annotations

from network_helpers import Raw


def test_quota_show_set_details_default(cloud, member, member_conn, member_raw, raw):
    project = member["project_id"]
    quota = member_raw("GET", f"/quotas/{project}").json()["quota"]
    assert quota == {"network": 100, "subnet": 100, "port": 500, "router": 10,
                     "floatingip": 50, "security_group": 10, "security_group_rule": 100,
                     "rbac_policy": 10, "subnetpool": -1}
    assert raw("GET", f"/quotas/{project}/default").json()["quota"] == quota
    # members may not raise their own quotas
    status, fault = member_raw.error("PUT", f"/quotas/{project}", {"quota": {"network": 5}})
    assert status == 403
    updated = raw("PUT", f"/quotas/{project}", {"quota": {"network": 1, "port": 3}})
    assert updated.json()["quota"]["network"] == 1
    member_conn.network.create_network(name="one")
    status, fault = member_raw.error("POST", "/networks", {"network": {"name": "two"}})
    assert (status, fault["type"]) == (409, "OverQuota")
    assert fault["message"] == "Quota exceeded for resources: ['network']."
    details = raw("GET", f"/quotas/{project}/details").json()["quota"]
    assert details["network"] == {"limit": 1, "used": 1, "reserved": 0}
    assert details["security_group"]["used"] == 1  # the default group
    # check_limit refuses a limit below what is in use
    status, fault = raw.error("PUT", f"/quotas/{project}",
                              {"quota": {"network": 0, "check_limit": True}})
    assert status == 409
    assert raw.error("PUT", f"/quotas/{project}", {"quota": {"widgets": 1}})[0] == 404
    assert raw.error("PUT", f"/quotas/{project}", {"quota": {"network": "lots"}})[0] == 400
    assert raw.error("PUT", f"/quotas/{project}", {"quota": {"network": -2}})[0] == 400
    assert project in [q["project_id"] for q in raw("GET", "/quotas").json()["quotas"]]
    stranger = Raw(cloud.user_session(cloud.make_user(roles=("member",))))
    assert stranger.error("GET", f"/quotas/{project}")[0] == 403
    assert raw("DELETE", f"/quotas/{project}").status_code == 204
    assert member_raw("GET", f"/quotas/{project}").json()["quota"]["network"] == 100


def test_over_quota_for_each_resource(cloud, member, member_conn, member_raw, raw):
    project = member["project_id"]
    raw("PUT", f"/quotas/{project}", {"quota": {
        "subnet": 1, "port": 2, "security_group": 2, "security_group_rule": 5, "router": 1}})
    net = member_conn.network.create_network(name="q")
    member_conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.0.0.0/24")
    assert member_raw.error("POST", "/subnets", {"subnet": {
        "network_id": net.id, "ip_version": 4, "cidr": "10.1.0.0/24"}})[1]["type"] == \
        "OverQuota"
    member_conn.network.create_port(network_id=net.id)  # the DHCP port counts too (neutron)
    assert member_raw.error("POST", "/ports", {"port": {"network_id": net.id}})[0] == 409
    group = member_conn.network.create_security_group(name="sg")  # default + this one
    assert member_raw.error("POST", "/security-groups",
                            {"security_group": {"name": "x"}})[0] == 409
    # 4 default rules + 2 egress rules of the new group already count
    status, fault = member_raw.error("POST", "/security-group-rules", {"security_group_rule": {
        "security_group_id": group.id, "direction": "ingress", "protocol": "tcp"}})
    assert (status, fault["type"]) == (409, "OverQuota")
    member_conn.network.create_router(name="r")
    assert member_raw.error("POST", "/routers", {"router": {"name": "r2"}})[0] == 409


def test_rbac_policy_and_subnetpool_quotas(cloud, member, member_conn, member_raw, raw):
    """openstacksdk's quota carries rbac_policies and subnet_pools (neutron's rbac_policy
    and subnetpool); both are enforced on create as the others are."""
    project = member["project_id"]
    quota = cloud.sdk().network.get_quota(project)
    assert (quota.rbac_policies, quota.subnet_pools) == (10, -1)
    cloud.sdk().network.update_quota(project, rbac_policies=1, subnet_pools=1)
    details = raw("GET", f"/quotas/{project}/details").json()["quota"]
    assert details["rbac_policy"] == {"limit": 1, "used": 0, "reserved": 0}
    assert details["subnetpool"] == {"limit": 1, "used": 0, "reserved": 0}

    member_conn.network.create_subnet_pool(name="p1", prefixes=["10.210.0.0/16"])
    status, fault = member_raw.error("POST", "/subnetpools", {"subnetpool": {
        "name": "p2", "prefixes": ["10.211.0.0/16"]}})
    assert (status, fault["type"]) == (409, "OverQuota")
    assert fault["message"] == "Quota exceeded for resources: ['subnetpool']."

    network = member_conn.network.create_network(name="shared-to-one")
    others = [cloud.make_user(roles=("member",))["project_id"] for _ in range(2)]
    member_conn.network.create_rbac_policy(object_type="network", object_id=network.id,
                                           action="access_as_shared",
                                           target_project_id=others[0])
    status, fault = member_raw.error("POST", "/rbac-policies", {"rbac_policy": {
        "object_type": "network", "object_id": network.id, "action": "access_as_shared",
        "target_tenant": others[1]}})
    assert (status, fault["type"]) == (409, "OverQuota")
    assert "rbac_policy" in fault["message"]
    assert raw("GET", f"/quotas/{project}/details").json()["quota"]["rbac_policy"][
        "used"] == 1
    assert raw.error("PUT", f"/quotas/{project}", {"quota": {"subnetpool": "x"}})[0] == 400
