"""Start-up of the image service inside the cloud process: place the store under the data
dir (unless configured elsewhere) and repair what a crash may have left behind."""
from __future__ import annotations

import logging

import sqlalchemy as sa

from pocketstack.common import ceph, db
from pocketstack.common.timeutils import utcnow
from pocketstack.image import rbd_store, store, stores
from pocketstack.image.models import Image

LOG = logging.getLogger(__name__)


def start(cloud) -> list:
    store.configure(cloud.data_dir)
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


def rbd_leftovers(strict: bool = False) -> dict[str, bool]:
    """RBD images of the image pool no image holds, each with whether it may be removed
    (not an upload or import in progress); {} without Ceph (logged when unreachable)."""
    if stores.RBD not in stores.enabled():
        return {}
    with db.reader() as s:
        rows = s.execute(sa.select(Image.id, Image.status, Image.store).where(
            Image.deleted.is_(False),
            Image.status.in_(stores.HAS_DATA + ("saving", "importing")))).all()
    owned = {i for i, status, held in rows if held == stores.RBD and status in stores.HAS_DATA}
    busy = {i for i, status, _ in rows if status not in stores.HAS_DATA}
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
