"""Copies of encrypted volumes that leave the volume, as cinder keeps them: backups and
uploads to images. A backup holds its own copy of the volume's key (shown as
``encryption_key_id`` from 3.64), a restore gives the volume a copy of that key so the
restored LUKS bytes open again, into an existing volume or a new one of the backup's volume
type, and the backup's key goes with the backup. An upload carries a copy of the key as the
image's ``cinder_encryption_key_id``, which a volume from the image copies and the image
service deletes with the image. A copy is refused where its bytes could not be opened."""
from __future__ import annotations

import os
import uuid

from helpers.cloud import wait_for
from test_volume_encryption_keys import _luks_check, encrypted_type, needs_qemu_img  # noqa: F401
from volume_helpers import Raw, create, wait_gone, wait_status

KM = {"endpoint_filter": {"service_type": "key-manager"}}


def _backup_status(raw, backup_id: str, wanted: str) -> dict:
    def settled():
        status, body, _ = raw("GET", f"/backups/{backup_id}")
        return body["backup"] if status == 200 and body["backup"]["status"] in (
            wanted, "error") else None
    backup = wait_for(settled, 60, f"backup {backup_id} {wanted}")
    assert backup["status"] == wanted, backup
    return backup


@needs_qemu_img
def test_an_encrypted_volume_restores_from_its_backup_and_opens(cloud, encrypted_type):
    user = cloud.make_user(roles=("member",))
    session = cloud.user_session(user)
    raw = Raw(session, version="3.64")

    def key(key_id: str) -> bytes:
        return session.get(f"/v1/secrets/{key_id}/payload", **KM,
                           headers={"Accept": "application/octet-stream"}).content

    payload = os.urandom(1 << 20) + b"written before the backup"
    conn = cloud.user_sdk(user)
    image = conn.image.create_image(name=f"img-{uuid.uuid4().hex[:6]}", data=payload,
                                    disk_format="raw", container_format="bare")
    source = wait_status(raw, create(raw, volume_type=encrypted_type.id, imageRef=image.id,
                                     size=1)["id"], "available")
    status, body, _ = raw("POST", "/backups", {"backup": {"volume_id": source["id"]}})
    assert status == 202, body
    backup = _backup_status(raw, body["backup"]["id"], "available")
    backup_key = backup["encryption_key_id"]
    assert backup_key not in (None, source["encryption_key_id"])  # a copy of its own
    assert key(backup_key) == key(source["encryption_key_id"])
    assert "encryption_key_id" not in raw("GET", f"/backups/{backup['id']}",
                                          version="3.63")[1]["backup"]

    # A new volume from the backup: the backup's volume type, a copy of the backup's key.
    status, body, _ = raw("POST", f"/backups/{backup['id']}/restore", {"restore": {}})
    assert status == 202, body
    restored = wait_status(raw, body["restore"]["volume_id"], ("available", "error"))
    assert restored["status"] == "available", restored
    assert restored["volume_type"] == encrypted_type.name and restored["encrypted"]
    assert restored["encryption_key_id"] not in (backup_key, source["encryption_key_id"])
    assert _luks_check(cloud, restored["id"], key(restored["encryption_key_id"]),
                       len(payload)) == payload

    # Into an existing encrypted volume: its own key is replaced by a copy of the backup's.
    target = wait_status(raw, create(raw, volume_type=encrypted_type.id)["id"], "available")
    status, body, _ = raw("POST", f"/backups/{backup['id']}/restore",
                          {"restore": {"volume_id": target["id"]}})
    assert status == 202, body
    target_after = wait_status(raw, target["id"], ("available", "error_restoring"))
    assert target_after["status"] == "available", target_after
    assert target_after["encryption_key_id"] != target["encryption_key_id"]
    assert session.get(f"/v1/secrets/{target['encryption_key_id']}", **KM,
                       raise_exc=False).status_code == 404
    assert _luks_check(cloud, target["id"], key(target_after["encryption_key_id"]),
                       len(payload)) == payload

    # The source and its key may go: the backup still restores with its own.
    raw("DELETE", f"/volumes/{source['id']}")
    wait_gone(raw, source["id"])
    status, body, _ = raw("POST", "/volumes", {"volume": {"backup_id": backup["id"]}})
    assert status == 202, body
    again = wait_status(raw, body["volume"]["id"], ("available", "error"))
    assert _luks_check(cloud, again["id"], key(again["encryption_key_id"]),
                       len(payload)) == payload

    # The backup's key goes with the backup.
    assert raw("DELETE", f"/backups/{backup['id']}")[0] == 202
    wait_for(lambda: raw("GET", f"/backups/{backup['id']}")[0] == 404, 30, "backup gone")
    assert session.get(f"/v1/secrets/{backup_key}", **KM, raise_exc=False).status_code == 404
    conn.image.delete_image(image)
    for v in (restored, target, again):
        raw("DELETE", f"/volumes/{v['id']}")
        wait_gone(raw, v["id"])


def test_a_backup_goes_only_where_its_bytes_open(cloud, encrypted_type):
    raw = Raw(cloud.user_session(cloud.make_user(roles=("member",))), version="3.64")
    secret = wait_status(raw, create(raw, volume_type=encrypted_type.id)["id"], "available")
    plain = wait_status(raw, create(raw)["id"], "available")
    backups = {}
    for name, volume in (("secret", secret), ("plain", plain)):
        status, body, _ = raw("POST", "/backups", {"backup": {"volume_id": volume["id"]}})
        assert status == 202, body
        backups[name] = _backup_status(raw, body["backup"]["id"], "available")
    assert "encryption_key_id" not in backups["plain"]

    for backup, into in ((backups["secret"], plain), (backups["plain"], secret)):
        status, body, _ = raw("POST", f"/backups/{backup['id']}/restore",
                              {"restore": {"volume_id": into["id"]}})
        assert status == 400 and "badRequest" in body, body
        assert "encrypted" in body["badRequest"]["message"]
        after = wait_status(raw, into["id"], "available")
        assert after.get("encryption_key_id") == into.get("encryption_key_id")  # unchanged
        assert _backup_status(raw, backup["id"], "available")
    # a new volume of a type that cannot open the backup
    volumes_before = {v["id"] for v in raw("GET", "/volumes")[1]["volumes"]}
    status, body, _ = raw("POST", "/volumes", {"volume": {
        "backup_id": backups["secret"]["id"], "volume_type": "__DEFAULT__"}})
    assert status == 400 and "encrypted" in body["badRequest"]["message"], body
    status, body, _ = raw("POST", "/volumes", {"volume": {
        "backup_id": backups["plain"]["id"], "volume_type": encrypted_type.id}})
    assert status == 400 and "encrypted" in body["badRequest"]["message"], body
    assert {v["id"] for v in raw("GET", "/volumes")[1]["volumes"]} == volumes_before

    for backup in backups.values():
        raw("DELETE", f"/backups/{backup['id']}")
        wait_for(lambda b=backup: raw("GET", f"/backups/{b['id']}")[0] == 404, 30,
                 "backup gone")
    for v in (secret, plain):
        raw("DELETE", f"/volumes/{v['id']}")
        wait_gone(raw, v["id"])


@needs_qemu_img
def test_an_encrypted_volume_uploaded_to_an_image_opens_in_a_volume_from_it(
        cloud, encrypted_type):
    user = cloud.make_user(roles=("member",))
    session = cloud.user_session(user)
    raw = Raw(session, version="3.64")
    conn = cloud.user_sdk(user)

    def key(key_id: str) -> bytes:
        return session.get(f"/v1/secrets/{key_id}/payload", **KM,
                           headers={"Accept": "application/octet-stream"}).content

    payload = os.urandom(1 << 20) + b"written before the upload"
    image = conn.image.create_image(name=f"img-{uuid.uuid4().hex[:6]}", data=payload,
                                    disk_format="raw", container_format="bare")
    source = wait_status(raw, create(raw, volume_type=encrypted_type.id, imageRef=image.id,
                                     size=1)["id"], "available")
    status, body, _ = raw("POST", f"/volumes/{source['id']}/action", {
        "os-volume_upload_image": {"image_name": "sealed", "disk_format": "qcow2"}})
    assert status == 202, body
    uploaded = body["os-volume_upload_image"]["image_id"]
    wait_for(lambda: conn.image.get_image(uploaded).status == "active", 60, "upload")
    props = conn.image.get_image(uploaded).properties
    image_key = props["cinder_encryption_key_id"]
    assert props["cinder_encryption_key_deletion_policy"] == "on_image_deletion"
    assert image_key != source["encryption_key_id"]
    assert key(image_key) == key(source["encryption_key_id"])

    # A volume of an encrypted type from it: a copy of the image's key, the bytes as they are.
    copy = wait_status(raw, create(raw, volume_type=encrypted_type.id, imageRef=uploaded,
                                   size=1)["id"], ("available", "error"))
    assert copy["status"] == "available", copy
    assert copy["encryption_key_id"] not in (image_key, source["encryption_key_id"])
    assert _luks_check(cloud, copy["id"], key(copy["encryption_key_id"]),
                       len(payload)) == payload
    # ... not of a plain type, and no server boots from it directly.
    status, body, _ = raw("POST", "/volumes", {"volume": {"imageRef": uploaded, "size": 1}})
    assert status == 400 and "encrypted" in body["badRequest"]["message"], body
    flavor = next(conn.compute.flavors())
    status = session.post("/servers", endpoint_filter={"service_type": "compute"},
                          raise_exc=False, json={"server": {
                              "name": "direct", "imageRef": uploaded,
                              "flavorRef": flavor.id, "networks": "none"}},
                          headers={"OpenStack-API-Version": "compute 2.37"})
    assert status.status_code == 400, status.text
    assert "uploaded from an encrypted volume" in status.json()["badRequest"]["message"]

    # The image's key goes with the image.
    conn.image.delete_image(uploaded)
    assert session.get(f"/v1/secrets/{image_key}", **KM, raise_exc=False).status_code == 404
    conn.image.delete_image(image)
    for v in (source, copy):
        raw("DELETE", f"/volumes/{v['id']}")
        wait_gone(raw, v["id"])
