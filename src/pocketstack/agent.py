"""A scale-out process of `pocketstack service conductor|scheduler|compute`: the part of
``Cloud.prepare`` (cloud.py) such a node needs, and its RPC roles; no HTTP."""
from __future__ import annotations

import logging
import os
import threading
import time

from pocketstack.cloud import default_data_dir, make_private_dir, require_message_bus
from pocketstack.common import config, db, rpc

LOG = logging.getLogger(__name__)


class Agent:
    """One process of `pocketstack service conductor|scheduler|compute`: RPC servers only.

    Its start-up is the part of ``Cloud.prepare`` such a node needs — the config, the
    database and the nova service user's password (it logs in at the identity API for
    its calls to the image, network and volume APIs, clients/) — without HTTP,
    bootstrap, client files or the data-dir lock (agents on one host may share a data dir).
    The API process (`service api` or `up`) migrates and bootstraps the database; an agent
    started first waits for the schema instead of racing it.
    """

    STOP_TIMEOUT = 30.0  # seconds for in-flight work to finish on SIGTERM
    PASSWORD_TIMEOUT = 10.0  # seconds to wait for an API host starting alongside

    def __init__(self, data_dir: str | None = None, *, config_file: str | None = None,
                 overrides: dict | None = None):
        self.data_dir = os.path.abspath(data_dir or default_data_dir())
        self.config_file = config_file or os.path.join(self.data_dir, "pocketstack.conf")
        self.config_file_given = config_file is not None
        self.overrides = dict(overrides or {})
        self.services: list = []
        self._stop = threading.Event()

    def prepare(self, schema_timeout: float = 60.0, roles=()) -> "Agent":
        """The config, the message bus, the service user's password and (but for a
        compute host on the conductor: ``roles`` is only compute) the database."""
        if self.config_file_given and not os.path.isfile(self.config_file):
            raise config.ConfigError(f"Config file {self.config_file} does not exist.")
        make_private_dir(self.data_dir)
        opts = config.load(self.data_dir, self.config_file, self.overrides)
        config.check()
        require_message_bus(self.config_file)
        rpc.preload()  # on this (main) thread: see rpc.preload
        conf = config.CONF
        without_database = (tuple(roles) == ("compute",)
                            and conf.compute.database_access == "conductor")
        if without_database:
            self._refuse_database(opts)
        self._wait_for_password(self.PASSWORD_TIMEOUT)
        if without_database:
            # It reaches the cloud's state through the conductor (compute/hostdb.py) and
            # placement through the conductor's checks: nothing may open the database,
            # not even the default SQLite file of the data dir.
            db.forbid("this compute host reaches the cloud through the conductor "
                      "([compute] database_access = conductor) and has no database")
            return self
        if conf.database.connection.startswith("sqlite"):
            LOG.warning("[database] connection is SQLite: every process must run on this "
                        "host with the same database file; use PostgreSQL or MariaDB "
                        "across hosts.")
        db.configure(conf.database.connection)
        db.configure_models()
        self._wait_for_schema(schema_timeout)
        return self

    @staticmethod
    def _refuse_database(opts) -> None:
        """A compute host on the conductor must not hold the database's credential: a
        ``[database] connection`` in its config (or environment, or command line) is a
        start-up error naming where it is, not a warning - ignored, the password would
        still sit on the most exposed host, which is the exposure itself."""
        from oslo_config import cfg

        try:
            where = opts.get_location("connection", group="database")
        except (cfg.NoSuchOptError, AttributeError):
            return
        if where is None or where.location not in (
                cfg.Locations.user, cfg.Locations.command_line, cfg.Locations.environment):
            return
        raise config.ConfigError(
            f"[database] connection is set (in {where.detail or where.location.name}), but "
            "this compute host reaches the cloud through the conductor ([compute] "
            "database_access = conductor) and must not hold the database's credential: "
            "remove it from this host's config.")

    def _wait_for_password(self, timeout: float) -> None:
        """The nova service user's password, with which this node's services log in at
        the identity API (clients/): from the config, or the file the API host writes as
        it starts (an agent sharing its data dir may start alongside) - a start-up error
        if neither has it."""
        from pocketstack.clients import service_users

        deadline = time.monotonic() + timeout
        while True:
            try:
                service_users.password("nova")
                return
            except config.ConfigError:
                if self._stop.is_set() or time.monotonic() > deadline:
                    raise
            self._stop.wait(0.2)

    def _wait_for_schema(self, timeout: float) -> None:
        """Until the database is at the newest revision of every branch (the API process
        migrates it), or ``timeout``; an unreachable database is retried in that time."""
        import sqlalchemy as sa
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory

        wanted = set(ScriptDirectory.from_config(db.alembic_config()).get_heads())
        deadline = time.monotonic() + timeout
        said = None
        while True:
            try:
                with db.engine().connect() as conn:
                    current = set(MigrationContext.configure(conn).get_current_heads())
                error = None
            except sa.exc.OperationalError as e:  # not reachable (yet)
                current, error = set(), e
            if current == wanted:
                return
            if self._stop.is_set() or time.monotonic() > deadline:
                if error is not None:
                    raise error
                raise config.ConfigError(
                    f"The database schema is not the one this pocketstack expects (at "
                    f"{', '.join(sorted(current)) or 'nothing'}, want "
                    f"{', '.join(sorted(wanted))}) after {timeout:g}s. Start `pocketstack "
                    "service api` (or `pocketstack up`) with this database first: it "
                    "migrates it.")
            reason = ("the database cannot be reached yet: "
                      f"{str(error.orig).strip().splitlines()[0]}" if error is not None
                      else "the API process has not migrated it yet")
            if reason != said:
                LOG.info("Waiting up to %gs for the database schema (%s)", timeout, reason)
                said = reason
            self._stop.wait(0.5)

    def start(self, roles, hosts=()) -> "Agent":
        from pocketstack.compute import service as compute_service

        self.services = compute_service.start_roles(tuple(roles), self.data_dir, hosts)
        return self

    def request_stop(self) -> None:
        self._stop.set()

    def serve_forever(self) -> bool:
        """Until SIGINT/SIGTERM or request_stop(), then stop every service (bounded);
        returns close()'s answer."""
        try:
            while not self._stop.wait(1.0):
                pass
        except BaseException:
            self.close()
            raise
        return self.close()

    def close(self) -> bool:
        """Stop the services (in-flight RPCs may finish within STOP_TIMEOUT), close the
        broker connections and the database. False if something was still busy."""
        def stop():
            while self.services:
                service = self.services.pop()
                try:
                    service.stop()
                except Exception:  # noqa: BLE001 - keep stopping the others
                    LOG.exception("Stopping %r failed", service)

        stopper = threading.Thread(target=stop, name="pocketstack-stop", daemon=True)
        stopper.start()
        stopper.join(self.STOP_TIMEOUT)
        clean = not stopper.is_alive()
        if not clean:
            LOG.warning("Work still running after %gs; exiting without it (an interrupted "
                        "build is rescheduled by its deadline or when this host restarts)",
                        self.STOP_TIMEOUT)
        rpc.cleanup()
        db.dispose()
        return clean
