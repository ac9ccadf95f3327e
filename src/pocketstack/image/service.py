"""Start-up of the image service inside the cloud process: place the store under the data
dir (unless configured elsewhere) and repair what a crash may have left behind."""
from __future__ import annotations

import logging
import os

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.common.timeutils import utcnow
from pocketstack.image import store
from pocketstack.image.models import Image

LOG = logging.getLogger(__name__)


def start(cloud) -> list:
    conf = config.CONF
    if not conf.image.filesystem_store_datadir:
        conf.set_default("filesystem_store_datadir", os.path.join(cloud.data_dir, "images"),
                         group="image")
    os.makedirs(store.datadir(), mode=0o700, exist_ok=True)
    recover()
    return []


def recover() -> None:
    """Uploads cut short by a crash: drop their temp files, queue their images again;
    remove data whose image is gone (deleted while the process died)."""
    removed = store.clean_temp_files()
    with db.transaction() as s:
        stuck = s.scalars(sa.select(Image).where(Image.status.in_(("saving", "importing")),
                                                 Image.deleted.is_(False))).all()
        for image in stuck:
            image.status, image.size, image.virtual_size = "queued", None, None
            image.updated_at = utcnow()
        on_disk = store.stored_ids()
        live = set(s.scalars(sa.select(Image.id).where(
            Image.id.in_(on_disk), Image.deleted.is_(False),
            Image.status.in_(("active", "deactivated"))))) if on_disk else set()
    for image_id in on_disk - live:
        store.delete(image_id)
    if removed or stuck or on_disk - live:
        LOG.info("Image store recovery: %d temp files removed, %d uploads re-queued, %d "
                 "orphaned data files removed", removed, len(stuck), len(on_disk - live))
