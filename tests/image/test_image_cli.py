"""The image user flow with the real `openstack` CLI (1-2 s a call: only the flow
itself)."""
import hashlib
import os

import pytest

from image_helpers import unique

from pocketstack.common.image_formats import qcow2_header

pytestmark = pytest.mark.cli


def sha512(path):
    with open(path, "rb") as f:
        return hashlib.sha512(f.read()).hexdigest()


def test_image_create_show_save_set_list_delete(cloud, tmp_path):
    source = tmp_path / "cirros.img"
    source.write_bytes(qcow2_header(1 << 30) + os.urandom(2 * 1024 * 1024))
    name = unique("cirros-0.3.4-x86_64-disk")

    created = cloud.cli("image", "create", "--disk-format", "qcow2", "--container-format",
                        "bare", "--file", str(source), "--property", "hw_disk_bus=virtio",
                        name, "-f", "json")
    assert created["status"] == "active"

    shown = cloud.cli("image", "show", name, "-f", "json")
    assert shown["status"] == "active"
    assert shown["size"] == source.stat().st_size
    assert shown["checksum"] == hashlib.md5(source.read_bytes()).hexdigest()
    # openstackclient files the multihash under properties, as it does against glance.
    assert shown["properties"]["os_hash_algo"] == "sha512"
    assert shown["properties"]["os_hash_value"] == sha512(source)
    assert shown["properties"]["hw_disk_bus"] == "virtio"

    copy = tmp_path / "copy.img"
    cloud.cli("image", "save", "--file", str(copy), name)
    assert sha512(copy) == sha512(source)

    cloud.cli("image", "set", "--property", "os_distro=cirros", "--tag", "demo", name)
    shown = cloud.cli("image", "show", name, "-f", "json")
    assert shown["properties"]["os_distro"] == "cirros"
    assert shown["tags"] == ["demo"]

    cloud.cli("image", "set", "--public", name)
    public = cloud.cli("image", "list", "--public", "-f", "json")
    assert name in [i["Name"] for i in public]

    long = cloud.cli("image", "list", "--long", "-f", "json")
    row = next(i for i in long if i["Name"] == name)
    assert row["Disk Format"] == "qcow2" and row["Container Format"] == "bare"
    assert row["Size"] == source.stat().st_size and row["Status"] == "active"
    assert row["Visibility"] == "public" and row["Protected"] is False
    assert row["Checksum"] == shown["checksum"] and row["Hash Value"] == sha512(source)
    assert row["Tags"] == ["demo"]

    filtered = cloud.cli("image", "list", "--property", "os_distro=cirros", "-f", "json")
    assert name in [i["Name"] for i in filtered]
    other = cloud.cli("image", "list", "--property", "os_distro=debian", "-f", "json")
    assert name not in [i["Name"] for i in other]

    cloud.cli("image", "delete", name)
    gone = cloud.cli("image", "show", name, check=False)
    assert gone.returncode != 0 and "No Image found" in gone.stderr


def test_cli_errors_are_readable(cloud, tmp_path):
    name = unique("bad")
    r = cloud.cli("image", "create", "--disk-format", "qcow2", "--protected", name, "-f",
                  "json")
    assert r["protected"] is True
    failed = cloud.cli("image", "delete", name, check=False)
    assert failed.returncode != 0 and "protected" in failed.stderr
    cloud.cli("image", "set", "--unprotected", name)
    cloud.cli("image", "delete", name)
