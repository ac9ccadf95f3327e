"""Accounts, containers and object rows: what the REST handlers and the expirer call.

Object writes lock their container's row (a no-op on SQLite, whose writers are serialized)
and change its usage in the same transaction, so counts stay exact under concurrent
writers. Functions return plain snapshots (dataclasses), never live ORM rows.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import math
import time

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.objectstore import blobs, sqlite_fast, versions
from pocketstack.objectstore.errors import SwiftError, not_found
from pocketstack.objectstore.models import Account, Blob, Container, Object


def timestamp() -> str:
    """swift's normalized X-Timestamp (seconds, 5 decimals)."""
    return "%016.05f" % time.time()


def http_date(ts: str) -> str:
    """Last-Modified: swift rounds the timestamp up to the second."""
    return email.utils.formatdate(math.ceil(float(ts)), usegmt=True)


def _datetime(ts: str) -> dt.datetime:
    return dt.datetime.fromtimestamp(float(ts), dt.timezone.utc).replace(tzinfo=None)


def listing_time(value: dt.datetime) -> str:
    """Listings' last_modified: no time zone, microseconds."""
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f")


@dataclasses.dataclass
class AccountInfo:
    name: str
    meta: dict
    timestamp: str
    container_count: int
    object_count: int
    bytes_used: int


@dataclasses.dataclass
class ContainerInfo:
    id: int
    account: str
    name: str
    meta: dict
    timestamp: str
    put_timestamp: str
    object_count: int
    bytes_used: int
    last_modified: dt.datetime
    account_meta: dict | None = None  # read with it where that is free (SQLite)


@dataclasses.dataclass
class ObjectInfo:
    name: str
    size: int
    etag: str
    content_type: str
    timestamp: str
    last_modified: dt.datetime
    meta: dict
    delete_at: int | None
    file: str
    version_id: str | None = None  # X-Object-Version-Id (None: "null")


def _container_info(row: Container) -> ContainerInfo:
    return ContainerInfo(row.id, row.account, row.name, dict(row.meta or {}), row.timestamp,
                         row.put_timestamp, row.object_count, row.bytes_used,
                         row.last_modified)


def _object_info(row: Object) -> ObjectInfo:
    return ObjectInfo(row.name, row.size, row.etag, row.content_type, row.timestamp,
                      row.last_modified, dict(row.meta or {}), row.delete_at, row.file,
                      row.version_id)


def _live(now: float | None = None):
    now = int(now if now is not None else time.time())
    return sa.or_(Object.delete_at.is_(None), Object.delete_at > now)


# --- accounts ---------------------------------------------------------------------------


def get_account(account: str) -> AccountInfo:
    with db.reader() as s:
        row = s.get(Account, account)
        count, objects, used = s.execute(
            sa.select(sa.func.count(Container.id),
                      sa.func.coalesce(sa.func.sum(Container.object_count), 0),
                      sa.func.coalesce(sa.func.sum(Container.bytes_used), 0))
            .where(Container.account == account)).one()
        used = int(used) + versions.account_bytes(s, account)
        if row is None:
            return AccountInfo(account, {}, timestamp(), count, int(objects), int(used))
        return AccountInfo(account, dict(row.meta or {}), row.timestamp, count,
                           int(objects), int(used))


def account_meta(account: str) -> dict:
    """An account's metadata alone (one lookup by key, no usage sums)."""
    if sqlite_fast.enabled():
        return sqlite_fast.account_meta(account)
    with db.reader() as s:
        meta = s.scalar(sa.select(Account.meta).where(Account.name == account))
        return dict(meta or {})


def lookup(account: str, container: str, name: str) -> tuple[ContainerInfo | None,
                                                              ObjectInfo | None]:
    """A container and one of its (live) objects in one query (the GET/HEAD path)."""
    if sqlite_fast.enabled():
        return sqlite_fast.lookup(account, container, name, (ContainerInfo, ObjectInfo))
    with db.reader() as s:
        row = s.execute(
            sa.select(Container, Object)
            .outerjoin(Object, sa.and_(Object.container_id == Container.id,
                                       Object.name == name, _live()))
            .where(Container.account == account, Container.name == container)).first()
        if row is None:
            return None, None
        return _container_info(row[0]), (_object_info(row[1]) if row[1] is not None
                                         else None)


def _ensure_account(s, account: str) -> Account:
    row = s.get(Account, account)
    if row is None:
        row = Account(name=account, meta={}, timestamp=timestamp())
        s.add(row)
        try:
            with s.begin_nested():
                s.flush()
        except sa.exc.IntegrityError:
            row = s.get(Account, account)
    return row


def update_account(account: str, changes: dict, check) -> None:
    """Apply metadata ``changes`` (header -> value, "" removes); ``check(merged)`` may
    refuse the result."""
    with db.transaction() as s:
        row = _ensure_account(s, account)
        row.meta = _merged(row.meta, changes)
        check(row.meta)


def _merged(meta: dict | None, changes: dict) -> dict:
    merged = dict(meta or {})
    for key, value in changes.items():
        if value == "":
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


# --- containers -------------------------------------------------------------------------


def get_container(account: str, name: str) -> ContainerInfo:
    if sqlite_fast.enabled():
        found = sqlite_fast.find_container(account, name, ContainerInfo)
        if found is None:
            raise not_found()
        return found
    with db.reader() as s:
        row = s.scalars(sa.select(Container).where(Container.account == account,
                                                   Container.name == name)).first()
        if row is None:
            raise not_found()
        return _container_info(row)


def find_container(account: str, name: str) -> ContainerInfo | None:
    try:
        return get_container(account, name)
    except SwiftError:
        return None


def put_container(account: str, name: str, changes: dict, check) -> bool:
    """Create the container or update its metadata; whether it was created."""
    with db.transaction() as s:
        _ensure_account(s, account)
        row = s.scalars(sa.select(Container).where(Container.account == account,
                                                   Container.name == name)
                        .with_for_update()).first()
        ts = timestamp()
        if row is not None:
            row.meta = _merged(row.meta, changes)
            row.put_timestamp = ts
            check(row.meta)
            return False
        meta = _merged({}, changes)
        check(meta)
        s.add(Container(account=account, name=name, meta=meta, timestamp=ts,
                        put_timestamp=ts, object_count=0, bytes_used=0,
                        last_modified=_datetime(ts)))
        try:
            with s.begin_nested():
                s.flush()
        except sa.exc.IntegrityError:  # created meanwhile by another request
            return False
        return True


def post_container(account: str, name: str, changes: dict, check) -> None:
    with db.transaction() as s:
        row = s.scalars(sa.select(Container).where(Container.account == account,
                                                   Container.name == name)
                        .with_for_update()).first()
        if row is None:
            raise not_found()
        row.meta = _merged(row.meta, changes)
        row.put_timestamp = timestamp()
        check(row.meta)


def delete_container(account: str, name: str) -> list[str]:
    """404 when missing, 409 while it holds objects (expired ones not counted); the files
    of expired objects the expirer had not removed yet."""
    with db.transaction() as s:
        row = s.scalars(sa.select(Container).where(Container.account == account,
                                                   Container.name == name)
                        .with_for_update()).first()
        if row is None:
            raise not_found()
        live = s.scalar(sa.select(Object.id).where(Object.container_id == row.id, _live())
                        .limit(1))
        if live is not None:
            raise SwiftError(409)
        if versions.any_version(s, row.id):
            raise SwiftError(409, "Delete all versions before deleting container.")
        leftover = s.scalars(sa.select(Object.file).where(Object.container_id == row.id)).all()
        s.execute(sa.delete(Object).where(Object.container_id == row.id))
        s.delete(row)
    return leftover


# --- listings ---------------------------------------------------------------------------


def _after(text: str) -> str:
    """The least string greater than every string that starts with ``text``."""
    return text[:-1] + chr(ord(text[-1]) + 1)


FOLD_BATCH = 100  # listing rows read at a time when a delimiter may fold them


def _listing(s, select, column, make, *, prefix, delimiter, marker, end_marker, limit,
             reverse):
    """Swift's listing walk: rows in byte order (or reversed) between the markers and
    under the prefix; with a delimiter, names that go on past it after the prefix are
    folded into one ``subdir`` entry."""
    out: list[dict] = []
    low, low_inclusive = (end_marker, False) if reverse else (marker, False)
    high = marker if reverse else end_marker
    if prefix:
        if not low or low < prefix:
            low, low_inclusive = prefix, True
        upper = _after(prefix)
        if not high or high > upper:
            high = upper
    while len(out) < limit:
        query = select
        if low:
            query = query.where(column >= low if low_inclusive else column > low)
        if high:
            query = query.where(column < high)
        query = query.order_by(column.desc() if reverse else column)
        wanted = limit - len(out)
        if delimiter:
            # Rows stream in small batches: a fold stops reading, so a page of many
            # subdirs never loads the rows each of them stands for.
            query = query.execution_options(yield_per=FOLD_BATCH)
        result = s.execute(query.limit(wanted))
        folded = False
        fetched = 0
        for row in result:
            fetched += 1
            name = row[0].name if hasattr(row[0], "name") else row[0]
            cut = name.find(delimiter, len(prefix)) if delimiter else -1
            if cut >= 0:
                subdir = name[:cut + len(delimiter)]
                if subdir != marker:  # the marker a client pages on: seen already
                    out.append({"subdir": subdir})
                if reverse:
                    high = subdir
                else:
                    low, low_inclusive = _after(subdir), True
                folded = True
                break
            out.append(make(row[0]))
            if reverse:
                high = name
            else:
                low, low_inclusive = name, False
        result.close()
        if not folded and fetched < wanted:
            break
    return out[:limit]


def list_containers(account: str, **params) -> list[dict]:
    """The account's containers; a container's bytes count its non-current versions too
    (swift adds its hidden versions container's)."""
    with db.reader() as s:
        ids: dict[str, int] = {}

        def entry(c: Container) -> dict:
            ids[c.name] = c.id
            return {"name": c.name, "count": c.object_count, "bytes": c.bytes_used,
                    "last_modified": listing_time(c.last_modified)}

        entries = _listing(s, sa.select(Container).where(Container.account == account),
                           Container.name, entry, **params)
        kept = versions.bytes_by_container(s, list(ids.values()))
        for item in entries:
            if "name" in item and kept.get(ids.get(item["name"])):
                item["bytes"] += kept[ids[item["name"]]]
        return entries


# One page of a delimiter listing in one statement (SQLite): a recursive walk over the
# (container_id, name) index that takes the next live name after the last one, or, when
# the last one folds into a subdir, the first name past that subdir (a skip-scan: each
# subdir costs one index seek, however many objects it holds).
_SKIP_SCAN = """
WITH RECURSIVE walk(name) AS (
  SELECT (SELECT o.name FROM objectstore_objects o
          WHERE o.container_id = :cid AND o.name >= :low AND o.name < :high
            AND (o.delete_at IS NULL OR o.delete_at > :now)
          ORDER BY o.name LIMIT 1)
  UNION ALL
  SELECT (SELECT o.name FROM objectstore_objects o
          WHERE o.container_id = :cid
            AND o.name >= CAST(CASE WHEN instr(substr(walk.name, :plen + 1), :delim) > 0
                THEN substr(walk.name, 1, :plen + instr(substr(walk.name, :plen + 1),
                                                        :delim) - 1) || :delim_next
                ELSE walk.name || char(1) END AS BLOB)
            AND o.name < :high
            AND (o.delete_at IS NULL OR o.delete_at > :now)
          ORDER BY o.name LIMIT 1)
  FROM walk WHERE walk.name IS NOT NULL
  LIMIT :limit
)
SELECT walk.name, o.etag, o.last_modified, o.size, o.content_type FROM walk
LEFT JOIN objectstore_objects o ON o.container_id = :cid AND o.name = walk.name
WHERE walk.name IS NOT NULL ORDER BY walk.name
"""
def _skip_scan(s, container: ContainerInfo, *, prefix, delimiter, marker, end_marker,
               limit) -> list[dict]:
    """A forward delimiter listing on SQLite: the walk gives the page's names (an
    object's, or the first of a subdir's), joined to the objects' rows in the same
    statement."""
    # Names hold no NUL and no 0xff byte: name + 0x01 is the least name after it, 0xff
    # is past every name.
    low = marker.encode("utf-8") + b"\x01" if marker else b""
    high = end_marker.encode("utf-8") if end_marker else b"\xff"
    if prefix:
        low = max(low, prefix.encode("utf-8"))
        high = min(high, _after(prefix).encode("utf-8"))
    delim = delimiter.encode("utf-8")
    # Straight to the driver: SQLAlchemy's per-row type processing was most of a page's time
    # (the last_modified text is turned into the listing's form as is).
    rows = s.connection().connection.driver_connection.execute(_SKIP_SCAN, {
        "cid": container.id, "low": low, "high": high, "now": int(time.time()),
        "plen": len(prefix.encode("utf-8")), "delim": delim,
        "delim_next": delim[:-1] + bytes([delim[-1] + 1]),
        "limit": limit + 1}).fetchall()
    out: list[dict] = []
    for raw, etag, modified, size, content_type in rows:
        name = bytes(raw).decode("utf-8")
        cut = name.find(delimiter, len(prefix))
        if cut >= 0:
            subdir = name[:cut + len(delimiter)]
            if subdir != marker:  # the marker a client pages on: seen already
                out.append({"subdir": subdir})
        elif etag is not None:
            out.append({"hash": etag, "last_modified": _listing_text(modified),
                        "bytes": size, "name": name, "content_type": content_type})
    return out[:limit]


def _listing_text(value) -> str:
    """A stored DATETIME ("2026-12-06 20:39:57.111750") as listing_time writes it."""
    if isinstance(value, dt.datetime):
        return listing_time(value)
    text = value.replace(" ", "T")
    return text if "." in text else text + ".000000"


def list_objects(container: ContainerInfo, **params) -> list[dict]:
    with db.reader() as s:
        if params["delimiter"] and not params["reverse"] and params["limit"] and \
                s.get_bind().dialect.name == "sqlite":
            params.pop("reverse")
            return _skip_scan(s, container, **params)
        return _listing(
            s, sa.select(Object).where(Object.container_id == container.id, _live()),
            Object.name,
            lambda o: {"hash": o.etag, "last_modified": listing_time(o.last_modified),
                       "bytes": o.size, "name": o.name, "content_type": o.content_type},
            **params)


# --- objects ----------------------------------------------------------------------------


def get_object(container: ContainerInfo, name: str) -> ObjectInfo | None:
    """The object, None when missing or expired."""
    if sqlite_fast.enabled():
        return sqlite_fast.get_object(container.id, name, ObjectInfo)
    with db.reader() as s:
        row = s.scalars(sa.select(Object).where(Object.container_id == container.id,
                                                Object.name == name, _live())).first()
        return _object_info(row) if row is not None else None


def _locked_container(s, container: ContainerInfo) -> Container:
    row = s.scalars(sa.select(Container).where(Container.id == container.id)
                    .with_for_update()).first()
    if row is None:  # deleted while the bytes were arriving
        raise not_found()
    return row


def _count(s, container_id: int, objects: int, size: int) -> None:
    # No session synchronisation: nothing reads the loaded container row after this, and
    # matching it up costs a good part of a small PUT's time under the write lock.
    s.execute(sa.update(Container).where(Container.id == container_id).values(
        object_count=Container.object_count + objects,
        bytes_used=Container.bytes_used + size, last_modified=_datetime(timestamp()))
        .execution_options(synchronize_session=False))


def put_object(container: ContainerInfo, name: str, *, size: int, etag: str,
               content_type: str, meta: dict, delete_at: int | None, file: str,
               guard=None, quotas: dict | None = None,
               versioning: str | None = None,
               data: bytes | None = None) -> tuple[ObjectInfo, str | None]:
    """Record the object (replacing any); (its info, the replaced file to remove).
    ``guard(old ObjectInfo | None)`` may refuse it (If-None-Match: *); ``quotas``
    ({"bytes", "count", "account_bytes"}: limits or None) are checked here, where the
    usage is exact. ``versioning`` ("enabled", "suspended": the container's
    X-Versions-Enabled) keeps the replaced version as a non-current one (versions.py).
    ``data``: a small object's bytes, kept with the row (``file`` is a blobs.py id)."""
    ts = timestamp()
    if not versioning and sqlite_fast.enabled():
        return sqlite_fast.put_object(
            container.id, name, ts, _datetime(ts),
            {"size": size, "etag": etag, "content_type": content_type, "meta": meta,
             "delete_at": delete_at, "file": file, "data": data}, guard, quotas,
            _check_usage, ObjectInfo)
    with db.transaction() as s:
        row = _locked_container(s, container)
        old = s.scalars(sa.select(Object).where(Object.container_id == container.id,
                                                Object.name == name)).first()
        if guard is not None:
            guard(_object_info(old) if old is not None and _alive(old) else None)
        if versioning:
            ts = versions.next_id(s, container.id, name, old, timestamp())
        replaced = None
        objects, delta = 1, size
        if old is not None:
            replaced, objects, delta = old.file, 0, size - old.size
        if quotas:
            _check_quotas(s, row, quotas, objects, delta)
        if old is not None:
            if versioning and versions.archive(s, old, versioning):
                replaced = None  # its file is a non-current version's now
            s.delete(old)
            s.flush()
        row = Object(container_id=container.id, name=name, size=size, etag=etag,
                     content_type=content_type, timestamp=ts, last_modified=_datetime(ts),
                     meta=meta, delete_at=delete_at, file=file,
                     version_id=ts if versioning == "enabled" else None)
        s.add(row)
        if data is not None:
            s.add(Blob(id=file, data=data, created=time.time()))
        _count(s, container.id, objects, delta)
        s.flush()
        return _object_info(row), replaced


def _check_quotas(s, row: Container, quotas: dict, objects: int, delta: int) -> None:
    exceeded = SwiftError(413, "Upload exceeds quota.")
    if quotas.get("bytes") is not None and delta > 0 and \
            row.bytes_used + delta > quotas["bytes"]:
        raise exceeded
    if quotas.get("count") is not None and objects > 0 and \
            row.object_count + objects > quotas["count"]:
        raise exceeded
    if quotas.get("account_bytes") is not None and delta > 0:
        used = s.scalar(sa.select(sa.func.coalesce(sa.func.sum(Container.bytes_used), 0))
                        .where(Container.account == row.account))
        if int(used) + delta > quotas["account_bytes"]:
            raise exceeded


def _check_usage(usage, quotas: dict, objects: int, delta: int, account_bytes) -> None:
    """_check_quotas on a container's (object_count, bytes_used, account) and a callable
    giving the account's bytes (the SQLite path)."""
    exceeded = SwiftError(413, "Upload exceeds quota.")
    if quotas.get("bytes") is not None and delta > 0 and usage[1] + delta > quotas["bytes"]:
        raise exceeded
    if quotas.get("count") is not None and objects > 0 and \
            usage[0] + objects > quotas["count"]:
        raise exceeded
    if quotas.get("account_bytes") is not None and delta > 0 and \
            int(account_bytes()) + delta > quotas["account_bytes"]:
        raise exceeded


def _alive(row: Object) -> bool:
    return row.delete_at is None or row.delete_at > int(time.time())


# What a POST's new metadata does not replace: an SLO stays an SLO, a DLO a DLO unless
# the POST names another X-Object-Manifest.
KEPT_ON_POST = ("x-static-large-object", "x-object-manifest", "x-symlink-target",
                "x-symlink-target-account", "x-symlink-target-etag")


def post_object(container: ContainerInfo, name: str, *, meta: dict,
                content_type: str | None, delete_at: int | None, keep_delete_at: bool) -> None:
    with db.transaction() as s:
        row = s.scalars(sa.select(Object).where(Object.container_id == container.id,
                                                Object.name == name, _live())
                        .with_for_update()).first()
        if row is None:
            raise not_found()
        kept = {k: v for k, v in (row.meta or {}).items() if k in KEPT_ON_POST}
        row.meta = {**kept, **meta}  # a POST's X-Object-Manifest replaces the kept one
        if content_type:
            row.content_type = content_type
        if not keep_delete_at:
            row.delete_at = delete_at


def delete_object(container: ContainerInfo, name: str) -> str | None:
    """Remove the row (and a small object's blob with it); the file to remove, if any.
    404 when missing (or expired)."""
    with db.transaction() as s:
        _locked_container(s, container)
        row = s.scalars(sa.select(Object).where(Object.container_id == container.id,
                                                Object.name == name)).first()
        if row is None or not _alive(row):
            raise not_found()
        s.delete(row)
        _count(s, container.id, -1, -row.size)
        return blobs.delete_with_rows(s, [row.file])[0]


def expire(now: float, batch: int = 500) -> list[str]:
    """Remove the rows of objects past their X-Delete-At; their files (blobs go in the
    same transaction). As many rows as ``batch`` at most."""
    with db.transaction() as s:
        rows = s.scalars(sa.select(Object).where(Object.delete_at <= int(now))
                         .limit(batch)).all()
        for row in rows:
            s.delete(row)
            _count(s, row.container_id, -1, -row.size)
        return blobs.delete_with_rows(s, [row.file for row in rows])


def all_files() -> set[str]:
    with db.reader() as s:
        return set(s.scalars(sa.select(Object.file))) | versions.files(s)


def list_segments(container: ContainerInfo, prefix: str,
                  limit: int = 10000) -> list[ObjectInfo]:
    """A DLO's segments: the live objects under ``prefix``, in name order."""
    with db.reader() as s:
        query = sa.select(Object).where(Object.container_id == container.id, _live())
        if prefix:
            query = query.where(Object.name >= prefix, Object.name < _after(prefix))
        rows = s.scalars(query.order_by(Object.name).limit(limit)).all()
        return [_object_info(row) for row in rows]
