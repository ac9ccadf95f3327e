"""Nova's proxy APIs to the network service below 2.36 — os-security-groups
(+ rules), os-floating-ip-pools, os-floating-ips, os-networks — driven as openstacksdk
drives them (its compute adapter sends no microversion: 2.1), and 404 from 2.36 on."""
import uuid

import pytest

from compute_rest import Compute


@pytest.fixture(scope="module")
def conn(cloud, member):
    return cloud.user_sdk(member)


@pytest.fixture(scope="module")
def old(cloud, member):
    """Compute REST as the member at 2.35, the last microversion with the proxies."""
    return Compute(cloud, cloud.user_session(member), version="2.35")


@pytest.fixture(scope="module")
def reader_api(cloud):
    user = cloud.make_user(roles=("reader",))
    return Compute(cloud, cloud.user_session(user), version="2.35")


@pytest.fixture(scope="module")
def pool(cloud):
    """An external network: a floating IP pool."""
    admin = cloud.sdk()
    name = f"ccpx-pool-{uuid.uuid4().hex[:6]}"
    network = admin.network.create_network(name=name, is_router_external=True)
    admin.network.create_subnet(network_id=network.id, ip_version=4, cidr="172.24.71.0/29",
                                is_dhcp_enabled=False,
                                allocation_pools=[{"start": "172.24.71.2",
                                                   "end": "172.24.71.3"}])
    yield network
    for fip in admin.network.ips(floating_network_id=network.id):
        admin.network.delete_ip(fip)
    admin.network.delete_network(network)


def test_security_groups_through_the_sdk_compute_adapter(conn, old):
    name = f"ccpx-{uuid.uuid4().hex[:6]}"
    r = conn.compute.post("/os-security-groups",
                          json={"security_group": {"name": name, "description": "web"}})
    assert r.status_code == 200, r.text
    group = r.json()["security_group"]
    assert set(group) == {"id", "name", "description", "tenant_id", "rules"}
    assert (group["name"], group["description"]) == (name, "web")
    assert group["tenant_id"] == conn.current_project_id
    assert conn.network.get_security_group(group["id"]).name == name
    try:
        listed = conn.compute.get("/os-security-groups").json()["security_groups"]
        assert {name, "default"} <= {g["name"] for g in listed}
        assert [(g["tenant_id"], g["name"]) for g in listed] == sorted(
            (g["tenant_id"], g["name"]) for g in listed)
        default = next(g for g in listed if g["name"] == "default")
        # the default group's ingress rules name their remote group
        assert any(rule["group"] == {"name": "default", "tenant_id": conn.current_project_id}
                   for rule in default["rules"])
        r = conn.compute.get("/os-security-groups", params={"limit": 1})
        assert len(r.json()["security_groups"]) == 1

        r = conn.compute.post("/os-security-group-rules", json={"security_group_rule": {
            "parent_group_id": group["id"], "ip_protocol": "tcp", "from_port": 22,
            "to_port": 22, "cidr": "10.0.0.0/8"}})
        assert r.status_code == 200, r.text
        rule = r.json()["security_group_rule"]
        assert rule == {"id": rule["id"], "parent_group_id": group["id"],
                        "ip_protocol": "tcp", "from_port": 22, "to_port": 22, "group": {},
                        "ip_range": {"cidr": "10.0.0.0/8"}}
        neutron_rule = conn.network.get_security_group_rule(rule["id"])
        assert (neutron_rule.direction, neutron_rule.port_range_min) == ("ingress", 22)
        # the same rule again: nova's 400
        r = conn.compute.post("/os-security-group-rules", json={"security_group_rule": {
            "parent_group_id": group["id"], "ip_protocol": "tcp", "from_port": 22,
            "to_port": 22, "cidr": "10.0.0.0/8"}}, raise_exc=False)
        assert r.status_code == 400 and "already exists" in r.text
        # a rule naming a group opens every port when none is given
        r = conn.compute.post("/os-security-group-rules", json={"security_group_rule": {
            "parent_group_id": group["id"], "ip_protocol": "udp", "group_id": group["id"]}})
        assert r.status_code == 200, r.text
        by_group = r.json()["security_group_rule"]
        assert (by_group["from_port"], by_group["to_port"]) == (1, 65535)
        assert by_group["group"] == {"name": name, "tenant_id": conn.current_project_id}

        shown = old.get(f"/os-security-groups/{group['id']}").json()["security_group"]
        assert {r["id"] for r in shown["rules"]} == {rule["id"], by_group["id"]}

        r = old.req("PUT", f"/os-security-groups/{group['id']}",
                    json={"security_group": {"name": name + "-2", "description": "new"}})
        assert r.status_code == 200 and r.json()["security_group"]["name"] == name + "-2"

        r = old.delete(f"/os-security-group-rules/{rule['id']}")
        assert r.status_code == 202 and not r.content
        assert old.delete(f"/os-security-group-rules/{rule['id']}").status_code == 404
    finally:
        r = conn.compute.delete(f"/os-security-groups/{group['id']}", raise_exc=False)
    assert r.status_code == 202
    assert old.get(f"/os-security-groups/{group['id']}").status_code == 404


def test_security_group_bad_input(old):
    group = old.post("/os-security-groups", {"security_group": {
        "name": f"ccpx-{uuid.uuid4().hex[:6]}", "description": ""}}).json()["security_group"]
    try:
        def rule(**kw):
            return old.post("/os-security-group-rules", {"security_group_rule": dict(
                {"parent_group_id": group["id"]}, **kw)})

        for bad in ({"ip_protocol": "tcp", "from_port": 80, "to_port": 22},
                    {"ip_protocol": "tcp", "from_port": 0, "to_port": 22},
                    {"ip_protocol": "gre", "from_port": 1, "to_port": 2},
                    {"ip_protocol": "icmp", "from_port": 300, "to_port": 0},
                    {"ip_protocol": "tcp", "from_port": "x", "to_port": 2},
                    {"ip_protocol": "tcp", "from_port": 1, "to_port": 2, "cidr": "nope"},
                    {"ip_protocol": "tcp", "from_port": 1, "to_port": 2,
                     "cidr": "10.0.0.0/0"},
                    {"cidr": "10.0.0.0/8"}):  # no protocol: not enough to build a rule
            r = rule(**bad)
            assert r.status_code == 400 and "badRequest" in r.json(), (bad, r.text)
        r = old.post("/os-security-group-rules", {"security_group_rule": {
            "parent_group_id": "not-a-uuid"}})
        assert r.status_code == 400
        r = rule(ip_protocol="tcp", from_port=1, to_port=2, group_id=str(uuid.uuid4()))
        assert r.status_code == 404 and "itemNotFound" in r.json()
        r = old.post("/os-security-group-rules", {"security_group_rule": {
            "parent_group_id": str(uuid.uuid4()), "ip_protocol": "tcp", "from_port": 1,
            "to_port": 2}})
        assert r.status_code == 404
        assert old.post("/os-security-groups", {"security_group": {"name": "x"}}
                        ).status_code == 400
        assert old.post("/os-security-groups", {"security_group": {
            "name": "x" * 256, "description": ""}}).status_code == 400
        assert old.get("/os-security-groups/not-a-uuid").status_code == 400
        assert old.get(f"/os-security-groups/{uuid.uuid4()}").status_code == 404
        assert old.delete(f"/os-security-groups/{uuid.uuid4()}").status_code == 404
        assert old.get("/os-security-groups?limit=-1").status_code == 400
    finally:
        old.delete(f"/os-security-groups/{group['id']}")


def test_floating_ip_pools_and_floating_ips(conn, old, pool):
    assert {"name": pool.name} in conn.list_floating_ip_pools()

    r = conn.compute.post("/os-floating-ips", json={"pool": pool.name})
    assert r.status_code == 200, r.text
    fip = r.json()["floating_ip"]
    assert fip == {"id": fip["id"], "ip": fip["ip"], "pool": pool.name, "fixed_ip": None,
                   "instance_id": None}
    assert fip["ip"].startswith("172.24.71.")
    assert conn.network.get_ip(fip["id"]).floating_ip_address == fip["ip"]
    # by the pool's id too; the pool then has no address left: nova's 404
    r = old.post("/os-floating-ips", {"pool": pool.id})
    assert r.status_code == 200, r.text
    second = r.json()["floating_ip"]
    r = old.post("/os-floating-ips", {"pool": pool.name})
    assert r.status_code == 404 and "No more floating IPs in pool" in r.text, r.text

    assert old.get(f"/os-floating-ips/{fip['id']}").json() == {"floating_ip": fip}
    listed = conn.compute.get("/os-floating-ips").json()["floating_ips"]
    assert {f["id"] for f in listed} == {fip["id"], second["id"]}

    for f in (fip, second):
        r = conn.compute.delete(f"/os-floating-ips/{f['id']}")
        assert r.status_code == 202
    assert old.get(f"/os-floating-ips/{fip['id']}").status_code == 404
    assert old.delete(f"/os-floating-ips/{fip['id']}").status_code == 404
    assert conn.compute.get("/os-floating-ips").json() == {"floating_ips": []}


def test_floating_ip_errors(old, pool):
    # no pool named: nova's default pool "nova", which this cloud does not have
    r = old.req("POST", "/os-floating-ips")
    assert r.status_code == 404 and "Floating IP pool not found" in r.text, r.text
    assert old.post("/os-floating-ips", {"pool": "no-such"}).status_code == 404
    assert old.post("/os-floating-ips", {"pool": 3}).status_code == 400
    assert old.post("/os-floating-ips", [1]).status_code == 400
    r = old.get(f"/os-floating-ips/{uuid.uuid4()}")
    assert r.status_code == 404 and "Floating IP not found for ID" in r.text


def test_networks_read_only(cloud, conn, old, admin_api):
    network = conn.network.create_network(name=f"ccpx-net-{uuid.uuid4().hex[:6]}")
    try:
        listed = conn.compute.get("/os-networks").json()["networks"]
        mine = next(n for n in listed if n["id"] == network.id)
        assert mine["label"] == network.name and mine["cidr"] is None
        assert "project_id" not in mine  # the admin fields are an admin's
        shown = old.get(f"/os-networks/{network.id}").json()["network"]
        assert shown == mine
        admin_old = Compute(cloud, cloud.session(), version="2.35")
        as_admin = admin_old.get(f"/os-networks/{network.id}").json()["network"]
        assert as_admin["label"] == network.name and "mtu" in as_admin
        r = old.get(f"/os-networks/{uuid.uuid4()}")
        assert r.status_code == 404 and "Network not found" in r.text
        assert old.post("/os-networks", {"network": {"label": "x"}}).status_code == 405
    finally:
        conn.network.delete_network(network)


@pytest.mark.parametrize("path", ["/os-security-groups", "/os-floating-ip-pools",
                                  "/os-floating-ips", "/os-networks",
                                  "/os-floating-ips/fd18c8f0-0c70-4b8e-9e5b-2122e143ec61",
                                  "/os-networks/0672fbfc-d061-4bd5-8d0d-f8ea56fb5222",
                                  "/os-security-groups/f84b7037-9e26-4e67-b4ae-aefe7b0c7dbd"])
def test_gone_from_2_36(api, path):
    r = api.get(path, headers={"OpenStack-API-Version": "compute 2.36"})
    assert r.status_code == 404 and "itemNotFound" in r.json(), r.text
    assert api.get(path).status_code == 404  # 2.79


def test_gone_from_2_36_writes(api):
    h = {"OpenStack-API-Version": "compute 2.36"}
    assert api.post("/os-security-groups", {"security_group": {
        "name": "x", "description": ""}}, headers=h).status_code == 404
    assert api.post("/os-floating-ips", {"pool": "x"}, headers=h).status_code == 404
    assert api.post("/os-security-group-rules", {"security_group_rule": {
        "parent_group_id": str(uuid.uuid4())}}, headers=h).status_code == 404


def test_reader_may_read_but_not_write(reader_api):
    assert reader_api.get("/os-security-groups").status_code == 200
    assert reader_api.get("/os-floating-ips").status_code == 200
    assert reader_api.get("/os-networks").status_code == 200
    assert reader_api.get("/os-floating-ip-pools").status_code == 200
    for path, body in (("/os-security-groups", {"security_group": {"name": "x",
                                                                   "description": ""}}),
                       ("/os-floating-ips", {"pool": "x"}),
                       ("/os-security-group-rules", {"security_group_rule": {
                           "parent_group_id": str(uuid.uuid4())}})):
        r = reader_api.post(path, body)
        assert r.status_code == 403 and "forbidden" in r.json(), (path, r.text)
    assert reader_api.delete(f"/os-floating-ips/{uuid.uuid4()}").status_code == 403
