"""Block storage: /types/{id}/encryption as cinder's volume_type_encryption
extension answers it - create, show (whole or one field), update, delete, 400 while a volume
uses the type, admin only - through openstacksdk and keystoneauth."""
from __future__ import annotations

import uuid

import pytest

from volume_helpers import Raw, create, wait_gone, wait_status

SPEC = {"provider": "luks", "cipher": "aes-xts-plain64", "key_size": 256,
        "control_location": "front-end"}


@pytest.fixture
def admin_raw(cloud):
    return Raw(cloud.session())


def _type(conn):
    return conn.block_storage.create_type(name=f"enc-{uuid.uuid4().hex[:8]}")


def test_type_encryption_crud(cloud, admin_raw):
    conn = cloud.sdk()
    vtype = _type(conn)
    base = f"/types/{vtype.id}/encryption"
    assert admin_raw("GET", base)[:2] == (200, {})
    enc = conn.block_storage.create_type_encryption(vtype, **SPEC)
    assert enc.encryption_id and enc.provider == "luks" and enc.key_size == 256
    status, body, _ = admin_raw("GET", base)
    assert status == 200
    assert {k: body[k] for k in SPEC} == SPEC
    assert body["volume_type_id"] == vtype.id and body["encryption_id"] == enc.encryption_id
    assert body["deleted"] is False and body["created_at"]
    assert conn.block_storage.get_type_encryption(vtype.id).cipher == "aes-xts-plain64"
    assert admin_raw("GET", f"{base}/provider")[1] == {"provider": "luks"}
    status, body, _ = admin_raw("GET", f"{base}/nope")
    assert status == 404 and body["itemNotFound"]["message"] == (
        f"Volume type encryption for type {vtype.id} does not exist.")
    # a second create is refused; a string key size is taken as cinder takes it
    status, body, _ = admin_raw("POST", base, {"encryption": SPEC})
    assert status == 400 and "already exists" in body["badRequest"]["message"]
    status, body, _ = admin_raw("PUT", f"{base}/{enc.encryption_id}",
                                {"encryption": {"key_size": "512"}})
    assert status == 200 and body == {"encryption": {"key_size": 512}}
    assert admin_raw("GET", f"{base}/key_size")[1] == {"key_size": 512}
    conn.block_storage.delete_type_encryption(volume_type=vtype.id, ignore_missing=False)
    assert admin_raw("GET", base)[1] == {}
    status, body, _ = admin_raw("DELETE", f"{base}/{enc.encryption_id}")
    assert status == 404 and "itemNotFound" in body
    conn.block_storage.delete_type(vtype)
    status, body, _ = admin_raw("GET", base)
    assert status == 404 and "itemNotFound" in body


def test_type_encryption_refused_while_in_use(cloud, admin_raw):
    conn = cloud.sdk()
    vtype = _type(conn)
    base = f"/types/{vtype.id}/encryption"
    enc = admin_raw("POST", base, {"encryption": SPEC})[1]["encryption"]
    volume = create(admin_raw, volume_type=vtype.id)
    wait_status(admin_raw, volume["id"], ("available", "error"))
    status, body, _ = admin_raw("PUT", f"{base}/{enc['encryption_id']}",
                                {"encryption": {"cipher": "x"}})
    assert status == 400 and body["badRequest"]["message"] == (
        "Cannot update encryption specs. Volume type in use.")
    status, body, _ = admin_raw("DELETE", f"{base}/{enc['encryption_id']}")
    assert status == 400 and body["badRequest"]["message"] == (
        "Cannot delete encryption specs. Volume type in use.")
    # cinder looks at the volumes first, so an existing encryption is not what it says
    status, body, _ = admin_raw("POST", base, {"encryption": SPEC})
    assert status == 400 and body["badRequest"]["message"] == (
        "Cannot create encryption specs. Volume type in use.")
    admin_raw("DELETE", f"/volumes/{volume['id']}")
    wait_gone(admin_raw, volume["id"])
    assert admin_raw("DELETE", f"{base}/{enc['encryption_id']}")[0] == 202
    conn.block_storage.delete_type(vtype)


def test_type_encryption_errors_and_policy(cloud, admin_raw):
    conn = cloud.sdk()
    vtype = _type(conn)
    base = f"/types/{vtype.id}/encryption"
    for bad in ({"encryption": {"provider": "luks"}},
                {"encryption": {"control_location": "front-end"}},
                {"encryption": dict(SPEC, control_location="middle")},
                {"encryption": dict(SPEC, key_size=-1)},
                {"encryption": dict(SPEC, key_size="big")},
                # digits int() refuses: a superscript, and more than its 4,300
                {"encryption": dict(SPEC, key_size="\u00b2")},
                {"encryption": dict(SPEC, key_size="9" * 5000)},
                {"encryption": dict(SPEC, provider=5)}, {"other": SPEC}, []):
        status, body, _ = admin_raw("POST", base, bad)
        assert status == 400 and body["badRequest"]["code"] == 400, (bad, body)
    status, body, _ = admin_raw("POST", "/types/nope/encryption", {"encryption": SPEC})
    assert status == 404 and "itemNotFound" in body
    assert admin_raw("POST", base, {"encryption": SPEC})[0] == 200
    enc_id = admin_raw("GET", base)[1]["encryption_id"]
    assert admin_raw("PUT", f"{base}/{enc_id}", {"encryption": {"x": 1}})[0] == 400
    member = Raw(cloud.user_session(cloud.make_user(roles=("member",))))
    for method, path, body in (("GET", base, None), ("POST", base, {"encryption": SPEC}),
                               ("PUT", f"{base}/{enc_id}", {"encryption": {"cipher": "c"}}),
                               ("DELETE", f"{base}/{enc_id}", None)):
        status, answer, _ = member(method, path, body)
        assert status == 403 and answer["forbidden"]["code"] == 403, (method, answer)
    # deleting the type takes its encryption with it
    conn.block_storage.delete_type(vtype)
