"""Containers with secret refs and consumers, ACLs, quotas and orders, through keystoneauth
and openstacksdk; each bad input gets barbican's 4xx body."""
from __future__ import annotations

import uuid

from keymanager_helpers import barbican_error


def test_generic_container_with_consumers(member):
    a, b = member.store("one"), member.store("two")
    r = member.post("/v1/containers", {"name": "bundle", "type": "generic", "secret_refs": [
        {"name": "first", "secret_ref": a}, {"name": "second", "secret_ref": b}]})
    assert r.status_code == 201, r.text
    ref = r.json()["container_ref"]
    assert r.headers["location"] == ref
    body = member.get(ref).json()
    assert body["type"] == "generic" and body["status"] == "ACTIVE"
    assert {(x["name"], x["secret_ref"]) for x in body["secret_refs"]} == {
        ("first", a), ("second", b)}
    consumer = {"name": "lb-listener", "URL": "http://lb.example/listener/1"}
    r = member.post(ref + "/consumers", consumer)
    assert r.status_code == 200, r.text
    assert r.json()["consumers"] == [consumer]
    listed = member.get(ref + "/consumers").json()
    assert listed["total"] == 1 and listed["consumers"][0]["URL"] == consumer["URL"]
    r = member.delete(ref + "/consumers", json=consumer)
    assert r.status_code == 200 and r.json()["consumers"] == []
    assert barbican_error(member.delete(ref + "/consumers", json=consumer), 404) == \
        "Consumer not found."
    assert member.get("/v1/containers").json()["total"] == 1
    assert member.delete(ref).status_code == 204
    assert barbican_error(member.get(ref), 404) == "Secrets container not found."
    assert member.get(a).status_code == 200  # the secrets stay


def test_sdk_rsa_container(cloud, member):
    conn = cloud.user_sdk(member.user)
    private = member.store("PRIV", secret_type="private")
    public = member.store("PUB", secret_type="public")
    container = conn.key_manager.create_container(name="pair", type="rsa", secret_refs=[
        {"name": "private_key", "secret_ref": private},
        {"name": "public_key", "secret_ref": public}])
    got = conn.key_manager.get_container(container.container_ref.rsplit("/", 1)[1])
    assert got.type == "rsa" and len(got.secret_refs) == 2


def test_bad_container_refs(member, other):
    mine = member.store()
    theirs = other.store()

    def post(body):
        return member.post("/v1/containers", body)

    desc = barbican_error(post({"type": "rsa", "secret_refs": [
        {"name": "certificate", "secret_ref": mine}]}), 400)
    assert desc == ("Provided object does not match schema 'Container': only 'private_key', "
                    "'public_key' and 'private_key_passphrase' reference names are allowed "
                    "for RSA type. Invalid property: 'secret_refs'")
    desc = barbican_error(post({"type": "certificate", "secret_refs": [
        {"name": "private_key", "secret_ref": mine}]}), 400)
    assert "The minimum required reference name is 'certificate'" in desc
    desc = barbican_error(post({"type": "generic", "secret_refs": [
        {"name": "x", "secret_ref": mine}, {"name": "x", "secret_ref": theirs}]}), 400)
    assert "Duplicate reference names are not allowed" in desc
    desc = barbican_error(post({"type": "generic", "secret_refs": [
        {"name": "x", "secret_ref": "http://elsewhere.example/v1/secrets/" +
         str(uuid.uuid4())}]}), 400)
    assert desc == "Provided field value is not supported"
    desc = barbican_error(post({"type": "generic", "secret_refs": [
        {"name": "theirs", "secret_ref": theirs}]}), 404)
    assert desc == "Secret provided for 'theirs' doesn't exist."
    base = mine.rsplit("/", 1)[0]
    desc = barbican_error(post({"type": "generic", "secret_refs": [
        {"name": "junk", "secret_ref": base + "/not-a-uuid"}]}), 404)
    assert desc == "Secret provided for 'junk' doesn't exist."
    barbican_error(post({"type": "box"}), 400)
    barbican_error(post({"type": "generic", "secret_refs": "nope"}), 400)
    assert member.get("/v1/containers").json()["total"] == 0


def test_acl_body_checks(member):
    ref = member.store()
    for body in ({"write": {"users": []}}, {"read": {"users": "alice"}},
                 {"read": {"project-access": "no"}}, {"read": {"colour": 1}}, []):
        desc = barbican_error(member.put(ref + "/acl", body), 400)
        assert desc.startswith("Provided object does not match schema 'ACL'")
    assert member.get(ref + "/acl").json() == {"read": {"project-access": True}}
    r = member.put(ref + "/acl", {"read": {"users": ["u1", "u2"], "project-access": False}})
    assert r.status_code == 200 and r.json() == {"acl_ref": ref + "/acl"}
    acl = member.get(ref + "/acl").json()["read"]
    assert acl["users"] == ["u1", "u2"] and acl["project-access"] is False
    member.patch(ref + "/acl", {"read": {"users": ["u3"]}})
    acl = member.get(ref + "/acl").json()["read"]
    assert acl["users"] == ["u3"] and acl["project-access"] is False
    assert member.delete(ref + "/acl").status_code == 200
    assert member.get(ref + "/acl").json() == {"read": {"project-access": True}}


def test_quotas(cloud, member, km_admin):
    assert member.get("/v1/quotas").json() == {"quotas": {
        "secrets": -1, "orders": -1, "containers": -1, "consumers": -1, "cas": -1}}
    project = member.user["project_id"]
    barbican_error(member.put(f"/v1/project-quotas/{project}",
                              {"project_quotas": {"secrets": 1}}), 403)
    r = km_admin.put(f"/v1/project-quotas/{project}", {"project_quotas": {"secrets": 1}})
    assert r.status_code == 204, r.text
    assert km_admin.get(f"/v1/project-quotas/{project}").json() == {
        "project_quotas": {"secrets": 1}}
    assert member.get("/v1/quotas").json()["quotas"]["secrets"] == 1
    member.store()
    r = member.post("/v1/secrets", {"payload": "x", "payload_content_type": "text/plain"})
    assert barbican_error(r, 403) == ("Secret creation issue seen - Creation not allowed "
                                      "because a quota has been reached.")
    for bad in ({"project_quotas": {"secrets": -2}}, {"project_quotas": {"hats": 1}}, {}):
        barbican_error(km_admin.put(f"/v1/project-quotas/{project}", bad), 400)
    listed = km_admin.get("/v1/project-quotas").json()
    assert {"project_id": project, "project_quotas": {"secrets": 1}} in \
        listed["project_quotas"]
    assert km_admin.delete(f"/v1/project-quotas/{project}").status_code == 204
    assert barbican_error(km_admin.get(f"/v1/project-quotas/{project}"), 404) == \
        "Project quotas not found."
    member.store()  # unlimited again


def test_key_order_generates_a_symmetric_key(cloud, member):
    conn = cloud.user_sdk(member.user)
    order = conn.key_manager.create_order(type="key", meta={
        "name": "disk-key", "algorithm": "aes", "bit_length": 256, "mode": "cbc",
        "payload_content_type": "application/octet-stream"})
    got = conn.key_manager.get_order(order.order_ref.rsplit("/", 1)[1])
    assert got.status == "ACTIVE"
    secret = member.get(got.secret_ref).json()
    assert (secret["name"], secret["algorithm"], secret["bit_length"], secret["mode"],
            secret["secret_type"]) == ("disk-key", "aes", 256, "cbc", "symmetric")
    key = member.get(got.secret_ref + "/payload",
                     headers={"Accept": "application/octet-stream"}).content
    assert len(key) == 32
    assert member.get("/v1/orders").json()["total"] == 1


def test_asymmetric_order_fills_an_rsa_container(member):
    from cryptography.hazmat.primitives import serialization

    r = member.post("/v1/orders", {"type": "asymmetric", "meta": {
        "name": "pair", "algorithm": "rsa", "bit_length": 2048}})
    assert r.status_code == 202, r.text
    order = member.get(r.json()["order_ref"]).json()
    assert order["status"] == "ACTIVE" and "container_ref" in order
    container = member.get(order["container_ref"]).json()
    refs = {x["name"]: x["secret_ref"] for x in container["secret_refs"]}
    assert container["type"] == "rsa" and set(refs) == {"private_key", "public_key"}
    pem = member.get(refs["private_key"] + "/payload").content
    key = serialization.load_pem_private_key(pem, password=None)
    public = serialization.load_pem_public_key(member.get(refs["public_key"] + "/payload")
                                               .content)
    assert key.public_key().public_numbers() == public.public_numbers()


def test_bad_orders(member):
    for body, status in (({"type": "certificate", "meta": {}}, 400),
                         ({"type": "key"}, 400),
                         ({"type": "key", "meta": {"algorithm": "aes"}}, 400),
                         ({"type": "key", "meta": {"algorithm": "aes", "bit_length": 7}}, 400),
                         ({"type": "key", "meta": {"algorithm": "aes", "bit_length": 256,
                                                   "payload": "x"}}, 400)):
        barbican_error(member.post("/v1/orders", body), status)
    r = member.post("/v1/orders", {"type": "key", "meta": {"algorithm": "blowfish",
                                                           "bit_length": 128}})
    order = member.get(r.json()["order_ref"]).json()
    assert order["status"] == "ERROR" and order["error_status_code"] == 400
    assert barbican_error(member.get(f"/v1/orders/{uuid.uuid4()}"), 404) == "Order not found."


def test_secrets_added_to_and_removed_from_a_generic_container(member, other):
    a, b = member.store("one"), member.store("two")
    ref = member.post("/v1/containers", {"type": "generic", "secret_refs": [
        {"name": "a", "secret_ref": a}]}).json()["container_ref"]
    r = member.post(ref + "/secrets", {"name": "b", "secret_ref": b})
    assert r.status_code == 201 and r.json() == {"container_ref": ref}
    r = member.post(ref + "/secrets", {"name": "a-again", "secret_ref": a})
    assert r.status_code == 201  # one secret under two names
    assert barbican_error(member.post(ref + "/secrets", {"name": "b", "secret_ref": b}),
                          409).startswith("Conflict. A secret with that name and ID")
    assert barbican_error(member.post(ref + "/secrets", {"name": "x",
                                                         "secret_ref": other.store()}),
                          404) == "Secret provided doesn't exist."
    barbican_error(member.post(ref + "/secrets", {"name": "x"}), 400)
    names = sorted(x["name"] for x in member.get(ref).json()["secret_refs"])
    assert names == ["a", "a-again", "b"]
    assert member.delete(ref + "/secrets", json={"name": "a", "secret_ref": a}
                         ).status_code == 204
    assert barbican_error(member.delete(ref + "/secrets", json={"name": "a",
                                                                "secret_ref": a}), 404) == \
        "Secret provided is not in the container"
    names = sorted(x["name"] for x in member.get(ref).json()["secret_refs"])
    assert names == ["a-again", "b"]
    rsa = member.post("/v1/containers", {"type": "rsa", "secret_refs": [
        {"name": "private_key", "secret_ref": a}, {"name": "public_key", "secret_ref": b}]}
    ).json()["container_ref"]
    assert barbican_error(member.post(rsa + "/secrets", {"name": "x", "secret_ref": a}),
                          400) == "Only 'generic' containers can be modified."
