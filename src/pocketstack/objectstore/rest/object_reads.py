"""/v1/{account}/{container}/{object}: GET and HEAD (streamed, ranges, conditionals, large
objects, symlinks, tempurl's filename). Writes are in objects.py.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import threading
import urllib.parse
import uuid

from starlette.responses import Response

from pocketstack.objectstore import api, blobs, store
from pocketstack.objectstore.errors import SwiftError, not_found
from pocketstack.objectstore.rest import (common, large_objects, object_versioning, objects,
                                          ranges, symlinks)
from pocketstack.objectstore.threads import run_in_threadpool
from pocketstack.wsgi import routing

READ_SIZE = 1 << 20
READ_AHEAD = 4


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


def _lookup(req, account, container, obj):
    """(object, open file, (account, container, object) of a symlink's target or None)."""
    info, found = objects.authorized_object(req, account, container, obj, req.method)
    found = object_versioning.read(req, info, obj, found)
    if found is None:
        raise not_found()
    location = None
    if req.query.get("symlink") != "get":
        found, location = symlinks.follow(found, account, lambda a, c, o: objects.authorized_object(
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
            return api.get_object(
                objects.authorized_container(req, acct, container, name, "GET"), name)

        return large_objects.slo_sources(account, manifest, lookup), found.size, found.etag
    if found.meta.get(large_objects.DLO) and not manifest_asked:
        handle.close()

        def segments(acct, container, prefix):
            return api.list_segments(
                objects.authorized_container(req, acct, container, prefix, "GET"), prefix)

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
ZERO_COPY = "http.response.zerocopysend"  # ASGI's extension (wsgi/http_protocol.py)
ZERO_COPY_MIN = 1 << 20  # bytes: below, a read and a send cost about the same


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
        handle = sources[0][0]
        try:
            small = (handle.data if isinstance(handle, blobs.BlobFile)
                     else os.pread(handle.fileno(), size, 0) if size else b"")
        finally:
            handle.close()
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
        # The read-ahead threads of one segment open its file once: two opens would leave
        # one file object unreferenced, closed by the garbage collector while a thread
        # still reads its descriptor (number reused: a truncated or wrong body).
        self._opening = threading.Lock()
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
        with self._opening:
            handle = self._open.get(index)
            if handle is None:
                source = self.sources[index][0]
                handle = store.open_file(source) if isinstance(source, str) else source
                self._open[index] = handle
        return handle.fileno()

    def _close(self, keep: int | None = None) -> None:
        with self._opening:  # read-aheads may be opening the next files meanwhile
            done = [self._open.pop(i) for i in list(self._open) if keep is None or i < keep]
        for handle in done:
            with contextlib.suppress(OSError):
                handle.close()
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
            if self._zero_copy(scope):
                _, offset, length = self.pieces[0]
                await send({"type": ZERO_COPY, "file": self.sources[0][0], "offset": offset,
                            "count": length, "more_body": False})
                return
            await self._send_body(send)
        finally:
            await run_in_threadpool(self._close)

    def _zero_copy(self, scope) -> bool:
        """Whether the server sends the bytes itself from the file (sendfile: a plain TCP
        connection offers it): a whole plain object of ZERO_COPY_MIN or more. Ranges,
        large objects' segments and what the server cannot send that way (TLS) are read
        and sent here."""
        return (ZERO_COPY in scope.get("extensions", {}) and self.status_code == 200
                and self.length >= ZERO_COPY_MIN and len(self.sources) == 1
                and len(self.pieces) == 1 and not isinstance(self.sources[0][0], str))

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
