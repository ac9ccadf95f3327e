"""`pocketstack image tiny`: build the tiny test guest (cli/tiny_image.py) and register it
in a running cloud as kernel (aki), ramdisk (ari) and machine (ami) images, public, the
machine image carrying kernel_id, ramdisk_id, os_command_line and hypervisor_type=qemu
(so the scheduler sends it to a libvirt host even next to simulated ones)."""
from __future__ import annotations

import os
import tempfile

import click

from pocketstack.cli.demo import Cloud, DemoError, load_session

NAME = "pocketstack-tiny"


@click.group("image")
def image():
    """Images for real guests."""


def _find(c: Cloud, name: str) -> dict | None:
    found = c.call("GET", f"{c.image}/images", params={"name": name}).json()["images"]
    active = [i for i in found if i["status"] == "active"]
    return active[0] if active else None


def _upload(c: Cloud, name: str, path: str, disk_format: str, properties: dict) -> dict:
    body = {"name": name, "disk_format": disk_format, "container_format": disk_format,
            "visibility": "public", **properties}
    created = c.call("POST", f"{c.image}/images", ok=(201,), json=body).json()
    with open(path, "rb") as f:
        c.call("PUT", f"{c.image}/images/{created['id']}/file", ok=(204,), data=f.read(),
               headers={"Content-Type": "application/octet-stream"})
    return created


@image.command("tiny")
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the running cloud (as for `pocketstack up`).")
@click.option("--os-cloud", "cloud_name", default="pocketstack", show_default=True,
              help="clouds.yaml entry to use.")
@click.option("--name", default=NAME, show_default=True,
              help="Name of the machine image (kernel and ramdisk get -kernel/-ramdisk).")
@click.option("--replace", is_flag=True,
              help="Build and register again even if the image exists.")
def tiny(data_dir, cloud_name, name, replace):
    """Build the tiny guest from this host's cloud kernel and busybox; register it."""
    from pocketstack.cli import tiny_image
    from pocketstack.cloud import default_data_dir

    data_dir = os.path.abspath(data_dir or default_data_dir())
    c = Cloud(load_session(data_dir, cloud_name), click.echo)
    existing = _find(c, name)
    if existing and not replace:
        click.echo(f"{name} exists ({existing['id']}); --replace builds it again.")
        return
    if replace:  # two images of one name would make `--image NAME` ambiguous
        for old in (name, f"{name}-kernel", f"{name}-ramdisk"):
            for found in c.call("GET", f"{c.image}/images",
                                params={"name": old}).json()["images"]:
                c.call("DELETE", f"{c.image}/images/{found['id']}", ok=(204, 404))
    try:
        with tempfile.TemporaryDirectory(prefix="pocketstack-tiny-") as work:
            paths = tiny_image.build(work)
            kernel = _upload(c, f"{name}-kernel", paths["kernel"], "aki", {})
            ramdisk = _upload(c, f"{name}-ramdisk", paths["ramdisk"], "ari", {})
            machine = _upload(c, name, paths["machine"], "ami", {
                "kernel_id": kernel["id"], "ramdisk_id": ramdisk["id"],
                "os_command_line": tiny_image.COMMAND_LINE, "hypervisor_type": "qemu"})
    except (tiny_image.TinyImageError, OSError) as error:
        raise DemoError(str(error)) from None
    click.echo(f"kernel  {kernel['id']}  {name}-kernel (aki, {paths['version']})")
    click.echo(f"ramdisk {ramdisk['id']}  {name}-ramdisk (ari)")
    click.echo(f"machine {machine['id']}  {name} (ami)")
    click.echo(f"Boot it: openstack server create --flavor m1.nano --image {name} "
               f"--network <net> --wait tiny1; openstack console log show tiny1")
