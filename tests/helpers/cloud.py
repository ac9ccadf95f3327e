"""The test cloud's handle and options, for the root conftest and for tests that start a
cloud of their own (a module of its own: ``from conftest import`` is ambiguous where several
conftests load).

``CloudHandle`` is what tests use:

* ``cloud.url`` / ``cloud.auth_url`` and ``cloud.admin_password``;
* ``cloud.session()`` — a keystoneauth1 Session (admin, or any user/project);
* ``cloud.sdk()`` — an openstacksdk Connection on such a session;
* ``cloud.cli("server", "list", "-f", "json")`` — the real `openstack` CLI (1-2 s each: keep
  it for the user flows a user types);
* ``cloud.make_user()`` — a fresh project and user with the given roles, written straight
  into the database so tests of other services do not pay for identity calls.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from helpers import cli_zygote

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
        if os.environ.get("POCKETSTACK_TEST_CLI") == "exec":  # the installed script itself
            exe = os.path.join(os.path.dirname(sys.executable), "openstack")
            proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True,
                                  timeout=120)
        else:  # the same code in a fresh process forked with its imports done
            proc = cli_zygote.zygote().run(args, env, timeout=120)
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
    "dns.listen": "127.0.0.1:0",  # a free port: test clouds run side by side
}


@contextlib.contextmanager
def own_cloud(prefix: str, **overrides):
    """A cloud of the caller's own (TEST_OVERRIDES plus ``overrides``, dotted names), in a
    temporary data dir removed afterwards; yields its CloudHandle."""
    from pocketstack.cloud import Cloud

    data_dir = tempfile.mkdtemp(prefix=f"pocketstack-{prefix}-")
    c = Cloud(data_dir, admin_password=ADMIN_PASSWORD,
              overrides={**TEST_OVERRIDES, **overrides})
    c.start(port=0)
    try:
        yield CloudHandle(c)
    finally:
        c.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def free_tgt_port() -> int:
    """A free port for an iSCSI portal of tgt's: tgtd's control port is the portal's and
    must be below 32768, under the kernel's ephemeral range."""
    for _ in range(200):
        port = random.randint(10000, 32000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port for tgtd between 10000 and 32000")


def wait_for(predicate, timeout: float, what: str, interval: float = 0.5):
    """predicate()'s first true value, polled every ``interval`` s for ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)
