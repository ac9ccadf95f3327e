"""`pocketstack audit`'s image checks: RBD images in the image pool that no image holds."""
from __future__ import annotations

from pocketstack.common import ceph
from pocketstack.image import rbd_store, service


def problems(s) -> list[str]:
    try:
        leftovers = service.rbd_leftovers(strict=True)
    except ceph.CephUnavailable as error:
        return [f"the rbd image store cannot be checked: {error}"]
    pool = rbd_store.pool()
    return [f"RBD image {pool}/{name} is held by no image" for name, removable
            in sorted(leftovers.items()) if removable]
