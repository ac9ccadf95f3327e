"""/v1/{account}/{container}/{object}: PUT (streamed to disk, MD5 checked), POST
(metadata), DELETE, COPY and X-Copy-From; and who may, which GET/HEAD (object_reads.py)
shares.

An upload is acknowledged (201) only once its file is fsynced and renamed into place and
its row committed; until then nothing of it is visible. Bytes stream through in 1 MiB
buffers, hashed and written on threads of their own: an object never sits in memory.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import urllib.parse

from starlette.requests import ClientDisconnect
from starlette.responses import Response

from pocketstack.common import config
from pocketstack.objectstore import access, api, blobs, constraints, store, versions
from pocketstack.objectstore.errors import SwiftError, bad_request, not_found
from pocketstack.objectstore.rest import (common, large_objects, object_versioning, symlinks,
                                          versioning)
from pocketstack.objectstore.threads import run_in_threadpool
from pocketstack.wsgi import routing

# Object headers besides X-Object-Meta-* that PUT, POST and COPY keep.
KEPT = ("content-disposition", "content-encoding", "x-object-manifest")
DEFAULT_TYPE = "application/octet-stream"


# --- who may ----------------------------------------------------------------------------


def authorized_container(req, account: str, container: str, obj: str,
                         method: str) -> api.ContainerInfo:
    """The object's container, once the request may ``method`` the object (401/403/404)."""
    return authorized_object(req, account, container, obj, method, with_object=False)[0]


def authorized_object(req, account: str, container: str, obj: str, method: str,
                      with_object: bool = True):
    """(container, object or None), once the request may ``method`` the object
    (401/403/404); with ``with_object``, both come from one query."""
    ctx = req.context
    if "temp_url_sig" in req.query or "temp_url_expires" in req.query:
        info = _temp_url_container(req, account, container, obj, method)
        return info, api.get_object(info, obj) if with_object else None
    if with_object:
        info, found = api.lookup(account, container, obj)
    else:
        info, found = api.find_container(account, container), None
    role = access.account_role(ctx, account)
    if role in ("owner", "reseller") or (role == "reader" and method in access.READS):
        if info is None:
            raise not_found()
        return info, found
    if info is None:
        raise access.denied(ctx)
    access.check_container(ctx, account, info.meta, method, listing=False)
    return info, found


# Set once a temporary URL let a GET or HEAD in: the (account, container or None) its key
# reaches, where a symlink's target and a large object's segments may then be read.
_TEMP_URL_SCOPE = "pocketstack.objectstore.temp_url_scope"
# Headers a writing temporary URL may not carry: they would point the object at data the
# URL does not reach (tempurl's DISALLOWED_INCOMING_HEADERS).
_TEMP_URL_DISALLOWED = ("x-object-manifest", "x-symlink-target")


def _temp_url_container(req, account, container, obj, method) -> api.ContainerInfo:
    info = api.find_container(account, container)
    reach = req.raw.scope.get(_TEMP_URL_SCOPE)
    if reach is not None and method in access.READS:
        # what a verified temporary URL leads to: swift reads it with the URL's authorization
        # (authorize_same_account / authorize_same_container), not its signature again
        if account != reach[0] or reach[1] not in (None, container):
            raise SwiftError(401)
    else:
        keys = access.temp_url_keys(api.account_meta(account),
                                    info.meta if info is not None else None)
        path = f"/v1/{account}/{container}/{obj}"
        paths = [path, req.raw.scope.get("root_path", "") + path]
        scope = access.check_temp_url(req.query, method, paths, keys) if keys else None
        if scope is None:
            raise SwiftError(401)
        if req.method in access.READS:
            req.raw.scope[_TEMP_URL_SCOPE] = (
                account, container if scope == access.CONTAINER_SCOPE else None)
        for header in _TEMP_URL_DISALLOWED:
            if req.method not in access.READS and header in req.headers:
                raise bad_request(f"The header {common.title(header)!r} is not allowed in "
                                  "this tempurl")
    if info is None:
        raise not_found()
    return info


# --- headers ----------------------------------------------------------------------------


def _object_meta(headers) -> dict:
    constraints.check_metadata(headers, "object")
    meta = {}
    for key, value in headers.items():
        key = key.lower()
        if key.startswith("x-object-meta-") or key in KEPT:
            meta[key] = value.strip()
    return meta


def _content_type(headers, default: str = DEFAULT_TYPE) -> str:
    value = headers.get("content-type")
    if not value:
        return default
    if len(value) > 1024:
        raise bad_request("Invalid Content-Type")
    return value


# --- PUT --------------------------------------------------------------------------------


def _declared_length(req) -> int | None:
    """The body's length (None: chunked); 411/413/400 as swift."""
    chunked = "chunked" in req.headers.get("transfer-encoding", "").lower()
    raw = req.headers.get("content-length")
    if chunked:
        return None
    if raw is None:
        raise SwiftError(411, "Missing Content-Length header.")
    try:
        length = int(raw)
    except ValueError:
        raise bad_request("Invalid Content-Length") from None
    if length < 0:
        raise bad_request("Invalid Content-Length")
    if length > config.CONF.objectstore.max_file_size:
        raise SwiftError(413, "Your request is too large.")
    return length


def quotas(account: str, info: api.ContainerInfo) -> dict | None:
    """The container's and account's quotas (X-Container-Meta-Quota-Bytes/-Count,
    X-Account-Meta-Quota-Bytes), None when there are none."""
    found = {"bytes": info.meta.get("x-container-meta-quota-bytes"),
             "count": info.meta.get("x-container-meta-quota-count"),
             "account_bytes": (info.account_meta if info.account_meta is not None
                               else api.account_meta(account)).get(
                                   "x-account-meta-quota-bytes")}
    found = {k: int(v) for k, v in found.items() if v not in (None, "")}
    return found or None


def _check_quotas_early(account, info, declared: int | None) -> dict | None:
    """The quotas; 413 at once when the declared length already exceeds them (the
    commit checks the actual size again)."""
    limits = quotas(account, info)
    if limits and declared:
        over = SwiftError(413, "Upload exceeds quota.")
        if "bytes" in limits and info.bytes_used + declared > limits["bytes"]:
            raise over
        if "account_bytes" in limits and \
                api.get_account(account).bytes_used + declared > limits["account_bytes"]:
            raise over
    return limits  # the object count is checked at the commit (an overwrite adds none)


def _put_checks(req, account, container, obj) -> tuple:
    """Everything a PUT must pass before its body is read: (container, meta, type,
    delete_at, guard)."""
    info = authorized_container(req, account, container, obj, "PUT")
    meta = _object_meta(req.headers)
    delete_at = constraints.delete_at(req.headers, constraints.now())
    if_none_match = req.headers.get("if-none-match")
    guard = None
    if if_none_match is not None:
        if if_none_match.strip() != "*":
            raise bad_request("If-None-Match only supports *")

        def guard(existing):
            if existing is not None:
                raise SwiftError(412)

        guard(api.get_object(info, obj))
    return info, meta, _content_type(req.headers), delete_at, guard


async def _receive_into(req, writer: store.Writer, declared: int | None) -> bytes:
    """Hand the body to ``writer`` in CHUNK buffers as it arrives; the last, partial
    buffer is returned for ``writer.finish`` (a small object never needs its threads)."""
    cap = config.CONF.objectstore.max_file_size
    pending: list[bytes] = []
    buffered = 0

    async def flush():
        nonlocal pending, buffered
        data = b"".join(pending) if len(pending) != 1 else pending[0]
        pending, buffered = [], 0
        for future in writer.submit(data):
            await asyncio.wrap_future(future)

    async for chunk in req.raw.stream():
        if not chunk:
            continue
        pending.append(chunk)
        buffered += len(chunk)
        if writer.size + buffered > cap:
            raise SwiftError(413, "Your request is too large.")
        if buffered >= store.CHUNK:
            await flush()
    last = b"".join(pending)
    if declared is not None and writer.size + len(last) != declared:
        raise SwiftError(499)  # the client went away before sending it all
    return last


@routing.public
@routing.streaming
async def put(req):
    account, container, obj = common.names(req)
    if req.headers.get("x-copy-from"):
        return await _copy(req, req.headers["x-copy-from"],
                           req.headers.get("x-copy-from-account") or account,
                           account, container, obj)
    declared = _declared_length(req)

    def checks(writer=True):
        checked = _put_checks(req, account, container, obj)
        link = symlinks.put_meta(req.headers, declared, account, lambda a, c, o: (
            api.get_object(authorized_container(req, a, c, o, "GET"), o)))
        if link:
            checked[1].update(link)
            if not req.headers.get("content-type"):
                checked = (*checked[:2], symlinks.CONTENT_TYPE, *checked[3:])
        manifest = req.query.get("multipart-manifest") == "put"
        # the temp file is opened in the same thread hop (a streamed PUT makes two in all)
        return checked, _check_quotas_early(account, checked[0], declared), (
            store.Writer() if writer and not manifest else None)

    if req.query.get(object_versioning.QUERY):
        return await run_in_threadpool(lambda: object_versioning.put(
            req, authorized_container(req, account, container, obj, "PUT"), obj, declared))
    expected = req.headers.get("etag")

    def check_body(meta, size: int, etag: str) -> None:
        if symlinks.TARGET in meta and size:
            raise bad_request("Symlink requests require a zero byte body")
        if expected is not None and expected.strip().strip('"').lower() != etag:
            raise SwiftError(422)

    def finish(checked, limits, writer, last: bytes):
        """The rest in one hop: the last bytes, fsync, the ETag check, the rename into
        place and the row."""
        info, meta, content_type, delete_at, guard = checked
        try:
            etag = writer.finish(last)
            check_body(meta, writer.size, etag)
            file_id = writer.commit()
        except BaseException:
            writer.abort()
            raise
        return _record(info, obj, file_id, limits, size=writer.size, etag=etag,
                       content_type=content_type, meta=meta, delete_at=delete_at,
                       guard=guard)

    def small(body: bytes):
        """Checks, body and row of a body read whole: checked first, then the bytes kept
        with the row, in its transaction (blobs.py)."""
        (info, meta, content_type, delete_at, guard), limits, _ = checks(writer=False)
        etag = hashlib.md5(body, usedforsecurity=False).hexdigest()
        check_body(meta, len(body), etag)
        if blobs.allowed(info):
            file, data = blobs.new_id(), body
        else:  # its commit is not fsynced: the bytes go to a file that is
            file, data = store.write_bytes(body), None
        return _record(info, obj, file, limits, size=len(body), etag=etag,
                       content_type=content_type, meta=meta, delete_at=delete_at,
                       guard=guard, data=data)

    if _small_body(req, declared):
        # Read first (it came with the head, or nearly), then checks, bytes and row in a
        # single thread hop: one hop less than the streamed path, ~10 % of a 4 KiB PUT.
        body = await _receive_small(req, declared)
        return _created(await run_in_threadpool(small, body))
    checked, limits, writer = await run_in_threadpool(checks)
    if writer is None:
        return await _put_manifest(req, account, *checked, obj)
    try:
        try:
            last = await _receive_into(req, writer, declared)
        except ClientDisconnect:
            raise SwiftError(499) from None
    except BaseException:
        await run_in_threadpool(writer.abort)
        raise
    return _created(await run_in_threadpool(finish, checked, limits, writer, last))


SMALL_BODY = blobs.MAX  # bytes: a PUT body up to this is read before its checks


def _small_body(req, declared: int | None) -> bool:
    """Whether the body may be read before the checks: small and announced, not a
    manifest (its own path reads it), and no client waiting for 100 Continue (it sends
    the body only once told to: a refusal must come first)."""
    return (declared is not None and declared <= SMALL_BODY
            and req.query.get("multipart-manifest") != "put"
            and "100-continue" not in req.headers.get("expect", "").lower())


async def _receive_small(req, declared: int) -> bytes:
    parts = []
    try:
        async for chunk in req.raw.stream():
            parts.append(chunk)
    except ClientDisconnect:
        raise SwiftError(499) from None
    body = b"".join(parts)
    if len(body) != declared:
        raise SwiftError(499)  # the client went away before sending it all
    return body


async def _put_manifest(req, account, info, meta, content_type, delete_at, guard, obj):
    """An SLO: the manifest's segments are checked, the manifest kept as the object's
    file; its size is the segments' total and its ETag the MD5 of their ETags."""
    body = bytearray()
    async for chunk in req.raw.stream():
        body += chunk
        if len(body) > large_objects.MAX_MANIFEST_SIZE:
            break
    segments = large_objects.parse_manifest(bytes(body))

    def lookup(acct, container, name):
        return api.get_object(authorized_container(req, acct, container, name, "GET"), name)

    stored, total, etag = await run_in_threadpool(
        large_objects.check_segments, account, segments, lookup)
    expected = req.headers.get("etag")
    if expected is not None and expected.strip().strip('"').lower() != etag:
        raise SwiftError(422)

    file_id = await run_in_threadpool(store.write_bytes, json.dumps(stored).encode())
    return await record(info, obj, size=total, etag=etag, content_type=content_type,
                         meta={**meta, large_objects.SLO: "True"}, delete_at=delete_at,
                         file=file_id, guard=guard)


async def record(info, obj, *, file, headers: dict | None = None, limits=False,
                  **fields):
    return _created(await run_in_threadpool(_record, info, obj, file, limits, **fields),
                    headers)


def _record(info, obj, file, limits, **fields) -> api.ObjectInfo:
    """The row of a stored file (the file removed if the row is refused), the replaced
    file removed."""
    try:
        if limits is False:
            limits = quotas(info.account, info)
        versioning.before_write(info, obj)
        written, replaced = api.put_object(info, obj, file=file, quotas=limits,
                                           versioning=versions.state(info.meta), **fields)
    except BaseException:
        if fields.get("data") is None:  # bytes kept with the row went with its rollback
            store.remove(file)
        raise
    if replaced:
        store.remove(replaced)
    return written


def _created(written: api.ObjectInfo, headers: dict | None = None):
    # the proxy's PUT answer carries the bare MD5 (normalize_etag); GET/HEAD quote it
    if written.version_id:
        headers = {**(headers or {}), "X-Object-Version-Id": written.version_id}
    return common.response(201, headers={"Etag": written.etag,
                                         "Last-Modified": api.http_date(written.timestamp),
                                         **(headers or {})})


# --- COPY / X-Copy-From -----------------------------------------------------------------


def _split_source(value: str, header: str) -> tuple[str, str]:
    path = urllib.parse.unquote(value).lstrip("/")
    container, _, obj = path.partition("/")
    if not container or not obj:
        raise SwiftError(412, f"{header} header must be of the form "
                              "<container name>/<object name>")
    return container, obj


async def _copy(req, source: str, source_account: str, account: str, container: str,
                obj: str):
    header = "X-Copy-From" if req.method == "PUT" else "Destination"
    if req.method == "PUT":
        src_container, src_obj = _split_source(source, header)
        dst_container, dst_obj = container, obj
    else:
        src_container, src_obj = container, obj
        dst_container, dst_obj = _split_source(source, header)
        account, source_account = req.headers.get("destination-account") or account, account

    def prepare():
        src_info = authorized_container(req, source_account, src_container, src_obj, "GET")
        found = api.get_object(src_info, src_obj)
        if req.method == "COPY":  # ?version-id names the source's version
            found = object_versioning.read(req, src_info, src_obj, found)
        if found is None:
            raise not_found()
        if req.query.get("symlink") != "get":  # a copy of a link is a copy of its target
            found, _ = symlinks.follow(found, source_account, lambda a, c, o: api.get_object(
                authorized_container(req, a, c, o, "GET"), o))
        dst_info = authorized_container(req, account, dst_container, dst_obj, "PUT")
        fresh = req.headers.get("x-fresh-metadata", "").lower() in ("true", "1", "yes")
        meta = {} if fresh else dict(found.meta)
        meta.update(_object_meta(req.headers))
        delete_at = constraints.delete_at(req.headers, constraints.now())
        content_type = req.headers.get("content-type") if req.method == "COPY" else None
        return found, dst_info, meta, content_type or found.content_type, delete_at

    found, dst_info, meta, content_type, delete_at = await run_in_threadpool(prepare)
    if req.method == "PUT" and _declared_length(req):
        raise bad_request("Copy requests require a zero byte body")
    try:  # files never change once written: the copy is a new name for the same bytes
        file_id, etag = await run_in_threadpool(store.link, found.file), found.etag
    except FileNotFoundError:  # replaced or deleted meanwhile
        raise not_found() from None
    copied = {"X-Copied-From": f"{urllib.parse.quote(src_container)}/"
                               f"{urllib.parse.quote(src_obj)}",
              "X-Copied-From-Last-Modified": api.http_date(found.timestamp)}
    if source_account != account:
        copied["X-Copied-From-Account"] = source_account
    return await record(dst_info, dst_obj, size=found.size, etag=etag,
                         content_type=content_type, meta=meta, delete_at=delete_at,
                         file=file_id, headers=copied)


@routing.public
@routing.streaming
async def copy(req):
    account, container, obj = common.names(req)
    destination = req.headers.get("destination")
    if not destination:
        raise SwiftError(412, "You must specify a Destination header")
    return await _copy(req, destination, account, account, container, obj)


# --- POST / DELETE ----------------------------------------------------------------------


@routing.public
def update(req):
    account, container, obj = common.names(req)
    info = authorized_container(req, account, container, obj, "POST")
    object_versioning.requested(req, info)  # a POST to a version: 400
    if any(key in req.headers for key in symlinks.KEYS):
        raise bad_request("A symlink's target can't be changed by a POST")
    meta = _object_meta(req.headers)
    delete_at = None if "x-remove-delete-at" in req.headers else constraints.delete_at(
        req.headers, constraints.now())
    content_type = req.headers.get("content-type")
    api.post_object(info, obj, meta=meta, content_type=content_type, delete_at=delete_at,
                    keep_delete_at=False)
    return common.response(202)


@routing.public
def delete(req):
    account, container, obj = common.names(req)
    info = authorized_container(req, account, container, obj, "DELETE")
    if req.query.get("multipart-manifest") == "delete":
        found = api.get_object(info, obj)
        if found is not None and found.meta.get(large_objects.SLO):
            return _delete_manifest(req, account, info, obj, found)
    answered = object_versioning.delete(req, info, obj)
    if answered is not None:
        return answered
    if not versioning.delete(info, obj):
        store.remove(api.delete_object(info, obj))
    return common.response(204)


def _delete_manifest(req, account, info, obj, found) -> Response:
    """An SLO with its segments (``?multipart-manifest=delete``), answered as bulk
    delete answers."""
    deleted, missing, errors = 0, 0, []
    for container, name in large_objects.segment_paths(large_objects.read_manifest(found)):
        try:
            segment_container = authorized_container(req, account, container, name, "DELETE")
            store.remove(api.delete_object(segment_container, name))
            deleted += 1
        except SwiftError as error:
            if error.code != 404:
                errors.append((f"/{container}/{name}", f"{error.code} Error"))
            else:
                missing += 1
    store.remove(api.delete_object(info, obj))
    return common.bulk_result(req, deleted + 1, missing, errors)
