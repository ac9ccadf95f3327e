"""DNS tables, after designate's storage: zones and their recordsets (a recordset's records
are kept as one JSON list, as the API shows them), TLDs, blacklists, quotas, zone
transfers, export/import tasks and shares. Deletes are real deletes (designate marks rows
deleted); a zone being deleted keeps its row, action DELETE, until the DNS server has
dropped it.
"""
# No `from __future__ import annotations`: SQLAlchemy would eval every Mapped[...] string.

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class Zone(Base):
    __tablename__ = "dns_zones"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    email: Mapped[str] = mapped_column(sa.String(255))
    ttl: Mapped[int] = mapped_column(default=3600)
    serial: Mapped[int] = mapped_column(sa.BigInteger, default=1)
    refresh: Mapped[int] = mapped_column(default=3600)
    retry: Mapped[int] = mapped_column(default=600)
    expire: Mapped[int] = mapped_column(default=86400)
    minimum: Mapped[int] = mapped_column(default=3600)
    type: Mapped[str] = mapped_column(sa.String(10), default="PRIMARY")
    masters: Mapped[str] = mapped_column(sa.Text, default="[]")  # JSON list "host:port"
    attributes: Mapped[str] = mapped_column(sa.Text, default="{}")
    description: Mapped[str | None] = mapped_column(sa.String(160))
    status: Mapped[str] = mapped_column(sa.String(10), default="PENDING", index=True)
    action: Mapped[str] = mapped_column(sa.String(10), default="CREATE")
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()
    transferred_at: Mapped[dt.datetime | None] = mapped_column()


class RecordSet(Base):
    __tablename__ = "dns_recordsets"
    __table_args__ = (sa.UniqueConstraint("zone_id", "name", "type",
                                          name="uq_dns_recordsets_zone_name_type"),)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    zone_id: Mapped[str] = mapped_column(sa.ForeignKey("dns_zones.id", ondelete="CASCADE"),
                                         index=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    name: Mapped[str] = mapped_column(sa.String(255), index=True)
    type: Mapped[str] = mapped_column(sa.String(10))
    ttl: Mapped[int | None] = mapped_column()
    records: Mapped[str] = mapped_column(sa.Text, default="[]")  # JSON list of rdata text
    description: Mapped[str | None] = mapped_column(sa.String(160))
    managed: Mapped[bool] = mapped_column(default=False)  # SOA and NS the service keeps
    status: Mapped[str] = mapped_column(sa.String(10), default="PENDING")
    action: Mapped[str] = mapped_column(sa.String(10), default="CREATE")
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class Tld(Base):
    __tablename__ = "dns_tlds"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    description: Mapped[str | None] = mapped_column(sa.String(160))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class Blacklist(Base):
    __tablename__ = "dns_blacklists"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    pattern: Mapped[str] = mapped_column(sa.String(255), unique=True)
    description: Mapped[str | None] = mapped_column(sa.String(160))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class Quota(Base):
    __tablename__ = "dns_quotas"
    __table_args__ = (sa.UniqueConstraint("project_id", "resource",
                                          name="uq_dns_quotas_project_resource"),)
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    resource: Mapped[str] = mapped_column(sa.String(32))
    hard_limit: Mapped[int] = mapped_column(sa.BigInteger)


class TransferRequest(Base):
    __tablename__ = "dns_transfer_requests"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    zone_id: Mapped[str] = mapped_column(sa.ForeignKey("dns_zones.id", ondelete="CASCADE"),
                                         index=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    target_project_id: Mapped[str | None] = mapped_column(sa.String(64))
    key: Mapped[str] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.String(160))
    status: Mapped[str] = mapped_column(sa.String(10), default="ACTIVE")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class TransferAccept(Base):
    __tablename__ = "dns_transfer_accepts"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    transfer_request_id: Mapped[str] = mapped_column(sa.String(36))
    zone_id: Mapped[str] = mapped_column(sa.String(36))
    status: Mapped[str] = mapped_column(sa.String(10), default="COMPLETE")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class ZoneTask(Base):
    """An export or an import (designate's zone_tasks): done at once, so COMPLETE or
    ERROR when the caller first sees it."""
    __tablename__ = "dns_zone_tasks"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    kind: Mapped[str] = mapped_column(sa.String(10))  # export | import
    project_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    zone_id: Mapped[str | None] = mapped_column(sa.String(36))
    status: Mapped[str] = mapped_column(sa.String(10), default="PENDING")
    message: Mapped[str | None] = mapped_column(sa.Text)
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()


class SharedZone(Base):
    __tablename__ = "dns_shared_zones"
    __table_args__ = (sa.UniqueConstraint("zone_id", "target_project_id",
                                          name="uq_dns_shared_zones_zone_target"),)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    zone_id: Mapped[str] = mapped_column(sa.ForeignKey("dns_zones.id", ondelete="CASCADE"),
                                         index=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    target_project_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column()
