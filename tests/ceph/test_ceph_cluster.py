"""The one-node cluster and the service users' access."""
from __future__ import annotations

import pytest
from ceph_helpers import Connection


def test_service_users_reach_their_own_pools_only(ceph):
    import rbd

    def connect(user):
        return Connection(ceph.conf, f"client.{user}")

    glance = connect(ceph.names["image_user"])
    cinder = connect(ceph.names["volume_user"])
    try:
        images = glance.open_ioctx(ceph.names["image_pool"])
        rbd.RBD().create(images, "probe", 1 << 20)
        with rbd.Image(images, "probe") as image:
            image.write(b"x" * 512, 0)
            image.create_snap("snap")
            image.protect_snap("snap")
        # cinder clones from the images pool (read-only there) into its own.
        volumes = cinder.open_ioctx(ceph.names["volume_pool"])
        rbd.RBD().clone(cinder.open_ioctx(ceph.names["image_pool"]), "probe", "snap",
                        volumes, "clone")
        with rbd.Image(volumes, "clone") as clone:
            assert clone.read(0, 4) == b"xxxx"
        # ... but cannot write there.
        with pytest.raises(rbd.PermissionError):
            rbd.RBD().create(cinder.open_ioctx(ceph.names["image_pool"]), "nope", 1 << 20)
        rbd.RBD().remove(volumes, "clone")
        with rbd.Image(images, "probe") as image:
            image.unprotect_snap("snap")
            image.remove_snap("snap")
        rbd.RBD().remove(images, "probe")
    finally:
        glance.shutdown()
        cinder.shutdown()
