"""Fixtures for the tests against a real Ceph cluster.

``ceph`` is a one-node cluster (common/ceph_cluster.py) for the session, in a temp dir, or
the running one of $POCKETSTACK_TEST_CEPH_DIR (several test sessions can share it: each
gets pools and users of its own, with a random prefix, dropped at the end). Skipped, with
the reason, where Ceph or its Python bindings are not installed (`make ceph` installs them;
CI does).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid

import pytest
from ceph_helpers import Ceph, _skip_reason

# What librados/librbd print before an abort (a failed ceph_assert, glibc's heap checks)
# goes to file descriptor 2, which pytest captures into a temporary file that dies with
# the worker: the crash report would name the test but not the cause. During each phase
# of a Ceph test, descriptor 2 is a file of this worker's in STDERR_DIR instead; after the
# phase its content goes back to pytest's capture (shown with a failure as usual) and the
# file is removed. A worker that dies leaves it, and `make test` prints it.
STDERR_DIR = os.environ.get("POCKETSTACK_TEST_STDERR_DIR", tempfile.gettempdir())


@pytest.hookimpl(hookwrapper=True, trylast=True)  # inside pytest's own capture
def pytest_runtest_setup(item):
    with _stderr_kept(item):
        yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item):
    with _stderr_kept(item):
        yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item):
    with _stderr_kept(item):
        yield


@contextlib.contextmanager
def _stderr_kept(item):
    path = os.path.join(STDERR_DIR, f"pocketstack-test-stderr-{os.getpid()}.log")
    header = f"{item.nodeid}\n".encode()
    with open(path, "w+b") as kept:
        kept.write(header)
        kept.flush()
        saved = os.dup(2)
        os.dup2(kept.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            kept.seek(len(header))
            said = kept.read()
    if said:
        os.write(2, said)
    os.unlink(path)


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
