"""Interoperable image import (POST /v2/images/{id}/import), as glance's import flows.

* ``glance-direct``: the staged data becomes the image (data.import_image, synchronous).
* ``web-download``: the image (queued) goes ``importing`` while a background thread fetches
  the URL (webfetch: only what [import_filtering_opts] allows, redirects included) into the
  target store; then ``active``, or back to ``queued`` on failure.
* ``copy-image`` (admin, glance's copy_image policy): an active image's data is copied into
  another enabled store in the background; the image stays active and lists both stores.

Each is recorded as an ``api_image_import`` task (tasks.py). While a background import
runs, the image carries ``os_glance_import_task`` (a second import gets 409, as glance's
import lock), and with several stores ``os_glance_importing_to_stores`` /
``os_glance_failed_import`` as glance sets them, which clients poll.
"""
from __future__ import annotations

import logging
import threading

from pocketstack.common import config, db, exceptions, runtime
from pocketstack.common.timeutils import utcnow
from pocketstack.image import access, data, rbd_store, store, stores, tasks, webfetch
from pocketstack.image.models import Image, ImageProperty

LOG = logging.getLogger(__name__)

ALL_METHODS = ("glance-direct", "web-download", "copy-image")
LOCK = "os_glance_import_task"
IMPORTING = "os_glance_importing_to_stores"
FAILED = "os_glance_failed_import"
READ_SIZE = 4 << 20


def methods() -> list[str]:
    """What /v2/info/import offers: enabled methods that work here (copy-image needs a
    second store)."""
    enabled = config.CONF.image.enabled_import_methods
    return [m for m in ALL_METHODS
            if m in enabled and (m != "copy-image" or stores.multiple())]


def _method(body) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("method"), dict):
        raise exceptions.BadRequest("Import request requires a 'method' field.")
    name = body["method"].get("name")
    if name is None:
        raise exceptions.BadRequest("Import request requires a 'name' field.")
    if name not in methods():
        raise exceptions.BadRequest(f"Unknown import method name '{name}'.")
    for flag in ("all_stores_must_succeed", "all_stores"):
        if not isinstance(body.get(flag, False), bool):
            raise exceptions.BadRequest(f"'{flag}' must be boolean value only")
    if body.get("all_stores_must_succeed") is False and not stores.multiple():
        raise exceptions.BadRequest("All_stores_must_succeed can only be set with "
                                    "enabled_backends")
    return name


def import_image(ctx, image_id: str, body, store_header: str | None = None) -> None:
    method = _method(body)
    if method == "glance-direct":
        _glance_direct(ctx, image_id, body, store_header)
    elif method == "web-download":
        _web_download(ctx, image_id, body, store_header)
    else:
        _copy_image(ctx, image_id, body, store_header)


def _task_input(image_id: str, body: dict, target: str | None) -> dict:
    return {"image_id": image_id, "import_req": body,
            "backend": [target] if target else [None]}


def _glance_direct(ctx, image_id, body, store_header) -> None:
    target = data.import_store(body, store_header)
    task_input = _task_input(image_id, body, target if stores.multiple() else None)
    try:
        data.import_image(ctx, image_id, body, store_header)
    except exceptions.PocketstackError as error:
        if getattr(error, "task_failed", False):  # got past the checks, then failed
            task_id = tasks.create(ctx, image_id, task_input, status="processing")
            tasks.update(task_id, "failure", error.message)
        raise
    task_id = tasks.create(ctx, image_id, task_input, status="processing")
    tasks.update(task_id, "success", result={"image_id": image_id})


def _set(image: Image, name: str, value: str | None) -> None:
    for prop in list(image.properties):
        if prop.name == name:
            if value is None:
                image.properties.remove(prop)
            else:
                prop.value = value
            return
    if value is not None:
        image.properties.append(ImageProperty(name=name, value=value))


def _lock(image: Image, image_id: str) -> None:
    if any(p.name == LOCK for p in image.properties):
        raise exceptions.Conflict(f"New operation on image '{image_id}' is not permitted as "
                                  "prior operation is still in progress")


def _require_formats(image: Image) -> None:
    for name in ("container_format", "disk_format"):
        if not getattr(image, name):
            raise exceptions.Conflict(f"'{name}' needs to be set before import")


def _start(target, *args) -> None:
    threading.Thread(target=runtime.bind(target), args=args, daemon=True,
                     name=f"image-import-{args[0][:8]}").start()


# --- web-download ----------------------------------------------------------------------


def _web_download(ctx, image_id, body, store_header) -> None:
    uri = body["method"].get("uri")
    target = data.import_store(body, store_header)
    several = stores.multiple()
    with db.transaction() as s:
        image = access.load(s, ctx, image_id, lock=True)
        if image.status == "active":
            raise exceptions.Conflict("Image with status active cannot be target for import")
        if image.status != "queued":
            raise exceptions.Conflict("Image needs to be in 'queued' state to use "
                                      "'web-download' method")
        _require_formats(image)
        access.authorize(ctx, "modify_image", image)
        _lock(image, image_id)
        if not webfetch.allowed(uri):
            raise exceptions.BadRequest(f"URI for web-download does not pass filtering: {uri}")
        task_id = tasks.add(s, ctx, image_id, _task_input(image_id, body,
                                                          target if several else None))
        _set(image, LOCK, task_id)
        if several:
            _set(image, IMPORTING, target)
            _set(image, FAILED, "")
        image.status, image.updated_at = "importing", utcnow()
        disk_format = image.disk_format
    _start(_run_web_download, image_id, task_id, uri, target, disk_format)


def _run_web_download(image_id, task_id, uri, target, disk_format) -> None:
    tasks.update(task_id, "processing")
    writer = None
    try:
        response, length = webfetch.open_url(uri)
        try:
            writer = stores.writer(target, image_id, disk_format, length)
            while chunk := response.read(READ_SIZE):
                writer.write(chunk)
        finally:
            response.close()
        _activate_fetched(image_id, task_id, writer, target)
    except Exception as error:  # noqa: BLE001 - any failure ends the task, not the process
        if writer is not None:
            writer.abort()
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        LOG.info("web-download of image %s failed: %s", image_id, message)
        with db.transaction():  # one commit: whoever sees the image queued sees the failure
            _end(image_id, target, failed=True, revert=True)
            tasks.update(task_id, "failure", message)


def _activate_fetched(image_id, task_id, writer, target) -> None:
    dest = store.data_path(image_id)
    written = writer.commit(dest, inspect=True)
    try:
        with db.transaction() as s:
            image = s.get(Image, image_id)
            if image is None or image.deleted or image.status != "importing":
                raise exceptions.Gone(f"Image {image_id} was deleted during the import.")
            data._activate(image, written, writer.store_name, writer.location)
            _clear(image)
            tasks.update(task_id, "success", result={"image_id": image_id})
    except BaseException:
        writer.undo_commit()
        raise


def _clear(image: Image, failed_store: str | None = None) -> None:
    _set(image, LOCK, None)
    if stores.multiple():
        _set(image, IMPORTING, "")
        _set(image, FAILED, failed_store or "")
    image.updated_at = utcnow()


def _end(image_id, target, *, failed: bool, revert: bool) -> None:
    with db.transaction() as s:
        image = s.get(Image, image_id)
        if image is None or image.deleted:
            return
        if revert and image.status == "importing":
            image.status, image.size, image.virtual_size = "queued", None, None
        _clear(image, target if failed else None)


# --- copy-image ------------------------------------------------------------------------


def _copy_image(ctx, image_id, body, store_header) -> None:
    if body.get("all_stores"):
        if "stores" in body or store_header is not None:
            raise exceptions.BadRequest("All_stores parameter can't be used with "
                                        "x-image-meta-store header or stores parameter")
    with db.transaction() as s:
        image = access.load(s, ctx, image_id, lock=True)
        if image.status != "active":
            raise exceptions.Conflict("Only images with status active can be targeted for "
                                      "copying")
        _require_formats(image)
        access.authorize(ctx, "copy_image", image)
        _lock(image, image_id)
        present = set(stores.held_by(image))
        if body.get("all_stores"):
            wanted = [name for name in stores.enabled() if name not in present]
            if not wanted:  # glance: nothing to do, and no task
                return
        else:
            wanted = [data.import_store(body, store_header)]
            if wanted[0] in present:
                raise exceptions.BadRequest(f"Image is already present at store "
                                            f"'{wanted[0]}'")
        task_id = tasks.add(s, ctx, image_id, {"image_id": image_id, "import_req": body,
                                               "backend": wanted})
        _set(image, LOCK, task_id)
        _set(image, IMPORTING, ",".join(wanted))
        _set(image, FAILED, "")
        image.updated_at = utcnow()
        source = stores.store_of(image), stores.url_of(image)
        disk_format = image.disk_format
    _start(_run_copy, image_id, task_id, wanted, source, disk_format)


def _run_copy(image_id, task_id, wanted, source, disk_format) -> None:
    tasks.update(task_id, "processing")
    failed = []
    for target in wanted:
        try:
            _copy_into(image_id, target, source, disk_format)
        except Exception as error:  # noqa: BLE001 - recorded on the task and the image
            message = getattr(error, "message", None) or str(error)
            LOG.info("copy-image of image %s into %s failed: %s", image_id, target, message)
            failed.append((target, message))
    with db.transaction() as s:
        image = s.get(Image, image_id)
        if image is not None and not image.deleted:
            _set(image, LOCK, None)
            _set(image, IMPORTING, "")
            _set(image, FAILED, ",".join(t for t, _ in failed))
            image.updated_at = utcnow()
        if failed:  # in the same commit as the image's properties
            tasks.update(task_id, "failure", "; ".join(f"{t}: {m}" for t, m in failed))
        else:
            tasks.update(task_id, "success", result={"image_id": image_id})


def _copy_into(image_id, target, source, disk_format) -> None:
    held, url = source
    reader = rbd_store.open_reader(url) if held == stores.RBD else store.open_reader(image_id)
    if reader is None:
        raise exceptions.Conflict(f"The data of image {image_id} is missing from its store.")
    writer = None
    try:
        with db.reader() as s:
            size = s.get(Image, image_id).size or 0
        writer = stores.writer(target, image_id, disk_format, size)
        for offset in range(0, size, READ_SIZE):
            writer.write(reader.read_at(min(READ_SIZE, size - offset), offset))
        written = writer.commit(store.data_path(image_id))
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        reader.close()
    try:
        with db.transaction() as s:
            image = s.get(Image, image_id)
            if image is None or image.deleted or image.status not in stores.HAS_DATA:
                raise exceptions.Gone(f"Image {image_id} was deleted during the copy.")
            if written.os_hash_value != image.os_hash_value and \
                    written.os_hash_algo == image.os_hash_algo:
                raise exceptions.Conflict(f"The copy of image {image_id} does not match "
                                          "its checksum.")
            copies = dict(image.copies or {})
            copies[target] = writer.location if target in stores.LOCATED else \
                f"file://{store.data_path(image_id)}"
            image.copies = copies
    except BaseException:
        writer.undo_commit()
        raise
