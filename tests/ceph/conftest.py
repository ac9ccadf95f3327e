"""Fixtures for the tests against a real Ceph cluster (issue 23).

``ceph`` is a one-node cluster (common/ceph_cluster.py) for the session, in a temp dir, or
the running one of $POCKETSTACK_TEST_CEPH_DIR (several test sessions can share it: each
gets pools and users of its own, with a random prefix, dropped at the end). Skipped, with
the reason, where Ceph or its Python bindings are not installed (`make ceph` installs them;
CI does).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid

import pytest
from ceph_helpers import Ceph, _skip_reason


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
