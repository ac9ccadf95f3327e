"""Boots with real ports from the network service (seed steps 22-24): device_id/owner,
binding, network-vif-plugged, addresses in the server; cleanup of ports on failure and
delete."""
import time
import uuid

import pytest


@pytest.fixture(scope="module")
def private_net(cloud, member):
    s = cloud.user_session(member)
    base = cloud.url + "/network/v2.0"
    r = s.post(base + "/networks", json={"network": {"name": f"private-{uuid.uuid4().hex[:4]}"}},
               raise_exc=False)
    if r.status_code == 404:
        pytest.skip("the network service is not mounted in this tree")
    net = r.json()["network"]
    s.post(base + "/subnets", json={"subnet": {"network_id": net["id"], "ip_version": 4,
                                               "cidr": "10.0.0.0/26"}})
    s.post(base + "/subnets", json={"subnet": {"network_id": net["id"], "ip_version": 6,
                                               "cidr": "fd3c:90a1:3f1f::/64",
                                               "ipv6_address_mode": "slaac",
                                               "ipv6_ra_mode": "slaac"}})
    return net


def _ports(cloud, member, sid):
    s = cloud.user_session(member)
    return s.get(cloud.url + f"/network/v2.0/ports?device_id={sid}").json()["ports"]


def test_boot_on_a_network_gets_ports_and_addresses(cloud, api, member, image_id, private_net):
    sid = api.boot(image_id, networks=[{"uuid": private_net["id"]}])
    s = api.wait(sid)
    assert s["status"] == "ACTIVE", s.get("fault")
    ports = _ports(cloud, member, sid)
    assert len(ports) == 1
    port = cloud.session().get(cloud.url + f"/network/v2.0/ports/{ports[0]['id']}").json()["port"]
    assert port["status"] == "ACTIVE"
    assert port["device_owner"] == "compute:nova" and port["binding:host_id"].startswith("cmp-")
    assert port["mac_address"].startswith("fa:16:3e")
    addrs = s["addresses"][private_net["name"]]
    assert {a["version"] for a in addrs} == {4, 6}
    assert addrs[0]["version"] == 6 and addrs[-1]["addr"].startswith("10.0.0.")
    assert all(a["OS-EXT-IPS:type"] == "fixed" and
               a["OS-EXT-IPS-MAC:mac_addr"] == port["mac_address"] for a in addrs)
    trace = cloud.session().get(cloud.url + f"/pocketstack/v1/servers/{sid}/trace").json()
    waited = [e for e in trace["events"] if e["step"] == "compute_wait_vif_plugged"]
    assert waited[0]["detail"] == "1/1 network-vif-plugged"
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert _ports(cloud, member, sid) == []


def _allocated(cloud, sid) -> list[str]:
    """What each build attempt's compute_allocate_network step says it got."""
    trace = cloud.session().get(cloud.url + f"/pocketstack/v1/servers/{sid}/trace").json()
    return [e["detail"] for e in trace["events"] if e["step"] == "compute_allocate_network"]


def test_a_rescheduled_build_binds_the_port_of_the_failed_attempt(cloud, api, member,
                                                                   image_id, private_net,
                                                                   faults):
    """As nova's reschedule: the server keeps its port (its address, and a floating IP a
    user may have put on it meanwhile); the next attempt binds it to its own host."""
    faults.add(operation="spawn", action="fail", times=1)
    sid = api.boot(image_id, networks=[{"uuid": private_net["id"]}])
    server = api.wait(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    [port] = _ports(cloud, member, sid)
    first, second = _allocated(cloud, sid)
    assert first == second == f"{port['id']} on {private_net['name']}"
    port = cloud.session().get(cloud.url + f"/network/v2.0/ports/{port['id']}").json()["port"]
    assert port["status"] == "ACTIVE"
    assert port["binding:host_id"] == cloud.session().get(
        cloud.url + f"/compute/v2.1/servers/{sid}").json()["server"]["OS-EXT-SRV-ATTR:host"]
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert _ports(cloud, member, sid) == []


def test_a_build_out_of_attempts_gives_its_ports_back(cloud, api, member, image_id,
                                                      private_net, faults):
    """The ports kept from attempt to attempt go once none is left (the server is in
    ERROR): the one compute made is deleted, the user's is unbound."""
    s = cloud.user_session(member)
    own = s.post(cloud.url + "/network/v2.0/ports", json={"port": {
        "network_id": private_net["id"], "name": "own"}}).json()["port"]
    faults.add(operation="spawn", action="fail", times=None)
    sid = api.boot(image_id, networks=[{"uuid": private_net["id"]}, {"port": own["id"]}])
    server = api.wait(sid)
    assert server["status"] == "ERROR"
    # (given back just after the ERROR is written, as nova's conductor does)
    deadline = time.monotonic() + 10
    while _ports(cloud, member, sid):
        assert time.monotonic() < deadline, _ports(cloud, member, sid)
        time.sleep(0.02)
    own = s.get(cloud.url + f"/network/v2.0/ports/{own['id']}").json()["port"]
    assert (own["device_id"], own["device_owner"]) == ("", "")
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    s.delete(cloud.url + f"/network/v2.0/ports/{own['id']}")


def test_fixed_ip_taken_and_other_projects_network(cloud, api, make_api, image_id, private_net):
    sid = api.boot(image_id, networks=[{"uuid": private_net["id"], "fixed_ip": "10.0.0.40"}])
    assert api.wait(sid)["status"] == "ACTIVE"
    r = api.post("/servers", {"server": {"name": "x", "imageRef": image_id, "flavorRef": "42",
                                         "networks": [{"uuid": private_net["id"],
                                                       "fixed_ip": "10.0.0.40"}]}})
    assert r.status_code == 400 and "already in use" in r.json()["badRequest"]["message"]
    stranger = make_api(cloud.make_user(roles=("member",)))
    r = stranger.post("/servers", {"server": {"name": "x", "imageRef": image_id,
                                              "flavorRef": "42",
                                              "networks": [{"uuid": private_net["id"]}]}})
    assert r.status_code == 400 and "could not be found" in r.json()["badRequest"]["message"]
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_the_default_group_comes_from_the_network_service(cloud, api, member, image_id,
                                                          private_net):
    """As nova, "default" is not passed to the network service: a port made without groups
    gets its project's default group, and a network without port security takes the
    server (its port then has no group) instead of failing the build."""
    s = cloud.user_session(member)
    base = cloud.url + "/network/v2.0"
    sid = api.boot(image_id, networks=[{"uuid": private_net["id"]}])
    server = api.wait(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    assert server["security_groups"] == [{"name": "default"}]
    default = s.get(base + f"/security-groups?name=default&project_id={member['project_id']}"
                    ).json()["security_groups"]
    assert _ports(cloud, member, sid)[0]["security_groups"] == [default[0]["id"]]

    open_net = s.post(base + "/networks", json={"network": {
        "name": "no-port-security", "port_security_enabled": False}}).json()["network"]
    s.post(base + "/subnets", json={"subnet": {"network_id": open_net["id"], "ip_version": 4,
                                               "cidr": "10.0.1.0/28"}})
    other = api.boot(image_id, networks=[{"uuid": open_net["id"]}])
    assert api.wait(other)["status"] == "ACTIVE"
    assert _ports(cloud, member, other)[0]["security_groups"] == []
    for server_id in (sid, other):
        api.delete(f"/servers/{server_id}")
        api.wait_gone(server_id)
    s.delete(base + f"/networks/{open_net['id']}")


def test_a_floating_ip_put_on_while_the_volumes_attach_is_shown(cloud, api, admin_api, member,
                                                               image_id, private_net, faults):
    """The server's addresses are written once networking is done; a floating IP put on
    its port while its volumes are still being made (network-changed refreshes them) is
    not undone by the build's next step."""
    admin = cloud.session()
    s = cloud.user_session(member)
    base = cloud.url + "/network/v2.0"
    external = admin.post(base + "/networks", json={"network": {
        "name": f"ext-{uuid.uuid4().hex[:4]}", "router:external": True}}).json()["network"]
    admin.post(base + "/subnets", json={"subnet": {"network_id": external["id"],
                                                   "ip_version": 4, "cidr": "172.30.9.0/24"}})
    [v4] = [sub for sub in s.get(base + f"/subnets?network_id={private_net['id']}").json()[
        "subnets"] if sub["ip_version"] == 4]
    router = s.post(base + "/routers", json={"router": {
        "name": "r", "external_gateway_info": {"network_id": external["id"]}}}).json()["router"]
    s.put(base + f"/routers/{router['id']}/add_router_interface", json={"subnet_id": v4["id"]})
    faults.add(operation="prep_block_device", action="hang", times=1, hang_seconds=3)
    sid = api.boot(image_id, networks=[{"uuid": private_net["id"]}], block_device_mapping_v2=[
        {"source_type": "image", "destination_type": "local", "uuid": image_id,
         "boot_index": 0},
        {"source_type": "blank", "destination_type": "volume", "volume_size": 1,
         "delete_on_termination": True, "boot_index": -1}])
    deadline = time.monotonic() + 30
    while admin_api.server(sid)["OS-EXT-STS:task_state"] != "block_device_mapping":
        assert time.monotonic() < deadline, admin_api.server(sid)
        time.sleep(0.02)
    [port] = _ports(cloud, member, sid)
    fip = s.post(base + "/floatingips", json={"floatingip": {
        "floating_network_id": external["id"], "port_id": port["id"]}}).json()["floatingip"]
    server = api.wait(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    shown = [a["addr"] for a in server["addresses"][private_net["name"]]
             if a["OS-EXT-IPS:type"] == "floating"]
    assert shown == [fip["floating_ip_address"]], server["addresses"]
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    s.delete(base + f"/floatingips/{fip['id']}")
    s.put(base + f"/routers/{router['id']}/remove_router_interface", json={"subnet_id": v4["id"]})
    s.delete(base + f"/routers/{router['id']}")
    admin.delete(base + f"/networks/{external['id']}")


def test_a_network_with_a_dns_domain_names_the_servers_ports(cloud, api, member, image_id):
    """As nova: on a network with a dns_domain, the port made for a server gets the
    server's hostname as dns_name (what the network's DNS answers under that domain); on
    one without, none. A name neutron would refuse (all digits) leaves the port unnamed
    and the build goes on."""
    s = cloud.user_session(member)
    base = cloud.url + "/network/v2.0"
    named = s.post(base + "/networks", json={"network": {
        "name": f"dns-{uuid.uuid4().hex[:4]}", "dns_domain": "lab.example."}}).json()["network"]
    s.post(base + "/subnets", json={"subnet": {"network_id": named["id"], "ip_version": 4,
                                               "cidr": "10.9.0.0/26"}})
    plain = s.post(base + "/networks", json={"network": {
        "name": f"nodns-{uuid.uuid4().hex[:4]}"}}).json()["network"]
    s.post(base + "/subnets", json={"subnet": {"network_id": plain["id"], "ip_version": 4,
                                               "cidr": "10.9.1.0/26"}})
    web = api.boot(image_id, name="Web Server 1",
                   networks=[{"uuid": named["id"]}, {"uuid": plain["id"]}])
    digits = api.boot(image_id, name="1234", networks=[{"uuid": named["id"]}])
    for sid in (web, digits):
        assert api.wait(sid)["status"] == "ACTIVE"
    by_network = {p["network_id"]: p for p in _ports(cloud, member, web)}
    assert by_network[named["id"]]["dns_name"] == "web-server-1"
    assert by_network[plain["id"]]["dns_name"] == ""
    assert [p["dns_name"] for p in _ports(cloud, member, digits)] == [""]
    for sid in (web, digits):
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
    for net in (named, plain):
        s.delete(base + f"/networks/{net['id']}")
