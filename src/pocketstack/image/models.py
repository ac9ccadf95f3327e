"""Image tables: glance's images, image_properties, image_tags and image_members.

Deleted images keep their row (``deleted``, status ``deleted``) so an id is never reused,
as in glance; their properties, tags and members go with them.
"""
# No `from __future__ import annotations`: SQLAlchemy would then eval every Mapped[...]
# annotation string when the class is made (a sixth of the models' import time).

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column, relationship

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class Image(Base):
    __tablename__ = "image_images"
    __table_args__ = (sa.Index("ix_image_images_deleted_visibility", "deleted", "visibility"),)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    name: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    disk_format: Mapped[str | None] = mapped_column(sa.String(20))
    container_format: Mapped[str | None] = mapped_column(sa.String(20))
    size: Mapped[int | None] = mapped_column(sa.BigInteger)
    virtual_size: Mapped[int | None] = mapped_column(sa.BigInteger)
    status: Mapped[str] = mapped_column(sa.String(30))
    visibility: Mapped[str] = mapped_column(sa.String(20))
    checksum: Mapped[str | None] = mapped_column(sa.String(32), index=True)
    os_hash_algo: Mapped[str | None] = mapped_column(sa.String(64))
    os_hash_value: Mapped[str | None] = mapped_column(sa.String(128), index=True)
    min_disk: Mapped[int] = mapped_column(default=0)
    min_ram: Mapped[int] = mapped_column(default=0)
    protected: Mapped[bool] = mapped_column(default=False)
    os_hidden: Mapped[bool] = mapped_column(default=False)
    owner: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow, index=True)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    deleted: Mapped[bool] = mapped_column(default=False)
    deleted_at: Mapped[dt.datetime | None] = mapped_column()
    # Size and hashes of data staged for import (glance-direct); never shown.
    staged: Mapped[dict | None] = mapped_column(sa.JSON)
    # The store holding the data ("file", "rbd"; NULL: none yet, or "file" before 0002)
    # and, where the store records one, its location (glance's image_locations).
    store: Mapped[str | None] = mapped_column(sa.String(32))
    location: Mapped[str | None] = mapped_column(sa.Text)
    # Copies in other stores (copy-image): {store: location}; glance's further locations.
    # A column, not a table: every image load (each boot) stays one query.
    copies: Mapped[dict | None] = mapped_column(sa.JSON)

    properties: Mapped[list["ImageProperty"]] = relationship(
        cascade="all, delete-orphan", lazy="selectin", order_by="ImageProperty.name")
    tags: Mapped[list["ImageTag"]] = relationship(
        cascade="all, delete-orphan", lazy="selectin", order_by="ImageTag.value")


class ImageProperty(Base):
    __tablename__ = "image_properties"
    __table_args__ = (sa.Index("ix_image_properties_name", "name"),)
    image_id: Mapped[str] = mapped_column(
        sa.ForeignKey("image_images.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    # NULL only for the schema's nullable properties (kernel_id, ramdisk_id).
    value: Mapped[str | None] = mapped_column(sa.Text)


class ImageTag(Base):
    __tablename__ = "image_tags"
    image_id: Mapped[str] = mapped_column(
        sa.ForeignKey("image_images.id", ondelete="CASCADE"), primary_key=True)
    value: Mapped[str] = mapped_column(sa.String(255), primary_key=True, index=True)


class ImageMember(Base):
    __tablename__ = "image_members"
    image_id: Mapped[str] = mapped_column(
        sa.ForeignKey("image_images.id", ondelete="CASCADE"), primary_key=True)
    member: Mapped[str] = mapped_column(sa.String(255), primary_key=True, index=True)
    status: Mapped[str] = mapped_column(sa.String(20), default="pending")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Task(Base):
    """glance's tasks + task_info: one row per import (api_image_import)."""
    __tablename__ = "image_tasks"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    type: Mapped[str] = mapped_column(sa.String(30))
    status: Mapped[str] = mapped_column(sa.String(30))
    owner: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    image_id: Mapped[str | None] = mapped_column(sa.String(36), index=True)
    request_id: Mapped[str | None] = mapped_column(sa.String(64))
    user_id: Mapped[str | None] = mapped_column(sa.String(64))
    input: Mapped[dict | None] = mapped_column(sa.JSON)
    result: Mapped[dict | None] = mapped_column(sa.JSON)
    message: Mapped[str] = mapped_column(sa.Text, default="")
    expires_at: Mapped[dt.datetime | None] = mapped_column()
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow, index=True)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class CacheEntry(Base):
    """The image cache of the API host (cache.py): queued or cached image data."""
    __tablename__ = "image_cache"
    image_id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    state: Mapped[str] = mapped_column(sa.String(10))  # queued, caching, cached
    size: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    hits: Mapped[int] = mapped_column(default=0)
    last_accessed: Mapped[float] = mapped_column(sa.Float, default=0.0)
    last_modified: Mapped[float] = mapped_column(sa.Float, default=0.0)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


# --- metadata definitions (glance's metadef_* tables) ----------------------------------


class MetadefNamespace(Base):
    __tablename__ = "image_metadef_namespaces"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    namespace: Mapped[str] = mapped_column(sa.String(80), unique=True)
    display_name: Mapped[str | None] = mapped_column(sa.String(80))
    description: Mapped[str | None] = mapped_column(sa.Text)
    visibility: Mapped[str] = mapped_column(sa.String(32), default="private")
    protected: Mapped[bool] = mapped_column(default=False)
    owner: Mapped[str] = mapped_column(sa.String(255), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


def _in_namespace(table: str) -> tuple:
    return (sa.UniqueConstraint("namespace_id", "name", name=f"uq_{table}_namespace_name"),)


class MetadefObject(Base):
    __tablename__ = "image_metadef_objects"
    __table_args__ = _in_namespace("image_metadef_objects")
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    namespace_id: Mapped[int] = mapped_column(
        sa.ForeignKey("image_metadef_namespaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(sa.String(80))
    description: Mapped[str | None] = mapped_column(sa.Text)
    required: Mapped[list | None] = mapped_column(sa.JSON)
    properties: Mapped[dict | None] = mapped_column(sa.JSON)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class MetadefProperty(Base):
    __tablename__ = "image_metadef_properties"
    __table_args__ = _in_namespace("image_metadef_properties")
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    namespace_id: Mapped[int] = mapped_column(
        sa.ForeignKey("image_metadef_namespaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(sa.String(80))
    schema: Mapped[dict] = mapped_column(sa.JSON)  # the property's JSON schema, minus name
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class MetadefTag(Base):
    __tablename__ = "image_metadef_tags"
    __table_args__ = _in_namespace("image_metadef_tags")
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    namespace_id: Mapped[int] = mapped_column(
        sa.ForeignKey("image_metadef_namespaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(sa.String(80))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class MetadefResourceType(Base):
    __tablename__ = "image_metadef_resource_types"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(sa.String(80), unique=True)
    protected: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class MetadefAssociation(Base):
    """A resource type associated with a namespace (metadef_namespace_resource_types)."""
    __tablename__ = "image_metadef_associations"
    resource_type_id: Mapped[int] = mapped_column(
        sa.ForeignKey("image_metadef_resource_types.id", ondelete="CASCADE"),
        primary_key=True)
    namespace_id: Mapped[int] = mapped_column(
        sa.ForeignKey("image_metadef_namespaces.id", ondelete="CASCADE"), primary_key=True)
    properties_target: Mapped[str | None] = mapped_column(sa.String(80))
    prefix: Mapped[str | None] = mapped_column(sa.String(80))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
