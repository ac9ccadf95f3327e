"""Secrets through openstacksdk's key_manager proxy and keystoneauth: the catalog entry and
version document, payloads by content type, a later PUT, metadata, listing filters and
paging, expiration, and barbican's 4xx bodies for bad input."""
from __future__ import annotations

import base64
import datetime as dt
import uuid

import pytest

from keymanager_helpers import barbican_error


def test_catalog_and_version_document(cloud, km_admin):
    session = cloud.session()
    endpoint = session.get_endpoint(service_type="key-manager", interface="public")
    assert endpoint == cloud.url + "/key-manager"
    r = km_admin.get("/")
    assert r.status_code == 300
    (v1,) = r.json()["versions"]["values"]
    assert v1["id"] == "v1" and v1["status"] == "stable"
    assert v1["links"][0]["href"] == endpoint + "/v1/"
    r = km_admin.get("/", headers={"OpenStack-API-Version": "key-manager 1.1"})
    (v1,) = r.json()["versions"]
    assert (v1["min_version"], v1["max_version"]) == ("1.0", "1.2")
    catalog = session.auth.get_access(session).service_catalog.catalog
    assert [s["name"] for s in catalog if s["type"] == "key-manager"] == ["barbican"]


def test_sdk_store_and_retrieve_text_and_binary(cloud):
    conn = cloud.sdk()
    text = conn.key_manager.create_secret(name="db-password", payload="pa55w0rd",
                                          payload_content_type="text/plain",
                                          secret_type="passphrase")
    assert text.secret_ref.startswith(cloud.url + "/key-manager/v1/secrets/")
    secret_id = text.secret_ref.rsplit("/", 1)[1]
    got = conn.key_manager.get_secret(secret_id)
    assert got.payload == "pa55w0rd"
    assert got.secret_type == "passphrase" and got.status == "ACTIVE"
    assert got.content_types == {"default": "text/plain"}

    key = bytes(range(32))
    binary = conn.key_manager.create_secret(
        name="aes", payload=base64.b64encode(key).decode(),
        payload_content_type="application/octet-stream", payload_content_encoding="base64",
        secret_type="symmetric", algorithm="aes", bit_length=256, mode="cbc")
    r = cloud.session().get(binary.secret_ref + "/payload",
                            headers={"Accept": "application/octet-stream"})
    assert r.content == key
    assert r.headers["content-type"] == "application/octet-stream"
    names = {s.name for s in conn.key_manager.secrets()}
    assert {"db-password", "aes"} <= names
    conn.key_manager.delete_secret(secret_id)
    assert cloud.session().get(text.secret_ref, raise_exc=False).status_code == 404


def test_payload_by_a_later_put(member):
    r = member.post("/v1/secrets", {"name": "later", "secret_type": "opaque"})
    assert r.status_code == 201, r.text
    ref = r.json()["secret_ref"]
    assert "content_types" not in member.get(ref).json()
    desc = barbican_error(member.get(ref + "/payload"), 404)
    assert desc == "Not Found. Sorry but your secret has no payload."
    r = member.put(ref, data=b"\x00\x01binary", headers={
        "Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    r = member.get(ref + "/payload", headers={"Accept": "application/octet-stream"})
    assert r.content == b"\x00\x01binary"
    # a second payload is refused; a JSON body is not a payload
    desc = barbican_error(member.put(ref, data=b"again", headers={
        "Content-Type": "text/plain"}), 409)
    assert desc == "Secret already has data, cannot modify it."
    barbican_error(member.put(ref, data=b"{}", headers={"Content-Type": "application/json"}),
                   415)


def test_payload_by_put_base64(member):
    ref = member.post("/v1/secrets", {"name": "b64"}).json()["secret_ref"]
    r = member.put(ref, data=base64.b64encode(b"\xffkey"), headers={
        "Content-Type": "application/octet-stream", "Content-Encoding": "base64"})
    assert r.status_code == 204, r.text
    assert member.get(ref + "/payload").content == b"\xffkey"  # no Accept: octet-stream


def test_accept_decides_the_payload_form(member):
    ref = member.store("plain words")
    assert member.get(ref + "/payload", headers={"Accept": "text/plain"}).text == "plain words"
    assert member.get(ref + "/payload", headers={"Accept": "*/*"}).text == "plain words"
    desc = barbican_error(member.get(ref + "/payload", headers={"Accept": "image/png"}), 406)
    assert desc == ("Secret payload retrieval issue seen - Secret Accept of 'image/png' not "
                    "supported.")


def test_metadata(member):
    ref = member.store()
    r = member.put(ref + "/metadata", {"metadata": {"Owner": "ops", "tier": "gold"}})
    assert r.status_code == 201, r.text
    assert member.get(ref + "/metadata").json() == {"metadata": {"owner": "ops",
                                                                 "tier": "gold"}}
    r = member.post(ref + "/metadata", {"key": "env", "value": "prod"})
    assert r.status_code == 201 and r.json() == {"key": "env", "value": "prod"}
    barbican_error(member.post(ref + "/metadata", {"key": "env", "value": "x"}), 409)
    r = member.put(ref + "/metadata/env", {"key": "env", "value": "staging"})
    assert r.json() == {"key": "env", "value": "staging"}
    assert member.get(ref + "/metadata/env").json() == {"key": "env", "value": "staging"}
    assert member.delete(ref + "/metadata/env").status_code == 204
    desc = barbican_error(member.get(ref + "/metadata/env"), 404)
    assert desc == "Secret metadata not found."
    desc = barbican_error(member.put(ref + "/metadata", {"metadata": {"a b": "x"}}), 400)
    assert desc == "Invalid Key. Key must be URL safe."
    desc = barbican_error(member.put(ref + "/metadata", {"metadata": {"k": 1}}), 400)
    assert desc == "Invalid Metadata. Keys and Values must be Strings."


def test_listing_filters_and_paging(member):
    for i in range(5):
        member.store(f"p{i}", name=f"page-{i}", algorithm="aes" if i % 2 else "rsa",
                     bit_length=256 if i % 2 else 2048, mode="cbc", secret_type="opaque")
    r = member.get("/v1/secrets?limit=2&offset=2&alg=rsa")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == 3 and [s["name"] for s in body["secrets"]] == ["page-4"]
    assert "next" not in body
    assert body["previous"].endswith("/v1/secrets?limit=2&offset=0&alg=rsa")
    body = member.get("/v1/secrets?limit=2").json()
    assert body["total"] == 5 and len(body["secrets"]) == 2
    assert body["next"].endswith("/v1/secrets?limit=2&offset=2")
    assert [s["name"] for s in member.get("/v1/secrets?bits=256").json()["secrets"]] == \
        ["page-1", "page-3"]
    assert [s["name"] for s in member.get("/v1/secrets?name=page-2").json()["secrets"]] == \
        ["page-2"]
    names = [s["name"] for s in member.get("/v1/secrets?sort=name:desc").json()["secrets"]]
    assert names == ["page-4", "page-3", "page-2", "page-1", "page-0"]
    future = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).strftime(
        "%Y-%m-%dT%H:%M:%S")
    assert member.get(f"/v1/secrets?created=lt:{future}").json()["total"] == 5
    assert member.get(f"/v1/secrets?created=gt:{future}").json()["total"] == 0
    for bad in ("sort=colour", "created=gt:x", "created=gt:2020-01-01,gte:2020-01-01"):
        desc = barbican_error(member.get(f"/v1/secrets?{bad}"), 400)
        assert desc == "URI provided invalid query string parameters."
    listed = member.get("/v1/secrets").json()["secrets"]
    assert all("payload" not in s for s in listed)


def test_expired_secret_is_gone(cloud, member):
    expiration = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).isoformat()
    ref = member.store("short-lived", expiration=expiration)
    assert member.get(ref).json()["expiration"].startswith(expiration[:19])
    _expire(ref)  # as if the hour had passed
    assert barbican_error(member.get(ref), 404) == "Secret not found."
    assert barbican_error(member.get(ref + "/payload"), 404) == "Secret not found."
    assert ref not in [s["secret_ref"] for s in member.get("/v1/secrets").json()["secrets"]]


def _expire(ref: str) -> None:
    from pocketstack.common import db
    from pocketstack.keymanager.models import Secret

    with db.transaction() as s:
        s.get(Secret, ref.rsplit("/", 1)[1]).expiration = dt.datetime(2000, 1, 1)


@pytest.mark.parametrize("body, description", [
    ({"payload": "not base64!!", "payload_content_type": "application/octet-stream",
      "payload_content_encoding": "base64"},
     "Provided object does not match schema 'Secret': Invalid payload for "
     "payload_content_encoding. Invalid property: 'payload'"),
    ({"payload": "x", "payload_content_type": "application/octet-stream",
      "payload_content_encoding": "gzip"},
     "Provided object does not match schema 'Secret': 'gzip' is not one of ['base64']. "
     "Invalid property: 'payload_content_encoding'"),
    ({"payload": "x", "payload_content_type": "text/plain",
      "payload_content_encoding": "base64"},
     "Provided object does not match schema 'Secret': payload_content_encoding is not one "
     "of None. Invalid property: 'payload_content_encoding'"),
    ({"payload": "x", "payload_content_type": "application/x-unknown"},
     "Provided object does not match schema 'Secret': payload_content_type is not one of "
     "['text/plain', 'text/plain;charset=utf-8', 'text/plain; charset=utf-8', "
     "'application/octet-stream', 'application/pkcs8']. "
     "Invalid property: 'payload_content_type'"),
    ({"payload": "x"},
     "Provided object does not match schema 'Secret': If 'payload' is supplied, "
     "'payload_content_type' must also be supplied.. Invalid property: "
     "'payload_content_type'"),
    ({"payload": "   ", "payload_content_type": "text/plain"},
     "Provided object does not match schema 'Secret': If 'payload' specified, must be non "
     "empty. Invalid property: 'payload'"),
    ({"secret_type": "banana"}, None),
    ({"bit_length": "256"}, None),
    ({"expiration": "yesterday"},
     "Provided object does not match schema 'Secret': Invalid date for 'expiration'. "
     "Invalid property: 'expiration'"),
    ({"expiration": "2001-01-01T00:00:00Z"},
     "Provided object does not match schema 'Secret': 'expiration' is before current "
     "time. Invalid property: 'expiration'"),
    (["a", "list"], None),
])
def test_bad_secret_bodies(member, body, description):
    desc = barbican_error(member.post("/v1/secrets", body), 400)
    if description:
        assert desc == description
    assert member.get("/v1/secrets").json()["total"] == 0  # nothing half-made


def test_bad_bodies_and_ids(member):
    r = member.post("/v1/secrets", data=b"{not json", headers={
        "Content-Type": "application/json"})
    assert barbican_error(r, 400) == "Malformed JSON"
    r = member.post("/v1/secrets", data=b"x", headers={"Content-Type": "text/plain"})
    barbican_error(r, 415)
    assert barbican_error(member.get("/v1/secrets/not-a-uuid"), 404) == \
        "Not Found. Provided secret id is invalid."
    assert barbican_error(member.get(f"/v1/secrets/{uuid.uuid4()}"), 404) == \
        "Secret not found."
    big = "x" * 20001
    barbican_error(member.post("/v1/secrets", {"payload": big,
                                               "payload_content_type": "text/plain"}), 413)


def test_odd_inputs_are_never_a_500(member, km_admin):
    ref = member.store()
    checks = [
        member.get("/v1/secrets?bits=" + "9" * 40),
        member.get("/v1/secrets?limit=abc&offset=-5"),
        member.get("/v1/secrets?offset=" + "9" * 30),
        member.get("/v1/secrets?created=gt:2020-02-30"),
        member.get("/v1/secrets?sort=name:up"),
        member.put(ref + "/metadata", {"metadata": {"k" * 300: "v"}}),
        member.put(ref + "/metadata", {"metadata": []}),
        member.post(ref + "/metadata", {"key": "a", "value": "b", "extra": 1}),
        member.put(ref + "/metadata/nokey", {"key": "other", "value": "b"}),
        member.put(ref + "/acl", {"read": {"users": [1, 2]}}),
        member.post("/v1/containers", {"type": "generic", "secret_refs": [{"name": "x"}]}),
        member.post("/v1/orders", {"type": "key", "meta": "aes"}),
        member.post("/v1/orders", {"type": "asymmetric", "meta": {
            "algorithm": "rsa", "bit_length": 8}}),
        member.get("/v1/orders/not-a-uuid"),
        member.get("/v1/containers/not-a-uuid"),
        km_admin.put("/v1/project-quotas/" + "p" * 300, {"project_quotas": {"secrets": 1}}),
        member.put(ref, data=b"\xff\xfe", headers={"Content-Type": "text/plain"}),
    ]
    for r in checks:  # a listing falls back to defaults for bad paging, as barbican's
        assert r.status_code < 500, (r.request.url, r.status_code, r.text)
        if r.status_code >= 400:
            assert set(r.json()) == {"code", "title", "description"}, r.text


V11 = {"OpenStack-API-Version": "key-manager 1.1"}
V12 = {"OpenStack-API-Version": "key-manager 1.2"}


def test_secret_consumers_and_microversions(member, other):
    ref = member.store()
    consumer = {"service": "volume", "resource_type": "volume",
                "resource_id": "b9ba3f2c-1d1e-4a8e-9a53-d3a7d0d7d1f0"}
    assert "consumers" not in member.get(ref).json()  # 1.0 has none
    assert member.get(ref, headers=V11).json()["consumers"] == []
    r = member.post(ref + "/consumers", consumer, headers=V11)
    assert r.status_code == 200, r.text
    assert [{k: c[k] for k in consumer} for c in r.json()["consumers"]] == [consumer]
    listed = member.get(ref + "/consumers").json()
    assert listed["total"] == 1 and listed["consumers"][0]["resource_id"] == \
        consumer["resource_id"]
    barbican_error(other.post(ref + "/consumers", consumer), 403)
    desc = barbican_error(member.delete(ref, headers=V12), 400)
    assert desc == ("Secret deletion issue seen - Secret cannot be deleted as it has "
                    "consumers.")
    assert barbican_error(member.delete(ref + "?force=maybe", headers=V12), 400) == \
        "URI provided invalid query string parameters."
    assert member.delete(ref + "/consumers", json=consumer).json()["consumers"] == []
    assert barbican_error(member.delete(ref + "/consumers", json=consumer), 404) == \
        "Consumer not found."
    member.post(ref + "/consumers", consumer)
    assert member.delete(ref + "?force=true", headers=V12).status_code == 204
    other_ref = member.store()
    member.post(other_ref + "/consumers", consumer)
    assert member.delete(other_ref).status_code == 204  # 1.0 deletes a consumed secret
    barbican_error(member.get("/v1/secrets", headers={
        "OpenStack-API-Version": "key-manager 1.9"}), 406)
    barbican_error(member.get("/v1/secrets", headers={
        "OpenStack-API-Version": "key-manager one"}), 400)
