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
