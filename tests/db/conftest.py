"""Database backends for tests: SQLite, PostgreSQL and MariaDB on 127.0.0.1.

Two fixtures, both parametrized over the three engines (ids ``sqlite``, ``postgresql``,
``mariadb``); a server that is not running makes its variant skip with the reason:

* ``database_url`` — a throw-away, empty database (dropped afterwards). Use it with
  ``db.create_engine(url)`` / ``db.migrate(engine)`` for schema-level tests.
* ``backend_cloud`` — a real ``pocketstack up`` in a subprocess on a free port, its
  ``[database] connection`` pointing at such a database (one cloud per engine per test
  session). The handle has ``url``, ``auth_url``, ``admin_password``, ``data_dir``,
  ``session(...)`` (keystoneauth1) and ``sdk(...)`` (openstacksdk).

To run more tests on every backend (identity CRUD, say), add a test module under
``tests/db/`` that takes ``backend_cloud``: it runs once per engine.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import httpx
import pytest
import sqlalchemy as sa

ADMIN_PASSWORD = "backend-admin-secret"

# name: (server URL, URL of the throw-away database "{name}", create, drop)
SERVERS = {
    "postgresql": ("postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
                   "postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
                   "CREATE DATABASE {name} ENCODING 'UTF8' TEMPLATE template0",
                   "DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    "mariadb": ("mysql+pymysql://root@127.0.0.1:3306/",
                "mysql+pymysql://root@127.0.0.1:3306/{name}?charset=utf8mb4",
                "CREATE DATABASE {name} CHARACTER SET utf8mb4",
                "DROP DATABASE IF EXISTS {name}"),
}
BACKENDS = ["sqlite", "postgresql", "mariadb"]


def _server_reason(kind: str) -> str | None:
    """Why ``kind`` cannot be used here, or None if it can."""
    port = 5432 if kind == "postgresql" else 3306
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as error:
        return f"{kind} is not listening on 127.0.0.1:{port} ({error.strerror or error})"
    return None


def throwaway_database(kind: str, tmp_dir: str):
    """Create an empty database; return (url, drop). SQLite: a file in ``tmp_dir``."""
    if kind == "sqlite":
        return f"sqlite:///{os.path.join(tmp_dir, 'pocketstack.db')}", lambda: None
    reason = _server_reason(kind)
    if reason:
        pytest.skip(reason)
    admin_url, db_url, create, drop = SERVERS[kind]
    name = f"pocketstack_test_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(create.format(name=name))

    def dropper():
        with admin.connect() as conn:
            conn.exec_driver_sql(drop.format(name=name))
        admin.dispose()

    return db_url.format(name=name), dropper


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path):
    url, drop = throwaway_database(request.param, str(tmp_path))
    try:
        yield url
    finally:
        drop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SubprocessCloud:
    """``pocketstack up`` in a child process; stop() sends SIGTERM and waits."""

    def __init__(self, data_dir: str, *, connection: str | None = None,
                 extra_conf: str = "", admin_password: str = ADMIN_PASSWORD):
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.auth_url = self.url + "/identity"
        self.admin_password = admin_password
        self.config_file = os.path.join(data_dir, "test.conf")
        os.makedirs(data_dir, exist_ok=True)
        with open(self.config_file, "w") as f:
            f.write("[identity]\npassword_hash_rounds = 4\n")
            if connection:
                f.write(f"[database]\nconnection = {connection}\n")
            f.write(extra_conf)
        self.log_path = os.path.join(data_dir, "up.log")
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> "SubprocessCloud":
        exe = os.path.join(os.path.dirname(sys.executable), "pocketstack")
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [exe, "up", "--data-dir", self.data_dir, "--port", str(self.port),
             "--config-file", self.config_file, "--admin-password", self.admin_password],
            stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"pocketstack up exited {self.proc.returncode}:\n"
                                     + self.log())
            try:
                if httpx.get(self.auth_url + "/v3", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise AssertionError("pocketstack up did not answer in time:\n" + self.log())

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def session(self, username="admin", password=None, project_name="admin",
                domain_id="default"):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        auth = v3.Password(auth_url=self.auth_url, username=username,
                           password=password or self.admin_password, user_domain_id=domain_id,
                           project_name=project_name, project_domain_id=domain_id)
        return session.Session(auth=auth)

    def sdk(self, **kwargs):
        import openstack

        return openstack.connection.Connection(session=self.session(**kwargs),
                                               region_name="RegionOne")


@pytest.fixture(scope="session", params=BACKENDS)
def backend_cloud(request):
    tmp = tempfile.mkdtemp(prefix=f"pocketstack-{request.param}-")
    url, drop = throwaway_database(request.param, tmp)
    cloud = SubprocessCloud(os.path.join(tmp, "data"), connection=url)
    try:
        cloud.start()
        yield cloud
    finally:
        cloud.stop()
        drop()
        shutil.rmtree(tmp, ignore_errors=True)
