"""Which store holds an image's data, and what glance shows of it.

Three stores: ``file`` (store.py), ``rbd`` (rbd_store.py) and ``swift`` (swift_store.py).
``rbd`` is enabled when it is ``[image] default_store`` or a Ceph cluster is configured,
``swift`` when it is the default; with more than one enabled the cloud
answers as glance with ``enabled_backends = file:file, rbd:rbd`` (``/v2/info/stores``,
``stores`` in image views, a location's ``metadata: {"store": ...}``, the
``X-Image-Meta-Store`` header); with ``file`` alone as a single-store glance. Every image
records its store (``Image.store``), so a cloud that switches ``default_store`` still
serves and deletes the images of the other.
"""
from __future__ import annotations

import threading

from pocketstack.common import ceph, config, exceptions, runtime
from pocketstack.image import rbd_store, store, swift_store
from pocketstack.image.models import Image

FILE, RBD, SWIFT = "file", "rbd", "swift"
DESCRIPTIONS = {FILE: "Image data in the image service's data directory.",
                RBD: "Image data as RBD images in the Ceph cluster.",
                SWIFT: "Image data as objects of the image service's object-store account."}
LOCATED = (RBD, SWIFT)  # stores whose data has a location of its own (not the data dir)
HAS_DATA = ("active", "deactivated")


def default() -> str:
    return config.CONF.image.default_store


def enabled() -> list[str]:
    out = [FILE]
    if default() == RBD or ceph.configured():
        out.append(RBD)
    if default() == SWIFT:
        out.append(SWIFT)
    return out


def multiple() -> bool:
    return len(enabled()) > 1


def pick(requested: str | None) -> str:
    """The store an upload or import goes to (``X-Image-Meta-Store`` or the default)."""
    if requested is None or not multiple():
        return default()
    if requested not in enabled():
        raise exceptions.BadRequest(f"Unknown scheme '{requested}' found in URI")
    return requested


def writer(name: str, image_id: str, disk_format: str | None,
           size_hint: int | None = None) -> store.Writer:
    cls = {RBD: rbd_store.RbdWriter, SWIFT: swift_store.SwiftWriter}.get(name, store.Writer)
    return cls(image_id, disk_format, size_hint=size_hint)


def store_of(image: Image) -> str | None:
    """The store holding the image's data; None if it has none."""
    if image.status not in HAS_DATA:
        return None
    return image.store or FILE


def url_of(image: Image) -> str | None:
    held = store_of(image)
    if held == FILE:
        return f"file://{store.data_path(image.id)}"
    return image.location if held else None


def held_by(image: Image) -> list[str]:
    """Every store holding the image's data: its own first, then its copies."""
    held = store_of(image)
    if held is None:
        return []
    return [held] + [name for name in sorted(image.copies or {}) if name != held]


def _locations(image: Image) -> list[tuple[str, str]]:
    """(store, url) of every copy of the data, the image's own store first."""
    out = []
    for name in held_by(image):
        url = url_of(image) if name == store_of(image) else (image.copies or {}).get(name)
        if url:
            out.append((name, url))
    return out


def open_data(image: Image):
    """A reader (``read_at(length, offset)``, ``close()``) of the image's data; None if
    the data is missing."""
    if store_of(image) == RBD:
        return rbd_store.open_reader(image.location)
    if store_of(image) == SWIFT:
        return swift_store.open_reader(image.location)
    return store.open_reader(image.id)


def delete_before_commit(image: Image) -> None:
    """Remove data whose store can refuse (rbd: clones of its snapshot → 409) while the
    image row is still locked, so a refusal leaves the image as it was."""
    for name, url in _locations(image):
        if name == RBD:
            rbd_store.delete(image.id, url)


def delete_after_commit(image: Image) -> list:
    """What removes data the object store holds, to call once the image row's transaction
    is over (the object store's own writes would wait for it)."""
    return [lambda url=url: swift_store.delete(image.id, url)
            for name, url in _locations(image) if name == SWIFT]


def remove_copy(image: Image, name: str) -> None:
    """DELETE /v2/stores/{store}/{image} (Image API 2.10): drop the data one store holds,
    not the last. If that is the image's own store, a copy takes its place. The caller
    holds the image row locked; file data goes after the commit (``store.delete``)."""
    if image.status != "active":
        raise exceptions.Conflict("It's not allowed to remove image data from store if "
                                  "image status is not 'active'")
    held = held_by(image)
    if len(held) == 1:
        raise exceptions.Forbidden("Cannot delete image data from the only store containing "
                                   "it. Consider deleting the image instead.")
    if name not in held:
        raise exceptions.NotFound(f"Image {image.id} is not stored in store {name}.")
    url = dict(_locations(image)).get(name)
    if name == RBD and url:
        rbd_store.delete(image.id, url)  # 409 while clones exist: nothing changes
    elif name == SWIFT and url:  # after the caller's transaction: see delete_after_commit
        threading.Thread(target=runtime.bind(swift_store.delete), args=(image.id, url),
                         name="image-swift-delete", daemon=True).start()
    copies = dict(image.copies or {})
    if name == store_of(image):
        promoted = sorted(copies)[0]
        image.store = promoted
        image.location = copies.pop(promoted) if promoted in LOCATED else None
        copies.pop(promoted, None)
    else:
        copies.pop(name, None)
    image.copies = copies or None


def decorate(view: dict, image: Image) -> dict:
    """Add ``locations``, ``direct_url`` and ``stores`` to an image view, as glance's
    _format_image does (to whoever may see the image; the options are the gate)."""
    show_all = config.CONF.image.show_multiple_locations
    show_direct = config.CONF.image.show_image_direct_url
    several = multiple()
    if not (show_all or show_direct or several):
        return view
    found = _locations(image)
    locations = [{"url": url, "metadata": {"store": name} if several else {}}
                 for name, url in found]
    if show_all:
        view["locations"] = locations
    if show_direct and locations:
        view["direct_url"] = found[0][1]
    if several and locations:
        view["stores"] = ",".join(name for name, _ in found)
    return view


def info(detail: bool) -> list[dict]:
    """``/v2/info/stores`` (detail: with type and properties, as glance's discovery)."""
    if not multiple():
        raise exceptions.NotFound("Multi backend is not supported at this site.")
    out = []
    for name in enabled():
        entry = {"id": name, "description": DESCRIPTIONS[name]}
        if name == default():
            entry["default"] = "true"
        if detail:
            entry["type"] = name
            entry["properties"] = _properties(name)
            entry["weight"] = 0
        out.append(entry)
    return out


def _properties(name: str) -> dict:
    if name == FILE:
        return {"data_dir": store.datadir(), "chunk_size": 65536, "thin_provisioning": False}
    if name == SWIFT:
        conf = config.CONF.image
        return {"container": conf.swift_store_container,
                "large_object_size": conf.swift_store_large_object_size << 20,
                "large_object_chunk_size": conf.swift_store_large_object_chunk_size << 20}
    try:
        fsid = rbd_store.fsid()
    except ceph.CephUnavailable:
        fsid = None
    return {"chunk_size": config.CONF.image.rbd_store_chunk_size << 20,
            "pool": rbd_store.pool(),
            "thin_provisioning": config.CONF.image.rbd_thin_provisioning, "fsid": fsid}
