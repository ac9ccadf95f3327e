"""The key manager on SQLite, PostgreSQL and MariaDB (``pocketstack up`` in a subprocess):
secrets with text and binary payloads, listing filters, metadata, an ACL across projects,
a container with a consumer, a secret consumer, a key order, and the ciphertext column
holding no plaintext."""
from __future__ import annotations

import base64
import os
import uuid

import sqlalchemy as sa

KM = {"endpoint_filter": {"service_type": "key-manager", "interface": "public"},
      "raise_exc": False}


def _member(backend_cloud):
    conn = backend_cloud.sdk()
    project = conn.identity.create_project(name=f"km-{uuid.uuid4().hex[:8]}",
                                           domain_id="default")
    user = conn.identity.create_user(name=f"u-{uuid.uuid4().hex[:8]}", password="pw",
                                     default_project_id=project.id, domain_id="default")
    conn.identity.assign_project_role_to_user(project, user, conn.identity.find_role("member"))
    return user, backend_cloud.session(username=user.name, password="pw",
                                       project_name=project.name)


def test_key_manager_on_backends(backend_cloud):
    (_, alice), (bob_user, bob) = _member(backend_cloud), _member(backend_cloud)
    marker = f"plaintext-{uuid.uuid4().hex}"
    r = alice.post("/v1/secrets", json={"name": "text", "payload": marker,
                                        "payload_content_type": "text/plain"}, **KM)
    assert r.status_code == 201, r.text
    text_ref = r.json()["secret_ref"]
    key = os.urandom(32)
    r = alice.post("/v1/secrets", json={
        "name": "binary", "payload": base64.b64encode(key).decode(), "algorithm": "aes",
        "bit_length": 256, "payload_content_type": "application/octet-stream",
        "payload_content_encoding": "base64", "secret_type": "symmetric"}, **KM)
    binary_ref = r.json()["secret_ref"]
    assert alice.get(text_ref + "/payload", headers={"Accept": "text/plain"}, **KM
                     ).text == marker
    assert alice.get(binary_ref + "/payload", **KM).content == key
    listed = alice.get("/v1/secrets?alg=aes&sort=name:desc", **KM).json()
    assert listed["total"] == 1 and listed["secrets"][0]["secret_ref"] == binary_ref
    assert alice.put(text_ref + "/metadata", json={"metadata": {"Env": "prod"}}, **KM
                     ).status_code == 201
    assert alice.get(text_ref + "/metadata", **KM).json() == {"metadata": {"env": "prod"}}

    assert bob.get(text_ref, **KM).status_code == 403
    alice.put(text_ref + "/acl", json={"read": {"users": [bob_user.id]}}, **KM)
    assert bob.get(text_ref + "/payload", headers={"Accept": "text/plain"}, **KM
                   ).text == marker
    shared = bob.get("/v1/secrets?acl_only=true", **KM).json()
    assert [x["secret_ref"] for x in shared["secrets"]] == [text_ref]

    container = alice.post("/v1/containers", json={"type": "generic", "secret_refs": [
        {"name": "t", "secret_ref": text_ref}, {"name": "b", "secret_ref": binary_ref}]},
        **KM).json()["container_ref"]
    consumer = {"name": "listener", "URL": "http://lb/1"}
    assert alice.post(container + "/consumers", json=consumer, **KM).status_code == 200
    assert alice.post(container + "/consumers", json=consumer, **KM).status_code == 200
    assert alice.get(container + "/consumers", **KM).json()["total"] == 1
    secret_consumer = {"service": "volume", "resource_type": "volume",
                       "resource_id": str(uuid.uuid4())}
    assert alice.post(binary_ref + "/consumers", json=secret_consumer, **KM
                      ).status_code == 200
    r = alice.post("/v1/orders", json={"type": "key", "meta": {
        "algorithm": "aes", "bit_length": 128}}, **KM)
    order = alice.get(r.json()["order_ref"], **KM).json()
    assert order["status"] == "ACTIVE"
    assert len(alice.get(order["secret_ref"] + "/payload", **KM).content) == 16

    engine = sa.create_engine(_database_url(backend_cloud))
    try:
        with engine.connect() as c:
            rows = c.execute(sa.text("SELECT ciphertext FROM keymanager_secrets")).all()
    finally:
        engine.dispose()
    assert rows and all(marker.encode() not in bytes(r[0]) and key not in bytes(r[0])
                        for r in rows if r[0] is not None)
    assert alice.delete(container, **KM).status_code == 204
    assert alice.delete(text_ref, **KM).status_code == 204
    assert bob.get(text_ref, **KM).status_code == 404


def _database_url(backend_cloud) -> str:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    parser.read(backend_cloud.config_file or os.path.join(backend_cloud.data_dir,
                                                          "pocketstack.conf"))
    if parser.has_option("database", "connection"):
        return parser.get("database", "connection")
    return f"sqlite:///{os.path.join(backend_cloud.data_dir, 'pocketstack.db')}"
