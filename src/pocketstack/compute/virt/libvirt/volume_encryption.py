"""Encrypted volumes through QEMU's native LUKS (nova's ``native`` LUKS encryptor: the
libvirt driver's _attach_encryptor with ``luks``, no dm-crypt on the host).

A volume whose connection_info says ``encrypted`` has its encryption metadata read from
the volume service (``GET /volumes/{id}/encryption``); for a LUKS provider the key comes
from the key manager and its hex (nova's passphrase) goes into a libvirt secret of usage
type ``volume``, ``ephemeral='yes' private='yes'``: libvirtd keeps it in memory only and
never gives it back. The disk then carries ``<encryption format='luks'><secret
type='passphrase' uuid='...'/></encryption>`` and QEMU decrypts; the volume's bytes stay
LUKS on the backend. The secret's usage name is the volume's under this compute host's
name and instances path, so several clouds on one libvirtd never share or remove each
other's; its uuid follows from that name, so a domain's XML stays valid when the secret is
defined again (a libvirtd restart forgets ephemeral secrets: ``restore`` before a start).
It goes once no domain on the host refers to it (a detach, the server's deletion); a
second server of a multiattach volume on the same host keeps it.

The key is read as the compute service: the volume service lets the compute service's
user read the keys of the volumes it makes (encryption_keys.py).
"""
from __future__ import annotations

import hashlib
import logging
import uuid
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

from pocketstack.compute.virt.libvirt.host import GuestError

LOG = logging.getLogger(__name__)
NAMESPACE = uuid.UUID("0b4cf3a1-5e1d-4c50-9a4c-2f6c1c0e5a71")
LUKS_PROVIDERS = ("luks", "nova.volume.encryptors.luks.LuksEncryptor", "LuksEncryptor")


def usage_name(owner: tuple[str, str], volume_id: str) -> str:
    """The secret's usage: the volume's, per compute host (name, instances path)."""
    host, path = owner
    digest = hashlib.sha256(path.encode()).hexdigest()[:12]
    return f"pocketstack/{host}/{digest}/volume/{volume_id}"


def secret_uuid(usage: str) -> str:
    return str(uuid.uuid5(NAMESPACE, usage))


def passphrase(volume_id: str) -> str | None:
    """The volume's LUKS passphrase (hex of its key), or None when its encryption is not
    LUKS (nova would use dm-crypt for ``plain``: not done here, the disk is attached as
    it is)."""
    from pocketstack.clients.keymanager import KeyManagerClient
    from pocketstack.clients.volume import VolumeClient
    from pocketstack.common import exceptions

    try:
        meta = VolumeClient(as_service=True).request(
            "GET", f"/volumes/{volume_id}/encryption").json()
        if not meta.get("encryption_key_id"):
            return None
        if meta.get("provider") not in LUKS_PROVIDERS:
            LOG.warning("Volume %s is encrypted with provider %r: only LUKS is opened by "
                        "QEMU here; it is attached as it is", volume_id, meta.get("provider"))
            return None
        key = KeyManagerClient(as_service=True).key(meta["encryption_key_id"])
    except exceptions.PocketstackError as error:
        raise GuestError(f"The key of encrypted volume {volume_id} could not be read: "
                         f"{getattr(error, 'message', error)}") from None
    return key.hex()


def ensure_secret(host, usage: str, value: str) -> str:
    """The uuid of the host's volume secret ``usage``, defined if needed, holding
    ``value``."""
    lv, conn = host.libvirt, host.conn()
    wanted = secret_uuid(usage)
    try:
        secret = conn.secretLookupByUsage(lv.VIR_SECRET_USAGE_TYPE_VOLUME, usage)
    except lv.libvirtError:
        secret = conn.secretDefineXML(
            f"<secret ephemeral='yes' private='yes'><uuid>{wanted}</uuid>"
            f"<description>LUKS passphrase of a pocketstack volume</description>"
            f"<usage type='volume'><volume>{escape(usage)}</volume></usage></secret>")
    secret.setValue(value.encode())
    return secret.UUIDString()


def secrets_of(element) -> dict[str, str]:
    """{secret uuid: volume id (the disk's serial)} of the LUKS disks in a disk element or
    a whole domain's XML tree."""
    out = {}
    disks = [element] if element.tag == "disk" else element.iter("disk")
    for disk in disks:
        enc = disk.find("encryption")
        secret = enc.find("secret") if enc is not None else None
        if secret is not None and secret.get("type") == "passphrase" and secret.get("uuid"):
            serial = disk.find("serial")
            out[secret.get("uuid")] = serial.text if serial is not None else ""
    return out


def restore(host, owner: tuple[str, str], dom_xml: str) -> None:
    """Define again the secrets a defined domain's LUKS disks need and the host has lost
    (a libvirtd restart), before it starts."""
    lv, conn = host.libvirt, host.conn()
    for uuid_, volume_id in secrets_of(ET.fromstring(dom_xml)).items():
        try:
            conn.secretLookupByUUIDString(uuid_)
            continue
        except lv.libvirtError:
            pass
        usage = usage_name(owner, volume_id)
        if not volume_id or secret_uuid(usage) != uuid_:
            continue  # not one of ours: libvirt says what is missing
        value = passphrase(volume_id)
        if value is not None:
            ensure_secret(host, usage, value)
