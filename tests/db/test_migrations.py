"""Migrations on SQLite, PostgreSQL and MariaDB: they apply, they are idempotent, and the
schema they build is exactly what the models declare (every service's models)."""
from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from pocketstack.common import db


@pytest.fixture
def engine(database_url):
    engine = db.create_engine(database_url)
    yield engine
    engine.dispose()


def test_migrations_build_the_schema_the_models_declare(engine):
    db.migrate(engine)
    db.migrate(engine)  # a second run (every later start) changes nothing and does not fail
    db.import_models()
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, db.Base.metadata)
        current = set(context.get_current_heads())
    assert diff == [], "models and migrations differ; run tools/new_migration.py"
    heads = set(ScriptDirectory.from_config(db.alembic_config()).get_heads())
    assert current == heads
    # migrate() skips alembic when the database is at these heads: they must agree.
    assert db.script_heads() == heads


def test_every_service_branch_is_applied(engine):
    db.migrate(engine)
    db.import_models()
    tables = set(sa.inspect(engine).get_table_names())
    assert set(db.Base.metadata.tables) <= tables
    assert "identity_users" in tables


_scratch = sa.MetaData()
_parent = sa.Table("scratch_parent", _scratch,
                   sa.Column("id", sa.Integer, primary_key=True),
                   sa.Column("name", sa.String(64), unique=True),
                   sa.Column("at", db.DateTime))
_child = sa.Table("scratch_child", _scratch,
                  sa.Column("id", sa.Integer, primary_key=True),
                  sa.Column("parent_id", sa.Integer, sa.ForeignKey("scratch_parent.id"),
                            nullable=False))


@pytest.fixture
def scratch(engine):
    _scratch.create_all(engine)
    yield engine
    _scratch.drop_all(engine)


def test_datetimes_keep_microseconds(scratch):
    when = dt.datetime(2026, 1, 2, 3, 4, 5, 123456)
    with scratch.begin() as conn:
        conn.execute(_parent.insert().values(id=1, name="a", at=when))
    with scratch.connect() as conn:
        assert conn.scalar(sa.select(_parent.c.at)) == when


def test_is_duplicate_tells_unique_from_foreign_key_violations(scratch):
    with scratch.begin() as conn:
        conn.execute(_parent.insert().values(id=1, name="a"))
    with pytest.raises(sa.exc.IntegrityError) as dup:
        with scratch.begin() as conn:
            conn.execute(_parent.insert().values(id=2, name="a"))
    assert db.is_duplicate(dup.value)
    with pytest.raises(sa.exc.IntegrityError) as fk:
        with scratch.begin() as conn:
            conn.execute(_child.insert().values(id=1, parent_id=99))
    assert not db.is_duplicate(fk.value)
    assert not db.is_duplicate(ValueError("unique"))


def test_sqlite_runs_in_wal_mode_with_foreign_keys_on(tmp_path):
    engine = db.create_engine(f"sqlite:///{tmp_path}/x.db")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
    finally:
        engine.dispose()
