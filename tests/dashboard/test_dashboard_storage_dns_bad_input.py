"""Odd input on the object storage, key manager and DNS pages (names with NUL, control
characters or too long, bad ids, bad paging values): each gets the page or the API's clear
4xx, never a 500 or a traceback."""
from __future__ import annotations

import pytest

from helpers.dashboard import csrf_token, login

ODD = ("%00", "x%0Ay", "%20", "a" * 300, "%E2%80%AE", "..", "%25")


@pytest.fixture(scope="module")
def client(cloud):
    user = cloud.make_user()
    s = cloud.user_session(user)
    s.put(s.get_endpoint(service_type="object-store", interface="public") + "/box")
    c = login(cloud, user["name"], user["password"])
    yield c
    c.close()


@pytest.mark.parametrize("odd", ODD)
def test_odd_names_and_ids_in_paths(client, odd):
    assert client.get("/dashboard/containers/box").status_code == 200
    for path in (f"/dashboard/containers/{odd}", f"/dashboard/zones/{odd}",
                 f"/dashboard/containers/box/object?name={odd}",
                 f"/dashboard/containers/{odd}/object?name=x",
                 f"/dashboard/containers/box?prefix={odd}",
                 f"/dashboard/containers?marker={odd}", f"/dashboard/zones?marker={odd}",
                 f"/dashboard/secrets?offset={odd}"):
        r = client.get(path)
        assert r.status_code < 500, (path, r.status_code, r.text[:300])
    csrf = csrf_token(client.get("/dashboard/containers").text)
    for path, form in ((f"/dashboard/zones/{odd}", {"action": "create", "name": "www",
                                                    "type": "A", "records": "192.0.2.1"}),
                       (f"/dashboard/zones/{odd}", {"action": "delete", "recordset_id": "x"}),
                       (f"/dashboard/containers/{odd}", {"action": "delete", "object": "x"})):
        r = client.post(path, data={"csrf_token": csrf, **form})
        assert 400 <= r.status_code < 500 and 'role="alert"' in r.text, (path, r.text[:300])


@pytest.mark.parametrize("odd", ["\0", "x\ny", " ", "a" * 300, "\u202e", "..", "%"])
def test_odd_names_in_forms(client, odd):
    page = client.get("/dashboard/containers")
    assert page.status_code == 200 and "Create a container" in page.text
    csrf = csrf_token(page.text)
    for path, form in (
            ("/dashboard/containers", {"action": "create", "container": odd}),
            ("/dashboard/containers/box", {"action": "public"}),
            ("/dashboard/containers", {"action": "delete", "container": odd}),
            ("/dashboard/containers/box", {"action": "delete", "object": odd}),
            ("/dashboard/secrets", {"action": "delete", "secret_id": odd}),
            ("/dashboard/zones", {"action": "create", "name": odd, "email": odd,
                                  "ttl": odd}),
            ("/dashboard/zones", {"action": "delete", "zone_id": odd})):
        r = client.post(path, data={"csrf_token": csrf, **form})
        assert r.status_code < 500 and "Traceback" not in r.text, (path, form, r.text[:300])
    r = client.put("/dashboard/containers/box/object", params={"name": odd}, content=b"x",
                   headers={"X-CSRF-Token": csrf})
    assert r.status_code < 500 and "error" in r.json() or r.status_code == 200, r.text
