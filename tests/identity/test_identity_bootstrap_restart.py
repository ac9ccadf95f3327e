"""A restart finds what bootstrap made and leaves it; what was deleted it puts back, and
the endpoints it made follow the cloud to a new port (a warm start checks this without
writing; only a missing or moved object makes it write)."""
from __future__ import annotations

from pocketstack import Cloud
from pocketstack.identity import bootstrap

FAST = {"identity.password_hash_rounds": 4}


def _catalog(session) -> dict:
    """(service type, interface) -> urls of every endpoint in the catalog API."""
    services = {s["id"]: s["type"] for s in
                session.get("/v3/services", endpoint_filter={"service_type": "identity"}
                            ).json()["services"]}
    found: dict = {}
    for ep in session.get("/v3/endpoints", endpoint_filter={"service_type": "identity"}
                          ).json()["endpoints"]:
        found.setdefault((services[ep["service_id"]], ep["interface"]), []).append(ep["url"])
    return found


def _role_ids(session) -> dict:
    return {r["name"]: r["id"] for r in
            session.get("/v3/roles", endpoint_filter={"service_type": "identity"}
                        ).json()["roles"]}


def test_restart_puts_back_what_was_deleted_and_moves_endpoints(tmp_path):
    data_dir = str(tmp_path / "data")
    ident = {"service_type": "identity"}
    with Cloud(data_dir, admin_password="pw-1", overrides=FAST) as cloud:
        first_url = cloud.url
        s = cloud.session()
        before = _catalog(s)
        roles = _role_ids(s)
        assert s.delete(f"/v3/roles/{roles['admin']}/implies/{roles['manager']}",
                        endpoint_filter=ident).status_code == 204
        internal = [ep for ep in s.get("/v3/endpoints", endpoint_filter=ident,
                                       params={"interface": "internal"}).json()["endpoints"]]
        for ep in internal:
            assert s.delete(f"/v3/endpoints/{ep['id']}", endpoint_filter=ident
                            ).status_code == 204
    expected = len(bootstrap.CATALOG) * len(bootstrap.INTERFACES)
    assert len(before) == expected and all(len(urls) == 1 for urls in before.values())

    with Cloud(data_dir, overrides=FAST) as cloud:  # another free port
        assert cloud.url != first_url
        s = cloud.session(password="pw-1")
        after = _catalog(s)
        assert sorted(after) == sorted(before)  # the internal endpoints are back
        assert all(len(urls) == 1 and urls[0].startswith(cloud.url + "/")
                   for urls in after.values()), after
        roles = _role_ids(s)
        assert s.get(f"/v3/roles/{roles['admin']}/implies/{roles['manager']}",
                     endpoint_filter=ident).status_code == 200

    with Cloud(data_dir, overrides=FAST) as cloud:  # nothing missing: nothing doubled
        assert _catalog(cloud.session(password="pw-1")).keys() == before.keys()
        assert all(len(urls) == 1 for urls in _catalog(cloud.session(password="pw-1")
                                                         ).values())
