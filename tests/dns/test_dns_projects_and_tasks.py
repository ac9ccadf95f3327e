"""TLDs, blacklists, quotas, zone transfers between projects, shared zones, exports and
imports, and floating IPs' PTR records, as designate's API gives them; what each leaves
in the DNS server's answers."""
from __future__ import annotations

import importlib
import uuid

import pytest

from dns_helpers import Designate, dig, eventually, short, status_of


@pytest.fixture(scope="module")
def two(cloud):
    """Two projects' members."""
    out = []
    for _ in range(2):
        user = cloud.make_user()
        out.append((user, Designate(cloud.user_session(user))))
    return out


def _name(suffix="example.com."):
    return f"z{uuid.uuid4().hex[:10]}.{suffix}"


def test_tlds_and_blacklists_are_admin_only_and_decide_which_names_exist(designate, two):
    _, member = two[0]
    r = member.post("/v2/tlds", {"name": "com"})
    assert (r.status_code, r.json()["type"]) == (403, "forbidden")

    r = designate.post("/v2/blacklists", {"pattern": r"^blocked\d+\.example\.com\.$"})
    assert r.status_code == 201, r.text
    blacklist = r.json()
    assert designate.post("/v2/blacklists", {"pattern": blacklist["pattern"]}).json()[
        "type"] == "duplicate_blacklist"
    r = member.post("/v2/zones", {"name": "blocked1.example.com.", "email": "a@b.cd"})
    assert (r.status_code, r.json()["type"]) == (400, "invalid_zone_name")
    designate.zone("blocked2.example.com.")  # admins are not held by blacklists
    assert designate.post("/v2/blacklists", {"pattern": "(unclosed"}).status_code == 400
    assert designate.req("DELETE", f"/v2/blacklists/{blacklist['id']}").status_code == 204
    assert designate.get(f"/v2/blacklists/{blacklist['id']}").json()["type"] == \
        "blacklist_not_found"

    tlds = [designate.post("/v2/tlds", {"name": t}).json() for t in ("com", "org", "arpa")]
    try:
        assert designate.post("/v2/tlds", {"name": "com"}).json()["type"] == "duplicate_tld"
        r = member.post("/v2/zones", {"name": _name("example.net."), "email": "a@b.cd"})
        assert (r.status_code, r.json()["type"]) == (400, "invalid_zone_name")
        r = member.post("/v2/zones", {"name": "com.", "email": "a@b.cd"})
        assert r.status_code == 400
        member.zone(_name("example.org."))
        listed = [t["name"] for t in member.get("/v2/tlds").json()["tlds"]]
        assert {"com", "org"} <= set(listed)
    finally:
        for tld in tlds:
            designate.req("DELETE", f"/v2/tlds/{tld['id']}")


def test_quotas_limit_zones_and_records(cloud, designate, two):
    user, member = two[1]
    assert member.get("/v2/quotas").json()["zones"] == 10
    r = member.req("PATCH", f"/v2/quotas/{user['project_id']}", json={"zones": 100})
    assert r.status_code == 403
    r = designate.req("PATCH", f"/v2/quotas/{user['project_id']}",
                      json={"zones": 1, "recordset_records": 2})
    assert r.status_code == 200 and r.json()["zones"] == 1
    try:
        zone = member.zone()
        r = member.post("/v2/zones", {"name": _name(), "email": "a@b.cd"})
        assert (r.status_code, r.json()["type"]) == (413, "over_quota")
        r = member.post(f"/v2/zones/{zone['id']}/recordsets",
                        {"name": "many." + zone["name"], "type": "A",
                         "records": ["192.0.2.1", "192.0.2.2", "192.0.2.3"]})
        assert (r.status_code, r.json()["type"]) == (413, "over_quota")
        member.req("DELETE", f"/v2/zones/{zone['id']}")
    finally:
        designate.req("DELETE", f"/v2/quotas/{user['project_id']}")


def test_a_zone_moves_to_the_project_that_accepts_its_transfer(cloud, two):
    (a_user, a), (b_user, b) = two
    zone = a.zone()
    a.recordset(zone["id"], "www." + zone["name"], "A", ["192.0.2.44"])
    r = a.post(f"/v2/zones/{zone['id']}/tasks/transfer_requests",
               {"target_project_id": b_user["project_id"], "description": "for b"})
    assert r.status_code == 201, r.text
    request = r.json()
    assert request["zone_name"] == zone["name"] and len(request["key"]) == 8

    seen = b.get(f"/v2/zones/tasks/transfer_requests/{request['id']}").json()
    assert seen["zone_id"] == zone["id"]
    r = b.post("/v2/zones/tasks/transfer_accepts",
               {"zone_transfer_request_id": request["id"], "key": "WRONGKEY"})
    assert (r.status_code, r.json()["type"]) == (403, "invalid_key")
    r = b.post("/v2/zones/tasks/transfer_accepts",
               {"zone_transfer_request_id": request["id"], "key": request["key"]})
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "COMPLETE"

    assert a.get(f"/v2/zones/{zone['id']}").json()["type"] == "zone_not_found"
    moved = b.active(zone["id"])
    assert moved["project_id"] == b_user["project_id"] and moved["transferred_at"]
    rows = b.get(f"/v2/zones/{zone['id']}/recordsets").json()["recordsets"]
    assert {r["project_id"] for r in rows} == {b_user["project_id"]}
    assert short(cloud, "www." + zone["name"]) == ["192.0.2.44"]


def test_a_shared_zone_takes_the_other_projects_recordsets(cloud, two):
    (a_user, a), (b_user, b) = two
    zone = a.zone()
    assert b.get(f"/v2/zones/{zone['id']}").status_code == 404
    r = a.post(f"/v2/zones/{zone['id']}/shares", {"target_project_id": b_user["project_id"]})
    assert r.status_code == 201, r.text
    share = r.json()
    again = a.post(f"/v2/zones/{zone['id']}/shares",
                   {"target_project_id": b_user["project_id"]})
    assert (again.status_code, again.json()["type"]) == (409, "duplicate_zone_share")
    assert b.get(f"/v2/zones/{zone['id']}").json()["shared"] is True
    rs = b.recordset(zone["id"], "b." + zone["name"], "A", ["192.0.2.77"])
    assert rs["project_id"] == b_user["project_id"]
    eventually(lambda: short(cloud, "b." + zone["name"]) == ["192.0.2.77"], "served")
    r = a.req("DELETE", f"/v2/zones/{zone['id']}/shares/{share['id']}")
    assert r.status_code == 400  # b still has a recordset in it
    assert b.req("DELETE", f"/v2/zones/{zone['id']}/recordsets/{rs['id']}").status_code == 202
    assert a.req("DELETE", f"/v2/zones/{zone['id']}/shares/{share['id']}").status_code == 204
    assert b.get(f"/v2/zones/{zone['id']}").status_code == 404


def test_export_then_import_gives_the_same_records_under_a_new_owner(cloud, two):
    # A cloud on RabbitMQ loads oslo.messaging, which imports eventlet; eventlet's green
    # DNS re-imports dnspython's modules, after which dnspython's zone reader refuses its
    # own records ("add(): expected an Rdata"). The import must work in such a process.
    importlib.import_module("oslo_messaging")
    (a_user, a), (b_user, b) = two
    zone = a.zone()
    name = zone["name"]
    a.recordset(zone["id"], "www." + name, "A", ["192.0.2.61"], ttl=120)
    a.recordset(zone["id"], name, "MX", ["5 mx.example.net."])
    r = a.post(f"/v2/zones/{zone['id']}/tasks/export")
    assert r.status_code == 202, r.text
    export = r.json()
    assert export["status"] == "COMPLETE"
    # openstacksdk reads them under /v2/zones/tasks/export (singular)
    assert export["id"] in [e.id for e in cloud.user_sdk(a_user).dns.zone_exports()]
    r = a.get(f"/v2/zones/tasks/exports/{export['id']}/export",
              headers={"Accept": "text/dns"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/dns")
    text = r.text
    assert f"www.{name} 120 IN A 192.0.2.61" in text and "IN SOA" in text

    a.req("DELETE", f"/v2/zones/{zone['id']}")
    eventually(lambda: a.get(f"/v2/zones/{zone['id']}").status_code == 404, "deleted")
    r = b.post("/v2/zones/tasks/imports", data=text.encode(),
               headers={"Content-Type": "text/dns"})
    assert r.status_code == 202, r.text
    task = r.json()
    assert task["status"] == "COMPLETE", task["message"]
    imported = b.active(task["zone_id"])
    assert imported["name"] == name and imported["project_id"] == b_user["project_id"]
    assert short(cloud, "www." + name) == ["192.0.2.61"]
    assert short(cloud, name, "MX") == ["5", "mx.example.net."]

    bad = b.post("/v2/zones/tasks/imports", data=b"this is not a zone file",
                 headers={"Content-Type": "text/dns"})
    assert bad.status_code == 202 and bad.json()["status"] == "ERROR"
    wrong = b.post("/v2/zones/tasks/imports", json={"zone": text})
    assert wrong.status_code == 415


def test_a_floating_ips_ptr_record_is_set_through_the_reverse_api(cloud, designate):
    conn = cloud.sdk()
    net = conn.network.create_network(name=f"ext-{uuid.uuid4().hex[:6]}",
                                      is_router_external=True)
    conn.network.create_subnet(network_id=net.id, cidr="203.0.113.0/24", ip_version=4)
    fip = conn.network.create_ip(floating_network_id=net.id)
    try:
        listed = designate.get("/v2/reverse/floatingips").json()["floatingips"]
        key = f"RegionOne:{fip.id}"
        assert {"id": key, "ptrdname": None} .items() <= \
            [f for f in listed if f["id"] == key][0].items()
        r = designate.req("PATCH", f"/v2/reverse/floatingips/{key}",
                          json={"ptrdname": "host.example.com.", "ttl": 300})
        assert r.status_code == 202, r.text
        assert r.json()["ptrdname"] == "host.example.com."
        eventually(lambda: dig(cloud, "-x", fip.floating_ip_address, "+short").split()
                   == ["host.example.com."], "the PTR served")
        assert designate.get(f"/v2/reverse/floatingips/{key}").json()["address"] == \
            fip.floating_ip_address
        r = designate.req("PATCH", f"/v2/reverse/floatingips/{key}", json={"ptrdname": None})
        assert r.status_code == 202 and r.json()["ptrdname"] is None
        eventually(lambda: status_of(dig(cloud, "-x", fip.floating_ip_address))
                   == "NXDOMAIN", "the PTR gone")
        assert designate.get("/v2/reverse/floatingips/RegionOne:nope").status_code == 404
    finally:
        conn.network.delete_ip(fip)
        conn.network.delete_network(net)


def test_an_accepted_transfer_ends_the_previous_owners_other_offers(cloud, designate):
    owners = []
    for _ in range(3):
        user = cloud.make_user()
        owners.append((user, Designate(cloud.user_session(user))))
    (_, a), (b_user, b), (c_user, c) = owners
    zone = a.zone()
    to_c = a.post(f"/v2/zones/{zone['id']}/tasks/transfer_requests",
                  {"target_project_id": c_user["project_id"]}).json()
    to_b = a.post(f"/v2/zones/{zone['id']}/tasks/transfer_requests",
                  {"target_project_id": b_user["project_id"]}).json()
    r = b.post("/v2/zones/tasks/transfer_accepts",
               {"zone_transfer_request_id": to_b["id"], "key": to_b["key"]})
    assert r.status_code == 201, r.text
    b.active(zone["id"])
    # a's other offer went with the zone: c cannot take it from b
    r = c.post("/v2/zones/tasks/transfer_accepts",
               {"zone_transfer_request_id": to_c["id"], "key": to_c["key"]})
    assert r.status_code in (400, 404), r.text
    assert b.get(f"/v2/zones/{zone['id']}").json()["project_id"] == b_user["project_id"]
    assert c.get(f"/v2/zones/{zone['id']}").status_code == 404
    # a zone on offer is not shared (the share would outlive the transfer)
    offer = b.post(f"/v2/zones/{zone['id']}/tasks/transfer_requests",
                   {"target_project_id": c_user["project_id"]}).json()
    r = b.post(f"/v2/zones/{zone['id']}/shares", {"target_project_id": c_user["project_id"]})
    assert r.status_code == 400, r.text
    b.req("DELETE", f"/v2/zones/tasks/transfer_requests/{offer['id']}")
    b.req("DELETE", f"/v2/zones/{zone['id']}")


def test_an_import_with_generate_or_include_is_refused_without_making_records(two):
    _, b = two[1]
    for directive in ("$GENERATE 1-3000000 h$ A 192.0.2.1", "$INCLUDE /etc/passwd"):
        text = (f"$ORIGIN gen{uuid.uuid4().hex[:8]}.example.com.\n$TTL 300\n"
                "@ IN SOA ns1.example.org. a.example.org. 1 2 3 4 5\n"
                "@ IN NS ns1.example.org.\n" + directive + "\n")
        r = b.post("/v2/zones/tasks/imports", data=text.encode(),
                   headers={"Content-Type": "text/dns"})
        assert r.status_code == 202 and r.json()["status"] == "ERROR", r.text
        assert r.json()["zone_id"] is None


def test_a_projects_own_reverse_zone_is_not_the_floating_ips_ptr(cloud, designate):
    """A project may make an in-addr.arpa zone of its own; its PTR records are its own,
    neither shown as nor replaced by the PTR the reverse API sets on a floating IP."""
    conn = cloud.sdk()
    net = conn.network.create_network(name=f"ext-{uuid.uuid4().hex[:6]}",
                                      is_router_external=True)
    conn.network.create_subnet(network_id=net.id, cidr="198.51.100.0/24", ip_version=4)
    fip = conn.network.create_ip(floating_network_id=net.id)
    user = cloud.make_user()
    other = Designate(cloud.user_session(user))
    name = ".".join(reversed(fip.floating_ip_address.split("."))) + ".in-addr.arpa."
    zone = other.zone("100.51.198.in-addr.arpa.")
    try:
        mine = other.recordset(zone["id"], name, "PTR", ["mine.example.com."])
        key = f"RegionOne:{fip.id}"
        assert designate.get(f"/v2/reverse/floatingips/{key}").json()["ptrdname"] is None
        r = designate.req("PATCH", f"/v2/reverse/floatingips/{key}", json={"ptrdname": None})
        assert r.status_code == 202, r.text
        r = other.get(f"/v2/zones/{zone['id']}/recordsets/{mine['id']}")
        assert r.status_code == 200 and r.json()["action"] != "DELETE", r.text
    finally:
        other.req("DELETE", f"/v2/zones/{zone['id']}")
        conn.network.delete_ip(fip)
        conn.network.delete_network(net)
