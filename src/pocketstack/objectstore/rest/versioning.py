"""Object versioning as swift's legacy versioned_writes: a container with
``X-Versions-Location: <archive>`` (stack mode) keeps each overwritten version in the
archive container as ``<3-hex name length><name>/<timestamp>``, and a DELETE brings the
newest archived version back; with ``X-History-Location`` (history mode) a DELETE also
archives the current version and then removes it. Archived versions are hard links of
the files (files never change once written): no bytes are copied."""
from __future__ import annotations

from pocketstack.objectstore import api, store
from pocketstack.objectstore.errors import SwiftError, bad_request

STACK, HISTORY = "x-versions-location", "x-history-location"


def info() -> dict:
    return {"allowed_flags": ["x-versions-location", "x-history-location"]}


def check_headers(changes: dict, meta_after: dict) -> None:
    """400 when both modes would be set at once."""
    if meta_after.get(STACK) and meta_after.get(HISTORY):
        raise bad_request("Only one of X-Versions-Location or X-History-Location may be "
                          "specified")
    for key in (STACK, HISTORY):
        value = changes.get(key)
        if value and ("/" in value or len(value) > 256):
            raise SwiftError(412, "Container name cannot contain slashes")


def _archive_of(container: api.ContainerInfo) -> tuple[str | None, str | None]:
    if container.meta.get(STACK):
        return container.meta[STACK], "stack"
    if container.meta.get(HISTORY):
        return container.meta[HISTORY], "history"
    return None, None


def prefix(name: str) -> str:
    return "%03x%s/" % (len(name.encode("utf-8")), name)


def _archive(container: api.ContainerInfo, archive: api.ContainerInfo, name: str,
             current: api.ObjectInfo) -> None:
    file_id = store.link(current.file)
    try:
        _, replaced = api.put_object(archive, prefix(name) + current.timestamp,
                                     size=current.size, etag=current.etag,
                                     content_type=current.content_type, meta=current.meta,
                                     delete_at=None, file=file_id)
    except BaseException:
        store.remove(file_id)
        raise
    if replaced:
        store.remove(replaced)


def _archive_container(container: api.ContainerInfo, name: str) -> api.ContainerInfo:
    archive = api.find_container(container.account, name)
    if archive is None:  # swift's versioned_writes answers a missing archive so
        raise SwiftError(412, "The versions container does not exist")
    return archive


def before_write(container: api.ContainerInfo, name: str) -> None:
    """Archive the version a PUT (or COPY) is about to replace."""
    archive_name, _ = _archive_of(container)
    if archive_name is None:
        return
    current = api.get_object(container, name)
    if current is not None:
        _archive(container, _archive_container(container, archive_name), name, current)


def delete(container: api.ContainerInfo, name: str) -> bool:
    """A DELETE in a versioned container; False when it is not versioned (the caller
    deletes as usual)."""
    archive_name, mode = _archive_of(container)
    if archive_name is None:
        return False
    archive = _archive_container(container, archive_name)
    current = api.get_object(container, name)
    if mode == "history":
        if current is None:
            raise SwiftError(404)
        _archive(container, archive, name, current)
        store.remove(api.delete_object(container, name))
        return True
    versions = api.list_objects(archive, prefix=prefix(name), delimiter="", marker="",
                                end_marker="", limit=1, reverse=True)
    if not versions:
        if current is None:
            raise SwiftError(404)
        store.remove(api.delete_object(container, name))
        return True
    latest = api.get_object(archive, versions[0]["name"])
    file_id = store.link(latest.file)
    try:
        _, replaced = api.put_object(container, name, size=latest.size, etag=latest.etag,
                                     content_type=latest.content_type, meta=latest.meta,
                                     delete_at=None, file=file_id)
    except BaseException:
        store.remove(file_id)
        raise
    if replaced:
        store.remove(replaced)
    store.remove(api.delete_object(archive, versions[0]["name"]))
    return True
