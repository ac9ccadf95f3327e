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
import os
import urllib.parse
import uuid

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from pocketstack.common import config
from pocketstack.objectstore import access, api, constraints, store
from pocketstack.objectstore.errors import SwiftError, bad_request, not_found
from pocketstack.objectstore.rest import common, ranges
from pocketstack.wsgi import routing

READ_SIZE = 1 << 20
READ_AHEAD = 4
# Object headers besides X-Object-Meta-* that PUT, POST and COPY keep.
KEPT = ("content-disposition", "content-encoding", "x-object-manifest")
DEFAULT_TYPE = "application/octet-stream"


# --- who may ----------------------------------------------------------------------------


def _container(req, account: str, container: str, obj: str, method: str) -> api.ContainerInfo:
    """The object's container, once the request may ``method`` the object (401/403/404)."""
    ctx = req.context
    if "temp_url_sig" in req.query or "temp_url_expires" in req.query:
        return _temp_url_container(req, account, container, obj, method)
    role = access.account_role(ctx, account)
    if role in ("owner", "reseller") or (role == "reader" and method in access.READS):
        return api.get_container(account, container)
    info = api.find_container(account, container)
    if info is None:
        raise access.denied(ctx)
    access.check_container(ctx, account, info.meta, method, listing=False)
    return info


def _temp_url_container(req, account, container, obj, method) -> api.ContainerInfo:
    info = api.find_container(account, container)
    keys = [v for k, v in api.get_account(account).meta.items()
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
    if obj.meta.get("x-static-large-object"):
        headers["X-Static-Large-Object"] = "True"
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


def _put_checks(req, account, container, obj) -> tuple:
    """Everything a PUT must pass before its body is read: (container, meta, type,
    delete_at, guard)."""
    info = _container(req, account, container, obj, "PUT")
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


async def _receive_into(req, writer: store.Writer, declared: int | None) -> None:
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
    if buffered:
        await flush()
    if declared is not None and writer.size != declared:
        raise SwiftError(499)  # the client went away before sending it all


@routing.public
@routing.streaming
async def put(req):
    account, container, obj = common.names(req)
    if req.headers.get("x-copy-from"):
        return await _copy(req, req.headers["x-copy-from"],
                           req.headers.get("x-copy-from-account") or account,
                           account, container, obj)
    declared = _declared_length(req)
    info, meta, content_type, delete_at, guard = await run_in_threadpool(
        _put_checks, req, account, container, obj)
    writer = await run_in_threadpool(store.Writer)
    try:
        try:
            await _receive_into(req, writer, declared)
        except ClientDisconnect:
            raise SwiftError(499) from None
        etag = await run_in_threadpool(writer.finish)
        expected = req.headers.get("etag")
        if expected is not None and expected.strip().strip('"').lower() != etag:
            raise SwiftError(422)
        file_id = await run_in_threadpool(writer.commit)
    except BaseException:
        await run_in_threadpool(writer.abort)
        raise
    return await _record(info, obj, size=writer.size, etag=etag, content_type=content_type,
                         meta=meta, delete_at=delete_at, file=file_id, guard=guard)


async def _record(info, obj, *, file, headers: dict | None = None, **fields):
    try:
        written, replaced = await run_in_threadpool(
            lambda: api.put_object(info, obj, file=file, **fields))
    except BaseException:
        await run_in_threadpool(store.remove, file)
        raise
    if replaced:
        await run_in_threadpool(store.remove, replaced)
    # the proxy's PUT answer carries the bare MD5 (normalize_etag); GET/HEAD quote it
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
        src_info = _container(req, source_account, src_container, src_obj, "GET")
        found = api.get_object(src_info, src_obj)
        if found is None:
            raise not_found()
        dst_info = _container(req, account, dst_container, dst_obj, "PUT")
        fresh = req.headers.get("x-fresh-metadata", "").lower() in ("true", "1", "yes")
        meta = {} if fresh else dict(found.meta)
        meta.update(_object_meta(req.headers))
        meta.pop("x-static-large-object", None)
        delete_at = constraints.delete_at(req.headers, constraints.now())
        content_type = req.headers.get("content-type") if req.method == "COPY" else None
        return found, dst_info, meta, content_type or found.content_type, delete_at

    found, dst_info, meta, content_type, delete_at = await run_in_threadpool(prepare)
    if req.method == "PUT" and _declared_length(req):
        raise bad_request("Copy requests require a zero byte body")
    try:
        file_id, etag = await run_in_threadpool(store.copy, found.file)
    except FileNotFoundError:  # replaced or deleted meanwhile
        raise not_found() from None
    copied = {"X-Copied-From": f"{urllib.parse.quote(src_container)}/"
                               f"{urllib.parse.quote(src_obj)}",
              "X-Copied-From-Last-Modified": api.http_date(found.timestamp)}
    if source_account != account:
        copied["X-Copied-From-Account"] = source_account
    return await _record(dst_info, dst_obj, size=found.size, etag=etag,
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
    info = _container(req, account, container, obj, req.method)
    found = api.get_object(info, obj)
    if found is None:
        raise not_found()
    for _ in range(3):  # a concurrent overwrite may remove the file between row and open
        try:
            return found, store.open_file(found.file)
        except FileNotFoundError:
            found = api.get_object(info, obj)
            if found is None:
                raise not_found() from None
    raise not_found()


@routing.public
async def get(req):
    account, container, obj = common.names(req)
    found, handle = await run_in_threadpool(_lookup, req, account, container, obj)
    try:
        headers = _object_headers(found)
        _filename_disposition(req, headers)
        status = ranges.evaluate(req.headers, found.etag, found.timestamp, req.method)
        if status == 304:
            handle.close()
            return Response(b"", status_code=304, headers=headers)
        if status is not None:
            raise SwiftError(status)
        spans = ranges.parse(req.headers.get("range"), found.size)
    except BaseException:
        handle.close()
        raise
    return ObjectResponse(handle, found, spans, headers)


class ObjectResponse(Response):
    """Streams the object file (or ranges of it: one as a 206, several as
    multipart/byteranges) with positional reads on worker threads, a few ahead of the
    socket; closes the file when done."""

    def __init__(self, handle, obj: api.ObjectInfo, spans, headers: dict):
        self.handle = handle
        self.pieces: list = []  # bytes, or (offset, length) of the file
        if spans is None:
            status, media = 200, obj.content_type
            self.pieces.append((0, obj.size))
        elif len(spans) == 1:
            (first, end), = spans
            status, media = 206, obj.content_type
            headers["Content-Range"] = f"bytes {first}-{end - 1}/{obj.size}"
            self.pieces.append((first, end - first))
        else:
            status = 206
            boundary = uuid.uuid4().hex
            media = f"multipart/byteranges;boundary={boundary}"
            for first, end in spans:
                self.pieces.append((f"--{boundary}\r\nContent-Type: {obj.content_type}\r\n"
                                    f"Content-Range: bytes {first}-{end - 1}/{obj.size}"
                                    "\r\n\r\n").encode())
                self.pieces.append((first, end - first))
                self.pieces.append(b"\r\n")
            self.pieces.append(f"--{boundary}--".encode())
        self.length = sum(p[1] if isinstance(p, tuple) else len(p) for p in self.pieces)
        super().__init__(status_code=status, headers={
            **headers, "Content-Type": media, "Content-Length": str(self.length)})

    async def __call__(self, scope, receive, send):
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            if scope["method"] == "HEAD" or self.length == 0:
                await send({"type": "http.response.body", "body": b""})
                return
            await self._send_body(receive, send)
        finally:
            await run_in_threadpool(self.handle.close)

    def _chunks(self):
        for piece in self.pieces:
            if isinstance(piece, bytes):
                yield piece
                continue
            offset, length = piece
            end = offset + length
            for at in range(offset, end, READ_SIZE):
                yield (at, min(READ_SIZE, end - at))

    async def _send_body(self, receive, send):
        fd = self.handle.fileno()
        chunks = self._chunks()
        reads: collections.deque = collections.deque()

        def read_next() -> None:
            item = next(chunks, None)
            if item is None:
                return
            if isinstance(item, bytes):
                future = asyncio.get_running_loop().create_future()
                future.set_result(item)
                reads.append(future)
            else:
                at, size = item
                reads.append(asyncio.ensure_future(run_in_threadpool(os.pread, fd, size, at)))

        for _ in range(READ_AHEAD):
            read_next()
        sent = 0
        try:
            while reads:
                data = await reads.popleft()
                if not data:
                    raise SwiftError(500)  # the file is shorter than its row says
                read_next()
                sent += len(data)
                await send({"type": "http.response.body", "body": data,
                            "more_body": sent < self.length})
        finally:
            if reads:
                with contextlib.suppress(BaseException):
                    await asyncio.wait(reads)


# --- POST / DELETE ----------------------------------------------------------------------


@routing.public
def update(req):
    account, container, obj = common.names(req)
    info = _container(req, account, container, obj, "POST")
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
    info = _container(req, account, container, obj, "DELETE")
    store.remove(api.delete_object(info, obj))
    return common.response(204)
