"""Barbican's tables. A payload is kept only as ciphertext under its project's key
(``keymanager_project_keys``, itself wrapped by the master key in the data dir)."""
# No `from __future__ import annotations` (see control/models.py).

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class ProjectKey(Base):
    """A project's key-encryption key, wrapped by the master key (simple_crypto's KEK)."""
    __tablename__ = "keymanager_project_keys"
    project_id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    wrapped_key: Mapped[bytes] = mapped_column(sa.LargeBinary)
    created: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Secret(Base):
    __tablename__ = "keymanager_secrets"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    creator_id: Mapped[str | None] = mapped_column(sa.String(64))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    secret_type: Mapped[str] = mapped_column(sa.String(80))
    algorithm: Mapped[str | None] = mapped_column(sa.String(255))
    bit_length: Mapped[int | None]
    mode: Mapped[str | None] = mapped_column(sa.String(255))
    expiration: Mapped[dt.datetime | None]
    content_type: Mapped[str | None] = mapped_column(sa.String(255))  # of the payload
    ciphertext: Mapped[bytes | None] = mapped_column(sa.LargeBinary)  # None: no payload yet
    created: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated: Mapped[dt.datetime] = mapped_column(default=utcnow)


class SecretMetadatum(Base):
    __tablename__ = "keymanager_secret_metadata"
    secret_id: Mapped[str] = mapped_column(
        sa.String(36), sa.ForeignKey("keymanager_secrets.id", ondelete="CASCADE"),
        primary_key=True)
    key: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    value: Mapped[str] = mapped_column(sa.String(255))


class SecretConsumer(Base):
    """What uses a secret (microversion 1.1): a service's resource, e.g. cinder's volume."""
    __tablename__ = "keymanager_secret_consumers"
    __table_args__ = (sa.UniqueConstraint("secret_id", "service", "resource_type",
                                          "resource_id"),)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    secret_id: Mapped[str] = mapped_column(
        sa.String(36), sa.ForeignKey("keymanager_secrets.id", ondelete="CASCADE"),
        index=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    service: Mapped[str] = mapped_column(sa.String(255))
    resource_type: Mapped[str] = mapped_column(sa.String(255))
    resource_id: Mapped[str] = mapped_column(sa.String(36))  # a uuid (barbican's column)
    created: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Container(Base):
    __tablename__ = "keymanager_containers"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    creator_id: Mapped[str | None] = mapped_column(sa.String(64))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    type: Mapped[str] = mapped_column(sa.String(32))
    created: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated: Mapped[dt.datetime] = mapped_column(default=utcnow)


class ContainerSecret(Base):
    """A named reference; one secret may appear under several names (added later)."""
    __tablename__ = "keymanager_container_secrets"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    container_id: Mapped[str] = mapped_column(
        sa.String(36), sa.ForeignKey("keymanager_containers.id", ondelete="CASCADE"),
        index=True)
    secret_id: Mapped[str] = mapped_column(sa.String(36))
    name: Mapped[str | None] = mapped_column(sa.String(255))


class Consumer(Base):
    """A container's consumer (name and URL of what uses it, e.g. a load balancer)."""
    __tablename__ = "keymanager_consumers"
    __table_args__ = (sa.UniqueConstraint("container_id", "name", "url"),)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    container_id: Mapped[str] = mapped_column(
        sa.String(36), sa.ForeignKey("keymanager_containers.id", ondelete="CASCADE"),
        index=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    name: Mapped[str] = mapped_column(sa.String(255))
    url: Mapped[str] = mapped_column(sa.String(255))
    created: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Acl(Base):
    """An operation's ACL on a secret or container: the users it is shared with and
    whether the owning project still has access (``project-access``)."""
    __tablename__ = "keymanager_acls"
    entity_type: Mapped[str] = mapped_column(sa.String(16), primary_key=True)  # secret|container
    entity_id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    operation: Mapped[str] = mapped_column(sa.String(16), primary_key=True)
    project_access: Mapped[bool] = mapped_column(default=True)
    users: Mapped[list] = mapped_column(sa.JSON, default=list)
    created: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated: Mapped[dt.datetime] = mapped_column(default=utcnow)


class ProjectQuota(Base):
    __tablename__ = "keymanager_project_quotas"
    project_id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    quotas: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class Order(Base):
    __tablename__ = "keymanager_orders"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    creator_id: Mapped[str | None] = mapped_column(sa.String(64))
    type: Mapped[str] = mapped_column(sa.String(32))
    meta: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    status: Mapped[str] = mapped_column(sa.String(16), default="ACTIVE")
    secret_id: Mapped[str | None] = mapped_column(sa.String(36))
    container_id: Mapped[str | None] = mapped_column(sa.String(36))
    created: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated: Mapped[dt.datetime] = mapped_column(default=utcnow)
