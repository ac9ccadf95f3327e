"""Fault-injection rules of the simulated hypervisor (shared by every process through the
database, so a rule set through the API reaches compute agents on other hosts too)."""
# No `from __future__ import annotations`: SQLAlchemy would then eval every Mapped[...]
# annotation string when the class is made (a sixth of the models' import time).

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class FaultRule(Base):
    __tablename__ = "control_fault_rules"
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    host: Mapped[str | None] = mapped_column(sa.String(255))  # None: every host
    operation: Mapped[str] = mapped_column(sa.String(64))
    action: Mapped[str] = mapped_column(sa.String(16))  # fail | hang | drop | down
    times: Mapped[int | None]  # remaining; None = until removed
    hang_seconds: Mapped[float] = mapped_column(default=0.0)
    message: Mapped[str] = mapped_column(sa.String(255), default="")
    hits: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
