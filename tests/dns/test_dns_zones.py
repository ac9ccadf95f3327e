"""Designate's zones and recordsets through openstacksdk's dns proxy and raw calls, and
what the embedded DNS server answers for them (`dig`): every change visible, NXDOMAIN
vs NODATA, AXFR, serials that grow, and the API's errors as designate gives them."""
from __future__ import annotations

import uuid

import pytest

from dns_helpers import dig, eventually, short, status_of


def _name():
    return f"z{uuid.uuid4().hex[:10]}.example.com."


def test_pools_and_service_statuses_describe_this_cloud(cloud, designate):
    services = cloud.cli("dns", "service", "list", "-f", "json")
    assert {row["service_name"] for row in services} >= {"api", "central", "mdns", "worker"}
    pool = designate.get("/v2/pools").json()["pools"][0]
    assert pool["ns_records"] == [{"hostname": "ns1.pocketstack.local.", "priority": 1}]


def test_the_catalog_lists_designate_and_the_root_is_its_version_document(cloud, designate):
    conn = cloud.sdk()
    services = {s.type: s.name for s in conn.identity.services()}
    assert services["dns"] == "designate"
    r = designate.s.get(cloud.url + "/dns/", raise_exc=False)
    assert r.status_code == 200
    ids = {v["id"]: v["status"] for v in r.json()["versions"]}
    assert ids["v2.1"] == "CURRENT"
    assert designate.get("/v2/zones").status_code == 200


def test_a_zone_and_its_recordsets_through_the_sdk_are_served_as_they_change(cloud):
    conn = cloud.sdk()
    name = _name()
    zone = conn.dns.create_zone(name=name, email="admin@example.com", ttl=600)
    assert zone.status == "PENDING" and zone.action == "CREATE"
    zone = conn.dns.wait_for_status(zone, "ACTIVE", interval=0.1, wait=10)
    assert zone.action == "NONE" and zone.name == name
    first_serial = zone.serial

    soa = dig(cloud, name, "SOA")
    assert status_of(soa) == "NOERROR" and " aa" in soa.split("flags:")[1].split(";")[0]
    assert short(cloud, name, "NS") == ["ns1.pocketstack.local."]

    rs = conn.dns.create_recordset(zone, name="www." + name, type="A",
                                   records=["192.0.2.10", "192.0.2.11"], ttl=300)
    assert rs.status == "PENDING" and rs.action == "CREATE"
    eventually(lambda: short(cloud, "www." + name) == ["192.0.2.10", "192.0.2.11"],
               "the A records served")
    rs = conn.dns.get_recordset(rs, zone)
    eventually(lambda: conn.dns.get_recordset(rs, zone).status == "ACTIVE", "ACTIVE")
    zone = conn.dns.get_zone(zone)
    assert zone.serial > first_serial
    served_serial = int(dig(cloud, name, "SOA", "+short").split()[2])
    assert served_serial == zone.serial

    conn.dns.update_recordset(rs, records=["192.0.2.12"])
    eventually(lambda: short(cloud, "www." + name) == ["192.0.2.12"], "the update served")
    assert conn.dns.get_zone(zone).serial > served_serial

    conn.dns.delete_recordset(rs, zone)
    eventually(lambda: status_of(dig(cloud, "www." + name)) == "NXDOMAIN", "the delete")

    listed = [z.name for z in conn.dns.zones(name=name)]
    assert listed == [name]
    conn.dns.delete_zone(zone)
    conn.dns.wait_for_delete(zone, interval=0.1, wait=10)
    assert status_of(dig(cloud, name, "SOA")) == "REFUSED"  # no longer ours to answer


def test_every_common_type_is_accepted_and_served(cloud, designate):
    zone = designate.zone()
    name = zone["name"]
    cases = {
        ("A", "a." + name): ["192.0.2.1"],
        ("AAAA", "aaaa." + name): ["2001:db8::1"],
        ("CNAME", "alias." + name): ["a." + name],
        ("MX", name): ["10 mail.example.net."],
        ("TXT", "txt." + name): ['"v=spf1 -all"'],
        ("SRV", "_sip._tcp." + name): ["10 60 5060 sip.example.net."],
        ("NS", "sub." + name): ["ns.example.net."],
        ("PTR", "ptr." + name): ["host.example.net."],
        ("CAA", name): ['0 issue "letsencrypt.org"'],
        ("SSHFP", "ssh." + name): ["1 1 " + "a" * 40],
    }
    for (rtype, rname), records in cases.items():
        designate.recordset(zone["id"], rname, rtype, records)
    eventually(lambda: short(cloud, "ssh." + name, "SSHFP") != [], "the last record")
    assert short(cloud, "a." + name) == ["192.0.2.1"]
    assert short(cloud, "aaaa." + name, "AAAA") == ["2001:db8::1"]
    assert short(cloud, name, "MX") == ["10", "mail.example.net."]
    assert short(cloud, "txt." + name, "TXT") == ['"v=spf1', '-all"']
    assert short(cloud, "_sip._tcp." + name, "SRV") == ["10", "5060", "60",
                                                         "sip.example.net."]
    assert short(cloud, "ptr." + name, "PTR") == ["host.example.net."]
    assert "letsencrypt.org" in dig(cloud, name, "CAA", "+short")
    # a CNAME is answered for any type, with its target's records from the zone
    assert short(cloud, "alias." + name) == ["192.0.2.1", "a." + name]
    # below a delegation: a referral, not an authoritative answer
    referral = dig(cloud, "host.sub." + name)
    assert status_of(referral) == "NOERROR" and "ns.example.net." in referral
    assert " aa" not in referral.split("flags:")[1].split(";")[0]


def test_nxdomain_and_nodata_are_told_apart(cloud, designate):
    zone = designate.zone()
    name = zone["name"]
    designate.recordset(zone["id"], "host.deep." + name, "A", ["192.0.2.5"])
    eventually(lambda: short(cloud, "host.deep." + name) == ["192.0.2.5"], "served")
    nodata = dig(cloud, "host.deep." + name, "AAAA")
    assert status_of(nodata) == "NOERROR" and "ANSWER: 0" in nodata
    assert "SOA" in nodata.split("AUTHORITY SECTION:")[1]
    empty_non_terminal = dig(cloud, "deep." + name, "A")
    assert status_of(empty_non_terminal) == "NOERROR" and "ANSWER: 0" in empty_non_terminal
    missing = dig(cloud, "nothing." + name, "A")
    assert status_of(missing) == "NXDOMAIN"
    assert "SOA" in missing.split("AUTHORITY SECTION:")[1]


def test_axfr_over_tcp_gives_the_whole_zone_between_two_soas(cloud, designate):
    zone = designate.zone()
    name = zone["name"]
    for i in range(150):  # more than one message's worth
        designate.recordset(zone["id"], f"h{i}.{name}", "A", [f"192.0.2.{i % 250 + 1}"])
    eventually(lambda: short(cloud, f"h149.{name}") != [], "the last record served")
    lines = [line for line in dig(cloud, name, "AXFR").splitlines()
             if line and not line.startswith(";")]
    types = [line.split()[3] for line in lines]
    assert types[0] == "SOA" and types[-1] == "SOA"
    assert types.count("A") == 150 and types.count("NS") == 1


def test_the_api_refuses_what_designate_refuses(cloud, designate, member):
    zone = designate.zone()
    name, zid = zone["name"], zone["id"]

    r = designate.post("/v2/zones", {"name": name, "email": "a@example.com"})
    assert r.status_code == 409
    body = r.json()
    assert body["type"] == "duplicate_zone" and body["code"] == 409 and body["request_id"]

    r = designate.post("/v2/zones", {"name": "no-dot.example.com", "email": "a@example.com"})
    assert (r.status_code, r.json()["type"]) == (400, "invalid_object")

    designate.recordset(zid, "both." + name, "A", ["192.0.2.1"])
    r = designate.post(f"/v2/zones/{zid}/recordsets",
                       {"name": "both." + name, "type": "CNAME", "records": ["x." + name]})
    assert (r.status_code, r.json()["type"]) == (400, "invalid_recordset_location")
    designate.recordset(zid, "only." + name, "CNAME", ["x." + name])
    r = designate.post(f"/v2/zones/{zid}/recordsets",
                       {"name": "only." + name, "type": "TXT", "records": ['"t"']})
    assert (r.status_code, r.json()["type"]) == (400, "invalid_recordset_location")

    r = designate.post(f"/v2/zones/{zid}/recordsets",
                       {"name": "www.elsewhere.org.", "type": "A", "records": ["192.0.2.1"]})
    assert (r.status_code, r.json()["type"]) == (400, "invalid_recordset_location")

    r = designate.post(f"/v2/zones/{zid}/recordsets",
                       {"name": "www." + name, "type": "A", "records": ["192.0.2.300"]})
    assert r.status_code == 400 and r.json()["type"] == "invalid_object"

    for ttl in (0, -5, 2 ** 31, "60"):
        r = designate.post(f"/v2/zones/{zid}/recordsets",
                           {"name": "t." + name, "type": "A", "records": ["192.0.2.1"],
                            "ttl": ttl})
        assert r.status_code == 400, (ttl, r.text)

    r = designate.post(f"/v2/zones/{zid}/recordsets",
                       {"name": "dup." + name, "type": "A", "records": ["192.0.2.1"]})
    r = designate.post(f"/v2/zones/{zid}/recordsets",
                       {"name": "dup." + name, "type": "A", "records": ["192.0.2.2"]})
    assert (r.status_code, r.json()["type"]) == (409, "duplicate_recordset")

    _, other = member
    for method, path in (("GET", f"/v2/zones/{zid}"), ("DELETE", f"/v2/zones/{zid}"),
                         ("GET", f"/v2/zones/{zid}/recordsets")):
        r = other.req(method, path)
        assert (r.status_code, r.json()["type"]) == (404, "zone_not_found"), (method, path)
    r = other.post(f"/v2/zones/{zid}/recordsets",
                   {"name": "x." + name, "type": "A", "records": ["192.0.2.1"]})
    assert (r.status_code, r.json()["type"]) == (404, "zone_not_found")
    assert zid not in [z["id"] for z in other.get("/v2/zones").json()["zones"]]
    r = other.post("/v2/zones", {"name": "sub." + name, "email": "a@example.com"})
    assert (r.status_code, r.json()["type"]) == (403, "illegal_child")  # inside another's
    r = other.post("/v2/zones", {"name": name.split(".", 1)[1], "email": "a@example.com"})
    assert (r.status_code, r.json()["type"]) == (403, "illegal_parent")  # around another's
    child = designate.zone("child." + name)
    r = designate.req("DELETE", f"/v2/zones/{zid}")
    assert (r.status_code, r.json()["type"]) == (400, "zone_has_sub_zone")
    designate.req("DELETE", f"/v2/zones/{child['id']}")


@pytest.mark.parametrize("body", [
    [], "zone", {"name": 5, "email": "a@example.com"}, {"name": "a.b.", "email": "nope"},
    {"name": "a.b.", "email": "a@example.com", "ttl": True},
    {"name": "a..b.", "email": "a@example.com"}, {"name": "single.", "email": "a@b.c"},
    {"name": "a.b.", "email": "a@example.com", "surprise": 1},
])
def test_malformed_zones_are_400s(designate, body):
    r = designate.post("/v2/zones", body)
    assert r.status_code == 400, r.text
    assert set(r.json()) == {"code", "type", "message", "request_id"}


def test_a_secondary_zone_is_transferred_from_its_master_and_served(cloud, designate):
    """The master is a second DNS server of the same code, on a port of its own,
    serving a zone the cloud does not hold."""
    import dns.name
    import dns.rrset

    from pocketstack.dns import authority, server

    name = _name()
    origin = dns.name.from_text(name)

    def rrset(owner, rtype, text, ttl=300):
        return dns.rrset.from_text(owner, ttl, "IN", rtype, text)

    master_data = authority.Authority()
    master_data.install(authority.ZoneData(origin, [
        rrset(name, "SOA", "ns.master. admin.master. 42 3600 600 86400 300"),
        rrset(name, "NS", "ns.master."),
        rrset("mail." + name, "A", "192.0.2.99")]))
    master = server.DNSServer(master_data, "127.0.0.1", 0).start()
    try:
        r = designate.post("/v2/zones", {"name": name, "type": "SECONDARY",
                                         "masters": [f"127.0.0.1:{master.port}"]})
        assert r.status_code == 202, r.text
        zone = designate.active(r.json()["id"])
        assert zone["type"] == "SECONDARY" and zone["serial"] == 42
        assert short(cloud, "mail." + name) == ["192.0.2.99"]
        rows = designate.get(f"/v2/zones/{zone['id']}/recordsets").json()["recordsets"]
        assert ("mail." + name, "A") in {(r["name"], r["type"]) for r in rows}
        r = designate.post(f"/v2/zones/{zone['id']}/recordsets",
                           {"name": "x." + name, "type": "A", "records": ["192.0.2.1"]})
        assert r.status_code == 400  # a secondary's records come from its masters

        master_data.install(authority.ZoneData(origin, [  # the master changes: xfr
            rrset(name, "SOA", "ns.master. admin.master. 43 3600 600 86400 300"),
            rrset(name, "NS", "ns.master."),
            rrset("mail." + name, "A", "192.0.2.100")]))
        assert designate.post(f"/v2/zones/{zone['id']}/tasks/xfr").status_code == 202
        eventually(lambda: short(cloud, "mail." + name) == ["192.0.2.100"], "the new data")
        assert designate.active(zone["id"])["serial"] == 43
    finally:
        master.stop()

    r = designate.post("/v2/zones", {"name": _name(), "type": "SECONDARY",
                                     "masters": ["127.0.0.1:1"]})
    assert r.status_code == 202
    eventually(lambda: designate.get(f"/v2/zones/{r.json()['id']}").json()["status"]
               == "ERROR", "a master that does not answer: ERROR")


def test_lists_page_by_limit_and_marker(designate):
    zone = designate.zone()
    for i in range(3):
        designate.recordset(zone["id"], f"p{i}.{zone['name']}", "A", ["192.0.2.1"])
    path = f"/v2/zones/{zone['id']}/recordsets"
    first = designate.get(path + "?limit=2").json()
    assert len(first["recordsets"]) == 2 and first["metadata"]["total_count"] == 5
    marker = first["recordsets"][-1]["id"]
    assert f"marker={marker}" in first["links"]["next"]
    rest = designate.get(f"{path}?limit=2&marker={marker}").json()["recordsets"]
    assert len(rest) == 2 and rest[0]["id"] not in {r["id"] for r in first["recordsets"]}
    assert designate.get(f"{path}?limit=2&marker={marker}").json()["metadata"] == \
        {"total_count": 5}
    for where in (path, "/v2/recordsets", "/v2/zones"):
        r = designate.get(where + "?marker=nope")
        assert (r.status_code, r.json()["type"]) == (400, "invalid_marker"), where
        for limit in ("0", "-1", "x"):
            r = designate.get(f"{where}?limit={limit}")
            assert (r.status_code, r.json()["type"]) == (400, "invalid_limit"), where
    assert len(designate.get(path + "?limit=max").json()["recordsets"]) == 5


def test_a_secondary_zone_larger_than_its_quota_is_not_taken(cloud, designate, member):
    """The transfer stops once the master has sent more records than the zone may hold
    (the zone_records quota): a master cannot fill the cloud's memory."""
    import dns.name
    import dns.rrset

    from pocketstack.dns import authority, server

    user, client = member
    name = _name()
    rrsets = [dns.rrset.from_text(name, 300, "IN", "SOA",
                                  "ns.master. admin.master. 7 3600 600 86400 300"),
              dns.rrset.from_text(name, 300, "IN", "NS", "ns.master.")]
    rrsets += [dns.rrset.from_text(f"h{i}.{name}", 300, "IN", "A", f"192.0.2.{i}")
               for i in range(1, 31)]
    master_data = authority.Authority()
    master_data.install(authority.ZoneData(dns.name.from_text(name), rrsets))
    master = server.DNSServer(master_data, "127.0.0.1", 0).start()
    r = designate.req("PATCH", f"/v2/quotas/{user['project_id']}", json={"zone_records": 10})
    assert r.status_code == 200, r.text
    try:
        r = client.post("/v2/zones", {"name": name, "type": "SECONDARY",
                                      "masters": [f"127.0.0.1:{master.port}"]})
        assert r.status_code == 202, r.text
        zone_id = r.json()["id"]
        eventually(lambda: client.get(f"/v2/zones/{zone_id}").json()["status"] == "ERROR",
                   "a zone over its quota: ERROR")
        rows = client.get(f"/v2/zones/{zone_id}/recordsets").json()["recordsets"]
        assert not [r for r in rows if r["type"] == "A"]
        client.req("DELETE", f"/v2/zones/{zone_id}")
    finally:
        master.stop()
        designate.req("DELETE", f"/v2/quotas/{user['project_id']}")
