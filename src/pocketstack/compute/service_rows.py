"""The services rows of compute's hosts and daemons: registration and heartbeats (one
statement per CHUNK hosts, so a fleet of simulated hosts beats at once)."""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.compute.models import Service
from pocketstack.control import faults

# Hosts per IN (...) list: well inside every engine's limit on bound parameters.
CHUNK = 500


def chunks(items: list, size: int = CHUNK):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def register_services(hosts: list[str], binary: str, topic: str) -> None:
    """Create the services rows that are missing, mark the others seen now."""
    now = utcnow()
    with db.transaction() as s:
        for part in chunks(hosts):
            have = set(s.scalars(sa.select(Service.host).where(
                Service.binary == binary, Service.host.in_(part))).all())
            missing = [h for h in part if h not in have]
            if missing:
                s.execute(sa.insert(Service), [
                    {"uuid": str(uuidlib.uuid4()), "host": h, "binary": binary,
                     "topic": topic, "last_seen_up": now, "report_count": 1,
                     "created_at": now} for h in missing])
            if have:
                s.execute(sa.update(Service).where(Service.binary == binary,
                                                   Service.host.in_(list(have)))
                          .values(last_seen_up=now))


def heartbeats(hosts: list[str], binary: str) -> None:
    """One UPDATE per CHUNK hosts: every host beats at once (a host a fault rule holds
    down stays silent, so it goes down as a dead one would)."""
    if binary == "nova-compute":
        hosts = [h for h in hosts if not faults.host_is_down(h)]
    if not hosts:
        return
    now = utcnow()
    with db.transaction() as s:
        for part in chunks(hosts):
            s.execute(sa.update(Service).where(Service.binary == binary,
                                               Service.host.in_(part))
                      .values(last_seen_up=now, report_count=Service.report_count + 1))
