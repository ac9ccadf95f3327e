"""The keys of volumes of an encrypted type, kept in the key manager as cinder keeps them
through castellan: a new volume of such a type gets a new key (algorithm from the type's
cipher, ``aes-xts-plain64`` → aes in xts mode, length its key_size), a clone or a volume
from a snapshot a copy of its origin's key, and the volume's deletion deletes its key.

A volume whose provider is LUKS is LUKS-formatted with its key (luks.py) and the compute
hosts open it through QEMU's native LUKS. Nova reads the key with the user's token at
attach; here the key's read ACL names the compute service's user as well (Octavia's
barbican_acl model), so a host can open the volume again when no user token is at hand
(a server started after a host restart, a rescheduled build). Only the hosts' service user
gains read access; the key stays the project's."""
from __future__ import annotations

import logging

import sqlalchemy as sa

from pocketstack.clients.keymanager import KeyManagerClient, service_user_id
from pocketstack.common import exceptions
from pocketstack.volume.models import VolumeTypeEncryption

LOG = logging.getLogger(__name__)
DEFAULT_BITS = 256


def spec_of(s, type_id: str) -> VolumeTypeEncryption | None:
    return s.scalar(sa.select(VolumeTypeEncryption)
                    .where(VolumeTypeEncryption.volume_type_id == type_id))


def for_new_volume(ctx, spec: VolumeTypeEncryption | None, origin_key: str | None,
                   name: str | None) -> str | None:
    """The key id a new volume gets (None: its type is not encrypted). Called before the
    volume's transaction: it asks the key manager, as the user (their project owns it)."""
    if origin_key is None and spec is None:
        return None
    client = KeyManagerClient(ctx, caller="volume")
    try:
        if origin_key is not None:
            key_id = client.copy_key(origin_key, name=name)
        else:
            parts = (spec.cipher or "aes").split("-")
            mode = parts[1] if len(parts) > 1 else None
            key_id = client.create_key(parts[0], spec.key_size or DEFAULT_BITS, mode,
                                       name=name)
    except (exceptions.NotFound, exceptions.BadRequest) as error:
        raise exceptions.BadRequest(f"Invalid input received: the volume's encryption key "
                                    f"could not be made: {error}") from None
    try:
        client.grant_read(f"/secrets/{key_id}", service_user_id("compute"))
    except exceptions.PocketstackError as error:  # a cloud without compute: nobody to tell
        LOG.warning("Could not let the compute hosts read encryption key %s: %s", key_id,
                    error)
    return key_id


def check_restore(backup, into_encrypted: bool) -> None:
    """A backup goes only into a volume encrypted as its volume was: an encrypted volume's
    backup is ciphertext (it opens only with a copy of its key, in a volume of an encrypted
    type), and a plain backup under a LUKS type would be neither."""
    if backup.encryption_key_id is not None and not into_encrypted:
        raise exceptions.BadRequest(
            f"Invalid input received: Backup {backup.id} is of an encrypted volume: it can "
            f"be restored only into a volume of an encrypted volume type.")
    if backup.encryption_key_id is None and into_encrypted:
        raise exceptions.BadRequest(
            f"Invalid input received: Backup {backup.id} is of an unencrypted volume: it "
            f"cannot be restored into a volume of an encrypted volume type.")


# The image properties of an encrypted volume's upload (cinder's, read by glance).
IMAGE_KEY, IMAGE_KEY_POLICY = "cinder_encryption_key_id", "cinder_encryption_key_deletion_policy"


def image_key(image: dict, into_encrypted: bool) -> str | None:
    """The key an image uploaded from an encrypted volume carries (its bytes are that
    volume's LUKS): a volume made from it gets a copy and its bytes as they are, so it
    must be of an encrypted type."""
    key_id = image.get(IMAGE_KEY) or (image.get("properties") or {}).get(IMAGE_KEY)
    if key_id is not None and not into_encrypted:
        raise exceptions.BadRequest(
            f"Invalid input received: Image {image.get('id')} holds an encrypted volume's "
            f"bytes ({IMAGE_KEY}): a volume from it must be of an encrypted volume type.")
    return key_id


def passphrase(ctx, key_id: str) -> str:
    """The volume's LUKS passphrase (nova's: the hex of its key), read as the user, or as
    the compute hosts' user without one."""
    from pocketstack.volume import luks

    if getattr(ctx, "auth_token", None):
        client = KeyManagerClient(ctx, caller="volume")
    else:
        client = KeyManagerClient(caller="compute", as_service=True)
    return luks.passphrase_of(client.key(key_id))


def is_luks(s, volume) -> bool:
    """Whether the volume's bytes are LUKS (its type's provider, and it has a key)."""
    from pocketstack.volume import luks

    if volume.encryption_key_id is None or volume.volume_type_id is None:
        return False
    spec = spec_of(s, volume.volume_type_id)
    return spec is not None and luks.is_luks(spec.provider)


def delete(key_id: str | None) -> None:
    """Delete a gone volume's key, as the block storage service (the volume's deletion may
    finish long after the user's token, or with no user at all: recovery)."""
    if key_id is None:
        return
    try:
        KeyManagerClient(caller="volume", as_service=True).delete_key(key_id)
    except exceptions.PocketstackError as error:  # the volume is gone: say so, go on
        LOG.warning("Could not delete encryption key %s: %s", key_id, error)
