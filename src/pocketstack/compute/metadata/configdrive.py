"""The config drive: an ISO 9660 image labelled ``config-2`` carrying the instance's
metadata in the OpenStack layout (``openstack/<version>/meta_data.json``, ``user_data``,
``network_data.json``, ``vendor_data.json``, ``vendor_data2.json``, and ``ec2/…``), with
Rock Ridge and Joliet names as nova's genisoimage call writes them
(``-J -r -V config-2``), so cloud-init and `mount -o ro /dev/sr0` see the real names.

    build_config_drive(instance, network_info, "/var/lib/.../disk.config")
"""
from __future__ import annotations

import io
import os

from pocketstack.common import config
from pocketstack.compute.metadata import content

LABEL = "config-2"


def required(instance: dict) -> bool:
    """A config drive is built when the server asked for one or the cloud forces it."""
    value = instance.get("config_drive")
    asked = value not in (None, "", False) and str(value).lower() not in ("false", "0")
    return asked or config.CONF.force_config_drive


def _iso_name(name: str, is_dir: bool) -> str:
    """The plain ISO 9660 name (the real one is in the Rock Ridge and Joliet records)."""
    mangled = "".join(c if c.isalnum() or c == "." else "_" for c in name.upper())
    if is_dir:
        return mangled.replace(".", "_")
    return mangled + ";1"


def build(files: list[tuple[str, bytes]], path: str, label: str = LABEL) -> None:
    """Write an ISO with ``files`` ((relative path, content)) to ``path`` (atomically)."""
    import pycdlib

    iso = pycdlib.PyCdlib()
    iso.new(interchange_level=4, joliet=3, rock_ridge="1.09", vol_ident=label)
    made = set()
    for rel, data in sorted(files):
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            directory = parts[:depth]
            key = "/".join(directory)
            if key in made:
                continue
            made.add(key)
            iso.add_directory("/" + "/".join(_iso_name(p, True) for p in directory),
                              rr_name=directory[-1], joliet_path="/" + key)
        iso_path = "/" + "/".join([_iso_name(p, True) for p in parts[:-1]] +
                                  [_iso_name(parts[-1], False)])
        iso.add_fp(io.BytesIO(data), len(data), iso_path, rr_name=parts[-1],
                   joliet_path="/" + rel)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        iso.write(tmp)
        iso.close()
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def build_config_drive(instance: dict, network_info: list, path: str,
                       load=None) -> str:
    """Build the config drive of ``instance`` (a dict with at least ``uuid``; what it
    lacks is read by ``load``, the database's content.load_instance unless given) at
    ``path``; returns ``path``."""
    full = (load or content.load_instance)(instance["uuid"]) or {}
    full.update({k: v for k, v in instance.items() if v is not None})
    md = content.InstanceMetadata(full, network_info)
    build(md.files(), path)
    return path
