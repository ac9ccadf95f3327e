"""`pocketstack ceph start|stop|status`: the one-node Ceph cluster of a data dir
(common/ceph_cluster.py), for a lab whose images, volumes and instance disks live in RBD."""
from __future__ import annotations

import os

import click

from pocketstack.common import ceph_cluster

# What a cloud needs in its pocketstack.conf to keep everything in the cluster.
USE_RBD = """
# Written by `pocketstack ceph start --use`: images, volumes, instance disks and objects
# in Ceph (objects through the cloud's own RADOS Gateway, which it starts and stops).
[image]
default_store = rbd
# The volume and compute services clone rbd images from the direct_url they see.
show_image_direct_url = true

[volume]
enabled_backends = rbd

[libvirt]
images_type = rbd

[objectstore]
backend = rgw
"""


def _data_dir(data_dir: str | None) -> str:
    from pocketstack.cloud import default_data_dir

    return os.path.abspath(data_dir or default_data_dir())


@click.group()
def ceph():
    """The data dir's one-node Ceph cluster (mon, mgr, one OSD on a sparse file)."""


@ceph.command()
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the cloud; the cluster lives in <data dir>/ceph.")
@click.option("--osd-size-gb", default=10, type=click.IntRange(1), show_default=True,
              help="Size of the OSD's sparse file (first start only).")
@click.option("--use", is_flag=True,
              help="Also set the cloud to keep images, volumes, instance disks and objects "
                   "(a radosgw of its own) in the cluster (appended to "
                   "<data dir>/pocketstack.conf; restart the cloud).")
def start(data_dir, osd_size_gb, use):
    """Make the cluster on first use, start it, create the pools and cephx users."""
    directory = os.path.join(_data_dir(data_dir), "ceph")
    try:
        conf = ceph_cluster.start(directory, osd_gb=osd_size_gb)
        names = ceph_cluster.ensure_pools_and_users(directory)
    except ceph_cluster.ClusterError as error:
        raise click.ClickException(str(error)) from None
    pools = ", ".join(names[k] for k in ceph_cluster.POOLS)
    click.echo(f"Ceph is up: {conf} (pools {pools})")
    if use:
        path = os.path.join(_data_dir(data_dir), "pocketstack.conf")
        current = open(path).read() if os.path.exists(path) else ""
        if "pocketstack ceph start --use" not in current:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a") as f:
                f.write(USE_RBD)
            click.echo(f"{path}: images, volumes, instance disks and objects now go to Ceph "
                       "(restart the cloud).")


@ceph.command()
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the cloud.")
def stop(data_dir):
    """Stop the cluster's daemons (its data stays for the next start)."""
    stopped = ceph_cluster.stop(os.path.join(_data_dir(data_dir), "ceph"))
    click.echo(f"Stopped {', '.join(stopped)}." if stopped else "Ceph was not running.")


@ceph.command()
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the cloud.")
def status(data_dir):
    """`ceph -s` of the cluster."""
    directory = os.path.join(_data_dir(data_dir), "ceph")
    if not ceph_cluster.running(directory):
        raise click.ClickException(f"No Ceph daemon of {directory} is running.")
    try:
        click.echo(ceph_cluster.status(directory))
    except ceph_cluster.ClusterError as error:
        raise click.ClickException(str(error)) from None
