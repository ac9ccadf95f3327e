"""Discovery, extensions, neutron's error format, and the list machinery every resource
shares: filters, fields, sorting, pagination links, tags."""
from __future__ import annotations

import httpx
import pytest
from network_helpers import unique


def test_version_discovery_is_public(cloud):
    root = httpx.get(cloud.url + "/network")
    assert root.status_code == 200
    version = root.json()["versions"][0]
    assert version["id"] == "v2.0" and version["status"] == "CURRENT"
    assert version["links"][0]["href"].endswith("/network/v2.0/")
    resources = httpx.get(cloud.url + "/network/v2.0").json()["resources"]
    assert {r["collection"] for r in resources} == {"networks", "subnets", "ports"}


def test_keystoneauth_finds_the_endpoint(cloud):
    adapter = cloud.session().get_endpoint(service_type="network", interface="public")
    assert adapter.endswith("/network")


def test_extensions_list_and_lookup(admin_conn, raw):
    aliases = {e.alias for e in admin_conn.network.extensions()}
    for alias in ("security-group", "standard-attr-tag", "port-security",
                  "allowed-address-pairs", "binding", "router", "external-net", "quotas",
                  "dns-integration", "standard-attr-description", "project-id",
                  "ip-substring-filtering", "qos", "rbac-policies"):
        assert alias in aliases
    for absent in ("l3-ha", "network_availability_zone"):
        assert absent not in aliases
    assert admin_conn.network.find_extension("router").alias == "router"
    assert admin_conn.network.find_extension("l3-ha") is None
    status, fault = raw.error("GET", "/extensions/l3-ha")
    assert status == 404 and fault["type"] == "ExtensionNotFound"


def test_errors_use_neutron_format(cloud, raw):
    status, fault = raw.error("GET", "/networks/nope")
    assert status == 404 and fault["type"] == "NetworkNotFound"
    assert fault["message"] == "Network nope could not be found."
    status, fault = raw.error("POST", "/networks", {"network": {"name": 1}})
    assert status == 400 and fault["type"] == "HTTPBadRequest"
    status, fault = raw.error("POST", "/networks", {"network": {"colour": "red"}})
    assert status == 400 and "Unrecognized attribute(s) 'colour'" in fault["message"]
    status, fault = raw.error("POST", "/networks", {"net": {}})
    assert status == 400
    status, fault = raw.error("DELETE", "/networks")
    assert status == 405
    unauthenticated = httpx.get(cloud.url + "/network/v2.0/networks")
    assert unauthenticated.status_code == 401
    assert "NeutronError" in unauthenticated.json()
    malformed = raw.session.post(cloud.url + "/network/v2.0/networks", data=b"{not json",
                                 headers={"Content-Type": "application/json"},
                                 raise_exc=False)
    assert malformed.status_code == 400 and "NeutronError" in malformed.json()


def test_every_resource_shows_standard_attributes(admin_conn, raw):
    net = admin_conn.network.create_network(name=unique("std"), description="d")
    try:
        body = raw("GET", f"/networks/{net.id}").json()["network"]
        for key in ("project_id", "tenant_id", "created_at", "updated_at", "revision_number",
                    "tags", "description", "status", "mtu", "router:external", "shared",
                    "admin_state_up", "subnets"):
            assert key in body, key
        assert body["project_id"] == body["tenant_id"]
        assert body["created_at"].endswith("Z")
        updated = admin_conn.network.update_network(net, name=unique("std2"))
        assert updated.revision_number == body["revision_number"] + 1
    finally:
        admin_conn.network.delete_network(net)


def test_fields_filters_sorting_and_pagination(admin_conn, raw):
    tag = unique("page")
    nets = [admin_conn.network.create_network(name=f"{tag}-{i}", mtu=1400 + i)
            for i in range(5)]
    try:
        for n in nets:
            admin_conn.network.set_tags(n, [tag])
        body = raw("GET", f"/networks?tags={tag}&fields=id&fields=name").json()
        assert all(set(n) == {"id", "name"} for n in body["networks"])
        assert len(body["networks"]) == 5
        by_name = raw("GET", f"/networks?name={tag}-1&name={tag}-3").json()["networks"]
        assert sorted(n["name"] for n in by_name) == [f"{tag}-1", f"{tag}-3"]
        desc = raw("GET", f"/networks?tags={tag}&sort_key=mtu&sort_dir=desc").json()
        assert [n["mtu"] for n in desc["networks"]] == [1404, 1403, 1402, 1401, 1400]
        page = raw("GET", f"/networks?tags={tag}&limit=2&sort_key=name&sort_dir=asc").json()
        assert [n["name"] for n in page["networks"]] == [f"{tag}-0", f"{tag}-1"]
        assert [link["rel"] for link in page["networks_links"]] == ["next"]
        # openstacksdk follows the links through every page
        names = [n.name for n in admin_conn.network.networks(tags=tag, limit=2,
                                                               sort_key="name")]
        assert names == [f"{tag}-{i}" for i in range(5)]
        bad = raw.error("GET", "/networks?colour=red")
        assert bad[0] == 400 and "colour" in bad[1]["message"]
        assert raw.error("GET", "/networks?sort_key=colour")[0] == 400
        assert raw.error("GET", "/networks?limit=-1")[0] == 400
        assert raw.error("GET", "/networks?admin_state_up=maybe")[0] == 400
        assert raw.error("GET", "/networks?marker=not-there")[0] == 404
        assert raw("GET", f"/networks?tags-any={tag},x&not-tags=x").json()["networks"]
    finally:
        for n in nets:
            admin_conn.network.delete_network(n)


def test_tags_api(admin_conn, raw):
    net = admin_conn.network.create_network(name=unique("tags"))
    try:
        path = f"/networks/{net.id}/tags"
        assert raw("PUT", path, {"tags": ["b", "a"]}).json() == {"tags": ["a", "b"]}
        assert raw("PUT", f"{path}/c").status_code == 201
        assert raw("GET", f"{path}/c").status_code == 204
        assert raw.error("GET", f"{path}/zzz")[0] == 404
        assert raw("DELETE", f"{path}/a").status_code == 204
        assert raw("GET", path).json() == {"tags": ["b", "c"]}
        assert raw("POST", path, {"tags": ["d"]}).status_code == 201
        assert admin_conn.network.get_network(net).tags == ["b", "c", "d"]
        assert raw.error("PUT", path, {"tags": "x"})[0] == 400
        assert raw.error("PUT", path, {"tags": [str(i) for i in range(51)]})[0] == 400
        assert raw("DELETE", path).status_code == 204
        assert raw.error("GET", "/networks/nope/tags")[0] == 404
        assert raw.error("GET", f"/widgets/{net.id}/tags")[0] == 404
    finally:
        admin_conn.network.delete_network(net)


@pytest.mark.parametrize("path", ["/networks", "/subnets", "/ports", "/security-groups",
                                  "/security-group-rules", "/routers", "/floatingips"])
def test_lists_answer_for_every_collection(raw, path):
    response = raw("GET", path + "?limit=1")
    assert response.status_code == 200
    key = path.strip("/").replace("-", "_")
    assert key in response.json()
