"""Compute answers shaped as nova's: hypervisor lists with their servers (2.53+), the
project quota defaults following the `default` quota class, and the server create
response's security groups. Through openstacksdk and keystoneauth1."""
from __future__ import annotations

import pytest

from compute_rest import Compute


@pytest.fixture(scope="module")
def admin_conn(cloud):
    return cloud.sdk()


@pytest.fixture(scope="module")
def server(api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    yield sid
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_hypervisor_lists_with_servers(cloud, admin_conn, server, api):
    host = api.server(server)  # members do not see the host; the admin does
    shown = admin_conn.compute.get_server(server)
    hosts = {h.name: h for h in admin_conn.compute.hypervisors(details=True,
                                                                  with_servers=True)}
    mine = hosts[shown.hypervisor_hostname]
    assert {"name": host["name"], "uuid": server} in mine.servers
    basic = {h.name: h for h in admin_conn.compute.hypervisors(with_servers=True)}
    assert {"name": host["name"], "uuid": server} in basic[shown.hypervisor_hostname].servers
    admin = Compute(cloud, cloud.session(), version="2.53")
    listed = {h["id"]: h for h in admin.get(
        "/os-hypervisors?with_servers=true").json()["hypervisors"]}
    assert {"name": host["name"], "uuid": server} in listed[mine.id]["servers"]
    # nova leaves `servers` out of a host without any before 2.75, and lists [] from it
    assert all(h["servers"] for h in listed.values() if "servers" in h)
    for path in ("/os-hypervisors", "/os-hypervisors/detail"):
        latest = Compute(cloud, cloud.session(), version="2.75").get(
            f"{path}?with_servers=True").json()["hypervisors"]
        assert all(isinstance(h["servers"], list) for h in latest), latest
        # false, or a microversion before 2.53, lists no servers
        assert all("servers" not in h for h in admin.get(
            f"{path}?with_servers=false").json()["hypervisors"])
        assert all("servers" not in h for h in Compute(cloud, cloud.session(), "2.52").get(
            f"{path}?with_servers=true").json()["hypervisors"])
        r = admin.get(f"{path}?with_servers=maybe")
        assert r.status_code == 400
        assert r.json()["badRequest"]["message"].startswith(
            "Invalid input for query parameters with_servers. Value: maybe.")
    r = admin.get(f"/os-hypervisors/{mine.id}?with_servers=yes")
    assert {"name": host["name"], "uuid": server} in r.json()["hypervisor"]["servers"]


def test_quota_defaults_follow_the_default_quota_class(admin_conn, member):
    before = admin_conn.compute.get_quota_set_defaults(member["project_id"])
    try:
        admin_conn.compute.update_quota_class_set("default", key_pairs=before.key_pairs + 7)
        defaults = admin_conn.compute.get_quota_set_defaults(member["project_id"])
        assert defaults.key_pairs == before.key_pairs + 7
        assert defaults.instances == before.instances
        # the project itself, which has no limit of its own, gets the same
        shown = admin_conn.compute.get_quota_set(member["project_id"])
        assert shown.key_pairs == before.key_pairs + 7
        assert admin_conn.compute.get_quota_class_set("default").key_pairs == \
            before.key_pairs + 7
    finally:
        admin_conn.compute.update_quota_class_set("default", key_pairs=before.key_pairs)
    assert admin_conn.compute.get_quota_set_defaults(
        member["project_id"]).key_pairs == before.key_pairs
