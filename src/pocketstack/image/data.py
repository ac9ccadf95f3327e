"""Image data: upload (PUT /file), stage + import (glance-direct), download.

An upload moves the image queued → saving → active. The status change to ``saving`` is
the lock: a second upload at the same time, or one to an active image, is a 409. If the
upload fails for any reason (size cap, client gone, disk error) the temp file is removed
and the image goes back to ``queued`` so it can be retried, as glance v2 does. If the image
was deleted while its data arrived, the data is dropped and the caller gets 410.

Staging (glance-direct) is the same stream into the staging area, queued → uploading;
``import_image`` then moves the staged file into the store: uploading → active (into the
rbd store: uploading → importing while the bytes are copied, outside any transaction).

Data goes to ``[image] default_store`` or the store ``X-Image-Meta-Store`` names
(stores.py); the image records which store holds it.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from typing import Any, AsyncIterator, Iterable

from starlette.concurrency import run_in_threadpool

from pocketstack.common import config, db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.common import image_formats as formats
from pocketstack.image import access, cache, rbd_store, store, stores, swift_store
from pocketstack.image.models import Image

LOG = logging.getLogger(__name__)

# Bytes handed to the writer at a time: large enough that thread hand-offs cost nothing,
# small enough that memory stays flat (Writer.DEPTH + 1 buffers per upload at most).
BUFFER_SIZE = 4 << 20


def _busy_status(staging: bool) -> str:
    return "uploading" if staging else "saving"


def begin(ctx, image_id: str, *, staging: bool = False, store_name: str | None = None,
          size_hint: int | None = None) -> store.Writer:
    """Claim a queued image for an upload and open where its data goes."""
    target = _busy_status(staging)
    where = stores.pick(store_name)
    writer = None
    try:
        with db.transaction() as s:
            image = access.load(s, ctx, image_id, lock=True)
            access.authorize(ctx, "upload_image", image,
                             message=f"Not allowed to upload image data for image {image_id}")
            if image.status != "queued":
                raise exceptions.Conflict(
                    f"Image status transition from {image.status} to {target} is not allowed")
            if not staging:
                _require_formats(image, "saving data")
            # The temp file exists before the status says an upload is running (recovery
            # relies on that).
            writer = store.Writer(image_id, image.disk_format) if staging else \
                stores.writer(where, image_id, image.disk_format, size_hint)
            image.status, image.updated_at = target, utcnow()
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return writer


def _require_formats(image: Image, doing: str) -> None:
    missing = [k for k in ("disk_format", "container_format") if not getattr(image, k)]
    if missing:
        noun = "Property" if len(missing) == 1 else "Properties"
        raise exceptions.BadRequest(f"{noun} {', '.join(missing)} must be set prior to "
                                    f"{doing}.")


def finish(image_id: str, writer: store.Writer, *, staging: bool = False) -> None:
    """Move the complete data into place and record its size and hashes."""
    dest = store.staging_path(image_id) if staging else store.data_path(image_id)
    committed, written = False, None
    try:
        if not writer.commit_in_transaction:
            # Its commit writes through another service's API, whose database writes would
            # wait for this transaction's end (SQLite's one writer): commit first.
            written = writer.commit(dest, inspect=not staging)
            committed = True
        with db.transaction() as s:
            image = s.get(Image, image_id)
            if image is None or image.deleted or image.status != _busy_status(staging):
                raise exceptions.Gone(f"Image {image_id} could not be found after upload. The "
                                      "image may have been deleted during the upload.")
            if written is None:
                # Staged data is inspected when it is imported (its format may be set later).
                written = writer.commit(dest, inspect=not staging)
                committed = True
            if staging:
                image.staged = dataclasses.asdict(written)
                image.size = written.size
            else:
                _activate(image, written, writer.store_name, writer.location)
    except BaseException:
        if committed:
            writer.undo_commit()
        raise


def _activate(image: Image, written: store.Written, store_name: str = stores.FILE,
              location: str | None = None) -> None:
    image.store, image.location = store_name, location
    image.size, image.virtual_size = written.size, written.virtual_size
    image.checksum = written.checksum
    image.os_hash_algo, image.os_hash_value = written.os_hash_algo, written.os_hash_value
    image.status, image.updated_at = "active", utcnow()


def abort(image_id: str, writer: store.Writer, *, staging: bool = False) -> None:
    """Drop a failed upload's data and put the image back to queued."""
    writer.abort()
    with db.transaction() as s:
        image = s.get(Image, image_id)
        if image is not None and not image.deleted and image.status == _busy_status(staging):
            image.status, image.size, image.virtual_size = "queued", None, None
            image.staged, image.updated_at = None, utcnow()


async def upload_stream(ctx, image_id: str, chunks: AsyncIterator[bytes], *,
                        staging: bool = False, store_name: str | None = None,
                        size_hint: int | None = None) -> None:
    """Stream an upload from the event loop: the loop gathers the next buffer while the
    writer's threads hash and write the previous ones."""
    writer = await run_in_threadpool(begin, ctx, image_id, staging=staging,
                                     store_name=store_name, size_hint=size_hint)
    try:
        parts, buffered, received = [], 0, 0
        async for chunk in chunks:
            received += len(chunk)
            writer.check_total(received)
            parts.append(chunk)
            buffered += len(chunk)
            if buffered >= BUFFER_SIZE:
                while writer.full:
                    for future in writer.oldest():
                        await asyncio.wrap_future(future)
                writer.submit(b"".join(parts))
                parts, buffered = [], 0
        if parts:
            writer.submit(b"".join(parts))
        await run_in_threadpool(finish, image_id, writer, staging=staging)
    except BaseException:
        # Not cancellable: the clean-up finishes even if this request is cancelled.
        await run_in_threadpool(abort, image_id, writer, staging=staging)
        raise


def upload_iterable(ctx, image_id: str, chunks: Iterable[bytes]) -> None:
    """The blocking variant, for in-process callers (register_image)."""
    writer = begin(ctx, image_id)
    try:
        for chunk in chunks:
            if chunk:
                writer.write(chunk)
        finish(image_id, writer)
    except BaseException:
        abort(image_id, writer)
        raise


def _task_failed(error: exceptions.PocketstackError) -> exceptions.PocketstackError:
    error.task_failed = True  # past the request's checks: imports.py records a failed task
    return error


def import_image(ctx, image_id: str, body: Any, store_header: str | None = None) -> None:
    """glance-direct (imports.py checked the request): the staged data becomes the image."""
    method = "glance-direct"
    target = import_store(body, store_header)
    staged, dest = store.staging_path(image_id), store.data_path(image_id)
    moved = lost = False
    refused = None
    try:
        with db.transaction() as s:
            image = access.load(s, ctx, image_id, lock=True)
            access.authorize(ctx, "upload_image", image)
            _require_formats(image, "importing data")
            if image.status != "uploading" or not image.staged:
                raise exceptions.Conflict(
                    f"Image needs to be staged before '{method}' method can be used")
            try:
                refused = _format_problem(image.disk_format, staged)
                if refused:  # as glance: the data is dropped, the image queued again
                    os.unlink(staged)
                    image.status, image.size, image.updated_at = "queued", None, utcnow()
                elif target in stores.LOCATED:  # copied below, outside the transaction
                    os.stat(staged)
                    image.status, image.updated_at = "importing", utcnow()
                else:
                    os.replace(staged, dest)
                    moved = True
                    _activate(image, store.Written(**image.staged))
            except FileNotFoundError:
                lost = True  # the staging area was cleaned under us: stage again
                image.status, image.size, image.updated_at = "queued", None, utcnow()
            if image.status != "importing":
                image.staged = None
    except BaseException:
        if moved:
            os.replace(dest, staged)
        raise
    if refused:
        raise _task_failed(exceptions.BadRequest(refused))
    if lost:
        raise _task_failed(exceptions.Conflict(
            f"The staged data of image {image_id} is missing; the image is queued again, "
            "stage its data again."))
    if target in stores.LOCATED:
        _import_into(target, image_id, staged)


def import_store(body: Any, header: str | None) -> str:
    """glance's get_stores_from_request, for one store per image."""
    if not stores.multiple():
        return stores.default()
    if body.get("all_stores"):
        if "stores" in body or header is not None:
            raise exceptions.BadRequest("All_stores parameter can't be used with "
                                        "x-image-meta-store header or stores parameter")
        raise exceptions.BadRequest("Importing into several stores is not supported: an "
                                    "image is held by one store.")
    if "stores" in body:
        if header is not None:
            raise exceptions.BadRequest("Stores parameter and x-image-meta-store header "
                                        "can't be both specified")
        wanted = body["stores"]
        if not isinstance(wanted, list) or len(wanted) != 1 \
                or not isinstance(wanted[0], str):
            raise exceptions.BadRequest("'stores' must name exactly one store.")
        header = wanted[0]
    if header is not None and header not in stores.enabled():
        raise exceptions.Conflict(f"Unknown scheme '{header}' found in URI")
    return stores.pick(header)


def _import_into(target: str, image_id: str, staged: str) -> None:
    """Copy the staged data into an RBD image or the swift store, then activate
    (importing → active); on failure the image is staged again (uploading), its data kept
    for another import."""
    module = rbd_store if target == stores.RBD else swift_store
    try:
        url = module.import_file(image_id, staged)
    except BaseException:
        with db.transaction() as s:
            image = s.get(Image, image_id)
            if image is not None and not image.deleted and image.status == "importing":
                image.status, image.updated_at = "uploading", utcnow()
        raise
    try:
        with db.transaction() as s:
            image = s.get(Image, image_id)
            if image is None or image.deleted or image.status != "importing":
                raise exceptions.Gone(f"Image {image_id} could not be found after import. "
                                      "The image may have been deleted during the import.")
            _activate(image, store.Written(**image.staged), target, url)
            image.staged = None
    except BaseException:
        module.delete(image_id, url)
        raise
    with contextlib.suppress(FileNotFoundError):
        os.unlink(staged)


def _format_problem(disk_format: str | None, path: str) -> str | None:
    if not config.CONF.image.require_image_format_match:
        return None
    return formats.problem(disk_format, path)


@dataclasses.dataclass
class Download:
    reader: Any  # read_at(length, offset), close(): store.FileReader, rbd_store.Reader
    size: int
    checksum: str | None


def open_download(ctx, image_id: str) -> Download | None:
    """A reader of the data of an image the caller may download; None if it has no data."""
    with db.reader() as s:
        image = access.load(s, ctx, image_id)
        if image.status == "deactivated" and not ctx.is_admin:
            raise exceptions.Forbidden("The requested image has been deactivated. Image data "
                                       "download is forbidden.")
        access.authorize(ctx, "download_image", image)
        if image.status not in ("active", "deactivated"):
            return None
        size, checksum = image.size, image.checksum
        # Opened now: a delete from here on unlinks the file's name, not what we stream.
        cached = cache.open_cached(image_id)
        reader = cached or stores.open_data(image)
    if cached is not None:
        cache.count_hit(image_id)
    if reader is None:
        LOG.warning("Image %s is %s but its data is missing", image_id, image.status)
    return Download(reader, size, checksum) if reader is not None else None
