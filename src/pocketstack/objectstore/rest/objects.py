"""/v1/{account}/{container}/{object}: PUT (streamed to disk, MD5 checked), GET/HEAD
(streamed, ranges, conditionals), POST (metadata), DELETE, COPY and X-Copy-From.

An upload is acknowledged (201) only once its file is fsynced and renamed into place and
its row committed; until then nothing of it is visible. Bytes stream through in 1 MiB
buffers, hashed and written on threads of their own: an object never sits in memory.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import urllib.parse
import uuid

from starlette.requests import ClientDisconnect
from starlette.responses import Response

from pocketstack.common import config
from pocketstack.objectstore import access, api, constraints, store, versions
from pocketstack.objectstore.errors import SwiftError, bad_request, not_found
from pocketstack.objectstore.rest import (common, large_objects, object_versioning, ranges,
                                          symlinks, versioning)
from pocketstack.objectstore.threads import run_in_threadpool
from pocketstack.wsgi import routing

READ_SIZE = 1 << 20
READ_AHEAD = 4
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


def _temp_url_container(req, account, container, obj, method) -> api.ContainerInfo:
    info = api.find_container(account, container)
    keys = [v for k, v in api.account_meta(account).items()
            if k in ("x-account-meta-temp-url-key", "x-account-meta-temp-url-key-2")]
    if info is not None:
        keys += [v for k, v in info.meta.items()
                 if k in ("x-container-meta-temp-url-key", "x-container-meta-temp-url-key-2")]
    path = f"/v1/{account}/{container}/{obj}"
    paths = [path, req.raw.scope.get("root_path", "") + path]
    if not keys or not access.check_temp_url(req.query, method, paths, keys):
        raise SwiftError(401)
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


def _object_headers(obj: api.ObjectInfo) -> dict:
    headers = {"Etag": f'"{obj.etag}"', "Last-Modified": api.http_date(obj.timestamp),
               "X-Timestamp": obj.timestamp, "Accept-Ranges": "bytes",
               **common.meta_headers(obj.meta)}
    if obj.delete_at:
        headers["X-Delete-At"] = str(obj.delete_at)
    if obj.version_id:  # set only where versioning applies (object_versioning.read)
        headers["X-Object-Version-Id"] = obj.version_id
    return headers


def _filename_disposition(req, headers: dict) -> None:
    """tempurl's ``filename``/``inline`` query: the Content-Disposition it asks for."""
    if "temp_url_sig" not in req.query:
        return
    filename = req.query.get("filename")
    if "inline" in req.query:
        headers["Content-Disposition"] = "inline" + (
            f"; filename*=UTF-8''{urllib.parse.quote(filename)}" if filename else "")
    elif filename is not None:
        headers["Content-Disposition"] = (
            f"attachment; filename*=UTF-8''{urllib.parse.quote(filename)}")


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

    def checks():
        checked = _put_checks(req, account, container, obj)
        link = symlinks.put_meta(req.headers, declared, account, lambda a, c, o: (
            api.get_object(authorized_container(req, a, c, o, "GET"), o)))
        if link:
            checked[1].update(link)
            if not req.headers.get("content-type"):
                checked = (*checked[:2], symlinks.CONTENT_TYPE, *checked[3:])
        manifest = req.query.get("multipart-manifest") == "put"
        # the temp file is opened in the same thread hop (a small PUT makes two in all)
        return checked, _check_quotas_early(account, checked[0], declared), (
            None if manifest else store.Writer())

    if req.query.get(object_versioning.QUERY):
        return await run_in_threadpool(lambda: object_versioning.put(
            req, authorized_container(req, account, container, obj, "PUT"), obj, declared))
    (info, meta, content_type, delete_at, guard), limits, writer = \
        await run_in_threadpool(checks)
    if writer is None:
        return await _put_manifest(req, account, info, obj, meta, content_type, delete_at,
                                   guard)
    expected = req.headers.get("etag")

    def finish(last: bytes):
        """The rest in one hop: the last bytes, fsync, the ETag check, the rename into
        place and the row."""
        try:
            etag = writer.finish(last)
            if expected is not None and expected.strip().strip('"').lower() != etag:
                raise SwiftError(422)
            file_id = writer.commit()
        except BaseException:
            writer.abort()
            raise
        return _record(info, obj, file_id, limits, size=writer.size, etag=etag,
                       content_type=content_type, meta=meta, delete_at=delete_at,
                       guard=guard)

    try:
        try:
            last = await _receive_into(req, writer, declared)
        except ClientDisconnect:
            raise SwiftError(499) from None
        if symlinks.TARGET in meta and (writer.size or last):
            raise bad_request("Symlink requests require a zero byte body")
    except BaseException:
        await run_in_threadpool(writer.abort)
        raise
    return _created(await run_in_threadpool(finish, last))


async def _put_manifest(req, account, info, obj, meta, content_type, delete_at, guard):
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

    def write() -> str:
        writer = store.Writer()
        try:
            writer.finish(json.dumps(stored).encode())
            return writer.commit()
        except BaseException:
            writer.abort()
            raise

    file_id = await run_in_threadpool(write)
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


# --- GET / HEAD -------------------------------------------------------------------------


def _lookup(req, account, container, obj):
    """(object, open file, (account, container, object) of a symlink's target or None)."""
    info, found = authorized_object(req, account, container, obj, req.method)
    found = object_versioning.read(req, info, obj, found)
    if found is None:
        raise not_found()
    location = None
    if req.query.get("symlink") != "get":
        found, location = symlinks.follow(found, account, lambda a, c, o: authorized_object(
            req, a, c, o, req.method)[1])
        if location is not None:
            info, obj = api.find_container(location[0], location[1]), location[2]
    for _ in range(3):  # a concurrent overwrite may remove the file between row and open
        try:
            return found, store.open_file(found.file), location
        except FileNotFoundError:
            found = api.get_object(info, obj)
            if found is None:
                raise not_found() from None
    raise not_found()


def _large_object(req, account, found, handle):
    """(sources, size, ETag) of what a GET of ``found`` sends: its own file, or the
    segments of a large object (unless ``multipart-manifest=get`` asks for the manifest)."""
    manifest_asked = req.query.get("multipart-manifest") == "get"
    if found.meta.get(large_objects.SLO) and not manifest_asked:
        handle.close()
        manifest = large_objects.read_manifest(found)

        def lookup(acct, container, name):
            return api.get_object(authorized_container(req, acct, container, name, "GET"), name)

        return large_objects.slo_sources(account, manifest, lookup), found.size, found.etag
    if found.meta.get(large_objects.DLO) and not manifest_asked:
        handle.close()

        def segments(acct, container, prefix):
            return api.list_segments(
                authorized_container(req, acct, container, prefix, "GET"), prefix)

        return large_objects.dlo_sources(account, found.meta[large_objects.DLO], segments)
    return [(handle, 0, found.size)], found.size, found.etag


def _manifest_response(req, found, handle) -> Response:
    """``?multipart-manifest=get`` of an SLO: its manifest as JSON."""
    with handle:
        manifest = json.loads(handle.read())
    if req.query.get("format") == "raw":
        manifest = large_objects.raw_manifest(manifest)
    body = json.dumps(manifest).encode()
    return common.response(200, b"" if req.method == "HEAD" else body,
                           {**_object_headers(found), "X-Static-Large-Object": "True"},
                           content_type="application/json; charset=utf-8")


@routing.public
async def get(req):
    account, container, obj = common.names(req)
    prepared = await run_in_threadpool(_prepare_get, req, account, container, obj)
    if isinstance(prepared, Response):
        return prepared
    found, location, sources, size, etag, small = prepared
    try:
        headers = _object_headers(found)
        headers["Etag"] = f'"{etag}"'
        if location is not None:
            headers["Content-Location"] = "/v1/" + "/".join(
                urllib.parse.quote(part) for part in location)
        _filename_disposition(req, headers)
        status = ranges.evaluate(req.headers, etag, found.timestamp, req.method)
        if status is not None:
            _close(sources)
            if status == 304:
                return Response(b"", status_code=304, headers=headers)
            raise SwiftError(status)
        spans = ranges.parse(req.headers.get("range"), size)
    except BaseException:
        _close(sources)
        raise
    if small is not None and spans is None:
        return Response(small, status_code=200, headers={
            **headers, "Content-Type": found.content_type, "Content-Length": str(size)})
    return ObjectResponse(sources, size, found.content_type, spans, headers)


SMALL = 64 * 1024  # bytes a GET reads in the lookup's thread hop and sends at once


def _prepare_get(req, account, container, obj):
    """A GET's or HEAD's blocking part in one thread hop: (object, symlink target's
    location, sources, size, ETag, the bytes of a small plain object or None), or the
    manifest's response for ``multipart-manifest=get``."""
    found, handle, location = _lookup(req, account, container, obj)
    if found.meta.get(large_objects.SLO) and req.query.get("multipart-manifest") == "get":
        return _manifest_response(req, found, handle)
    try:
        sources, size, etag = _large_object(req, account, found, handle)
    except BaseException:
        handle.close()
        raise
    small = None
    if (len(sources) == 1 and size <= SMALL and req.method == "GET"
            and "range" not in req.headers and not isinstance(sources[0][0], str)):
        try:
            small = os.pread(sources[0][0].fileno(), size, 0) if size else b""
        finally:
            sources[0][0].close()
        if len(small) != size:
            raise SwiftError(500)  # a file shorter than its row says
        sources = []
    return found, location, sources, size, etag, small


def _close(sources) -> None:
    for source, _, _ in sources:
        if not isinstance(source, str):
            source.close()


class ObjectResponse(Response):
    """Streams an object's bytes (or ranges of them: one as a 206, several as
    multipart/byteranges) with positional reads on worker threads, a few ahead of the
    socket. The bytes are ``sources``, read one after the other: (open file or file id,
    offset in it, length) — one file for a plain object, the segments for a large one.
    Files are opened as reading reaches them and closed once it leaves them."""

    def __init__(self, sources: list, size: int, content_type: str, spans, headers: dict):
        self.sources = sources
        self.pieces: list = []  # bytes, or (source index, offset in its file, length)
        if spans is None:
            status, media = 200, content_type
            self._add(0, size)
        elif len(spans) == 1:
            (first, end), = spans
            status, media = 206, content_type
            headers["Content-Range"] = f"bytes {first}-{end - 1}/{size}"
            self._add(first, end - first)
        else:
            status = 206
            boundary = uuid.uuid4().hex
            media = f"multipart/byteranges;boundary={boundary}"
            for first, end in spans:
                self.pieces.append((f"--{boundary}\r\nContent-Type: {content_type}\r\n"
                                    f"Content-Range: bytes {first}-{end - 1}/{size}"
                                    "\r\n\r\n").encode())
                self._add(first, end - first)
                self.pieces.append(b"\r\n")
            self.pieces.append(f"--{boundary}--".encode())
        self.length = sum(p[2] if isinstance(p, tuple) else len(p) for p in self.pieces)
        self._open: dict[int, object] = {}
        super().__init__(status_code=status, headers={
            **headers, "Content-Type": media, "Content-Length": str(self.length)})

    def _add(self, first: int, length: int) -> None:
        """The pieces of the sources that bytes [first, first + length) are."""
        at = 0
        for index, (_, offset, size) in enumerate(self.sources):
            lo, hi = max(first, at), min(first + length, at + size)
            if lo < hi:
                self.pieces.append((index, offset + lo - at, hi - lo))
            at += size

    def _fd(self, index: int) -> int:
        handle = self._open.get(index)
        if handle is None:
            source = self.sources[index][0]
            handle = store.open_file(source) if isinstance(source, str) else source
            self._open[index] = handle
        return handle.fileno()

    def _close(self, keep: int | None = None) -> None:
        for index in [i for i in self._open if keep is None or i < keep]:
            with contextlib.suppress(OSError):
                self._open.pop(index).close()
        if keep is None:  # files never reached
            for source, _, _ in self.sources:
                if not isinstance(source, str):
                    with contextlib.suppress(OSError):
                        source.close()

    def _read(self, index: int, size: int, at: int) -> bytes:
        return os.pread(self._fd(index), size, at)

    async def __call__(self, scope, receive, send):
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            if scope["method"] == "HEAD" or self.length == 0:
                await send({"type": "http.response.body", "body": b""})
                return
            await self._send_body(send)
        finally:
            await run_in_threadpool(self._close)

    def _chunks(self):
        for piece in self.pieces:
            if isinstance(piece, bytes):
                yield piece
                continue
            index, offset, length = piece
            end = offset + length
            for at in range(offset, end, READ_SIZE):
                yield (index, min(READ_SIZE, end - at), at)

    async def _send_body(self, send):
        chunks = self._chunks()
        reads: collections.deque = collections.deque()  # (source index, future)

        def read_next() -> None:
            item = next(chunks, None)
            if item is None:
                return
            if isinstance(item, bytes):
                future = asyncio.get_running_loop().create_future()
                future.set_result(item)
                reads.append((None, future))
            else:
                reads.append((item[0], asyncio.ensure_future(
                    run_in_threadpool(self._read, *item))))

        for _ in range(READ_AHEAD):
            read_next()
        sent = 0
        try:
            while reads:
                index, future = reads.popleft()
                data = await future
                if not data:
                    raise SwiftError(500)  # a file shorter than its row says
                if index is not None and index and (index - 1) in self._open:
                    await run_in_threadpool(self._close, index)  # done with earlier files
                read_next()
                sent += len(data)
                await send({"type": "http.response.body", "body": data,
                            "more_body": sent < self.length})
        finally:
            if reads:
                with contextlib.suppress(BaseException):
                    await asyncio.wait([future for _, future in reads])


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
