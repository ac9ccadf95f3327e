"""Volume tables, after cinder's: volumes, volume attachments, snapshots, volume types (with
their extra specs and project access), quotas and the volume services' heartbeats.

Metadata is a JSON column rather than cinder's key/value tables: it is always read and
written with its volume, and filters on it are done on the few rows of one project.
Deleted volumes and snapshots lose their row (their ids are uuid4s, never reused).
"""
# No `from __future__ import annotations`: SQLAlchemy would then eval every Mapped[...]
# annotation string when the class is made (a sixth of the models' import time).

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column, relationship

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class VolumeType(Base):
    __tablename__ = "volume_types"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    description: Mapped[str | None] = mapped_column(sa.String(255))
    is_public: Mapped[bool] = mapped_column(default=True)
    extra_specs: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    # The qos specs associated with the type (cinder's column; qos_specs.py manages it).
    qos_specs_id: Mapped[str | None] = mapped_column(sa.String(36), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class QosSpecs(Base):
    """cinder's quality_of_service_specs: a named set of limits that volume types point to
    (``consumer`` says who enforces them). One row with a JSON ``specs`` instead of
    cinder's parent row plus a row per key."""
    __tablename__ = "volume_qos_specs"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    consumer: Mapped[str] = mapped_column(sa.String(255), default="back-end")
    specs: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class VolumeTypeEncryption(Base):
    """cinder's encryption table: how volumes of a type are encrypted, at most one row per
    type (the type's deletion removes it)."""
    __tablename__ = "volume_type_encryption"
    volume_type_id: Mapped[str] = mapped_column(
        sa.ForeignKey("volume_types.id", ondelete="CASCADE"), primary_key=True)
    encryption_id: Mapped[str] = mapped_column(sa.String(36))
    provider: Mapped[str] = mapped_column(sa.String(255))
    cipher: Mapped[str | None] = mapped_column(sa.String(255))
    key_size: Mapped[int | None] = mapped_column()
    control_location: Mapped[str] = mapped_column(sa.String(255))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class ProjectDefaultVolumeType(Base):
    """cinder's default_volume_types (3.62): a project's own default volume type, which
    overrides ``[volume] default_volume_type`` for that project's creates."""
    __tablename__ = "volume_project_default_types"
    project_id: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    volume_type_id: Mapped[str] = mapped_column(
        sa.ForeignKey("volume_types.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class GroupType(Base):
    """cinder's group_types (3.11): what a generic volume group is (its group_specs)."""
    __tablename__ = "volume_group_types"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    description: Mapped[str | None] = mapped_column(sa.String(255))
    is_public: Mapped[bool] = mapped_column(default=True)
    group_specs: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class VolumeGroup(Base):
    """cinder's groups (3.13): volumes of the given volume types, snapshotted together.
    Volumes point to their group (``Volume.group_id``)."""
    __tablename__ = "volume_groups"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(255), index=True)
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.String(255))
    status: Mapped[str] = mapped_column(sa.String(30))
    availability_zone: Mapped[str] = mapped_column(sa.String(255))
    group_type_id: Mapped[str] = mapped_column(sa.ForeignKey("volume_group_types.id"))
    volume_type_ids: Mapped[list] = mapped_column(sa.JSON, default=list)
    # what it was made from (create-from-src, 3.14)
    group_snapshot_id: Mapped[str | None] = mapped_column(sa.String(36))
    source_group_id: Mapped[str | None] = mapped_column(sa.String(36))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class GroupSnapshot(Base):
    """cinder's group_snapshots (3.14): one snapshot of every volume of a group at once;
    the member snapshots point to it (``Snapshot.group_snapshot_id``)."""
    __tablename__ = "volume_group_snapshots"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(255), index=True)
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    group_id: Mapped[str] = mapped_column(sa.ForeignKey("volume_groups.id"), index=True)
    group_type_id: Mapped[str] = mapped_column(sa.String(36))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.String(255))
    status: Mapped[str] = mapped_column(sa.String(30))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class VolumeTypeAccess(Base):
    """Projects that may use a private volume type."""
    __tablename__ = "volume_type_access"
    volume_type_id: Mapped[str] = mapped_column(
        sa.ForeignKey("volume_types.id", ondelete="CASCADE"), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(255), primary_key=True)


class Volume(Base):
    __tablename__ = "volume_volumes"
    __table_args__ = (sa.Index("ix_volume_volumes_project_created", "project_id",
                               "created_at"),)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.String(255))
    size: Mapped[int] = mapped_column()
    status: Mapped[str] = mapped_column(sa.String(30), index=True)
    attach_status: Mapped[str] = mapped_column(sa.String(30), default="detached")
    migration_status: Mapped[str | None] = mapped_column(sa.String(30))
    availability_zone: Mapped[str] = mapped_column(sa.String(255))
    volume_type_id: Mapped[str] = mapped_column(sa.ForeignKey("volume_types.id"))
    host: Mapped[str | None] = mapped_column(sa.String(255))      # host@backend#pool
    bootable: Mapped[bool] = mapped_column(default=False)
    multiattach: Mapped[bool] = mapped_column(default=False)
    readonly: Mapped[bool] = mapped_column(default=False)
    snapshot_id: Mapped[str | None] = mapped_column(sa.String(36))
    source_volid: Mapped[str | None] = mapped_column(sa.String(36))
    image_id: Mapped[str | None] = mapped_column(sa.String(36))
    meta: Mapped[dict] = mapped_column("metadata", sa.JSON, default=dict)
    image_metadata: Mapped[dict | None] = mapped_column(sa.JSON)
    # cinder's admin metadata: what the API sets (readonly), shown merged into metadata
    admin_meta: Mapped[dict | None] = mapped_column("admin_metadata", sa.JSON)
    # Why the volume is in an error status, for people (shown as a user message).
    error_reason: Mapped[str | None] = mapped_column(sa.Text)
    group_id: Mapped[str | None] = mapped_column(sa.String(36), index=True)
    # the key manager's secret holding the key of a volume of an encrypted type
    encryption_key_id: Mapped[str | None] = mapped_column(sa.String(36))
    # "CHAP <user> <password>" of its iSCSI export (cinder's provider_auth); never shown
    provider_auth: Mapped[str | None] = mapped_column(sa.String(255))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()
    launched_at: Mapped[dt.datetime | None] = mapped_column()

    volume_type: Mapped[VolumeType] = relationship(lazy="joined")
    attachments: Mapped[list["VolumeAttachment"]] = relationship(
        lazy="selectin", order_by="VolumeAttachment.created_at",
        cascade="all, delete-orphan")


class VolumeAttachment(Base):
    __tablename__ = "volume_attachments"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(
        sa.ForeignKey("volume_volumes.id", ondelete="CASCADE"), index=True)
    instance_uuid: Mapped[str | None] = mapped_column(sa.String(36), index=True)
    attached_host: Mapped[str | None] = mapped_column(sa.String(255))
    mountpoint: Mapped[str | None] = mapped_column(sa.String(255))
    # reserved -> attaching -> attached (-> detaching -> deleted row)
    attach_status: Mapped[str] = mapped_column(sa.String(30))
    attach_mode: Mapped[str | None] = mapped_column(sa.String(10))
    connector: Mapped[dict | None] = mapped_column(sa.JSON)
    connection_info: Mapped[dict | None] = mapped_column(sa.JSON)
    attach_time: Mapped[dt.datetime | None] = mapped_column()
    detach_time: Mapped[dt.datetime | None] = mapped_column()
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class Snapshot(Base):
    __tablename__ = "volume_snapshots"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(sa.ForeignKey("volume_volumes.id"), index=True)
    project_id: Mapped[str] = mapped_column(sa.String(255), index=True)
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.String(255))
    size: Mapped[int] = mapped_column()
    status: Mapped[str] = mapped_column(sa.String(30))
    progress: Mapped[str | None] = mapped_column(sa.String(255))
    meta: Mapped[dict] = mapped_column("metadata", sa.JSON, default=dict)
    error_reason: Mapped[str | None] = mapped_column(sa.Text)
    group_snapshot_id: Mapped[str | None] = mapped_column(sa.String(36), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class VolumeTransfer(Base):
    """cinder's transfers: an offer of a volume (and, unless ``no_snapshots``, its
    snapshots) to whichever project accepts it with the auth key. Only the key's salted
    HMAC is kept (cinder's salt/crypt_hash); an accepted or deleted offer loses its row."""
    __tablename__ = "volume_transfers"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(
        sa.ForeignKey("volume_volumes.id", ondelete="CASCADE"), index=True)
    name: Mapped[str | None] = mapped_column(sa.String(255))
    salt: Mapped[str] = mapped_column(sa.String(255))
    crypt_hash: Mapped[str] = mapped_column(sa.String(255))
    no_snapshots: Mapped[bool] = mapped_column(default=False)
    source_project_id: Mapped[str] = mapped_column(sa.String(255), index=True)
    destination_project_id: Mapped[str | None] = mapped_column(sa.String(255))
    accepted: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class Backup(Base):
    """A full copy of a volume's (or snapshot's) data in the backup directory."""
    __tablename__ = "volume_backups"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(255), index=True)
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    volume_id: Mapped[str] = mapped_column(sa.String(36), index=True)
    snapshot_id: Mapped[str | None] = mapped_column(sa.String(36))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.String(255))
    container: Mapped[str | None] = mapped_column(sa.String(255))
    size: Mapped[int] = mapped_column()
    status: Mapped[str] = mapped_column(sa.String(30))
    availability_zone: Mapped[str | None] = mapped_column(sa.String(255))
    fail_reason: Mapped[str | None] = mapped_column(sa.Text)
    meta: Mapped[dict] = mapped_column("metadata", sa.JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()
    data_timestamp: Mapped[dt.datetime | None] = mapped_column()
    # Incremental backups (rbd volumes): the backup this one adds to, and where the
    # backup driver keeps it ({"base": "<RBD image>"}), as cinder's columns.
    parent_id: Mapped[str | None] = mapped_column(sa.String(36), index=True)
    service_metadata: Mapped[str | None] = mapped_column(sa.Text)
    # An encrypted volume's backup keeps its own copy of the volume's key (cinder's
    # column), and the volume's type: a restore gives the volume a copy of that key, and
    # a new volume restored from it that type, so its bytes open again.
    encryption_key_id: Mapped[str | None] = mapped_column(sa.String(36))
    volume_type_id: Mapped[str | None] = mapped_column(sa.String(36))


class VolumeQuota(Base):
    """A project's limit for one resource (volumes, gigabytes, volumes_<type>, ...)."""
    __tablename__ = "volume_quotas"
    project_id: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    resource: Mapped[str] = mapped_column(sa.String(300), primary_key=True)
    hard_limit: Mapped[int] = mapped_column()


class VolumeQuotaClass(Base):
    """cinder's quota_classes: a named set of limits; the ``default`` class overrides the
    configured defaults of every project that has no limit of its own."""
    __tablename__ = "volume_quota_classes"
    class_name: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    resource: Mapped[str] = mapped_column(sa.String(300), primary_key=True)
    hard_limit: Mapped[int] = mapped_column()


class VolumeService(Base):
    """One volume service (cinder-scheduler, or cinder-volume per backend) and its beat."""
    __tablename__ = "volume_services"
    __table_args__ = (sa.UniqueConstraint("host", "binary"),)
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    host: Mapped[str] = mapped_column(sa.String(255))
    binary: Mapped[str] = mapped_column(sa.String(64))
    availability_zone: Mapped[str] = mapped_column(sa.String(255))
    disabled: Mapped[bool] = mapped_column(default=False)
    disabled_reason: Mapped[str | None] = mapped_column(sa.String(255))
    last_seen_up: Mapped[dt.datetime | None] = mapped_column()
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()
