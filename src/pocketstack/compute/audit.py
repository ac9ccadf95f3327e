"""Compute's part of `pocketstack audit` (cli/audit.py): RBD instance disks
(``<uuid>_disk*`` in [ceph] compute_pool) whose server does not exist (any more)."""
from __future__ import annotations

import re

import sqlalchemy as sa

from pocketstack.common import ceph, config

DISK_RE = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_disk")


def problems(s) -> list[str]:
    from pocketstack.compute.models import Instance

    rbd_in_use = config.CONF.libvirt.images_type == "rbd"
    if not (rbd_in_use or ceph.configured()):
        return []
    pool = config.CONF.ceph.compute_pool
    try:
        _, rbd = ceph.bindings()
        names = rbd.RBD().list(ceph.ioctx(config.CONF.ceph.compute_user, pool))
    except ceph.CephUnavailable as error:
        # A cloud that keeps no disk in Ceph may have no compute pool at all.
        return [f"cannot list RBD pool {pool}: {error}"] if rbd_in_use else []
    owners = {m.group(1): n for n in names if (m := DISK_RE.match(n))}
    if not owners:
        return []
    live = set(s.scalars(sa.select(Instance.uuid).where(
        Instance.uuid.in_(list(owners)), Instance.deleted.is_(False))))
    return [f"RBD image {pool}/{name} belongs to server {uuid}, which does not exist "
            "(any more)" for name in sorted(names) if (m := DISK_RE.match(name))
            and (uuid := m.group(1)) not in live]
