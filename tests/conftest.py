"""Test fixtures: one real cloud per test session, served over HTTP on a free port
(``cloud``: a CloudHandle, see tests/helpers/cloud.py)."""
from __future__ import annotations

import pytest

from helpers.cloud import own_cloud


# End-to-end tests that boot real guests under software emulation, drive a browser or run
# Ansible take minutes on a busy machine (a 2-core CI box at load 15 runs them 3-5x slower
# than idle): their per-test limit is 900 s instead of pyproject's 300 s. The limit is for
# hangs; what they wait on inside is a condition, not a wall-clock guess.
SLOW_END_TO_END = ("tests/libvirt/test_libvirt_guests.py",
                   "tests/dashboard/test_dashboard_browser.py",
                   "tests/dashboard/test_dashboard_browser_objects.py",
                   "tests/multihost/test_lab.py",
                   "tests/ansible/test_ansible_project.py", "tests/ceph/test_ceph_compute.py",
                   "tests/libvirt/test_libvirt_multihost.py")


# The longest files (a minute or more each) go first: `make test` spreads files over two
# workers (pytest-xdist, --dist loadfile), and a long file started last would leave one
# worker idle while the other finishes it.
LONGEST_FIRST = ("tests/readme/test_readme.py", "tests/multihost/test_lab.py",
                 "tests/ansible/test_ansible_project.py",
                 "tests/libvirt/test_libvirt_guests.py", "tests/cli/", "tests/ceph/",
                 "tests/compute/test_compute_volumes_cli.py", "tests/volume/test_volume_cli.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW_END_TO_END) and \
                item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(900))

    def rank(item):
        for i, prefix in enumerate(LONGEST_FIRST):
            if item.nodeid.startswith(prefix):
                return i
        return len(LONGEST_FIRST)
    items.sort(key=rank)  # stable: the order within a file stays


@pytest.fixture(scope="session")
def cloud():
    with own_cloud("test") as handle:
        yield handle


@pytest.fixture
def admin(cloud):
    """An admin keystoneauth1 session."""
    return cloud.session()
