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

import heapq
import time

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.objectstore import api
from pocketstack.objectstore.errors import SwiftError, not_found
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


def _alive(row) -> bool:
    return row.delete_at is None or row.delete_at > int(time.time())


def archive(s, old: Object, mode: str) -> bool:
    """Keep the current row ``old`` (about to be replaced or deleted) as a non-current
    version; False when it is not kept (expired, or a "null" version while suspended:
    swift overwrites those)."""
    if not _alive(old) or (mode == "suspended" and old.version_id is None):
        return False
    s.add(ObjectVersion(container_id=old.container_id, name=old.name,
                        version_id=old.version_id or old.timestamp, size=old.size,
                        etag=old.etag, content_type=old.content_type,
                        timestamp=old.timestamp, last_modified=old.last_modified,
                        meta=dict(old.meta or {}), file=old.file))
    return True


def _current(s, container_id: int, name: str) -> Object | None:
    return s.scalars(sa.select(Object).where(Object.container_id == container_id,
                                             Object.name == name)).first()


def delete_current(container: api.ContainerInfo, name: str, mode: str) -> tuple:
    """A DELETE without version-id in a versioned container: (file to remove or None,
    the delete marker's version id or None). Enabled: the current version is kept and a
    delete marker written, even when there was no object (then 404 with the marker's id,
    as swift). Suspended: a versioned current object is kept, a "null" one removed."""
    found = True
    marker = None
    with db.transaction() as s:
        api._locked_container(s, container)
        row = _current(s, container.id, name)
        if row is not None and not _alive(row):
            s.delete(row)
            api._count(s, container.id, -1, -row.size)
            row = None
        gone = None
        if row is not None:
            if not archive(s, row, mode):
                gone = row.file
            s.delete(row)
            api._count(s, container.id, -1, -row.size)
        else:
            found = False
        if mode == "enabled":
            marker = api.timestamp()
            s.add(ObjectVersion(container_id=container.id, name=name, version_id=marker,
                                size=0, etag="d41d8cd98f00b204e9800998ecf8427e",
                                content_type=DELETE_MARKER_TYPE, timestamp=marker,
                                last_modified=api._datetime(marker), meta={}, file=None))
        elif not found:
            raise not_found()
    if not found:
        raise SwiftError(404, headers={"X-Object-Version-Id": marker})
    return gone, marker


def _as_info(row: ObjectVersion) -> api.ObjectInfo:
    return api.ObjectInfo(row.name, row.size, row.etag, row.content_type, row.timestamp,
                          row.last_modified, dict(row.meta or {}), None, row.file or "",
                          row.version_id)


def get_version(container: api.ContainerInfo, name: str,
                version_id: str) -> tuple[api.ObjectInfo | None, bool]:
    """(the version, whether it is a delete marker); (None, False) when there is none.
    "null": the current object when it has no version id."""
    with db.reader() as s:
        row = _current(s, container.id, name)
        if row is not None and _alive(row) and (row.version_id or NULL) == version_id:
            return api._object_info(row), False
        if version_id == NULL:
            return None, False
        kept = s.scalars(sa.select(ObjectVersion).where(
            ObjectVersion.container_id == container.id, ObjectVersion.name == name,
            ObjectVersion.version_id == version_id)).first()
        if kept is None:
            return None, False
        return _as_info(kept), kept.file is None


def delete_version(container: api.ContainerInfo, name: str,
                   version_id: str) -> tuple[str | None, str]:
    """DELETE ?version-id: (file to remove or None, the current version id afterwards).
    The current version's id removes it with its bytes (no other version becomes
    current, as swift); "null" removes a current object without one (a versioned current
    object is kept as a non-current version: swift removes only its link)."""
    with db.transaction() as s:
        api._locked_container(s, container)
        row = _current(s, container.id, name)
        if row is not None and not _alive(row):
            row = None
        if row is not None and (row.version_id or NULL) == version_id:
            s.delete(row)
            api._count(s, container.id, -1, -row.size)
            return row.file, NULL
        if version_id == NULL:
            if row is None:
                raise not_found()
            archive(s, row, "enabled")
            s.delete(row)
            api._count(s, container.id, -1, -row.size)
            return None, NULL
        kept = s.scalars(sa.select(ObjectVersion).where(
            ObjectVersion.container_id == container.id, ObjectVersion.name == name,
            ObjectVersion.version_id == version_id)).first()
        if kept is None:
            raise not_found()
        s.delete(kept)
        current = (row.version_id or NULL) if row is not None else NULL
        return kept.file, current


def restore(container: api.ContainerInfo, name: str,
            version_id: str) -> tuple[api.ObjectInfo, str | None]:
    """PUT ?version-id: make that version the current one; (its info, a replaced "null"
    object's file to remove). The version that was current stays a non-current one."""
    with db.transaction() as s:
        api._locked_container(s, container)
        row = _current(s, container.id, name)
        if row is not None and _alive(row) and row.version_id == version_id:
            return api._object_info(row), None
        kept = s.scalars(sa.select(ObjectVersion).where(
            ObjectVersion.container_id == container.id, ObjectVersion.name == name,
            ObjectVersion.version_id == version_id)).first()
        if kept is None or kept.file is None:
            raise SwiftError(404, "The specified version does not exist")
        replaced, objects, delta = None, 1, kept.size
        if row is not None:
            if not archive(s, row, "suspended"):
                replaced = row.file
            objects, delta = 0, kept.size - row.size
            s.delete(row)
        s.delete(kept)
        s.flush()
        new = Object(container_id=container.id, name=name, size=kept.size, etag=kept.etag,
                     content_type=kept.content_type, timestamp=kept.timestamp,
                     last_modified=kept.last_modified, meta=dict(kept.meta or {}),
                     delete_at=None, file=kept.file, version_id=kept.version_id)
        s.add(new)
        api._count(s, container.id, objects, delta)
        s.flush()
        return api._object_info(new), replaced


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


def _entry(name, etag, size, content_type, last_modified, version_id, is_latest) -> dict:
    return {"name": name, "hash": etag, "bytes": size, "content_type": content_type,
            "last_modified": api.listing_time(last_modified), "version_id": version_id,
            "is_latest": is_latest}


def list_versions(container: api.ContainerInfo, *, prefix: str, delimiter: str,
                  marker: str, version_marker: str | None, limit: int,
                  reverse: bool) -> list[dict]:
    """Every version of every object, as swift's ``GET <container>?versions``: by name,
    then the "null" version, then newest first; ``is_latest`` on each object's current
    version (or on its newest delete marker when it has none). ``marker`` with
    ``version_marker`` continues after that version of that object."""
    with db.reader() as s:
        current_q = sa.select(Object).where(Object.container_id == container.id,
                                            api._live())
        kept_q = sa.select(ObjectVersion).where(ObjectVersion.container_id == container.id)
        if prefix:
            current_q = current_q.where(Object.name >= prefix,
                                        Object.name < api._after(prefix))
            kept_q = kept_q.where(ObjectVersion.name >= prefix,
                                  ObjectVersion.name < api._after(prefix))
        if marker and not reverse:
            current_q = current_q.where(Object.name >= marker)
            kept_q = kept_q.where(ObjectVersion.name >= marker)
        elif marker:
            current_q = current_q.where(Object.name <= marker)
            kept_q = kept_q.where(ObjectVersion.name <= marker)
        order = (sa.desc if reverse else sa.asc)
        current_rows = s.execute(current_q.order_by(order(Object.name))
                                 .execution_options(yield_per=200)).scalars()
        kept_rows = s.execute(kept_q.order_by(order(ObjectVersion.name),
                                              ObjectVersion.version_id.desc())
                              .execution_options(yield_per=200)).scalars()

        def keyed(rows, kind):
            for row in rows:
                vid = (row.version_id or NULL) if kind == 0 else row.version_id
                # within a name: the "null" version, then newest first
                rank = (0, "") if vid == NULL else (1, _inverted(vid))
                yield (_sort_name(row.name, reverse), rank, kind), row, vid

        merged = heapq.merge(keyed(current_rows, 0), keyed(kept_rows, 1),
                             key=lambda item: item[0])
        out: list[dict] = []
        group: list = []
        last_subdir = None

        def flush() -> None:
            has_current = any(kind == 0 for (_, _, kind), _, _ in group)
            latest_taken = False
            for (_, _, kind), row, vid in group:
                if kind == 0:
                    latest = True
                else:
                    latest = (not has_current and not latest_taken and row.file is None)
                latest_taken = latest_taken or latest
                if _after_marker(row.name, vid, marker, version_marker, reverse):
                    out.append(_entry(row.name, row.etag, row.size, row.content_type,
                                      row.last_modified, vid, latest))
            group.clear()

        for item in merged:
            row = item[1]
            if delimiter:
                cut = row.name.find(delimiter, len(prefix))
                if cut >= 0:
                    subdir = row.name[:cut + len(delimiter)]
                    if subdir != last_subdir and (not marker or (
                            subdir > marker if not reverse else subdir < marker)):
                        if group:
                            flush()
                        if len(out) >= limit:
                            break
                        out.append({"subdir": subdir})
                    last_subdir = subdir
                    continue
            if group and group[0][1].name != row.name:
                flush()
                if len(out) >= limit:
                    break
            group.append(item)
        else:
            if group:
                flush()
        current_rows.close()
        kept_rows.close()
        return out[:limit]


def _sort_name(name: str, reverse: bool):
    raw = name.encode("utf-8")
    return bytes(255 - b for b in raw) + b"\xff" if reverse else raw


def _inverted(version_id: str) -> str:
    """Sorts newest first: swift's ~Timestamp."""
    return "%016.05f" % (9999999999.99999 - float(version_id))


def _after_marker(name: str, vid: str, marker: str, version_marker: str | None,
                  reverse: bool) -> bool:
    if not marker:
        return True
    if name != marker:
        return name > marker if not reverse else name < marker
    if version_marker is None:
        return False  # past all versions of the marker's object
    if version_marker == NULL:
        return vid != NULL
    return vid != NULL and float(vid) < float(version_marker)
