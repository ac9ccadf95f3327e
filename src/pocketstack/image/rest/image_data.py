"""/v2/images/{id}/file (upload, download), /stage and /import.

Uploads are read straight from the ASGI ``receive`` channel so the handler sees a client
that goes away (and an upload that stalls for [image] upload_idle_timeout) and can put
the image back to queued. Downloads stream the file with positional reads on worker
threads, a few chunks ahead of the socket, and honour a single ``Range``.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import re
from typing import AsyncIterator

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from pocketstack.common import config, exceptions
from pocketstack.image import data
from pocketstack.image.patch import media_type
from pocketstack.wsgi import routing

READ_SIZE = 1 << 20
READ_AHEAD = 3  # chunks read ahead of the socket, so a slow reader or sender evens out


class ClientGone(exceptions.BadRequest):
    message = "The client closed the connection before the image data was complete."


class UploadTimeout(exceptions.PocketstackError):
    code = 408
    message = "No image data arrived for too long; the upload was abandoned."


def _check_upload_headers(req) -> int | None:
    """415/400/413 for headers glance refuses; the declared size, if any."""
    content_type = media_type(req.headers.get("content-type"))
    if content_type != "application/octet-stream":
        raise exceptions.UnsupportedMediaType(
            f"Invalid content type {content_type or 'None'}: image data must be sent as "
            "application/octet-stream.")
    declared = req.headers.get("x-openstack-image-size") or req.headers.get("content-length")
    if declared is None:
        return None
    try:
        size = int(declared)
    except ValueError:
        raise exceptions.BadRequest("Invalid or missing image size in request headers.") \
            from None
    cap = config.CONF.image.image_size_cap
    if size > cap:
        raise exceptions.PayloadTooLarge(
            f"The incoming image is too large: {size} bytes is more than the image size cap "
            f"of {cap} bytes.")
    return size


async def _body(req) -> AsyncIterator[bytes]:
    """The request body chunk by chunk, as the server receives it."""
    receive = req.raw.receive
    timeout = config.CONF.image.upload_idle_timeout
    while True:
        async with asyncio.timeout(timeout):
            message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone()
        body = message.get("body", b"")
        if body:
            yield body
        if not message.get("more_body", False):
            return


async def _stream_into(req, staging: bool):
    size = _check_upload_headers(req)
    try:
        await data.upload_stream(req.context, req.params["image_id"], _body(req),
                                 staging=staging,
                                 store_name=req.headers.get("x-image-meta-store"),
                                 size_hint=size)
    except TimeoutError:
        raise UploadTimeout() from None
    return routing.empty()


@routing.streaming
async def upload(req):
    return await _stream_into(req, staging=False)


@routing.streaming
async def stage(req):
    return await _stream_into(req, staging=True)


def import_image(req):
    data.import_image(req.context, req.params["image_id"], req.json(),
                      req.headers.get("x-image-meta-store"))
    return routing.empty(202)


_RANGE = re.compile(r"^\s*bytes\s*=\s*([0-9]{0,19})\s*-\s*([0-9]{0,19})\s*$")  # ASCII: int() safe


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The one byte range (first, last inclusive) asked for, None for the whole image.

    Like glance, a range it cannot serve (malformed, several ranges, past the end) is 416.
    """
    if header is None:
        return None
    match = _RANGE.match(header)
    unsatisfiable = exceptions.RangeNotSatisfiable(
        f"Requested range {header!r} is not satisfiable for an image of {size} bytes.",
        headers={"Content-Range": f"bytes */{size}"})
    if not match or not any(match.groups()):
        raise unsatisfiable
    first, last = match.groups()
    if not first:
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise unsatisfiable
        return max(size - suffix, 0), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if start >= size or end < start:
        raise unsatisfiable
    return start, min(end, size - 1)


class ImageDataResponse(Response):
    """Streams ``length`` bytes of a store reader from ``offset``; closes it when done."""

    def __init__(self, reader, offset: int, length: int, status: int, headers: dict):
        super().__init__(status_code=status, media_type="application/octet-stream",
                         headers=dict(headers, **{"content-length": str(length)}))
        self.reader, self.offset, self.length = reader, offset, length

    async def __call__(self, scope, receive, send):
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            if scope["method"] == "HEAD" or self.length == 0:
                await send({"type": "http.response.body", "body": b""})
                return
            await self._send_body(receive, send)
        finally:
            await run_in_threadpool(self.reader.close)

    async def _send_body(self, receive, send):
        gone = asyncio.ensure_future(_disconnected(receive))
        read_at, end = self.reader.read_at, self.offset + self.length
        spans = ((min(READ_SIZE, end - at), at) for at in range(self.offset, end, READ_SIZE))
        reads: collections.deque[asyncio.Future] = collections.deque()

        def read_next() -> None:
            span = next(spans, None)  # (length, offset)
            if span is not None:  # positional reads: several may run at once
                reads.append(asyncio.ensure_future(run_in_threadpool(read_at, *span)))

        try:
            for _ in range(READ_AHEAD):
                read_next()
            sent = 0
            while reads:
                chunk = await reads.popleft()
                if not chunk:
                    raise exceptions.PocketstackError("The image data ended unexpectedly.")
                read_next()
                sent += len(chunk)
                if gone.done():
                    return
                await send({"type": "http.response.body", "body": chunk,
                            "more_body": sent < self.length})
        finally:
            gone.cancel()
            if reads:
                with contextlib.suppress(BaseException):
                    await asyncio.wait(reads)


async def _disconnected(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def download(req):
    found = await run_in_threadpool(data.open_download, req.context, req.params["image_id"])
    if found is None:
        return routing.empty(204)
    try:
        span = parse_range(req.headers.get("range"), found.size)
    except exceptions.RangeNotSatisfiable:
        found.reader.close()
        raise
    headers = {}
    if span is None:
        offset, length, status = 0, found.size, 200
        if found.checksum:
            headers["Content-MD5"] = found.checksum
    else:
        offset, length, status = span[0], span[1] - span[0] + 1, 206
        headers["Content-Range"] = f"bytes {span[0]}-{span[1]}/{found.size}"
    return ImageDataResponse(found.reader, offset, length, status, headers)
