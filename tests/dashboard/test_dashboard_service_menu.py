"""The menu offers object storage, key manager and DNS pages only when the catalog of the
user's token has the service: with the services disabled in keystone, the entries are gone
and the pages say the cloud has no such service."""
from __future__ import annotations

import httpx

from helpers.dashboard import alert_text, csrf_token, login

SERVICES = {"object-store": ("Containers", "/dashboard/containers"),
            "key-manager": ("Secrets", "/dashboard/secrets"),
            "dns": ("DNS zones", "/dashboard/zones")}


def _links(page: str) -> dict[str, bool]:
    return {kind: f'href="{path}">{label}</a>' in page
            for kind, (label, path) in SERVICES.items()}


def test_menu_entries_follow_the_catalog(cloud):
    user = cloud.make_user()
    client = login(cloud, user["name"], user["password"])
    try:
        assert _links(client.get("/dashboard/servers").text) == dict.fromkeys(SERVICES, True)
    finally:
        client.close()
    admin = cloud.session()
    services = {s["type"]: s["id"] for s in admin.get(
        cloud.url + "/identity/v3/services").json()["services"] if s["type"] in SERVICES}
    assert set(services) == set(SERVICES)
    try:
        for service_id in services.values():
            admin.patch(cloud.url + f"/identity/v3/services/{service_id}",
                        json={"service": {"enabled": False}})
        client = login(cloud, user["name"], user["password"])
        try:
            assert _links(client.get("/dashboard/servers").text) == dict.fromkeys(
                SERVICES, False)
            for _, path in SERVICES.values():
                page = client.get(path)
                assert page.status_code == 404
                assert alert_text(page.text).startswith("This cloud has no ")
        finally:
            client.close()
    finally:
        for service_id in services.values():
            admin.patch(cloud.url + f"/identity/v3/services/{service_id}",
                        json={"service": {"enabled": True}})


def test_the_new_pages_want_a_login_and_their_forms_a_csrf_token(cloud):
    user = cloud.make_user()
    s = cloud.user_session(user)
    account = s.get_endpoint(service_type="object-store", interface="public")
    s.put(account + "/box")
    zone = s.post("/v2/zones", endpoint_filter={"service_type": "dns"}, json={
        "name": f"z{user['id'][:10]}.example.net.", "email": "a@example.net"}).json()
    paths = ["/dashboard/containers", "/dashboard/containers/box", "/dashboard/secrets",
             "/dashboard/zones", f"/dashboard/zones/{zone['id']}"]
    client = login(cloud, user["name"], user["password"])
    try:
        with httpx.Client(base_url=cloud.url) as anonymous:
            for path in paths + ["/dashboard/containers/box/object?name=x"]:
                r = anonymous.get(path)
                assert r.status_code == 303 and r.headers["location"] == "/dashboard/login"
            r = anonymous.put("/dashboard/containers/box/object?name=x", content=b"x")
            assert r.status_code == 401
        for path in paths:
            r = client.post(path, data={"action": "delete"})  # no token
            assert r.status_code == 403 and 'role="alert"' in r.text
            token = csrf_token(client.get(path).text)
            r = client.post(path, data={"csrf_token": token, "action": "explode",
                                        "container": "box"})
            assert r.status_code == 400 and alert_text(r.text) == "Unknown form action."
    finally:
        client.close()
