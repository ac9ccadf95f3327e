"""Smaller compute mismatches clients hit — update/rebuild answer the fields of
the requested microversion, x-compute-request-id, canonical accessIPv6, console output of
exactly N lines, GET /compute/v2/, x509 keypairs."""
import uuid

import pytest


@pytest.fixture(scope="module")
def server(api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    yield sid
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_update_before_2_75_has_no_extended_attributes(api, admin_api, server):
    body = {"server": {"name": "renamed"}}
    old = admin_api.req("PUT", f"/servers/{server}", json=body,
                        headers={"OpenStack-API-Version": "compute 2.74"}).json()["server"]
    for key in ("OS-EXT-STS:vm_state", "OS-EXT-SRV-ATTR:host", "OS-EXT-AZ:availability_zone",
                "key_name", "config_drive", "OS-SRV-USG:launched_at", "host_status",
                "os-extended-volumes:volumes_attached"):
        assert key not in old, key
    assert old["name"] == "renamed" and old["locked"] is False and "tags" in old
    new = admin_api.req("PUT", f"/servers/{server}", json=body,
                        headers={"OpenStack-API-Version": "compute 2.75"}).json()["server"]
    assert new["OS-EXT-STS:vm_state"] == "active" and "OS-EXT-SRV-ATTR:host" in new
    assert "server_groups" in new


def test_rebuild_answer_follows_the_microversion(api, image_id, server):
    r = api.req("POST", f"/servers/{server}/action",
                json={"rebuild": {"imageRef": image_id, "accessIPv6": "2001:DB8:0:0::1"}},
                headers={"OpenStack-API-Version": "compute 2.74"})
    assert r.status_code == 202, r.text
    rebuilt = r.json()["server"]
    assert "OS-EXT-STS:vm_state" not in rebuilt and "adminPass" in rebuilt
    assert rebuilt["accessIPv6"] == "2001:db8::1"
    api.wait(server)


def test_access_ipv6_is_canonical(cloud, member, server):
    conn = cloud.user_sdk(member)
    conn.compute.update_server(server, access_ipv6="2001:0DB8:0000:0000:0000:0000:0000:0042")
    assert conn.compute.get_server(server).access_ipv6 == "2001:db8::42"


def test_compute_request_id_header(cloud, api, server):
    r = api.get(f"/servers/{server}")
    assert r.headers["x-compute-request-id"] == r.headers["x-openstack-request-id"]
    missing = api.get(f"/servers/{uuid.uuid4()}")
    assert missing.status_code == 404 and missing.headers["x-compute-request-id"].startswith(
        "req-")
    image = cloud.session().get(cloud.url + "/image/v2/images")
    assert "x-compute-request-id" not in image.headers


def test_console_output_length_is_exactly_n_lines(cloud, member, server):
    conn = cloud.user_sdk(member)
    full = conn.compute.get_server_console_output(server)["output"]
    assert len(full.split("\n")) >= 3
    for n in (1, 2):
        out = conn.compute.get_server_console_output(server, length=n)["output"]
        assert len(out.split("\n")) == n  # as tempest counts them
    assert conn.compute.get_server_console_output(server, length=-1)["output"] == full


def test_compute_v2_root_answers(cloud):
    import httpx

    listed = httpx.get(cloud.url + "/compute/").json()["versions"]
    v2 = next(v for v in listed if v["id"] == "v2.0")
    r = httpx.get(v2["links"][0]["href"])
    assert r.status_code == 200 and r.json()["version"]["id"] == "v2.0"


def test_x509_keypair_generate_and_import(cloud, member):
    from cryptography import x509

    conn = cloud.user_sdk(member)
    made = conn.compute.create_keypair(name=f"cc-x509-{uuid.uuid4().hex[:4]}", type="x509")
    try:
        assert made.type == "x509" and "PRIVATE KEY" in made.private_key
        cert = x509.load_pem_x509_certificate(made.public_key.encode())
        assert cert.subject.rfc4514_string() == f"CN={member['id']}"
        imported = conn.compute.create_keypair(name=made.name + "-imp", type="x509",
                                               public_key=made.public_key)
        assert imported.fingerprint == made.fingerprint
        conn.compute.delete_keypair(imported)
    finally:
        conn.compute.delete_keypair(made)


def test_changes_before_and_since_include_the_boundary(cloud, member, server):
    conn = cloud.user_sdk(member)
    updated = conn.compute.get_server(server).updated_at  # second precision, as nova
    assert server in [s.id for s in conn.compute.servers(changes_before=updated)]
    assert server in [s.id for s in conn.compute.servers(changes_since=updated)]
    r = conn.compute.get("/servers?changes-since=2030-01-02T00:00:00Z"
                         "&changes-before=2030-01-01T00:00:00Z",
                         microversion="2.66")
    assert r.status_code == 400


def test_aggregate_in_the_internal_zone_is_accepted(cloud):
    conn = cloud.sdk()
    agg = conn.compute.create_aggregate(name=f"cc-internal-{uuid.uuid4().hex[:4]}",
                                        availability_zone="internal")
    try:
        assert conn.compute.get_aggregate(agg).availability_zone == "internal"
    finally:
        conn.compute.delete_aggregate(agg)
