"""Database backends for tests: SQLite, PostgreSQL and MariaDB on 127.0.0.1.

Two fixtures, both parametrized over the three engines (ids ``sqlite``, ``postgresql``,
``mariadb``); a server that is not running makes its variant skip with the reason:

* ``database_url`` — a throw-away, empty database (dropped afterwards). Use it with
  ``db.create_engine(url)`` / ``db.migrate(engine)`` for schema-level tests.
* ``backend_cloud`` — a real ``pocketstack up`` in a subprocess on a free port, its
  ``[database] connection`` pointing at such a database (one cloud per engine per test
  session). The handle (``helpers.up_process.UpProcess``, tests/helpers/up_process.py) has ``url``,
  ``auth_url``, ``data_dir``, ``admin_password()``, ``session(...)`` (keystoneauth1) and
  ``sdk(...)`` (openstacksdk).

To run more tests on every backend (identity CRUD, say), add a test module under
``tests/db/`` that takes ``backend_cloud``: it runs once per engine.
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import uuid

import pytest
import sqlalchemy as sa
from helpers.up_process import UpProcess

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


@pytest.fixture(scope="session", params=BACKENDS)
def backend_cloud(request):
    tmp = tempfile.mkdtemp(prefix=f"pocketstack-{request.param}-")
    url, drop = throwaway_database(request.param, tmp)
    conf = f"[identity]\npassword_hash_rounds = 4\n[database]\nconnection = {url}\n"
    cloud = UpProcess(os.path.join(tmp, "data"), conf=conf,
                      args=("--admin-password", ADMIN_PASSWORD))
    try:
        cloud.start()
        yield cloud
    finally:
        cloud.stop()
        drop()
        shutil.rmtree(tmp, ignore_errors=True)
