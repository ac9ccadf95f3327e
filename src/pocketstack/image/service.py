"""Start-up of the image service inside the cloud process: place the store under the data
dir (unless configured elsewhere) and repair what a crash may have left behind."""
from __future__ import annotations

import datetime as dt
import logging

import sqlalchemy as sa

from pocketstack.common import ceph, db
from pocketstack.common.timeutils import utcnow
from pocketstack.image import cache, rbd_store, store, stores
from pocketstack.image.models import CacheEntry, Image, ImageProperty, Task

LOG = logging.getLogger(__name__)


def start(cloud) -> list:
    store.configure(cloud.data_dir)
    cache.configure(cloud.data_dir)
    if not getattr(cloud, "api_worker", False):  # the main process repairs (workers.py)
        recover()
    return []


def recover() -> None:
    """Repair what a crash left: remove the temp files of uploads that died with their
    process and queue those images again (a stage in progress has no ``staged`` record
    yet); remove data and staged data whose image is gone, and RBD images of the image
    pool that no image holds (unless an upload is writing them)."""
    uploading = store.clean_temp_files()
    leftovers = rbd_leftovers()
    uploading |= {name for name, removable in leftovers.items() if not removable}
    with db.transaction() as s:
        cut = s.scalars(sa.select(Image).where(
            Image.deleted.is_(False), Image.id.not_in(uploading) if uploading else sa.true(),
            sa.or_(Image.status.in_(("saving", "importing")),
                   sa.and_(Image.status == "uploading", Image.staged.is_(None))))).all()
        for image in cut:
            image.status, image.size, image.virtual_size = "queued", None, None
            image.updated_at = utcnow()
        _end_interrupted(s, [image.id for image in cut])
        data = _gone(s, store.stored_ids())
        staged = _gone(s, store.staged_ids(), keep=("uploading",))
    for image_id in data:
        store.delete(image_id, staged=False)
    for image_id in staged:
        store.delete(image_id, data=False)
    removed = _remove_rbd([name for name, removable in leftovers.items() if removable])
    if cut or data or staged or removed:
        LOG.info("Image store recovery: %d cut uploads queued again, %d orphaned data files "
                 "and %d RBD images removed", len(cut), len(data) + len(staged), removed)


def _end_interrupted(s, cut: list[str]) -> None:
    """Imports and prefetches that died with their process: their tasks fail, the images
    lose the import lock (imports.py), the cache queue forgets them."""
    now = utcnow()
    for task in s.scalars(sa.select(Task).where(Task.status.in_(("pending", "processing")))):
        task.status, task.updated_at = "failure", now
        task.message = "The import was interrupted: the image service restarted."
        task.expires_at = now + dt.timedelta(hours=48)
    s.execute(sa.delete(ImageProperty).where(sa.or_(
        ImageProperty.name == "os_glance_import_task",
        sa.and_(ImageProperty.name == "os_glance_importing_to_stores",
                ImageProperty.value != ""))))
    s.execute(sa.delete(CacheEntry).where(CacheEntry.state != "cached"))


def rbd_leftovers(strict: bool = False) -> dict[str, bool]:
    """RBD images of the image pool no image holds, each with whether it may be removed
    (not an upload or import in progress); {} without Ceph (logged when unreachable)."""
    if stores.RBD not in stores.enabled():
        return {}
    with db.reader() as s:
        rows = s.execute(sa.select(Image.id, Image.status, Image.store, Image.copies).where(
            Image.deleted.is_(False),
            Image.status.in_(stores.HAS_DATA + ("saving", "importing")))).all()
    # An rbd copy (copy-image) is owned as much as an image's own RBD image.
    owned = {i for i, status, held, copies in rows if status in stores.HAS_DATA
             and (held == stores.RBD or stores.RBD in (copies or {}))}
    busy = {i for i, status, _, _ in rows if status not in stores.HAS_DATA}
    try:
        return rbd_store.unowned(owned, busy)
    except ceph.CephUnavailable as error:
        if strict:
            raise
        LOG.warning("Image store recovery skipped the rbd store: %s", error)
        return {}


def _remove_rbd(names: list[str]) -> int:
    removed = 0
    for name in names:
        try:
            with rbd_store.ceph_errors(f"removing orphaned RBD image {name}"):
                if rbd_store.remove(rbd_store._ioctx(), name):
                    removed += 1
                else:
                    LOG.warning("Orphaned RBD image %s/%s is in use (clones or watchers); "
                                "kept", rbd_store.pool(), name)
        except ceph.CephUnavailable as error:
            LOG.warning("%s", error)
    return removed


def _gone(s, ids: set[str], keep: tuple[str, ...] | None = None) -> set[str]:
    """Of ``ids``, those whose image no longer exists (or is not in a ``keep`` status)."""
    if not ids:
        return set()
    stmt = sa.select(Image.id).where(Image.id.in_(ids), Image.deleted.is_(False))
    if keep:
        stmt = stmt.where(Image.status.in_(keep))
    return ids - set(s.scalars(stmt))
