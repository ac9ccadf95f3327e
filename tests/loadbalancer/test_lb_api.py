"""The load balancer service through openstacksdk's load_balancer proxy: the catalog and
version document, the object tree and its state machine, the VIP port in the network
service, the status tree, cascade delete."""
from __future__ import annotations

import pytest

from helpers.cloud import wait_for
from lb_helpers import active, gone


def test_catalog_names_octavia_without_version_and_root_lists_v2(cloud, raw):
    catalog = cloud.session().auth.get_access(cloud.session()).service_catalog.catalog
    entry = next(s for s in catalog if s["type"] == "load-balancer")
    assert entry["name"] == "octavia"
    assert all(e["url"].endswith("/load-balancer") for e in entry["endpoints"])
    versions = raw("GET", "/").json()["versions"]
    current = [v for v in versions if v["status"] == "CURRENT"]
    assert len(current) == 1 and current[0]["links"][0]["href"].endswith("/load-balancer/v2")
    assert raw("GET", "/v2.0/lbaas/loadbalancers").json() == {"loadbalancers": [],
                                                              "loadbalancers_links": []}


def test_full_tree_goes_active_with_vip_port_and_status_tree(conn, subnet):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id, name="web",
                                                 tags=["blue"])
    assert lb.provisioning_status == "PENDING_CREATE" and lb.operating_status == "OFFLINE"
    assert lb.vip_network_id == subnet.network_id and lb.provider == "amphora"
    port = conn.network.get_port(lb.vip_port_id)
    assert port.name == f"octavia-lb-{lb.id}" and port.device_owner == "Octavia"
    assert port.fixed_ips[0]["ip_address"] == lb.vip_address
    lb = active(conn, lb.id)
    assert lb.operating_status == "ONLINE" and lb.tags == ["blue"]
    listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                                  protocol_port=80)
    assert listener.provisioning_status == "PENDING_CREATE"
    assert listener.timeout_client_data == 50000 and listener.connection_limit == -1
    active(conn, lb.id)
    pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN",
                                          session_persistence={"type": "HTTP_COOKIE"})
    active(conn, lb.id)
    assert conn.load_balancer.get_listener(listener.id).default_pool_id == pool.id
    members = []
    for address in ("10.20.0.10", "10.20.0.11"):
        members.append(conn.load_balancer.create_member(
            pool, address=address, protocol_port=8080, subnet_id=subnet.id, weight=2))
        active(conn, lb.id)
    assert conn.load_balancer.get_member(members[0], pool).operating_status == "NO_MONITOR"
    monitor = conn.load_balancer.create_health_monitor(pool_id=pool.id, type="HTTP", delay=5,
                                                       timeout=3, max_retries=3)
    assert monitor.url_path == "/" and monitor.expected_codes == "200"
    active(conn, lb.id)
    status = conn.load_balancer.get_load_balancer_statistics(lb.id)
    assert status.total_connections == 0
    tree = conn.load_balancer.get(f"/lbaas/loadbalancers/{lb.id}/status").json()
    tree = tree["statuses"]["loadbalancer"]
    [li] = tree["listeners"]
    [pl] = li["pools"]
    assert pl["health_monitor"]["type"] == "HTTP"
    assert {m["operating_status"] for m in pl["members"]} == {"ONLINE"}
    assert {m["address"] for m in pl["members"]} == {"10.20.0.10", "10.20.0.11"}
    assert tree["operating_status"] == "ONLINE"

    conn.load_balancer.delete_load_balancer(lb.id, cascade=True)
    gone(conn, lb.id)
    assert conn.network.find_port(lb.vip_port_id) is None
    assert conn.load_balancer.find_pool(pool.id) is None


def test_pending_load_balancer_is_immutable(cloud, conn, subnet, raw):
    from pocketstack.common import config

    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    config.CONF.set_override("provisioning_delay", 1.0, group="loadbalancer")
    try:
        listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="TCP",
                                                      protocol_port=22)
        code, message = raw.error("POST", "/v2/lbaas/listeners", {"listener": {
            "loadbalancer_id": lb.id, "protocol": "HTTP", "protocol_port": 80}})
        assert code == 409
        assert message == f"Load Balancer {lb.id} is immutable and cannot be updated."
        code, message = raw.error("DELETE", f"/v2/lbaas/loadbalancers/{lb.id}?cascade=true")
        assert code == 409 and "PENDING_UPDATE" in message
    finally:
        config.CONF.clear_override("provisioning_delay", group="loadbalancer")
    active(conn, lb.id)
    assert [li.id for li in conn.load_balancer.listeners(loadbalancer_id=lb.id)] == [listener.id]
    assert conn.load_balancer.get_listener(listener.id).provisioning_status == "ACTIVE"


def test_delete_with_children_needs_cascade(conn, subnet, raw):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    conn.load_balancer.create_pool(loadbalancer_id=lb.id, protocol="TCP",
                                   lb_algorithm="LEAST_CONNECTIONS")
    active(conn, lb.id)
    code, message = raw.error("DELETE", f"/v2/lbaas/loadbalancers/{lb.id}")
    assert code == 400
    assert message == f"Validation failure: Cannot delete Load Balancer {lb.id} - it has children"
    assert conn.load_balancer.get_load_balancer(lb.id).provisioning_status == "ACTIVE"


def test_member_batch_update_replaces_the_pool_members(conn, subnet, raw):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    pool = conn.load_balancer.create_pool(loadbalancer_id=lb.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    conn.load_balancer.create_member(pool, address="10.20.0.20", protocol_port=80)
    active(conn, lb.id)
    response = raw("PUT", f"/v2/lbaas/pools/{pool.id}/members", {"members": [
        {"address": "10.20.0.20", "protocol_port": 80, "weight": 5},
        {"address": "10.20.0.21", "protocol_port": 80, "backup": True,
         "monitor_address": "10.20.0.31", "monitor_port": 9000}]})
    assert response.status_code == 202, response.text
    active(conn, lb.id)
    got = {m.address: m for m in conn.load_balancer.members(pool)}
    assert set(got) == {"10.20.0.20", "10.20.0.21"}
    assert got["10.20.0.20"].weight == 5 and got["10.20.0.21"].backup
    assert got["10.20.0.21"].monitor_port == 9000
    raw("PUT", f"/v2/lbaas/pools/{pool.id}/members", {"members": [
        {"address": "10.20.0.22", "protocol_port": 80}]})
    active(conn, lb.id)
    assert [m.address for m in conn.load_balancer.members(pool)] == ["10.20.0.22"]


def test_l7_policies_and_rules(conn, subnet, raw):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                                  protocol_port=80)
    active(conn, lb.id)
    pool = conn.load_balancer.create_pool(loadbalancer_id=lb.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    first = conn.load_balancer.create_l7_policy(listener_id=listener.id,
                                                action="REDIRECT_TO_POOL",
                                                redirect_pool_id=pool.id)
    active(conn, lb.id)
    second = conn.load_balancer.create_l7_policy(listener_id=listener.id, action="REJECT",
                                                 position=1)
    active(conn, lb.id)
    assert conn.load_balancer.get_l7_policy(second.id).position == 1
    assert conn.load_balancer.get_l7_policy(first.id).position == 2
    rule = conn.load_balancer.create_l7_rule(first, type="PATH", compare_type="STARTS_WITH",
                                             value="/api")
    active(conn, lb.id)
    assert conn.load_balancer.get_l7_rule(rule, first).provisioning_status == "ACTIVE"
    assert [li["id"] for li in conn.load_balancer.get_pool(pool.id).listeners] == [listener.id]
    code, message = raw.error("DELETE", f"/v2/lbaas/pools/{pool.id}")
    assert code == 409 and message == f"Pool {pool.id} is in use by L7 policy {first.id}"
    code, message = raw.error("POST", f"/v2/lbaas/l7policies/{first.id}/rules", {"rule": {
        "type": "HEADER", "compare_type": "EQUAL_TO", "value": "x"}})
    assert code == 400 and "requires a key" in message
    # A redirect to the listener itself that matches every request would loop.
    code, message = raw.error("POST", "/v2/lbaas/l7policies", {"l7policy": {
        "listener_id": listener.id, "action": "REDIRECT_PREFIX",
        "redirect_prefix": f"http://{lb.vip_address}"}})
    assert code == 400 and "back to this listener" in message
    conn.load_balancer.delete_l7_policy(first.id)
    active(conn, lb.id)
    assert conn.load_balancer.get_l7_policy(second.id).position == 1
    with pytest.raises(Exception):
        conn.load_balancer.get_l7_rule(rule, first)


def test_failover_quota_and_other_projects(cloud, conn, subnet, admin_conn, raw, admin_raw):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    code, _ = raw.error("PUT", f"/v2/lbaas/loadbalancers/{lb.id}/failover")
    assert code == 403
    assert admin_raw("PUT", f"/v2/lbaas/loadbalancers/{lb.id}/failover").status_code == 202
    active(conn, lb.id)
    [amphora] = admin_conn.load_balancer.amphorae(loadbalancer_id=lb.id)
    assert amphora.status == "ALLOCATED" and amphora.ha_ip == lb.vip_address
    assert raw("GET", "/v2/octavia/amphorae").status_code == 403

    project = conn.current_project_id
    response = admin_raw("PUT", f"/v2/lbaas/quotas/{project}", {"quota": {"load_balancer": 1}})
    assert response.status_code == 202 and response.json()["quota"]["loadbalancer"] == 1
    code, message = raw.error("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": subnet.id}})
    assert code == 403 and message == "Quota has been met for resources: Load Balancer"

    other = cloud.user_sdk(cloud.make_user())
    assert [x.id for x in other.load_balancer.load_balancers()] == []
    from lb_helpers import Raw
    stranger = Raw(other.session)
    code, _ = stranger.error("GET", f"/v2/lbaas/loadbalancers/{lb.id}")
    assert code == 403
    code, message = stranger.error("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": subnet.id}})
    assert code == 400 and message == f"Subnet {subnet.id} not found."
    pool = conn.load_balancer.create_pool(loadbalancer_id=lb.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    their_net = other.network.create_network(name="theirs")
    their_subnet = other.network.create_subnet(network_id=their_net.id, ip_version=4,
                                               cidr="10.30.0.0/24")
    code, message = raw.error("POST", f"/v2/lbaas/pools/{pool.id}/members", {"member": {
        "address": "10.30.0.5", "protocol_port": 80, "subnet_id": their_subnet.id}})
    assert code == 400 and message == f"Subnet {their_subnet.id} not found."
    assert list(conn.load_balancer.members(pool)) == []


def test_providers_flavors_and_zones(admin_conn, admin_raw, raw, subnet):
    names = {p.name for p in admin_conn.load_balancer.providers()}
    assert {"amphora", "octavia"} <= names
    caps = admin_raw("GET", "/v2/lbaas/providers/amphora/flavor_capabilities").json()
    assert "loadbalancer_topology" in {c["name"] for c in caps["flavor_capabilities"]}
    profile = admin_conn.load_balancer.create_flavor_profile(
        name="single", provider_name="amphora", flavor_data='{"loadbalancer_topology": "SINGLE"}')
    flavor = admin_conn.load_balancer.create_flavor(name="basic", flavor_profile_id=profile.id)
    assert flavor.is_enabled
    code, message = admin_raw.error("POST", "/v2/lbaas/flavorprofiles", {"flavorprofile": {
        "name": "x", "provider_name": "amphora", "flavor_data": '{"bogus": 1}'}})
    assert code == 400 and "bogus" in message
    zprofile = admin_conn.load_balancer.create_availability_zone_profile(
        name="z", provider_name="amphora", availability_zone_data='{"compute_zone": "nova"}')
    zone = admin_conn.load_balancer.create_availability_zone(
        name="az1", availability_zone_profile_id=zprofile.id)
    assert zone.name == "az1"
    assert raw("GET", "/v2/lbaas/flavors").json()["flavors"][0]["name"] == "basic"
    code, _ = raw.error("POST", "/v2/lbaas/flavors", {"flavor": {
        "name": "mine", "flavor_profile_id": profile.id}})
    assert code == 403
    code, _ = admin_raw.error("DELETE", f"/v2/lbaas/flavorprofiles/{profile.id}")
    assert code == 409
    qos = admin_conn.network.create_qos_policy(name="lb-qos")
    lb = admin_conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id,
                                                       flavor_id=flavor.id,
                                                       availability_zone="az1",
                                                       vip_qos_policy_id=qos.id)
    assert (lb.flavor_id, lb.availability_zone) == (flavor.id, "az1")
    assert lb.vip_qos_policy_id == qos.id
    code, _ = admin_raw.error("DELETE", f"/v2/lbaas/flavors/{flavor.id}")
    assert code == 409
    admin_conn.load_balancer.update_flavor(flavor.id, enabled=False)
    code, message = admin_raw.error("POST", "/v2/lbaas/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": subnet.id, "flavor_id": flavor.id}})
    assert code == 400 and "not allowed" in message
    active(admin_conn, lb.id)
    admin_conn.load_balancer.delete_load_balancer(lb.id)
    gone(admin_conn, lb.id)
    admin_conn.network.delete_qos_policy(qos)
    admin_conn.load_balancer.delete_flavor(flavor.id)
    admin_conn.load_balancer.delete_flavor_profile(profile.id)
    admin_conn.load_balancer.delete_availability_zone(zone.name)
    admin_conn.load_balancer.delete_availability_zone_profile(zprofile.id)


def test_listing_pages_through_next_links(conn, subnet):
    made = [conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id, name=f"p{i}")
            for i in range(3)]
    page = conn.load_balancer.get("/lbaas/loadbalancers?limit=2").json()
    assert len(page["loadbalancers"]) == 2
    [link] = page["loadbalancers_links"]
    assert link["rel"] == "next" and link["href"].startswith("http")
    assert sorted(lb.id for lb in conn.load_balancer.load_balancers(limit=2)) == sorted(
        lb.id for lb in made)
    for lb in made:
        active(conn, lb.id)
        conn.load_balancer.delete_load_balancer(lb.id)


def test_another_projects_pool_is_not_found_and_its_members_forbidden(cloud, conn, subnet):
    from lb_helpers import Raw, make_subnet

    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    pool = conn.load_balancer.create_pool(loadbalancer_id=lb.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    other = cloud.user_sdk(cloud.make_user())
    stranger = Raw(other.session)
    their_lb = other.load_balancer.create_load_balancer(
        vip_subnet_id=make_subnet(other, cidr="10.50.0.0/24").id)
    active(other, their_lb.id)
    code, message = stranger.error("POST", "/v2/lbaas/listeners", {"listener": {
        "loadbalancer_id": their_lb.id, "protocol": "HTTP", "protocol_port": 80,
        "default_pool_id": pool.id}})
    assert code == 404 and message == f"Pool {pool.id} not found."
    code, _ = stranger.error("POST", f"/v2/lbaas/pools/{pool.id}/members", {"member": {
        "address": "10.20.0.9", "protocol_port": 80}})
    assert code == 403
    code, _ = stranger.error("POST", "/v2/lbaas/pools", {"pool": {
        "loadbalancer_id": lb.id, "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"}})
    assert code == 403
    assert list(other.load_balancer.listeners()) == []
    assert list(conn.load_balancer.members(pool)) == []
    assert [p.id for p in conn.load_balancer.pools()] == [pool.id]


def test_fully_populated_create_makes_the_whole_tree_at_once(conn, subnet, raw):
    body = {"loadbalancer": {
        "name": "graph", "vip_subnet_id": subnet.id,
        "listeners": [{"name": "web", "protocol": "HTTP", "protocol_port": 80,
                       "default_pool": {"name": "main"},
                       "l7policies": [{"action": "REDIRECT_TO_POOL",
                                       "redirect_pool": {"name": "api", "protocol": "HTTP",
                                                         "lb_algorithm": "ROUND_ROBIN"},
                                       "rules": [{"type": "PATH", "compare_type": "STARTS_WITH",
                                                  "value": "/api"}]}]}],
        "pools": [{"name": "main", "protocol": "HTTP", "lb_algorithm": "LEAST_CONNECTIONS",
                   "healthmonitor": {"type": "HTTP", "delay": 3, "timeout": 2,
                                     "max_retries": 2},
                   "members": [{"address": "10.20.0.61", "protocol_port": 80},
                               {"address": "10.20.0.62", "protocol_port": 80}]}]}}
    response = raw("POST", "/v2/lbaas/loadbalancers", body)
    assert response.status_code == 201, response.text
    lb = response.json()["loadbalancer"]
    [listener] = lb["listeners"]
    assert listener["provisioning_status"] == "PENDING_CREATE"
    assert listener["l7policies"][0]["rules"][0]["value"] == "/api"
    main = next(p for p in lb["pools"] if p["name"] == "main")
    assert listener["default_pool_id"] == main["id"] and len(main["members"]) == 2
    assert main["healthmonitor"]["type"] == "HTTP"
    active(conn, lb["id"])
    members = list(conn.load_balancer.members(main["id"]))
    assert {m.operating_status for m in members} == {"ONLINE"}
    assert len(list(conn.load_balancer.pools(loadbalancer_id=lb["id"]))) == 2

    # One bad child and nothing is made: no load balancer, no VIP port.
    ports = {p.id for p in conn.network.ports(network_id=subnet.network_id)}
    body["loadbalancer"]["name"] = "bad"
    body["loadbalancer"]["pools"][0]["members"][1]["protocol_port"] = 0
    code, message = raw.error("POST", "/v2/lbaas/loadbalancers", body)
    assert code == 400 and "protocol_port" in message
    assert [x.name for x in conn.load_balancer.load_balancers()] == ["graph"]
    assert {p.id for p in conn.network.ports(network_id=subnet.network_id)} == ports


def test_updates_go_through_pending_update_and_statuses_follow(conn, subnet):
    lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    listener = conn.load_balancer.create_listener(loadbalancer_id=lb.id, protocol="HTTP",
                                                  protocol_port=8080)
    active(conn, lb.id)
    pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    member = conn.load_balancer.create_member(pool, address="10.20.0.70", protocol_port=80)
    active(conn, lb.id)
    monitor = conn.load_balancer.create_health_monitor(pool_id=pool.id, type="TCP", delay=2,
                                                       timeout=1, max_retries=3)
    active(conn, lb.id)
    assert conn.load_balancer.get_member(member, pool).operating_status == "ONLINE"

    updated = conn.load_balancer.update_listener(listener, connection_limit=500,
                                                 insert_headers={"X-Forwarded-For": "true"},
                                                 timeout_client_data=1000)
    assert updated.provisioning_status == "PENDING_UPDATE"
    active(conn, lb.id)
    got = conn.load_balancer.get_listener(listener.id)
    assert (got.connection_limit, got.timeout_client_data) == (500, 1000)
    assert got.provisioning_status == "ACTIVE"
    conn.load_balancer.update_pool(pool, lb_algorithm="SOURCE_IP")
    active(conn, lb.id)
    conn.load_balancer.update_member(member, pool, weight=7, admin_state_up=False)
    active(conn, lb.id)
    got = conn.load_balancer.get_member(member, pool)
    assert (got.weight, got.operating_status) == (7, "OFFLINE")
    conn.load_balancer.update_member(member, pool, admin_state_up=True)
    active(conn, lb.id)
    conn.load_balancer.update_health_monitor(monitor, delay=9)
    active(conn, lb.id)
    assert conn.load_balancer.get_health_monitor(monitor.id).delay == 9
    conn.load_balancer.delete_health_monitor(monitor)
    active(conn, lb.id)
    assert conn.load_balancer.get_member(member, pool).operating_status == "NO_MONITOR"
    assert conn.load_balancer.get_pool(pool.id).health_monitor_id is None
    conn.load_balancer.update_load_balancer(lb, name="renamed", admin_state_up=False)
    lb = active(conn, lb.id)
    assert (lb.name, lb.operating_status) == ("renamed", "OFFLINE")
    conn.load_balancer.delete_pool(pool)
    active(conn, lb.id)
    assert conn.load_balancer.get_listener(listener.id).default_pool_id is None
    assert conn.load_balancer.find_pool(pool.id) is None


def test_a_change_left_pending_by_a_stopped_provider_is_applied_by_the_next(cloud, conn,
                                                                           subnet):
    """The provider's worker restarted (the cloud process was): what the API accepted
    meanwhile is found in the database and applied."""
    from pocketstack.loadbalancer import driver

    [old] = [w for w in cloud.cloud.workers if isinstance(w, driver.Driver)]
    old.stop()
    cloud.cloud.workers.remove(old)
    try:
        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
        assert conn.load_balancer.get_load_balancer(lb.id).provisioning_status == \
            "PENDING_CREATE"
    finally:
        cloud.cloud.workers.append(driver.Driver(cloud.data_dir).start())
    assert active(conn, lb.id).operating_status == "ONLINE"


def test_a_change_another_driver_holds_is_left_to_it(cloud, conn, subnet):
    """Two API processes each run a provider driver: one load balancer's change is
    applied by the one that claimed it, never by both at once."""
    from pocketstack.common import config, db
    from pocketstack.loadbalancer import driver, models

    def claimed_by(lb_id):
        with db.reader() as s:
            return s.get(models.LoadBalancer, lb_id).claimed_by

    other = driver.Driver(cloud.data_dir)  # another process's driver, not started
    config.CONF.set_override("provisioning_delay", 1.0, group="loadbalancer")
    try:
        lb = conn.load_balancer.create_load_balancer(vip_subnet_id=subnet.id)
        # the running driver holds it for the whole (1 s) apply
        wait_for(lambda: claimed_by(lb.id), 10, "the running driver's claim", interval=0.02)
        assert other.apply(lb.id) is False
    finally:
        config.CONF.clear_override("provisioning_delay", group="loadbalancer")
    lb = active(conn, lb.id)
    assert claimed_by(lb.id) is None
