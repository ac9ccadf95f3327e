"""FormPOST as swift's formpost middleware: an HTML form (multipart/form-data) POSTed to
``/v1/{account}/{container}[/{object prefix}]`` uploads its files as objects named
``<prefix><filename>``, when ``signature`` (HMAC of ``path``, ``redirect``,
``max_file_size``, ``max_file_count`` and ``expires`` with an account or container
Temp-URL key, a digest of ``[objectstore] tempurl_digests``) is valid and ``expires`` is
in the future. The answer is a 303 to ``redirect`` with ``status`` and ``message`` once
the signature verified (never for a form that is not signed, nor to a ``redirect`` with
control characters: 400), otherwise a short page.

The body is parsed as it arrives; each file streams into its object as a PUT's would.
"""
from __future__ import annotations

import html
import time
import urllib.parse

from pocketstack.objectstore import access, api, constraints, store
from pocketstack.objectstore.errors import SwiftError
from pocketstack.objectstore.rest import common
from pocketstack.objectstore.threads import run_in_threadpool

MAX_VALUE = 4096  # bytes of a form field that is not a file
_URL_SAFE = "".join(chr(c) for c in range(33, 127))  # printable ASCII but the space


class FormError(Exception):
    def __init__(self, status: str, message: str):
        self.status, self.message = status, message


def is_form(req) -> bool:
    return req.headers.get("content-type", "").lower().startswith("multipart/form-data")


def _boundary(content_type: str) -> bytes:
    for item in content_type.split(";")[1:]:
        key, _, value = item.strip().partition("=")
        if key.lower() == "boundary" and value:
            return value.strip('"').encode("latin-1")
    raise FormError("400 Bad Request", "invalid boundary")


def _part_headers(raw: bytes) -> dict:
    headers = {}
    for line in raw.decode("latin-1").split("\r\n"):
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    return headers


def _disposition(value: str) -> dict:
    params = {}
    for item in value.split(";")[1:]:
        key, _, val = item.strip().partition("=")
        params[key.lower()] = val.strip('"')
    return params


async def _parts(stream, boundary: bytes):
    """(headers, chunks) for each part, ``chunks`` an async generator of its body."""
    delimiter = b"\r\n--" + boundary
    buffer = b"\r\n"  # so the first delimiter looks like the others
    source = stream.__aiter__()
    ended = False

    async def fill() -> bool:
        nonlocal buffer, ended
        if ended:
            return False
        try:
            buffer += await source.__anext__()
            return True
        except StopAsyncIteration:
            ended = True
            return False

    while True:  # the next delimiter line
        while delimiter not in buffer:
            if not await fill():
                raise FormError("400 Bad Request", "no closing boundary")
        buffer = buffer[buffer.index(delimiter) + len(delimiter):]
        while len(buffer) < 2:
            if not await fill():
                raise FormError("400 Bad Request", "no closing boundary")
        if buffer.startswith(b"--"):
            return
        while b"\r\n\r\n" not in buffer:
            if len(buffer) > 16384 or not await fill():
                raise FormError("400 Bad Request", "invalid part headers")
        raw, buffer = buffer.split(b"\r\n\r\n", 1)
        headers = _part_headers(raw[2:] if raw.startswith(b"\r\n") else raw)
        done = False

        async def chunks():
            nonlocal buffer, done
            while True:
                at = buffer.find(delimiter)
                if at >= 0:
                    if at:
                        yield buffer[:at]
                    buffer = buffer[at:]
                    done = True
                    return
                keep = len(delimiter) - 1  # a delimiter may straddle two reads
                if len(buffer) > keep:
                    yield buffer[:-keep]
                    buffer = buffer[-keep:]
                if not await fill():
                    raise FormError("400 Bad Request", "no closing boundary")

        body = chunks()
        yield headers, body
        if not done:  # the caller skipped the part's body
            async for _ in body:
                pass


def _int_field(fields: dict, name: str) -> int:
    try:
        return int(fields.get(name, ""))
    except ValueError:
        raise FormError("400 Bad Request", f"{name} invalid") from None


async def handle(req, account: str, container: str, prefix: str, record):
    """The form's uploads; ``record(info, name, **fields)`` commits one object."""
    fields: dict[str, str] = {}
    info = None
    written = 0
    try:
        boundary = _boundary(req.headers.get("content-type", ""))
        async for headers, body in _parts(req.raw.stream(), boundary):
            params = _disposition(headers.get("content-disposition", ""))
            if "filename" not in params:
                value = b""
                async for chunk in body:
                    value += chunk
                    if len(value) > MAX_VALUE:
                        raise FormError("400 Bad Request", "form field too large")
                fields[params.get("name", "")] = value.decode("utf-8", "replace")
                continue
            if info is None:  # the first file: the form must be signed and current
                info = await run_in_threadpool(_authorize, req, account, container, prefix,
                                               fields)
            if not params["filename"]:
                async for _ in body:
                    pass
                continue
            if written >= _int_field(fields, "max_file_count"):
                raise FormError("400 Bad Request", "max_file_count exceeded")
            await _upload(info, prefix + params["filename"], headers, body, fields, record)
            written += 1
        if info is None:  # a form without files still has to be signed
            info = await run_in_threadpool(_authorize, req, account, container, prefix, fields)
        status, message = "201 Created", ""
    except FormError as error:
        status, message = error.status, error.message
    # the form's own redirect only once its signature verified: anyone may POST a form
    redirect = fields.get("redirect", "") if info is not None else ""
    if redirect:
        redirect = urllib.parse.quote(redirect, safe=_URL_SAFE)  # non-ASCII as UTF-8 escapes
        separator = "&" if "?" in redirect else "?"
        query = urllib.parse.urlencode({"status": status.split()[0], "message": message})
        return common.response(303, f'<html><body><p><a href="{html.escape(redirect)}'
                                    f'{separator}{query}">Click to continue...</a></p>'
                                    "</body></html>".encode(),
                               {"Location": f"{redirect}{separator}{query}"})
    return common.response(int(status.split()[0]),
                           f"<h1>{status}</h1><p>{html.escape(message)}</p>".encode(),
                           content_type="text/html")


def _authorize(req, account, container, prefix, fields) -> api.ContainerInfo:
    expires = fields.get("expires", "")
    if not expires.isdigit():
        raise FormError("400 Bad Request", "expired not an integer")
    if int(expires) < time.time():
        raise FormError("401 Unauthorized", "form expired")
    info = api.find_container(account, container)
    path = f"/v1/{account}/{container}" + (f"/{prefix}" if prefix else "")
    redirect = fields.get("redirect", "")
    bodies = ["\n".join([p, redirect, fields.get("max_file_size", ""),
                         fields.get("max_file_count", ""), expires]).encode()
              for p in (path, req.raw.scope.get("root_path", "") + path)]
    keys = access.temp_url_keys(api.account_meta(account),
                                info.meta if info is not None else None)
    if access.signed_scope(fields.get("signature", ""), bodies, keys) is None:
        raise FormError("401 Unauthorized", "invalid signature")
    if any(ord(c) < 32 or ord(c) == 127 for c in redirect):
        raise FormError("400 Bad Request", "invalid redirect")
    if info is None:
        raise FormError("404 Not Found", "")
    return info


async def _upload(info, name: str, headers: dict, body, fields: dict, record) -> None:
    constraints.check_name("Object", name, constraints.MAX_OBJECT_NAME_LENGTH)
    cap = _int_field(fields, "max_file_size")
    delete_at = None
    if fields.get("x_delete_at") or fields.get("x_delete_after"):
        try:
            delete_at = constraints.delete_at(
                {k.replace("_", "-"): v for k, v in fields.items()
                 if k in ("x_delete_at", "x_delete_after")}, time.time())
        except SwiftError as error:
            raise FormError("400 Bad Request", error.message) from None
    writer = await run_in_threadpool(store.Writer)
    try:
        async for chunk in body:
            if writer.size + len(chunk) > cap:
                raise FormError("400 Bad Request", "max_file_size exceeded")
            await run_in_threadpool(writer.write, chunk)
        etag = await run_in_threadpool(writer.finish)
        file_id = await run_in_threadpool(writer.commit)
    except BaseException:
        await run_in_threadpool(writer.abort)
        raise
    try:
        await record(info, name, size=writer.size, etag=etag, file=file_id,
                     content_type=headers.get("content-type") or "application/octet-stream",
                     meta={}, delete_at=delete_at)
    except SwiftError as error:
        raise FormError(f"{error.code} Error", error.message) from None

