"""Object storage tables: accounts, containers and objects (the listings swift keeps in
its account and container databases). The bytes are files (store.py); a row names its
file. Names are stored as UTF-8 bytes so every engine orders listings as swift does (by
byte value) and MariaDB can index a 1024-byte object name.

A container's usage (object count, bytes) is kept on its row and changed in the
transaction that changes an object, so it is exact under concurrent writers; an
account's usage is the sum over its containers, read when asked for.
"""
# No `from __future__ import annotations`: SQLAlchemy evaluates the Mapped[...] annotations.

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class Name(sa.types.TypeDecorator):
    """A name as str in Python, as UTF-8 bytes in the database (byte order, any engine)."""
    impl = sa.LargeBinary
    cache_ok = True

    def __init__(self, length: int):
        super().__init__(length)
        self.length = length

    def load_dialect_impl(self, dialect):
        if dialect.name in ("mysql", "mariadb"):
            from sqlalchemy.dialects import mysql  # imported only where used

            return dialect.type_descriptor(mysql.VARBINARY(self.length))
        return dialect.type_descriptor(sa.LargeBinary(self.length))

    def process_bind_param(self, value, dialect):
        return value.encode("utf-8") if isinstance(value, str) else value

    def process_result_value(self, value, dialect):
        return bytes(value).decode("utf-8") if value is not None else None


class MediumBytes(sa.types.TypeDecorator):
    """Bytes of up to a few MiB on every engine (MariaDB's BLOB holds 64 KiB less one)."""
    impl = sa.LargeBinary
    cache_ok = True

    def load_dialect_impl(self, dialect):
        if dialect.name in ("mysql", "mariadb"):
            from sqlalchemy.dialects import mysql  # imported only where used

            return dialect.type_descriptor(mysql.MEDIUMBLOB())
        return dialect.type_descriptor(sa.LargeBinary())


class Account(Base):
    """An account that was written to (POST metadata, a container): accounts exist
    without a row too (swift's account_autocreate), empty and without metadata."""
    __tablename__ = "objectstore_accounts"
    name: Mapped[str] = mapped_column(sa.String(256), primary_key=True)
    meta: Mapped[dict] = mapped_column(sa.JSON, default=dict)  # header (lower) -> value
    timestamp: Mapped[str] = mapped_column(sa.String(20))  # swift's X-Timestamp
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Container(Base):
    __tablename__ = "objectstore_containers"
    __table_args__ = (sa.UniqueConstraint("account", "name",
                                          name="uniq_objectstore_containers0account0name"),)
    id: Mapped[int] = mapped_column(sa.BigInteger().with_variant(sa.Integer, "sqlite"),
                                    primary_key=True, autoincrement=True)
    account: Mapped[str] = mapped_column(sa.String(256))
    name: Mapped[str] = mapped_column(Name(256))
    meta: Mapped[dict] = mapped_column(sa.JSON, default=dict)  # header (lower) -> value
    timestamp: Mapped[str] = mapped_column(sa.String(20))  # created (X-Timestamp)
    put_timestamp: Mapped[str] = mapped_column(sa.String(20))  # last PUT or POST
    object_count: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    bytes_used: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    last_modified: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Object(Base):
    __tablename__ = "objectstore_objects"
    __table_args__ = (sa.UniqueConstraint("container_id", "name",
                                          name="uniq_objectstore_objects0container_id0name"),)
    id: Mapped[int] = mapped_column(sa.BigInteger().with_variant(sa.Integer, "sqlite"),
                                    primary_key=True, autoincrement=True)
    container_id: Mapped[int] = mapped_column(
        sa.ForeignKey("objectstore_containers.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(Name(1024))
    size: Mapped[int] = mapped_column(sa.BigInteger)
    etag: Mapped[str] = mapped_column(sa.String(64))
    content_type: Mapped[str] = mapped_column(sa.String(1024))
    timestamp: Mapped[str] = mapped_column(sa.String(20))  # X-Timestamp of the write
    last_modified: Mapped[dt.datetime] = mapped_column()
    # Object headers kept: X-Object-Meta-*, Content-Disposition, Content-Encoding,
    # X-Object-Manifest, X-Static-Large-Object (header, lower case -> value).
    meta: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    delete_at: Mapped[int | None] = mapped_column(sa.BigInteger, index=True)
    file: Mapped[str] = mapped_column(sa.String(64))  # the file's id (store.py)
    # X-Object-Version-Id of the current version in a container that has had
    # X-Versions-Enabled (None: the "null" version, written while versioning was off).
    version_id: Mapped[str | None] = mapped_column(sa.String(20))


class ObjectVersion(Base):
    """A version of an object that is not the current one (versions.py): an overwritten
    or deleted object of a container with X-Versions-Enabled, or a delete marker. The
    current version stays in objectstore_objects, so plain reads and listings never look
    here."""
    __tablename__ = "objectstore_versions"
    __table_args__ = (sa.UniqueConstraint(
        "container_id", "name", "version_id",
        name="uniq_objectstore_versions0container_id0name0version_id"),)
    id: Mapped[int] = mapped_column(sa.BigInteger().with_variant(sa.Integer, "sqlite"),
                                    primary_key=True, autoincrement=True)
    container_id: Mapped[int] = mapped_column(
        sa.ForeignKey("objectstore_containers.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(Name(1024))
    version_id: Mapped[str] = mapped_column(sa.String(20))
    size: Mapped[int] = mapped_column(sa.BigInteger)
    etag: Mapped[str] = mapped_column(sa.String(64))
    content_type: Mapped[str] = mapped_column(sa.String(1024))
    timestamp: Mapped[str] = mapped_column(sa.String(20))
    last_modified: Mapped[dt.datetime] = mapped_column()
    meta: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    file: Mapped[str | None] = mapped_column(sa.String(64))  # None: a delete marker


class Blob(Base):
    """A small object's bytes, kept in the database (store.py's inline ids) instead of a
    file: written in the same transaction as the object's row, so neither is ever without
    the other, with no inode to allocate and no file to fsync."""
    __tablename__ = "objectstore_blobs"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    data: Mapped[bytes] = mapped_column(MediumBytes())
    created: Mapped[float] = mapped_column(sa.Float)  # time.time(): the sweep's age
