"""Reads and writes of one object's versions, and version listings, on top of api.py's
container and object rows (the versioning model is described in versions.py): a delete
that leaves a delete marker, a version read, deleted or made current again, and the
``?versions`` listing."""
from __future__ import annotations

import heapq

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.objectstore import api, versions
from pocketstack.objectstore.errors import SwiftError, not_found
from pocketstack.objectstore.models import Object, ObjectVersion


def delete_current(container: api.ContainerInfo, name: str, mode: str) -> tuple:
    """A DELETE without version-id in a versioned container: (file to remove or None,
    the delete marker's version id or None). Enabled: the current version is kept and a
    delete marker written, even when there was no object (then 404 with the marker's id,
    as swift). Suspended: a versioned current object is kept, a "null" one removed."""
    found = True
    marker = None
    with db.transaction() as s:
        api._locked_container(s, container)
        row = versions.current_row(s, container.id, name)
        if row is not None and not versions.alive(row):
            s.delete(row)
            api._count(s, container.id, -1, -row.size)
            row = None
        gone = None
        newest = versions.next_id(s, container.id, name, row, api.timestamp())
        if row is not None:
            if not versions.archive(s, row, mode):
                gone = row.file
            s.delete(row)
            api._count(s, container.id, -1, -row.size)
        else:
            found = False
        if mode == "enabled":
            marker = newest
            s.add(ObjectVersion(container_id=container.id, name=name, version_id=marker,
                                size=0, etag="d41d8cd98f00b204e9800998ecf8427e",
                                content_type=versions.DELETE_MARKER_TYPE, timestamp=marker,
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
        _one_snapshot(s)  # a restore between the two reads would hide the version
        row = versions.current_row(s, container.id, name)
        if row is not None and versions.alive(row) \
                and (row.version_id or versions.NULL) == version_id:
            return api._object_info(row), False
        if version_id == versions.NULL:
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
        row = versions.current_row(s, container.id, name)
        if row is not None and not versions.alive(row):
            row = None
        if row is not None and (row.version_id or versions.NULL) == version_id:
            s.delete(row)
            api._count(s, container.id, -1, -row.size)
            return row.file, versions.NULL
        if version_id == versions.NULL:
            if row is None:
                raise not_found()
            versions.archive(s, row, "enabled")
            s.delete(row)
            api._count(s, container.id, -1, -row.size)
            return None, versions.NULL
        kept = s.scalars(sa.select(ObjectVersion).where(
            ObjectVersion.container_id == container.id, ObjectVersion.name == name,
            ObjectVersion.version_id == version_id)).first()
        if kept is None:
            raise not_found()
        s.delete(kept)
        current = (row.version_id or versions.NULL) if row is not None else versions.NULL
        return kept.file, current


def restore(container: api.ContainerInfo, name: str,
            version_id: str) -> tuple[api.ObjectInfo, str | None]:
    """PUT ?version-id: make that version the current one; (its info, a replaced "null"
    object's file to remove). The version that was current stays a non-current one."""
    with db.transaction() as s:
        api._locked_container(s, container)
        row = versions.current_row(s, container.id, name)
        if row is not None and versions.alive(row) and row.version_id == version_id:
            return api._object_info(row), None
        kept = s.scalars(sa.select(ObjectVersion).where(
            ObjectVersion.container_id == container.id, ObjectVersion.name == name,
            ObjectVersion.version_id == version_id)).first()
        if kept is None or kept.file is None:
            raise SwiftError(404, "The specified version does not exist")
        replaced, objects, delta = None, 1, kept.size
        if row is not None:
            if not versions.archive(s, row, "suspended"):
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
        _one_snapshot(s)
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
                vid = (row.version_id or versions.NULL) if kind == 0 else row.version_id
                # within a name: the "null" version, then newest first
                rank = (0, "") if vid == versions.NULL else (1, _inverted(vid))
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


def _one_snapshot(s) -> None:
    """The two queries of a version read or listing read one snapshot. PostgreSQL's READ
    COMMITTED takes one per statement: an overwrite committed between a listing's two
    showed the old version twice (current in one, kept in the other) and not the new
    one. SQLite's read transaction and MariaDB's REPEATABLE READ already read one."""
    if s.get_bind().dialect.name == "postgresql" and not s.in_transaction():
        s.connection(execution_options={"isolation_level": "REPEATABLE READ"})


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
    if version_marker == versions.NULL:
        return vid != versions.NULL
    return vid != versions.NULL and float(vid) < float(version_marker)
