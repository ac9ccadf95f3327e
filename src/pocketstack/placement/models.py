"""Placement tables, after upstream placement's schema, with names instead of ids where
upstream keeps lookup tables (resource classes, traits, projects, users): the standard
names come from os-resource-classes and os-traits, and only custom ones have rows.
"""
# No `from __future__ import annotations`: SQLAlchemy would eval every Mapped[...] string.

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class ResourceProvider(Base):
    __tablename__ = "placement_resource_providers"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), unique=True)
    name: Mapped[str] = mapped_column(sa.String(200), unique=True)
    generation: Mapped[int] = mapped_column(default=0)
    # Nested providers: every provider knows its tree's root (itself for a root).
    parent_provider_id: Mapped[int | None] = mapped_column(
        sa.ForeignKey("placement_resource_providers.id"), index=True)
    root_provider_id: Mapped[int | None] = mapped_column(index=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Inventory(Base):
    __tablename__ = "placement_inventories"
    __table_args__ = (sa.UniqueConstraint("resource_provider_id", "resource_class",
                                          name="uq_placement_inventories_rp_rc"),
                      # candidates walk one class's inventories in provider order
                      sa.Index("ix_placement_inventories_rc", "resource_class",
                               "resource_provider_id"))
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    resource_provider_id: Mapped[int] = mapped_column(
        sa.ForeignKey("placement_resource_providers.id"))
    resource_class: Mapped[str] = mapped_column(sa.String(255))
    total: Mapped[int] = mapped_column(sa.BigInteger)
    reserved: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    min_unit: Mapped[int] = mapped_column(sa.BigInteger, default=1)
    max_unit: Mapped[int] = mapped_column(sa.BigInteger)
    step_size: Mapped[int] = mapped_column(sa.BigInteger, default=1)
    allocation_ratio: Mapped[float] = mapped_column(sa.Float, default=1.0)
    # The sum of this class's allocations on the provider, kept by every allocation write
    # (usage.py): a claim checks this row, O(1), where upstream sums the allocations.
    used: Mapped[int] = mapped_column(sa.BigInteger, default=0, server_default="0")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Allocation(Base):
    __tablename__ = "placement_allocations"
    __table_args__ = (sa.Index("ix_placement_allocations_rp_rc", "resource_provider_id",
                               "resource_class"),
                      sa.Index("ix_placement_allocations_consumer", "consumer_id"))
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    resource_provider_id: Mapped[int] = mapped_column(
        sa.ForeignKey("placement_resource_providers.id"))
    consumer_id: Mapped[str] = mapped_column(sa.String(36))
    resource_class: Mapped[str] = mapped_column(sa.String(255))
    used: Mapped[int] = mapped_column(sa.BigInteger)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Consumer(Base):
    __tablename__ = "placement_consumers"
    __table_args__ = (sa.Index("ix_placement_consumers_project_user", "project_id",
                               "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), unique=True)
    project_id: Mapped[str] = mapped_column(sa.String(255))
    user_id: Mapped[str] = mapped_column(sa.String(255))
    generation: Mapped[int] = mapped_column(default=0)
    consumer_type: Mapped[str | None] = mapped_column(sa.String(255))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class ProviderTrait(Base):
    __tablename__ = "placement_provider_traits"
    resource_provider_id: Mapped[int] = mapped_column(
        sa.ForeignKey("placement_resource_providers.id"), primary_key=True)
    trait: Mapped[str] = mapped_column(sa.String(255), primary_key=True, index=True)


class ProviderAggregate(Base):
    __tablename__ = "placement_provider_aggregates"
    resource_provider_id: Mapped[int] = mapped_column(
        sa.ForeignKey("placement_resource_providers.id"), primary_key=True)
    aggregate_uuid: Mapped[str] = mapped_column(sa.String(36), primary_key=True, index=True)


class CustomResourceClass(Base):
    __tablename__ = "placement_resource_classes"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class CustomTrait(Base):
    __tablename__ = "placement_traits"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
