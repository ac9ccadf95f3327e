"""Volumes of an encrypted type get their key from the key manager, as cinder's through
castellan: made at volume create (the type's cipher and key size), shown as
``encryption_key_id`` (3.64) with ``encrypted: true``, copied for a clone, deleted with the
volume, and not left behind by a create that fails."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid

import pytest

from helpers.cloud import wait_for
from volume_helpers import Raw, create, wait_gone, wait_status

needs_qemu_img = pytest.mark.skipif(shutil.which("qemu-img") is None,
                                    reason="qemu-img is not installed (Debian: qemu-utils)")
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


def _luks_check(cloud, volume_id: str, key: bytes, length: int) -> bytes:
    """The volume's file is a LUKS volume (its header, qemu-img says so) whose payload,
    opened with nova's passphrase (the key's hex), starts with what is returned."""
    path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume_id}")
    with open(path, "rb") as f:
        assert f.read(6) == b"LUKS\xba\xbe"
    assert os.path.getsize(path) == 1 << 30  # the header takes room inside the volume
    info = json.loads(subprocess.run(["qemu-img", "info", "--output=json", path],
                                     capture_output=True, text=True, check=True).stdout)
    assert info["format"] == "luks" and info["encrypted"] is True
    out = os.path.join(cloud.data_dir, f"plain-{volume_id}")
    read_end, write_end = os.pipe()
    os.write(write_end, key.hex().encode())
    os.close(write_end)
    try:  # the first MiBs through the key (qemu-img dd: not the whole GiB)
        subprocess.run(["qemu-img", "dd", "--object",
                        f"secret,id=sec0,file=/dev/fd/{read_end}", "--image-opts",
                        f"if=driver=luks,key-secret=sec0,file.filename={path}", "-O", "raw",
                        f"of={out}", "bs=1M", f"count={length // (1 << 20) + 1}"],
                       check=True, pass_fds=(read_end,), capture_output=True)
        with open(out, "rb") as f:
            return f.read(length)
    finally:
        os.close(read_end)
        if os.path.exists(out):
            os.unlink(out)


@needs_qemu_img
def test_encrypted_volume_bytes_are_luks(cloud, encrypted_type):
    """A volume of a LUKS type is LUKS on disk, keyed by its key from the key manager: a
    blank one, one from an image (the image's bytes only through the key), and a clone
    (the same LUKS bytes under a copy of the key). Its connection says ``encrypted``, and
    the volume's encryption metadata names its key and the type's provider."""
    user = cloud.make_user(roles=("member",))
    session = cloud.user_session(user)
    raw = Raw(session, version="3.64")
    km = {"endpoint_filter": {"service_type": "key-manager"}}

    def key_of(volume):
        return session.get(f"/v1/secrets/{volume['encryption_key_id']}/payload", **km,
                           headers={"Accept": "application/octet-stream"}).content

    blank = wait_status(raw, create(raw, volume_type=encrypted_type.id)["id"], "available")
    _luks_check(cloud, blank["id"], key_of(blank), 0)
    status, meta, _ = raw("GET", f"/volumes/{blank['id']}/encryption")
    assert status == 200 and meta == {"encryption_key_id": blank["encryption_key_id"],
                                      **SPEC}
    assert raw("GET", f"/volumes/{blank['id']}/encryption/provider")[1] == "luks"
    status, body, _ = raw("GET", f"/volumes/{blank['id']}/encryption/nothing")
    assert status == 404 and "itemNotFound" in body
    stranger = Raw(cloud.user_session(cloud.make_user(roles=("member",))), version="3.64")
    status, body, _ = stranger("GET", f"/volumes/{blank['id']}/encryption")
    assert status == 404 and "itemNotFound" in body  # another project's volume
    plain = wait_status(raw, create(raw)["id"], "available")
    assert raw("GET", f"/volumes/{plain['id']}/encryption")[1] == {
        "encryption_key_id": None}
    status, body, _ = raw("POST", "/attachments", {"attachment": {
        "volume_uuid": blank["id"], "instance_uuid": str(uuid.uuid4()),
        "connector": {"host": "h1", "initiator": "iqn.x:h1", "mode": "rw"}}})
    assert status == 200, body
    assert body["attachment"]["connection_info"]["data"]["encrypted"] is True
    raw("DELETE", f"/attachments/{body['attachment']['id']}")

    payload = os.urandom(1 << 20) + b"the image's last words"
    conn = cloud.user_sdk(user)
    image = conn.image.create_image(name=f"img-{uuid.uuid4().hex[:6]}", data=payload,
                                    disk_format="raw", container_format="bare")
    volume = wait_status(raw, create(raw, volume_type=encrypted_type.id, imageRef=image.id,
                                     size=1)["id"], ("available", "error"))
    assert volume["status"] == "available", volume
    path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume['id']}")
    with open(path, "rb") as f:
        assert payload[:4096] not in f.read()  # the image's bytes are nowhere in clear
    assert _luks_check(cloud, volume["id"], key_of(volume), len(payload)) == payload

    clone = wait_status(raw, create(raw, source_volid=volume["id"])["id"], "available")
    assert _luks_check(cloud, clone["id"], key_of(clone), len(payload)) == payload
    conn.image.delete_image(image)
    for v in (blank, plain, volume, clone):
        raw("DELETE", f"/volumes/{v['id']}")
        wait_gone(raw, v["id"])


def test_encrypted_volume_attaches_to_a_simulated_server(cloud, encrypted_type):
    """The simulated compute driver records an encrypted volume's attachment as any other
    (it opens no disk, so needs no key)."""
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    admin = cloud.sdk()
    image = admin.image.create_image(name=f"sim-{uuid.uuid4().hex[:6]}", disk_format="raw",
                                     container_format="bare", visibility="public",
                                     data=b"\0" * 1024)
    server = conn.compute.wait_for_server(conn.compute.create_server(
        name="sim-luks", image_id=image.id, flavor_id="42", networks="none"),
        wait=60, interval=0.1)
    volume = conn.block_storage.create_volume(size=1, volume_type=encrypted_type.id)
    volume = conn.block_storage.wait_for_status(volume, "available", interval=0.1, wait=60)
    try:
        conn.compute.create_volume_attachment(server, volume_id=volume.id)
        volume = conn.block_storage.wait_for_status(volume, "in-use", interval=0.1, wait=60)
        assert volume.is_encrypted and volume.attachments[0]["server_id"] == server.id
        conn.compute.delete_volume_attachment(server, volume.id)
        conn.block_storage.wait_for_status(volume, "available", interval=0.1, wait=60)
    finally:
        conn.compute.delete_server(server)
        conn.compute.wait_for_delete(server, interval=0.1, wait=60)
        conn.block_storage.delete_volume(volume, ignore_missing=True)
        conn.block_storage.wait_for_delete(volume, interval=0.1, wait=60)
        admin.image.delete_image(image)


@needs_qemu_img
@pytest.mark.parametrize("maker", ["cryptsetup", "qemu-img"])
def test_a_luks_header_opens_with_its_passphrase_only(maker, tmp_path, monkeypatch):
    """Either maker's header (cryptsetup where installed, else qemu-img) is LUKS1 that
    QEMU opens with the passphrase and refuses with another."""
    from pocketstack.volume import luks

    if maker == "qemu-img":
        monkeypatch.setattr(luks.shutil, "which", lambda name: None)
    elif shutil.which("cryptsetup") is None:
        pytest.skip("cryptsetup is not installed")
    passphrase = os.urandom(32).hex()
    path = tmp_path / "volume"
    header = luks.header(passphrase)
    path.write_bytes(header)
    os.truncate(path, 64 << 20)
    source = tmp_path / "image"
    source.write_bytes(b"through the key" * 1000)

    class Backend:
        def path(self, volume_id):
            return str(path)

    assert luks.payload_size(Backend(), "v", passphrase) == (64 << 20) - len(header)
    luks.write_image(Backend(), "v", str(source), "raw", passphrase)
    assert b"through the key" not in path.read_bytes()
    with pytest.raises(luks.BackendError, match="(?i)password|key"):
        luks.write_image(Backend(), "v", str(source), "raw", os.urandom(32).hex())
