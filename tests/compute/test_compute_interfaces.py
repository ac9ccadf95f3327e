"""os-interface: attach a new port on a network or the user's own port to a
running server, list/show them in nova's shape, detach (the port we created is deleted,
the user's is unbound), the network service's network-vif-deleted, and the 4xx nova
answers for bad requests. Nothing leaks."""
import time
import uuid

import pytest

ATTACHMENT_KEYS = {"fixed_ips", "mac_addr", "net_id", "port_id", "port_state"}


@pytest.fixture(scope="module")
def net(cloud, member):
    s = cloud.user_session(member)
    base = cloud.url + "/network/v2.0"

    def make(cidr):
        r = s.post(base + "/networks", json={"network": {"name": f"if-{uuid.uuid4().hex[:4]}"}},
                   raise_exc=False)
        if r.status_code == 404:
            pytest.skip("the network service is not mounted in this tree")
        n = r.json()["network"]
        s.post(base + "/subnets", json={"subnet": {"network_id": n["id"], "ip_version": 4,
                                                   "cidr": cidr}})
        return n

    class Nets:
        a = make("10.1.0.0/24")
        b = make("10.2.0.0/24")

        def port(self, network):
            return s.post(base + "/ports", json={"port": {"network_id": network["id"]}}
                          ).json()["port"]

        def get_port(self, port_id):
            r = s.get(base + f"/ports/{port_id}", raise_exc=False)
            return r.json()["port"] if r.status_code == 200 else None

        def ports_of(self, sid):
            return s.get(base + "/ports", params={"device_id": sid}).json()["ports"]

        def delete_port(self, port_id):
            return s.delete(base + f"/ports/{port_id}", raise_exc=False)

    return Nets()


@pytest.fixture
def server(api, image_id, net):
    sid = api.boot(image_id, networks=[{"uuid": net.a["id"]}])
    assert api.wait(sid)["status"] == "ACTIVE"
    yield sid
    api.delete(f"/servers/{sid}")


def _until(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met")


def test_attach_on_a_network_list_show_and_detach(api, admin_api, net, server):
    r = api.post(f"/servers/{server}/os-interface",
                 {"interfaceAttachment": {"net_id": net.b["id"], "tag": "second"}})
    assert r.status_code == 200, r.text
    att = r.json()["interfaceAttachment"]
    assert set(att) == ATTACHMENT_KEYS | {"tag"} and att["tag"] == "second"
    assert att["net_id"] == net.b["id"] and att["mac_addr"].startswith("fa:16:3e")
    assert att["fixed_ips"][0]["ip_address"].startswith("10.2.0.")
    assert att["port_state"] == "ACTIVE"
    port = admin_api.s.get(api.cloud.url + f"/network/v2.0/ports/{att['port_id']}"
                           ).json()["port"]
    assert port["device_id"] == server and port["device_owner"] == "compute:nova"
    assert port["binding:host_id"] == admin_api.server(server)["OS-EXT-SRV-ATTR:host"]

    listed = api.get(f"/servers/{server}/os-interface").json()["interfaceAttachments"]
    assert sorted(i["net_id"] for i in listed) == sorted([net.a["id"], net.b["id"]])
    # before 2.70 there is no tag
    old = api.get(f"/servers/{server}/os-interface/{att['port_id']}",
                  headers={"OpenStack-API-Version": "compute 2.69"}).json()
    assert set(old["interfaceAttachment"]) == ATTACHMENT_KEYS
    assert net.b["name"] in api.server(server)["addresses"]
    actions = [a["action"] for a in api.get(f"/servers/{server}/os-instance-actions")
               .json()["instanceActions"]]
    assert actions[0] == "attach_interface"

    r = api.delete(f"/servers/{server}/os-interface/{att['port_id']}")
    assert r.status_code == 202 and r.content == b""
    _until(lambda: net.get_port(att["port_id"]) is None)  # we created it: deleted
    _until(lambda: net.b["name"] not in api.server(server)["addresses"])
    assert len(api.get(f"/servers/{server}/os-interface").json()["interfaceAttachments"]) == 1


def test_attach_the_users_port_then_detach_unbinds_it(api, net, server):
    port = net.port(net.b)
    r = api.post(f"/servers/{server}/os-interface",
                 {"interfaceAttachment": {"port_id": port["id"]}})
    assert r.status_code == 200, r.text
    assert net.get_port(port["id"])["device_id"] == server
    # the same port again: in use
    r = api.post(f"/servers/{server}/os-interface",
                 {"interfaceAttachment": {"port_id": port["id"]}})
    assert r.status_code == 409 and "in use" in r.json()["conflictingRequest"]["message"]
    assert api.delete(f"/servers/{server}/os-interface/{port['id']}").status_code == 202
    freed = _until(lambda: (p := net.get_port(port["id"])) and not p["device_id"] and p)
    assert freed["device_owner"] == ""
    net.delete_port(port["id"])


def test_fixed_ip_and_server_delete_cleans_up(api, image_id, net):
    sid = api.boot(image_id, networks=[{"uuid": net.a["id"]}])
    api.wait(sid)
    user_port = net.port(net.b)
    r = api.post(f"/servers/{sid}/os-interface", {"interfaceAttachment": {
        "net_id": net.b["id"], "fixed_ips": [{"ip_address": "10.2.0.77"}]}})
    assert r.status_code == 200, r.text
    assert r.json()["interfaceAttachment"]["fixed_ips"][0]["ip_address"] == "10.2.0.77"
    r = api.post(f"/servers/{sid}/os-interface", {"interfaceAttachment": {
        "net_id": net.b["id"], "fixed_ips": [{"ip_address": "10.2.0.77"}]}})
    assert r.status_code == 409, r.text
    assert api.post(f"/servers/{sid}/os-interface", {"interfaceAttachment": {
        "port_id": user_port["id"]}}).status_code == 200
    assert len(net.ports_of(sid)) == 3
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    _until(lambda: net.ports_of(sid) == [])
    kept = net.get_port(user_port["id"])
    assert kept is not None and kept["device_id"] == ""
    net.delete_port(user_port["id"])


def test_deleting_an_attached_port_in_the_network_service(api, net, server):
    port = net.port(net.b)
    assert api.post(f"/servers/{server}/os-interface",
                    {"interfaceAttachment": {"port_id": port["id"]}}).status_code == 200
    assert net.b["name"] in api.server(server)["addresses"]
    assert net.delete_port(port["id"]).status_code == 204
    # network-vif-deleted: the server forgets the port
    _until(lambda: net.b["name"] not in api.server(server)["addresses"])
    r = api.get(f"/servers/{server}/os-interface/{port['id']}")
    assert r.status_code == 404


def test_failed_hot_plug_leaves_no_port(api, net, server, faults):
    faults.add(operation="attach_interface", action="fail", times=1, message="no PCI slot")
    r = api.post(f"/servers/{server}/os-interface",
                 {"interfaceAttachment": {"net_id": net.b["id"]}})
    assert r.status_code == 500 and "no PCI slot" in r.json()["computeFault"]["message"]
    assert [p["network_id"] for p in net.ports_of(server)] == [net.a["id"]]
    assert net.b["name"] not in api.server(server)["addresses"]


def test_bad_interface_requests(cloud, api, make_api, net, server, image_id):
    def post(body, who=api, version=None):
        headers = {"OpenStack-API-Version": f"compute {version}"} if version else None
        r = who.post(f"/servers/{server}/os-interface", body, headers=headers)
        return r.status_code

    port = net.port(net.b)
    assert post({"interfaceAttachment": {"net_id": net.b["id"], "port_id": port["id"]}}) == 400
    assert post({"interfaceAttachment": {"fixed_ips": [{"ip_address": "10.2.0.9"}]}}) == 400
    assert post({"interfaceAttachment": {"net_id": "not-a-uuid"}}) == 400
    assert post({"interfaceAttachment": {"net_id": net.b["id"], "fixed_ips": [
        {"ip_address": "300.1.1.1"}]}}) == 400
    assert post({"interfaceAttachment": {"net_id": net.b["id"], "bogus": 1}}) == 400
    assert post({"interfaceAttachment": {"net_id": net.b["id"], "tag": "t"}},
                version="2.48") == 400
    assert post({"interfaceAttachment": {"port_id": str(uuid.uuid4())}}) == 404
    assert post({"interfaceAttachment": {"net_id": str(uuid.uuid4())}}) == 404
    # the member sees two networks: nova cannot choose
    assert post({"interfaceAttachment": {}}) == 400
    stranger = make_api(cloud.make_user(roles=("member",)))
    assert post({"interfaceAttachment": {"net_id": net.b["id"]}}, who=stranger) == 404
    assert stranger.get(f"/servers/{server}/os-interface").status_code == 404
    assert api.get(f"/servers/{server}/os-interface/{port['id']}").status_code == 404
    assert api.delete(f"/servers/{server}/os-interface/{port['id']}").status_code == 404
    assert api.post(f"/servers/{server}/action", {"lock": None}).status_code == 202
    assert post({"interfaceAttachment": {"net_id": net.b["id"]}}) == 409
    assert api.post(f"/servers/{server}/action", {"unlock": None}).status_code == 202
    # nothing above attached anything
    assert [p["network_id"] for p in net.ports_of(server)] == [net.a["id"]]
    assert net.get_port(port["id"])["device_id"] == ""
    net.delete_port(port["id"])


@pytest.mark.cli
def test_openstack_cli_add_and_remove_port(cloud, api, member, net, server):
    port = net.port(net.b)
    user = dict(member)
    cloud.cli("server", "add", "port", server, port["id"], user=user)
    assert net.get_port(port["id"])["device_id"] == server
    cloud.cli("server", "remove", "port", server, port["id"], user=user)
    _until(lambda: not net.get_port(port["id"])["device_id"])
    net.delete_port(port["id"])
