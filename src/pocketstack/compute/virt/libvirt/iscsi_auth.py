"""CHAP for iSCSI volumes in libvirt (nova's LibvirtNetVolumeDriver, auth_method CHAP).

The password a volume's connection_info carries becomes a libvirt secret of usage type
iscsi named ``<iqn>/<lun>`` (nova's usage name); the disk's ``<auth username=...><secret
type='iscsi' uuid=.../></auth>`` points QEMU's initiator to it. The secret is private (its
value cannot be read back) and goes once no domain on the host refers to it: nova drops it
in disconnect_volume, but a second server of a multiattach volume, or a stopped server
started again, still needs it.
"""
from __future__ import annotations

from xml.sax.saxutils import escape


def usage_name(data: dict) -> str:
    return f"{data['target_iqn']}/{int(data.get('target_lun') or 0)}"


def ensure_secret(host, usage: str, password: str) -> str:
    """The uuid of the host's iscsi secret ``usage``, defined if needed, holding
    ``password``."""
    lv, conn = host.libvirt, host.conn()
    try:
        secret = conn.secretLookupByUsage(lv.VIR_SECRET_USAGE_TYPE_ISCSI, usage)
    except lv.libvirtError:
        secret = conn.secretDefineXML(
            "<secret ephemeral='no' private='yes'><usage type='iscsi'>"
            f"<target>{escape(usage)}</target></usage></secret>")
    secret.setValue(password.encode())
    return secret.UUIDString()


def secrets_of(element) -> set[str]:
    """uuids of the iscsi secrets a disk element (or a whole domain's XML tree) uses."""
    return {s.get("uuid") for s in element.iter("secret")
            if s.get("type") == "iscsi" and s.get("uuid")}
