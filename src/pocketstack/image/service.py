"""Start-up of the image service inside the cloud process: place the store under the data
dir (unless configured elsewhere) and repair what a crash may have left behind."""
from __future__ import annotations

import logging

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.image import store
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
    yet); remove data and staged data whose image is gone."""
    uploading = store.clean_temp_files()
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
    if cut or data or staged:
        LOG.info("Image store recovery: %d cut uploads queued again, %d orphaned data files "
                 "removed", len(cut), len(data) + len(staged))


def _gone(s, ids: set[str], keep: tuple[str, ...] | None = None) -> set[str]:
    """Of ``ids``, those whose image no longer exists (or is not in a ``keep`` status)."""
    if not ids:
        return set()
    stmt = sa.select(Image.id).where(Image.id.in_(ids), Image.deleted.is_(False))
    if keep:
        stmt = stmt.where(Image.status.in_(keep))
    return ids - set(s.scalars(stmt))
