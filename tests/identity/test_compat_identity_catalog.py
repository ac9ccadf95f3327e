"""Catalog and discovery: every service the catalog or the root map lists
answers at its root with a version document."""
from __future__ import annotations

import httpx



def _is_version_document(response: httpx.Response) -> bool:
    if response.status_code not in (200, 300):
        return False
    body = response.json()
    return "version" in body or "versions" in body or "resources" in body


def test_every_catalog_service_answers(cloud):
    session = cloud.session()
    catalog = session.auth.get_access(session).service_catalog.catalog
    assert {e["type"] for e in catalog} >= {"identity", "compute", "image", "network",
                                            "block-storage"}
    for entry in catalog:
        for endpoint in entry["endpoints"]:
            response = httpx.get(endpoint["url"], headers={"Accept": "application/json"})
            if entry["type"] == "object-store":
                # swift has no version document: its URL is an account (401 without a
                # token, as swift), its capabilities are at /info beside /v1
                assert response.status_code == 401, response.text
                assert httpx.get(endpoint["url"].split("/v1/")[0] + "/info").status_code == 200
                continue
            assert _is_version_document(response), (entry["type"], endpoint["url"],
                                                    response.status_code, response.text)


def test_every_service_in_the_root_map_answers_at_its_root(cloud):
    services = httpx.get(cloud.url + "/").json()["services"]
    assert {"identity", "compute", "image", "network", "volume",
            "pocketstack"} <= set(services)
    for name, prefix in services.items():
        if name == "object-store":  # no version document in swift: /info instead
            assert httpx.get(cloud.url + prefix + "/info").status_code == 200
            continue
        for path in (prefix, prefix + "/"):
            response = httpx.get(cloud.url + path, headers={"Accept": "application/json"})
            assert _is_version_document(response), (name, path, response.status_code)
    control = httpx.get(cloud.url + "/pocketstack/v1").json()["versions"][0]
    assert control["links"][0]["href"].endswith("/pocketstack/v1/")
