"""Fixtures for the tests against a real Ceph cluster (issue 23).

``ceph`` is a one-node cluster (common/ceph_cluster.py) for the session, in a temp dir, or
the running one of $POCKETSTACK_TEST_CEPH_DIR (several test sessions can share it: each
gets pools and users of its own, with a random prefix, dropped at the end). Skipped, with
the reason, where Ceph or its Python bindings are not installed (`make ceph` installs them;
CI does).
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
import uuid

import pytest


@dataclasses.dataclass
class Ceph:
    directory: str
    conf: str
    names: dict  # the [ceph] options naming this session's pools and users

    def admin(self):
        import rados

        conn = rados.Rados(conffile=self.conf, name="client.admin")
        conn.connect(timeout=10)
        return conn


def _skip_reason() -> str | None:
    if not shutil.which("ceph-mon") or not shutil.which("ceph-osd"):
        return "Ceph is not installed (make ceph)"
    try:
        import rados  # noqa: F401
        import rbd  # noqa: F401
    except ImportError:
        return "Ceph's Python bindings are not in this venv (tools/setup_ceph.sh .venv)"
    return None


@pytest.fixture(scope="session")
def ceph():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from pocketstack.common import ceph_cluster

    shared = os.environ.get("POCKETSTACK_TEST_CEPH_DIR")
    directory = shared or tempfile.mkdtemp(prefix="pocketstack-ceph-")
    prefix = f"t{uuid.uuid4().hex[:6]}-"
    # A libvirt secret of the session's own: sessions share the host's libvirtd.
    secret_uuid = str(uuid.uuid4())
    try:
        conf = ceph_cluster.start(directory, osd_gb=20)
        names = ceph_cluster.ensure_pools_and_users(directory, prefix=prefix)
        yield Ceph(directory, conf, dict(names, secret_uuid=secret_uuid))
    finally:
        if shutil.which("virsh"):
            subprocess.run(["virsh", "-c", "qemu:///system", "secret-undefine", secret_uuid],
                           capture_output=True, timeout=30)
        if shared:
            ceph_cluster.remove_pools_and_users(directory, prefix)
        else:
            ceph_cluster.stop(directory)
            shutil.rmtree(directory, ignore_errors=True)


def ceph_overrides(ceph: Ceph) -> dict:
    """Cloud overrides that point every service at the session's pools and users."""
    return {"ceph.conf": ceph.conf, **{f"ceph.{k}": v for k, v in ceph.names.items()}}
