"""The image cache API (/v2/cache, Image API 2.14-2.18): local copies of image data on the
API host, as glance's image cache on each glance-api node.

What it caches, honestly: the data of active images, in ``[image] image_cache_dir``
(default ``<data dir>/image-cache``), one file per image. For an image in the rbd store
that is a real local copy (downloads then read the local disk, not Ceph); for an image in
the file store it is a hard link to the stored file (no second copy; the cache then only
records hits). Downloads (GET /v2/images/{id}/file) are served from the cache when the
image is cached, and count a hit. Unlike glance's cache middleware, a download does not
cache an image by itself: only PUT /v2/cache/{id} queues one (its prefetch starts at once
on a background thread, as glance's cache worker). The compute hosts' own image caches
(``<instances path>/_base``) are not part of this API.

State lives in the database (``image_cache``; several API processes on the host share
it, as glance's centralized_db driver); a deleted image leaves the cache with it.
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy, runtime
from pocketstack.image import access, stores
from pocketstack.image.models import CacheEntry, Image

LOG = logging.getLogger(__name__)
CHUNK = 4 << 20


def configure(data_dir: str) -> None:
    config.CONF.set_default("image_cache_dir", os.path.join(data_dir, "image-cache"),
                            group="image")


def _dir() -> str:
    path = config.CONF.image.image_cache_dir
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def path_of(image_id: str) -> str:
    return os.path.join(_dir(), image_id)


def enforce(ctx, rule: str, image: Image | None = None) -> None:
    """Policy first, then 404 when the cache is off (glance's _enforce)."""
    target = access.target(ctx, image) if image is not None else \
        {"project_id": ctx.project_id or ""}
    policy.authorize(ctx, f"image:{rule}", target)
    if not config.CONF.image.image_cache_enabled:
        raise exceptions.NotFound("Caching via API is not supported at this site.")


def state(ctx) -> dict:
    enforce(ctx, "cache_list")
    with db.reader() as s:
        rows = s.scalars(sa.select(CacheEntry).order_by(CacheEntry.created_at)).all()
        cached = [{"image_id": e.image_id, "hits": e.hits, "last_accessed": e.last_accessed,
                   "last_modified": e.last_modified, "size": e.size}
                  for e in rows if e.state == "cached"]
        queued = [e.image_id for e in rows if e.state != "cached"]
    return {"cached_images": cached, "queued_images": queued}


def queue(ctx, image_id: str) -> None:
    with db.transaction() as s:
        try:
            image = access.load(s, ctx, image_id)
        except exceptions.NotFound:
            raise exceptions.NotFound(f"Image {image_id} not found.") from None
        enforce(ctx, "cache_image", image)
        if image.status != "active":
            raise exceptions.BadRequest("Only images with status active can be targeted "
                                        "for queueing")
        if s.get(CacheEntry, image_id) is not None:
            return  # queued or cached already
        s.add(CacheEntry(image_id=image_id, state="queued", size=0, hits=0))
    threading.Thread(target=runtime.bind(prefetch), args=(image_id,), daemon=True,
                     name=f"image-cache-{image_id[:8]}").start()


def prefetch(image_id: str) -> None:
    """Copy (or link) one queued image's data into the cache."""
    with db.transaction() as s:
        entry = s.get(CacheEntry, image_id, with_for_update=True)
        image = s.get(Image, image_id)
        if entry is None or entry.state != "queued":
            return
        if image is None or image.deleted or image.status != "active":
            s.delete(entry)
            return
        entry.state = "caching"
        held, size = stores.store_of(image), image.size or 0
        reader = stores.open_data(image) if held != stores.FILE else None
        source = stores.store.data_path(image_id) if held == stores.FILE else None
    dest = path_of(image_id)
    tmp = f"{dest}.{uuid.uuid4().hex}.tmp"
    try:
        if source is not None:
            try:
                os.link(source, tmp)
            except OSError:  # another file system: copy
                _copy_file(source, tmp)
        else:
            if reader is None:
                raise FileNotFoundError(f"data of image {image_id}")
            with open(tmp, "xb") as out:
                for offset in range(0, size, CHUNK):
                    out.write(reader.read_at(min(CHUNK, size - offset), offset))
        os.replace(tmp, dest)
    except Exception as error:  # noqa: BLE001 - an image that cannot be cached is dropped
        LOG.warning("Caching image %s failed: %s", image_id, error)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _drop(image_id)
        return
    finally:
        if reader is not None:
            reader.close()
    now = time.time()
    with db.transaction() as s:
        entry = s.get(CacheEntry, image_id, with_for_update=True)
        if entry is None or entry.state != "caching":  # deleted meanwhile
            with contextlib.suppress(FileNotFoundError):
                os.unlink(dest)
            return
        entry.state, entry.size = "cached", os.path.getsize(dest)
        entry.last_modified = entry.last_accessed = now


def _copy_file(source: str, dest: str) -> None:
    with open(source, "rb") as src, open(dest, "xb") as out:
        while chunk := src.read(CHUNK):
            out.write(chunk)


def _drop(image_id: str) -> bool:
    with db.transaction() as s:
        entry = s.get(CacheEntry, image_id)
        if entry is not None:
            s.delete(entry)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path_of(image_id))
    return entry is not None


def delete(ctx, image_id: str) -> None:
    """DELETE /v2/cache/{id}: out of the cache and the queue."""
    image = None
    with db.reader() as s:
        try:
            image = access.load(s, ctx, image_id)
        except exceptions.NotFound:
            if s.get(CacheEntry, image_id) is None:
                raise exceptions.NotFound(f"Image {image_id} not found.") from None
        enforce(ctx, "cache_delete", image)
    _drop(image_id)


def clear(ctx, target: str) -> dict:
    enforce(ctx, "cache_delete")
    target = target.lower()
    if target not in ("", "cache", "queue"):
        raise exceptions.BadRequest("If provided 'x-image-cache-clear-target' must be "
                                    "'cache', 'queue' or empty string.")
    with db.reader() as s:
        rows = s.execute(sa.select(CacheEntry.image_id, CacheEntry.state)).all()
    cached = [i for i, st in rows if st == "cached"]
    queued = [i for i, st in rows if st != "cached"]
    out = {}
    if target in ("", "cache"):
        out["cache_deleted"] = sum(_drop(i) for i in cached)
    if target in ("", "queue"):
        out["queue_deleted"] = sum(_drop(i) for i in queued)
    return out


def clean(ctx) -> None:
    """POST /v2/cache/clean (2.18): drop entries whose file is gone or whose image is no
    longer active, and files no entry owns (an interrupted prefetch)."""
    enforce(ctx, "cache_clean")
    with db.reader() as s:
        rows = s.execute(sa.select(CacheEntry.image_id, CacheEntry.state, Image.status,
                                   Image.deleted)
                         .join(Image, Image.id == CacheEntry.image_id, isouter=True)).all()
    known = {}
    for image_id, st, status, deleted in rows:
        known[image_id] = st
        gone = st == "cached" and not os.path.exists(path_of(image_id))
        if gone or status != "active" or deleted:
            _drop(image_id)
            known.pop(image_id)
    for name in os.listdir(_dir()):
        owner = known.get(name.split(".")[0])
        # a prefetch in progress keeps its temp file; anything else unowned goes
        if owner is None or (name.endswith(".tmp") and owner != "caching"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(_dir(), name))


def prune(ctx) -> dict:
    """POST /v2/cache/prune (2.18): least recently used first, down to
    [image] image_cache_max_size."""
    enforce(ctx, "cache_prune")
    with db.reader() as s:
        rows = s.execute(sa.select(CacheEntry.image_id, CacheEntry.size)
                         .where(CacheEntry.state == "cached")
                         .order_by(CacheEntry.last_accessed)).all()
    total = sum(size for _, size in rows)
    files = pruned = 0
    for image_id, size in rows:
        if total <= config.CONF.image.image_cache_max_size:
            break
        if _drop(image_id):
            total -= size
            files, pruned = files + 1, pruned + size
    return {"total_files_pruned": files, "total_bytes_pruned": pruned}


def nodes(ctx, image_id: str, self_url: str) -> list[str]:
    """GET /v2/cache/nodes/{id}: this API host, if it has the image cached."""
    enforce(ctx, "list_cached_nodes")
    with db.reader() as s:
        try:
            access.load(s, ctx, image_id)
        except exceptions.NotFound:
            raise exceptions.NotFound(f"Image {image_id} not found.") from None
        entry = s.get(CacheEntry, image_id)
    return [self_url] if entry is not None and entry.state == "cached" else []


def open_cached(image_id: str):
    """A reader of the cached copy, or None. The file appears (by rename) only once it is
    complete, so its presence is enough; the hit is counted by ``count_hit``."""
    if not config.CONF.image.image_cache_enabled or not config.CONF.image.image_cache_dir:
        return None
    try:
        return stores.store.FileReader(path_of(image_id))
    except FileNotFoundError:
        return None


def count_hit(image_id: str) -> None:
    with db.transaction() as s:
        s.execute(sa.update(CacheEntry).where(CacheEntry.image_id == image_id)
                  .values(hits=CacheEntry.hits + 1, last_accessed=time.time()))


def forget(image_id: str) -> None:
    """An image was deleted: its cached copy goes too."""
    if config.CONF.image.image_cache_dir:
        _drop(image_id)
