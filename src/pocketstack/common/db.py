"""Database: one SQLAlchemy engine per cloud, short explicit transactions, Alembic.

Usage from any api.py::

    with db.transaction() as s:      # read-write, commits on success
        s.add(Thing(...))
    with db.reader() as s:           # read-only
        s.scalars(select(Thing)).all()

SQLite (the default) runs in WAL mode with foreign keys on. Write transactions start with
BEGIN IMMEDIATE and are serialized by a process lock, so a read-then-write transaction never
dies with "database is locked" when another thread wrote in between; across processes
(`pocketstack up --workers N`, agents sharing the file) by an flock on ``<database>.lock``
as well, so a waiting writer wakes as soon as the lock is free instead of polling in
SQLite's busy handler (sleeps of up to 100 ms), and BEGIN IMMEDIATE's busy timeout stays
the last resort. PostgreSQL and MariaDB
use their own row locks; concurrent inserts are made safe by unique constraints
(``is_duplicate`` tells such an IntegrityError apart).

Each service keeps its migrations in ``pocketstack/<service>/migrations/versions`` as its own
Alembic branch (branch label = service name), so services evolve their schemas
independently; ``migrate()`` upgrades all heads.
"""
from __future__ import annotations

import ast
import contextlib
import datetime as dt
import fcntl
import os
import re
import threading
from typing import Any, Iterator

import sqlalchemy as sa
from sqlalchemy import event, orm

from pocketstack.common import config, runtime
from pocketstack.common import lock_probe as _probe


class _DateTime(sa.types.TypeDecorator):
    """Microsecond precision everywhere: MariaDB's DATETIME drops fractions unless told,
    and token revocation compares times to the microsecond. A decorator rather than
    ``with_variant(mysql.DATETIME(fsp=6))``: that imported SQLAlchemy's MySQL dialect
    at every start (~25 ms), also on SQLite."""
    impl = sa.DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect):
        if dialect.name in ("mysql", "mariadb"):
            from sqlalchemy.dialects import mysql

            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(sa.DateTime())


DateTime = _DateTime()


class Base(orm.DeclarativeBase):
    """Declarative base shared by every service's models (one metadata, one database)."""

    type_annotation_map = {dt.datetime: DateTime}


class _Database:
    """One cloud's engines and session factories (common/runtime.py: one per cloud)."""

    def __init__(self):
        self.engine: sa.Engine | None = None
        self.writer_factory: orm.sessionmaker | None = None
        self.reader_factory: orm.sessionmaker | None = None
        self.is_sqlite = False
        self.sqlite_write_lock = threading.RLock()
        self.sqlite_flock_fd: int | None = None  # <database>.lock, writers of all processes
        self.forbidden: str | None = None  # why this process has no database (forbid)


def _db() -> _Database:
    return runtime.current().slot(__name__, _Database)


_local = threading.local()  # the session of the transaction open in this thread, if any


class NoDatabase(RuntimeError):
    """This process runs without the database (a compute host on the conductor)."""


def forbid(reason: str) -> None:
    """This process may not open the database: any use raises NoDatabase(reason) (a
    compute host that reaches the cloud through the conductor must not fall back to the
    default SQLite file in its data dir)."""
    dispose()
    _db().forbidden = reason


def forbidden() -> str | None:
    """Why this process has no database (forbid), or None."""
    return _db().forbidden


def configure(url: str | None = None) -> sa.Engine:
    """Create the cloud's engine (idempotent for the same URL)."""
    state = _db()
    if state.forbidden:
        raise NoDatabase(state.forbidden)
    url = url or config.CONF.database.connection
    if state.engine is not None and str(state.engine.url) == str(sa.make_url(url)):
        return state.engine
    dispose()
    engine = create_engine(url)
    state.is_sqlite = engine.dialect.name == "sqlite"
    writer = engine.execution_options(sqlite_begin="IMMEDIATE") if state.is_sqlite else engine
    path = _sqlite_path(url) if state.is_sqlite else None
    if path is not None:
        state.sqlite_flock_fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                                        0o600)
    state.reader_factory = orm.sessionmaker(bind=engine, expire_on_commit=False)
    state.writer_factory = orm.sessionmaker(bind=writer, expire_on_commit=False)
    state.engine = engine
    return engine


def create_engine(url: str) -> sa.Engine:
    """An engine set up as pocketstack needs it (SQLite: WAL, foreign keys, our BEGINs).

    ``configure`` makes the process's engine with it; tests and tools use it directly for
    a database other than the configured one.
    """
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 30, "check_same_thread": False},
                                  pool_size=20, max_overflow=20)
        _install_sqlite_hooks(engine)
        return engine
    return sa.create_engine(url, pool_size=config.CONF.database.pool_size, max_overflow=20,
                            pool_pre_ping=True, pool_recycle=3600)


_BEGIN = {"DEFERRED": "BEGIN DEFERRED", "IMMEDIATE": "BEGIN IMMEDIATE"}


def _install_sqlite_hooks(engine: sa.Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves, below
        cur = dbapi_conn.cursor()
        for pragma in ("journal_mode=WAL", "foreign_keys=ON", "synchronous=NORMAL",
                       "busy_timeout=30000"):
            cur.execute(f"PRAGMA {pragma}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        # Straight to the driver: every session begins here, and exec_driver_sql costs
        # several times what SQLite takes for the BEGIN.
        conn.connection.driver_connection.execute(_BEGIN[mode])


def engine() -> sa.Engine:
    state = _db()
    return state.engine if state.engine is not None else configure()


def dispose() -> None:
    state = _db()
    if state.engine is not None:
        state.engine.dispose()
        _forget_dialect(state.engine.dialect)
    state.engine = None
    if state.sqlite_flock_fd is not None:
        os.close(state.sqlite_flock_fd)
        state.sqlite_flock_fd = None


def _forget_dialect(dialect) -> None:
    """Drop the ORM's compiled statements for an engine that is gone: each mapper caches
    them keyed by the engine's dialect, so every cloud started and stopped in a process
    would otherwise leave its compiled INSERTs and UPDATEs (and its dialect) behind."""
    for mapper in Base.registry.mappers:
        cache = getattr(mapper, "_compiled_cache", None)
        if not cache:
            continue
        for key in [k for k in list(cache.keys()) if isinstance(k, tuple) and k
                    and k[0] is dialect]:
            cache.pop(key, None)


@contextlib.contextmanager
def transaction() -> Iterator[orm.Session]:
    """A read-write transaction; commits on success, rolls back on any exception.

    Nested use in one thread joins the outer transaction (so helpers can be composed).
    """
    outer = getattr(_local, "session", None)
    if outer is not None:
        yield outer
        return
    state = _db()
    if state.engine is None:
        configure()
    lock = state.sqlite_write_lock if state.is_sqlite else contextlib.nullcontext()
    with lock, _file_lock(state.sqlite_flock_fd):
        held_since = _probe.now() if _probe.enabled else 0.0
        session = state.writer_factory()
        _local.session = session
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            _local.session = None
            session.close()
            if _probe.enabled:
                _probe.record(held_since)


@contextlib.contextmanager
def sqlite_transaction(durable: bool = False) -> Iterator[Any]:
    """transaction() on SQLite for statements written as plain SQL: the same locks, BEGIN
    IMMEDIATE, commit or rollback, on a pooled connection's driver (sqlite3.Connection)
    without an ORM session, whose set-up and commit cost ~4 times the transaction itself
    (~0.45 ms against ~0.1). Joins a transaction() open in this thread (its connection).
    Nothing in it may open a transaction() of its own. ``durable``: the COMMIT is on disk
    when it returns (synchronous=FULL for it: the connections' NORMAL survives a process
    crash, not a power loss)."""
    outer = getattr(_local, "session", None)
    if outer is not None:
        yield outer.connection().connection.driver_connection
        return
    state = _db()
    if state.engine is None:
        configure()
    if not state.is_sqlite:
        raise RuntimeError("sqlite_transaction() needs a SQLite database")
    with state.sqlite_write_lock, _file_lock(state.sqlite_flock_fd):
        held_since = _probe.now() if _probe.enabled else 0.0
        pooled = state.engine.raw_connection()
        driver = pooled.driver_connection
        try:
            if durable:  # not inside a transaction: SQLite refuses it there
                driver.execute("PRAGMA synchronous=FULL")
            driver.execute("BEGIN IMMEDIATE")
            try:
                yield driver
                driver.execute("COMMIT")
            except BaseException:
                if driver.in_transaction:
                    driver.execute("ROLLBACK")
                raise
        finally:
            try:
                if durable:
                    driver.execute("PRAGMA synchronous=NORMAL")
            finally:
                pooled.close()
            if _probe.enabled:
                _probe.record(held_since)


@contextlib.contextmanager
def _file_lock(fd: int | None) -> Iterator[None]:
    """The cross-process writer lock (flock releases the GIL while it waits)."""
    if fd is None:
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def reader() -> Iterator[orm.Session]:
    """A read-only session (joins an enclosing transaction in the same thread)."""
    outer = getattr(_local, "session", None)
    if outer is not None:
        yield outer
        return
    state = _db()
    if state.engine is None:
        configure()
    session = state.reader_factory()
    try:
        yield session
    finally:
        session.close()  # returns the connection (rolled back) and keeps loaded objects usable


def is_duplicate(error: Exception) -> bool:
    """True for a unique-constraint violation on any of the supported engines."""
    if not isinstance(error, sa.exc.IntegrityError):
        return False
    text = str(error.orig).lower()
    return ("unique" in text or "duplicate" in text) and "foreign key" not in text


# --- migrations -----------------------------------------------------------------------

MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), "migrations")


def version_locations() -> list[str]:
    here = os.path.dirname(os.path.dirname(__file__))
    found = []
    for name in config.SERVICE_PACKAGES + ("control",):
        path = os.path.join(here, name, "migrations", "versions")
        if os.path.isdir(path):
            found.append(path)
    return found


def import_models() -> None:
    """Import every service's models so Base.metadata knows all tables."""
    for name in config.SERVICE_PACKAGES + ("control",):
        config.optional_module(name, "models")


def configure_models() -> None:
    """Import every model and configure the mappers, before any request is served.

    All services share one registry, so the first query anywhere configures every mapper
    in it: a query on one thread while another is half-way through importing a models
    module (a relationship naming a class not defined yet) failed the whole registry
    (NameError, then "One or more mappers failed to initialize")."""
    import_models()
    orm.configure_mappers()


def alembic_config():
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS_DIR)
    cfg.set_main_option("version_locations", " ".join(version_locations()))
    cfg.set_main_option("path_separator", "space")
    return cfg


_REVISION_LINE = re.compile(r"^(revision|down_revision)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.M)


def script_heads() -> set[str] | None:
    """The head revision of every branch, read from the migration files' one-line literal
    ``revision``/``down_revision`` assignments without importing alembic or the files
    (start-up cost); None if a file is not in that shape (then alembic decides)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for location in version_locations():
        for name in os.listdir(location):
            if not name.endswith(".py"):
                continue
            try:
                with open(os.path.join(location, name), encoding="utf-8") as f:
                    values = {key: ast.literal_eval(value)
                              for key, value in _REVISION_LINE.findall(f.read())}
            except (OSError, SyntaxError, ValueError):
                return None
            if not isinstance(values.get("revision"), str):
                return None
            revisions.add(values["revision"])
            down = values.get("down_revision")
            parents.update(down if isinstance(down, (tuple, list)) else [down] if down else [])
    return revisions - parents


def current_heads(target: sa.Engine | None = None) -> set[str]:
    """The revisions the database is at (empty for a new database)."""
    with (target or engine()).connect() as conn:
        if not sa.inspect(conn).has_table("alembic_version"):
            return set()
        return set(conn.scalars(sa.text("SELECT version_num FROM alembic_version")))


def migrate(target: sa.Engine | None = None) -> None:
    """Bring the schema to the newest revision of every service branch (of the process's
    database, or of ``target``). An up-to-date database costs one query: alembic (a third
    of a second to load with every script) runs only when there is something to do."""
    heads = script_heads()
    if heads and current_heads(target) == heads:
        return
    from alembic import command

    cfg = alembic_config()
    with (target or engine()).connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "heads")
        conn.commit()


# --- new SQLite databases from a migrated template ----------------------------------------

# Not a cloud's state: an empty database at the newest schema, copied for each new SQLite
# cloud (running the migrations costs about a second, most of a start). Kept in the user's
# cache dir, named by a hash of every migration file, so the next test session finds it.
_template_lock = threading.Lock()


def _schema_hash() -> str:
    import hashlib

    digest = hashlib.sha256()
    for location in version_locations():
        for name in sorted(os.listdir(location)):
            if name.endswith(".py"):
                digest.update(name.encode())
                with open(os.path.join(location, name), "rb") as f:
                    digest.update(f.read())
    return digest.hexdigest()[:16]


def _template_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    path = os.path.join(base, "pocketstack")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path
    except OSError:  # a read-only home: this process's temporary dir
        import tempfile

        return tempfile.gettempdir()


def _sqlite_path(url: str) -> str | None:
    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return parsed.database


def migrate_new_sqlite(url: str) -> bool:
    """Create a new SQLite database at ``url`` already at the newest schema, from the
    template (made by migrating a first one). False, and nothing done, when the database
    exists or is not an SQLite file: ``migrate()`` then does the work."""
    path = _sqlite_path(url)
    if path is None or os.path.exists(path):
        return False
    template = os.path.join(_template_dir(), f"schema-{_schema_hash()}.db")
    with _template_lock:
        if not os.path.exists(template):
            scratch = create_engine(f"sqlite:///{path}")
            try:
                migrate(scratch)
            finally:
                scratch.dispose()
            tmp = f"{template}.{os.getpid()}.tmp"
            try:
                _copy_sqlite(path, tmp)
                os.replace(tmp, template)  # whole or not at all, whoever else writes it
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return True
    _copy_sqlite(template, path)
    return True


def _copy_sqlite(src: str, dest: str) -> None:
    """A consistent copy through SQLite's backup API (a WAL file may hold the latest
    pages)."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(src)) as a, \
            contextlib.closing(sqlite3.connect(dest)) as b:
        a.backup(b)
