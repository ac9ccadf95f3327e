"""Object versioning as swift's object_versioning middleware (``X-Versions-Enabled``): the
container flag, ``X-Object-Version-Id`` on writes and reads, ``?version-id=`` on GET, HEAD,
DELETE, PUT (make that version current) and COPY, and ``GET <container>?versions``
listings. The rows live in versions.py; legacy ``X-Versions-Location``/``X-History-Location``
versioning (versioning.py) cannot be combined with it on one container (400, as swift)."""
from __future__ import annotations

import dataclasses
import json

from pocketstack.objectstore import store, version_store, versions
from pocketstack.objectstore.errors import SwiftError, bad_request, not_found
from pocketstack.objectstore.rest import common, versioning

HEADER = "x-versions-enabled"
QUERY = "version-id"


def info() -> dict:
    return {}


# --- containers -------------------------------------------------------------------------


def container_changes(headers, changes: dict) -> None:
    """X-Versions-Enabled of a container PUT/POST into ``changes`` (swift keeps it as
    "True"/"False"; the first True also marks the container versioned for good)."""
    value = headers.get(HEADER)
    if value is None:
        return
    enabled = versions._true(value)
    changes[versions.ENABLED] = "True" if enabled else "False"
    if enabled:
        changes[versions.VERSIONED] = "1"


def check_container(changes: dict, meta: dict) -> None:
    """400 for a container that would have both kinds of versioning."""
    legacy = meta.get(versioning.STACK) or meta.get(versioning.HISTORY)
    if legacy and meta.get(versions.VERSIONED):
        if versions.VERSIONED in changes or versions.ENABLED in changes:
            raise bad_request("Cannot enable object versioning on a container that is "
                              "already using the legacy versioned writes feature.")
        raise bad_request("Cannot use legacy versioned writes (X-Versions-Location, "
                          "X-History-Location) on a container with object versioning.")


HIDDEN = (versions.VERSIONED,)


def container_bytes(container) -> int:
    """What the non-current versions add to X-Container-Bytes-Used."""
    if versions.state(container.meta) is None:
        return 0
    return versions.bytes_used(container.id)


def listing(req, container, headers: dict):
    """``GET <container>?versions``: JSON only (406 otherwise, as swift)."""
    fmt = (req.query.get("format") or "").lower()
    accept = req.headers.get("accept", "")
    if fmt and fmt != "json" or not fmt and accept and not any(
            media.split(";")[0].strip().lower() in ("application/json", "*/*",
                                                    "application/*")
            for media in accept.split(",")):
        raise SwiftError(406)
    params = common.listing_params(req)
    version_marker = req.query.get("version_marker")
    if version_marker is not None:
        if not params["marker"]:
            raise bad_request("version_marker param requires marker")
        if version_marker != versions.NULL:
            if not versions.valid_version(version_marker, allow_null=False):
                raise bad_request("invalid version_marker param")
            version_marker = versions.normalized(version_marker)
    if set(params["delimiter"]) & set("0123456789."):
        raise bad_request("invalid delimiter param")
    entries = version_store.list_versions(
        container, prefix=params["prefix"], delimiter=params["delimiter"],
        marker=params["marker"], version_marker=version_marker, limit=params["limit"],
        reverse=params["reverse"])
    return common.response(200, json.dumps(entries).encode(), headers,
                           content_type=common.FORMATS["json"])


# --- objects ----------------------------------------------------------------------------


def requested(req, container) -> str | None:
    """The request's version-id (normalized), None without one; 400 as swift for a POST,
    a bad id, or a real id on a container never versioned."""
    value = req.query.get(QUERY)
    if not value:
        return None
    if req.method == "POST":
        raise bad_request("POST to a specific version is not allowed")
    if versions.state(container.meta) is None and value != versions.NULL:
        raise bad_request("version-aware operations require that the container is "
                          "versioned")
    if not versions.valid_version(value):
        raise bad_request("Invalid version parameter")
    return versions.normalized(value)


def read(req, container, obj: str, found):
    """The object a GET/HEAD (or a COPY's source) reads: the requested version (404 for
    a delete marker, with its id) or ``found``; with X-Object-Version-Id to show when the
    container is versioned."""
    version_id = requested(req, container)
    if version_id is not None:
        found, marker = version_store.get_version(container, obj, version_id)
        if marker:
            raise SwiftError(404, headers={"X-Object-Version-Id": version_id,
                                           "Content-Type": versions.DELETE_MARKER_TYPE})
        if found is None:
            raise not_found()
    if found is not None and (version_id is not None
                              or versions.state(container.meta) is not None):
        found = dataclasses.replace(found, version_id=found.version_id or versions.NULL)
    return found


def put(req, container, obj: str, declared: int | None):
    """PUT ?version-id: that version becomes the current object (zero-byte body)."""
    version_id = requested(req, container)
    if version_id == versions.NULL:
        raise bad_request("Invalid version parameter")
    if declared:
        raise bad_request("PUT version-id requests require a zero byte body")
    current, replaced = version_store.restore(container, obj, version_id)
    if replaced:
        store.remove(replaced)
    return common.response(201, headers={"Etag": current.etag,
                                         "X-Object-Version-Id": version_id})


def delete(req, container, obj: str):
    """A DELETE in a versioned container (or with ?version-id); None when neither (the
    caller deletes as usual)."""
    version_id = requested(req, container)
    if version_id is not None:
        if versions.state(container.meta) is None:
            return None  # version-id=null where versioning never was: a plain DELETE
        gone, current = version_store.delete_version(container, obj, version_id)
        if gone:
            store.remove(gone)
        return common.response(204, headers={"X-Object-Version-Id": version_id,
                                             "X-Object-Current-Version-Id": current})
    marker = delete_current(container, obj)
    if marker is False:
        return None
    return common.response(204, headers={"X-Object-Version-Id": marker} if marker else {})


def delete_current(container, obj: str):
    """A DELETE without version-id (bulk delete's too): False when the container is not
    versioned (the caller deletes as usual), else the delete marker's id (None while
    versioning is suspended)."""
    mode = versions.state(container.meta)
    if mode is None:
        return False
    gone, marker = version_store.delete_current(container, obj, mode)
    if gone:
        store.remove(gone)
    return marker
