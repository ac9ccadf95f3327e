"""Object versions as swift's object_versioning (``X-Versions-Enabled``), in the database.

Swift keeps every version in a hidden container and makes the visible object a symlink to
the current one. Here the current version stays the object's row in objectstore_objects
(so plain reads, writes and listings cost what they cost without versioning) and carries
its version id; the other versions — overwritten or deleted objects, and delete markers —
are rows of objectstore_versions that keep their files. A version id is the X-Timestamp of
the write that made it (swift's ``Timestamp.internal``); an object written while versioning
was off has the "null" version.

A container's versioning state is its ``x-versions-enabled`` metadata ("True"/"False", as
swift shows it) and a hidden ``sysmeta-versions`` key set the first time it is enabled:
version-aware requests need that (swift: the hidden versions container exists).
"""
from __future__ import annotations

import time

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.objectstore.models import Container, Object, ObjectVersion

ENABLED = "x-versions-enabled"
VERSIONED = "sysmeta-versions"  # hidden: versioning was enabled at least once
DELETE_MARKER_TYPE = "application/x-deleted;swift_versions_deleted=1"
NULL = "null"


def state(meta: dict) -> str | None:
    """"enabled", "suspended" (enabled once, now off) or None (never enabled)."""
    if not meta.get(VERSIONED):
        return None
    return "enabled" if _true(meta.get(ENABLED)) else "suspended"


def _true(value) -> bool:
    return str(value or "").strip().lower() in ("true", "1", "yes", "on", "t", "y")


def valid_version(value: str, allow_null: bool = True) -> bool:
    if value == NULL:
        return allow_null
    try:
        number = float(value)
    except ValueError:
        return False
    return 0 <= number < 10_000_000_000  # swift's Timestamp range (NaN compares False)


def normalized(value: str) -> str:
    """A version id as swift's Timestamp(...).internal writes it."""
    return value if value == NULL else "%016.05f" % float(value)


def alive(row) -> bool:
    return row.delete_at is None or row.delete_at > int(time.time())


def archive(s, old: Object, mode: str) -> bool:
    """Keep the current row ``old`` (about to be replaced or deleted) as a non-current
    version; False when it is not kept (expired, or a "null" version while suspended:
    swift overwrites those)."""
    if not alive(old) or (mode == "suspended" and old.version_id is None):
        return False
    s.add(ObjectVersion(container_id=old.container_id, name=old.name,
                        version_id=old.version_id or old.timestamp, size=old.size,
                        etag=old.etag, content_type=old.content_type,
                        timestamp=old.timestamp, last_modified=old.last_modified,
                        meta=dict(old.meta or {}), file=old.file))
    return True


def next_id(s, container_id: int, name: str, current: Object | None, now: str) -> str:
    """The version id (and timestamp) of a write to ``name``, taken under the container
    row's lock: ``now`` (api.timestamp()), or just after the newest version the object
    already has. Version ids order versions, newest current: a timestamp taken before the
    lock lets a slower writer make an older version current, and a clock step back or
    two writes in one 10 µs tick would collide on the versions' unique key."""
    newest = s.scalar(sa.select(sa.func.max(ObjectVersion.version_id)).where(
        ObjectVersion.container_id == container_id, ObjectVersion.name == name))
    if current is not None:
        newest = max(filter(None, (newest, current.version_id, current.timestamp)))
    if newest is None or now > newest:  # fixed-width ids: text order is number order
        return now
    return normalized(str(float(newest) + 0.00001))


def current_row(s, container_id: int, name: str) -> Object | None:
    return s.scalars(sa.select(Object).where(Object.container_id == container_id,
                                             Object.name == name)).first()


def any_version(s, container_id: int) -> bool:
    return s.scalar(sa.select(ObjectVersion.id).where(
        ObjectVersion.container_id == container_id).limit(1)) is not None


def bytes_used(container_id: int) -> int:
    """The bytes of a container's non-current versions (swift adds its hidden versions
    container's to the container's X-Container-Bytes-Used)."""
    with db.reader() as s:
        return int(s.scalar(sa.select(sa.func.coalesce(sa.func.sum(ObjectVersion.size), 0))
                            .where(ObjectVersion.container_id == container_id)))


def bytes_by_container(s, container_ids: list[int]) -> dict[int, int]:
    """Container id -> bytes of its non-current versions (those that have some)."""
    if not container_ids:
        return {}
    return {cid: int(total) for cid, total in s.execute(
        sa.select(ObjectVersion.container_id, sa.func.sum(ObjectVersion.size))
        .where(ObjectVersion.container_id.in_(container_ids))
        .group_by(ObjectVersion.container_id))}


def account_bytes(s, account: str) -> int:
    """The bytes of non-current versions in an account's containers."""
    return int(s.scalar(
        sa.select(sa.func.coalesce(sa.func.sum(ObjectVersion.size), 0))
        .join(Container, Container.id == ObjectVersion.container_id)
        .where(Container.account == account)))


def files(s) -> set[str]:
    return set(s.scalars(sa.select(ObjectVersion.file).where(
        ObjectVersion.file.is_not(None))))


# --- ?versions listings -----------------------------------------------------------------
