"""Volumes of an encrypted type get their key from the key manager, as cinder's through
castellan: made at volume create (the type's cipher and key size), shown as
``encryption_key_id`` (3.64) with ``encrypted: true``, copied for a clone, deleted with the
volume, and not left behind by a create that fails."""
from __future__ import annotations

import uuid

import pytest

from helpers.cloud import wait_for
from volume_helpers import Raw, create, wait_gone, wait_status

SPEC = {"provider": "luks", "cipher": "aes-xts-plain64", "key_size": 256,
        "control_location": "front-end"}


@pytest.fixture
def encrypted_type(cloud):
    conn = cloud.sdk()
    vtype = conn.block_storage.create_type(name=f"luks-{uuid.uuid4().hex[:8]}")
    conn.block_storage.create_type_encryption(vtype, **SPEC)
    yield vtype
    conn.block_storage.delete_type(vtype)


def _secrets(session) -> list[dict]:
    return session.get("/v1/secrets", endpoint_filter={"service_type": "key-manager"}
                       ).json()["secrets"]


def test_encrypted_volume_key_lifecycle(cloud, encrypted_type):
    user = cloud.make_user(roles=("member",))
    session = cloud.user_session(user)
    raw = Raw(session, version="3.64")
    volume = create(raw, volume_type=encrypted_type.id)
    volume = wait_status(raw, volume["id"], "available")
    assert volume["encrypted"] is True
    key_id = volume["encryption_key_id"]
    km = {"endpoint_filter": {"service_type": "key-manager"}}
    secret = session.get(f"/v1/secrets/{key_id}", **km).json()
    assert (secret["algorithm"], secret["bit_length"], secret["mode"],
            secret["secret_type"], secret["status"]) == ("aes", 256, "xts", "symmetric",
                                                         "ACTIVE")
    key = session.get(f"/v1/secrets/{key_id}/payload", **km,
                      headers={"Accept": "application/octet-stream"}).content
    assert len(key) == 32
    # an older microversion shows no key id; a volume of a plain type has none
    assert "encryption_key_id" not in raw("GET", f"/volumes/{volume['id']}",
                                          version="3.63")[1]["volume"]
    plain = wait_status(raw, create(raw)["id"], "available")
    assert plain["encrypted"] is False and "encryption_key_id" not in plain

    clone = wait_status(raw, create(raw, source_volid=volume["id"])["id"], "available")
    assert clone["encrypted"] is True and clone["encryption_key_id"] != key_id
    assert session.get(f"/v1/secrets/{clone['encryption_key_id']}/payload", **km,
                       headers={"Accept": "application/octet-stream"}).content == key

    raw("DELETE", f"/volumes/{volume['id']}")
    wait_gone(raw, volume["id"])
    # the key goes once the volume row has: wait for it, within a bound
    wait_for(lambda: session.get(f"/v1/secrets/{key_id}", **km,
                                 raise_exc=False).status_code == 404, 30, "the key deleted")
    assert [s["secret_ref"].rsplit("/", 1)[1] for s in _secrets(session)] == \
        [clone["encryption_key_id"]]
    for v in (clone, plain):
        raw("DELETE", f"/volumes/{v['id']}")
        wait_gone(raw, v["id"])
    assert _secrets(session) == []


def test_a_failed_create_leaves_no_key(cloud, encrypted_type):
    user = cloud.make_user(roles=("member",))
    session = cloud.user_session(user)
    raw = Raw(session, version="3.64")
    status, body, _ = raw("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": encrypted_type.id, "availability_zone": "elsewhere"}})
    assert status == 400, body
    assert _secrets(session) == []


def test_retype_cannot_change_encryption(cloud, encrypted_type):
    user = cloud.make_user(roles=("member",))
    raw = Raw(cloud.user_session(user), version="3.64")
    plain = wait_status(raw, create(raw)["id"], "available")
    status, body, _ = raw("POST", f"/volumes/{plain['id']}/action",
                          {"os-retype": {"new_type": encrypted_type.id}})
    assert status == 400 and body["badRequest"]["message"] == (
        "Retype changes the volume's encryption, which needs a migration this cloud does "
        "not do.")
    assert raw("GET", f"/volumes/{plain['id']}")[1]["volume"]["encrypted"] is False
    raw("DELETE", f"/volumes/{plain['id']}")
    wait_gone(raw, plain["id"])
