"""Test fixtures: one real cloud per test session, served over HTTP on a free port.

``cloud`` is the handle tests use:

* ``cloud.url`` / ``cloud.auth_url`` and ``cloud.admin_password``;
* ``cloud.session()`` — a keystoneauth1 Session (admin, or any user/project);
* ``cloud.sdk()`` — an openstacksdk Connection on such a session;
* ``cloud.cli("server", "list", "-f", "json")`` — the real `openstack` CLI (1-2 s each: keep
  it for the user flows the issues name);
* ``cloud.make_user()`` — a fresh project and user with the given roles, written straight
  into the database so tests of other services do not pay for identity calls.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

import pytest

ADMIN_PASSWORD = "admin-secret"


class CloudHandle:
    def __init__(self, cloud):
        self.cloud = cloud
        self.url = cloud.url
        self.auth_url = cloud.auth_url
        self.data_dir = cloud.data_dir
        self.admin_password = cloud.admin_password
        self.clouds_yaml = os.path.join(cloud.data_dir, "clouds.yaml")

    def session(self, username="admin", password=None, project_name="admin",
                domain_id="default", project_id=None):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        kwargs = {"project_id": project_id} if project_id else {
            "project_name": project_name, "project_domain_id": domain_id}
        auth = v3.Password(auth_url=self.auth_url, username=username,
                           password=password or self.admin_password,
                           user_domain_id=domain_id, **kwargs)
        return session.Session(auth=auth)

    def sdk(self, **kwargs):
        import openstack

        return openstack.connection.Connection(session=self.session(**kwargs),
                                               region_name="RegionOne")

    def cli(self, *args, user=None, check=True, parse=True):
        """Run the real `openstack` CLI; JSON output is parsed when ``-f json`` is given."""
        env = dict(os.environ, OS_CLIENT_CONFIG_FILE=self.clouds_yaml, OS_CLOUD="pocketstack")
        if user is not None:
            env.pop("OS_CLOUD")
            env.update(OS_AUTH_URL=self.auth_url, OS_USERNAME=user["name"],
                       OS_PASSWORD=user["password"], OS_PROJECT_ID=user["project_id"],
                       OS_USER_DOMAIN_ID="default", OS_IDENTITY_API_VERSION="3",
                       OS_CLIENT_CONFIG_FILE="/dev/null")
        exe = os.path.join(os.path.dirname(sys.executable), "openstack")
        proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"openstack {' '.join(args)} failed ({proc.returncode}):\n"
                                 f"{proc.stderr}{proc.stdout}")
        if not check:
            return proc
        if parse and "json" in args and proc.stdout.strip():
            return json.loads(proc.stdout)
        return proc.stdout

    def make_user(self, roles=("member",), project_name=None, password="pass-word"):
        """A new project and a user holding ``roles`` on it (direct database writes)."""
        from pocketstack.common import db
        from pocketstack.identity import passwords
        from pocketstack.identity.models import Assignment, Project, Role, User

        suffix = uuid.uuid4().hex[:8]
        project_id, user_id = uuid.uuid4().hex, uuid.uuid4().hex
        name = f"user-{suffix}"
        with db.transaction() as s:
            s.add(Project(id=project_id, name=project_name or f"project-{suffix}",
                          domain_id="default"))
            s.add(User(id=user_id, name=name, domain_id="default",
                       password_hash=passwords.hash_password(password),
                       default_project_id=project_id))
            s.flush()
            for role in roles:
                role_id = s.query(Role.id).filter_by(name=role, domain_id=None).scalar()
                s.add(Assignment(type="UserProject", actor_id=user_id, target_id=project_id,
                                 role_id=role_id, inherited=False))
        return {"id": user_id, "name": name, "password": password, "project_id": project_id,
                "project_name": project_name or f"project-{suffix}"}

    def user_session(self, user):
        return self.session(username=user["name"], password=user["password"],
                            project_id=user["project_id"])

    def user_sdk(self, user):
        import openstack

        return openstack.connection.Connection(session=self.user_session(user),
                                               region_name="RegionOne")


# Options that make the test cloud fast. The zero transition delay changes only how long a
# transitional status (REBOOT, RESIZE, ...) lasts: these tests wait for final statuses, and
# tests/compute/test_compute_transitions.py checks the observable default.
TEST_OVERRIDES = {
    "identity.password_hash_rounds": 4,
    "fake.transition_delay": 0.0,
}


# End-to-end tests that boot real guests under software emulation, drive a browser or run
# Ansible take minutes on a busy machine (a 2-core CI box at load 15 runs them 3-5x slower
# than idle): their per-test limit is 900 s instead of pyproject's 300 s. The limit is for
# hangs; what they wait on inside is a condition, not a wall-clock guess.
SLOW_END_TO_END = ("tests/libvirt/test_libvirt_guests.py", "tests/test_dashboard_browser.py",
                   "tests/test_ansible_project.py", "tests/ceph/test_ceph_compute.py")


# The longest files (a minute or more each) go first: `make test` spreads files over two
# workers (pytest-xdist, --dist loadfile), and a long file started last would leave one
# worker idle while the other finishes it.
LONGEST_FIRST = ("tests/test_readme.py", "tests/test_ansible_project.py",
                 "tests/libvirt/test_libvirt_guests.py", "tests/cli/", "tests/ceph/",
                 "tests/compute/test_compute_volumes_cli.py", "tests/test_volume_cli.py")


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
    from pocketstack.cloud import Cloud

    data_dir = tempfile.mkdtemp(prefix="pocketstack-test-")
    c = Cloud(data_dir, admin_password=ADMIN_PASSWORD, overrides=dict(TEST_OVERRIDES))
    c.start(port=0)
    try:
        yield CloudHandle(c)
    finally:
        c.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def admin(cloud):
    """An admin keystoneauth1 session."""
    return cloud.session()
