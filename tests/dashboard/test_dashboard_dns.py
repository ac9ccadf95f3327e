"""The dashboard's DNS pages over real HTTP: zones (name, status, serial; create, delete)
and a zone's recordsets (name, type, records, TTL, status; create, delete), checked
against the Designate API's own answers. Bad input shows designate's message."""
from __future__ import annotations

import uuid

from helpers.cloud import wait_for
from helpers.dashboard import alert_text, csrf_token

DNS = {"service_type": "dns"}


def _zone_name() -> str:
    return f"z{uuid.uuid4().hex[:10]}.example.org."


def _post(client, path, **data):
    page = client.get(path)
    assert page.status_code == 200, page.text
    return client.post(path, data={"csrf_token": csrf_token(page.text), **data})


def _zone(s, name):
    [zone] = s.get("/v2/zones", params={"name": name}, endpoint_filter=DNS).json()["zones"]
    return zone


def _active(s, url):
    def active():
        body = s.get(url, endpoint_filter=DNS).json()
        return body if body["status"] == "ACTIVE" else None
    return wait_for(active, 10, f"{url} ACTIVE", 0.05)


def test_zones_page_create_list_and_delete(cloud, member):
    user, client = member
    s = cloud.user_session(user)
    name = _zone_name()
    r = _post(client, "/dashboard/zones", action="create", name=name,
              email="hostmaster@example.org", ttl="600")
    assert r.status_code == 303, r.text
    zone = _active(s, f"/v2/zones/{_zone(s, name)['id']}")
    assert zone["ttl"] == 600
    other = cloud.make_user()
    theirs = _zone_name()
    assert cloud.user_session(other).post("/v2/zones", endpoint_filter=DNS, json={
        "name": theirs, "email": "a@example.org"}).status_code == 202
    page = client.get("/dashboard/zones")
    assert page.status_code == 200
    assert f'<a href="/dashboard/zones/{zone["id"]}">{name}</a>' in page.text
    assert f'data-status="{zone["id"]}">ACTIVE</td>' in page.text
    assert f'data-serial="{zone["id"]}">{zone["serial"]}</td>' in page.text
    assert theirs not in page.text
    assert 'href="/dashboard/zones">DNS zones</a>' in page.text
    r = _post(client, "/dashboard/zones", action="delete", zone_id=zone["id"])
    assert r.status_code == 303
    wait_for(lambda: s.get(f"/v2/zones/{zone['id']}", endpoint_filter=DNS,
                           raise_exc=False).status_code == 404, 10, "the zone gone", 0.05)
    assert name not in client.get("/dashboard/zones").text


def test_bad_zone_input_shows_designates_message(cloud, member):
    user, client = member
    s = cloud.user_session(user)
    r = _post(client, "/dashboard/zones", action="create", name="no-trailing-dot.org",
              email="a@example.org")
    api = s.post("/v2/zones", endpoint_filter=DNS, raise_exc=False,
                 json={"name": "no-trailing-dot.org", "email": "a@example.org"})
    assert r.status_code == api.status_code == 400
    assert alert_text(r.text) == api.json()["message"]
    assert 'value="no-trailing-dot.org"' in r.text  # the form keeps what was typed
    r = _post(client, "/dashboard/zones", action="create", name=_zone_name(),
              email="a@example.org", ttl="soon")
    assert r.status_code == 400 and alert_text(r.text)
    # Another project's zone: designate's 404, shown on the page and for its recordsets.
    other = cloud.user_session(cloud.make_user())
    theirs = other.post("/v2/zones", endpoint_filter=DNS, json={
        "name": _zone_name(), "email": "a@example.org"}).json()
    r = _post(client, "/dashboard/zones", action="delete", zone_id=theirs["id"])
    assert r.status_code == 404 and alert_text(r.text)
    assert client.get(f"/dashboard/zones/{theirs['id']}").status_code == 404
    assert other.get(f"/v2/zones/{theirs['id']}", endpoint_filter=DNS).status_code == 200


def test_recordsets_create_with_a_relative_name_and_delete(cloud, member):
    user, client = member
    s = cloud.user_session(user)
    name = _zone_name()
    zone = s.post("/v2/zones", endpoint_filter=DNS, json={
        "name": name, "email": "a@example.org"}).json()
    _active(s, f"/v2/zones/{zone['id']}")
    path = f"/dashboard/zones/{zone['id']}"
    page = client.get(path)
    assert page.status_code == 200
    # The zone's own SOA and NS are listed, with no delete (designate manages them).
    assert "<td>SOA</td>" in page.text and "<td>NS</td>" in page.text
    assert "Delete recordset" not in page.text
    r = _post(client, path, action="create", name="www", type="A",
              records="192.0.2.10\n192.0.2.11\n", ttl="300")
    assert r.status_code == 303, r.text
    [rs] = s.get(f"/v2/zones/{zone['id']}/recordsets", params={"type": "A"},
                 endpoint_filter=DNS).json()["recordsets"]
    assert (rs["name"], sorted(rs["records"]), rs["ttl"]) == (
        "www." + name, ["192.0.2.10", "192.0.2.11"], 300)
    rs = _active(s, f"/v2/zones/{zone['id']}/recordsets/{rs['id']}")
    row = client.get(path).text.split(f'data-recordset="{rs["id"]}">')[1].split("</tr>")[0]
    assert f'<th scope="row">www.{name}</th><td>A</td>' in row
    assert "<div>192.0.2.10</div><div>192.0.2.11</div>" in row
    assert "<td>300</td>" in row and "<td>ACTIVE</td>" in row
    # Bad input: designate's own message and status; nothing made.
    r = _post(client, path, action="create", name="bad", type="A", records="not-an-ip")
    api = s.post(f"/v2/zones/{zone['id']}/recordsets", endpoint_filter=DNS,
                 raise_exc=False, json={"name": "bad." + name, "type": "A",
                                        "records": ["not-an-ip"]})
    assert r.status_code == api.status_code == 400
    assert alert_text(r.text) == api.json()["message"]
    r = _post(client, path, action="create", name="www", type="A", records="192.0.2.12")
    assert r.status_code == 409 and alert_text(r.text)
    r = _post(client, path, action="delete", recordset_id=rs["id"])
    assert r.status_code == 303
    wait_for(lambda: s.get(f"/v2/zones/{zone['id']}/recordsets/{rs['id']}",
                           endpoint_filter=DNS, raise_exc=False).status_code == 404,
             10, "the recordset gone", 0.05)
    r = _post(client, path, action="delete", recordset_id=rs["id"])
    assert r.status_code == 404 and alert_text(r.text)
    s.delete(f"/v2/zones/{zone['id']}", endpoint_filter=DNS)
