"""Symlinks as swift's symlink middleware: a zero-byte object PUT with ``X-Symlink-Target:
<container>/<object>`` (and optionally ``X-Symlink-Target-Account``) points at another
object; GET and HEAD follow it (``Content-Location`` names the target; a missing target
is 404, more than ``SYMLOOP_MAX`` links in a row 409), ``?symlink=get`` shows the link
itself, COPY copies the target unless ``?symlink=get``, DELETE removes the link. With
``X-Symlink-Target-Etag`` the link is static: its target must exist with that ETag (409
otherwise) and a GET checks it again. The target is kept in the object's metadata, which
a POST keeps (api.KEPT_ON_POST)."""
from __future__ import annotations

import urllib.parse

from pocketstack.objectstore.errors import SwiftError, bad_request, not_found

TARGET = "x-symlink-target"
TARGET_ACCOUNT = "x-symlink-target-account"
TARGET_ETAG = "x-symlink-target-etag"
KEYS = (TARGET, TARGET_ACCOUNT, TARGET_ETAG)
SYMLOOP_MAX = 2
CONTENT_TYPE = "application/symlink"


def info() -> dict:
    return {"symloop_max": SYMLOOP_MAX, "static_links": True}


def split_target(value: str) -> tuple[str, str]:
    path = urllib.parse.unquote(value).lstrip("/")
    container, _, obj = path.partition("/")
    if not container or not obj:
        raise SwiftError(412, "X-Symlink-Target header must be of the form "
                              "<container name>/<object name>")
    return container, obj


def put_meta(headers, declared: int | None, account: str, lookup) -> dict:
    """The metadata of a symlink PUT (empty when the PUT is no symlink); 400/409/412 as
    swift. ``lookup(account, container, obj)`` finds a target the caller may read."""
    value = headers.get(TARGET)
    if value is None:
        if headers.get(TARGET_ACCOUNT) or headers.get(TARGET_ETAG):
            raise bad_request("X-Symlink-Target-Account and X-Symlink-Target-Etag need "
                              "X-Symlink-Target")
        return {}
    if declared:
        raise bad_request("Symlink requests require a zero byte body")
    container, obj = split_target(value)
    meta = {TARGET: f"{container}/{obj}"}
    target_account = headers.get(TARGET_ACCOUNT)
    if target_account:
        if "/" in target_account:
            raise SwiftError(412, "Account name cannot contain slashes")
        meta[TARGET_ACCOUNT] = target_account
    etag = headers.get(TARGET_ETAG)
    if etag:
        etag = etag.strip().strip('"')
        found = lookup(target_account or account, container, obj)
        if found is None:
            raise SwiftError(409, f"X-Symlink-Target-Etag headers do not match: "
                                  f"the target {container}/{obj} does not exist")
        if found.etag != etag:
            raise SwiftError(409, f"Object Etag {found.etag!r} does not match "
                                  f"X-Symlink-Target-Etag header {etag!r}")
        meta[TARGET_ETAG] = etag
    return meta


def target_of(meta: dict, account: str) -> tuple[str, str, str] | None:
    """(account, container, object) a link points at; None for an object that is none."""
    value = meta.get(TARGET)
    if not value:
        return None
    container, obj = split_target(value)
    return meta.get(TARGET_ACCOUNT) or account, container, obj


def follow(found, account: str, lookup):
    """The object ``found`` leads to, following links (``lookup(account, container, obj)``
    authorizes and finds one, None if missing) and (account, container, object) of the
    last hop, or None if ``found`` is no link."""
    hops, where = 0, None
    while (target := target_of(found.meta, account)) is not None:
        if hops == SYMLOOP_MAX:
            raise SwiftError(409, "Too many levels of symbolic links, maximum allowed is "
                                  f"{SYMLOOP_MAX}")
        pinned = found.meta.get(TARGET_ETAG)
        account, container, obj = where = target
        found = lookup(account, container, obj)
        if found is None:
            raise not_found()
        if pinned and found.etag != pinned:
            raise SwiftError(409, f"Object Etag {found.etag!r} does not match "
                                  f"X-Symlink-Target-Etag header {pinned!r}")
        hops += 1
    return found, where
