"""The image service's swift store (glance_store's single-tenant swift driver): an image's
data is an object of the image service's own account (the glance user's project) in
``[image] swift_store_container``, reached through the object-store API (the catalog's
endpoint: the embedded service or the RADOS Gateway), never the object store's tables.

As glance_store: an upload of unknown size or of ``swift_store_large_object_size`` MiB or
more goes up in segments ``<image id>-00001``, ... of ``swift_store_large_object_chunk_size``
MiB, joined by a dynamic large object manifest named after the image
(``X-Object-Manifest: <container>/<image id>-``); a smaller one is one object. Each
segment is buffered in a temp file of the file store's, not in memory. The location is
``swift+http://<account URL without scheme>/<container>/<image id>``.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import urllib.parse

from pocketstack.clients.object_store import ObjectStoreClient, quote
from pocketstack.common import config, exceptions
from pocketstack.common import image_formats as formats
from pocketstack.image import store

READ_AHEAD = 8 << 20  # bytes a download fetches per request


def _client() -> ObjectStoreClient:
    return ObjectStoreClient(caller="image")


def container() -> str:
    return config.CONF.image.swift_store_container


def location(client: ObjectStoreClient, image_id: str) -> str:
    scheme, _, rest = client.account_url.partition("://")
    return f"swift+{scheme}://{rest}/{quote(container())}/{quote(image_id)}"


def parse(url: str) -> tuple[str, str]:
    """(container, object) of a location."""
    path = urllib.parse.urlsplit(url).path
    *_, cont, obj = path.split("/")
    return urllib.parse.unquote(cont), urllib.parse.unquote(obj)


class SwiftWriter(store.Writer):
    store_name = "swift"
    commit_in_transaction = False  # its PUTs go through the object store's API

    def _open(self, size_hint: int | None) -> None:
        conf = config.CONF.image
        self._client = _client()
        self._container = container()
        self._chunk_size = conf.swift_store_large_object_chunk_size << 20
        self._segmented = size_hint is None or \
            size_hint >= conf.swift_store_large_object_size << 20
        self._segments: list[str] = []
        # Made at the first PUT: this runs inside the image row's transaction, and the
        # object store's own writes would wait for it.
        self._container_made = not conf.swift_store_create_container_on_put
        self._buffer = self._new_buffer()

    def _new_buffer(self):
        return tempfile.TemporaryFile(dir=os.path.join(store.datadir(), "tmp"))

    def _start_write(self, data: bytes, offset: int):
        return self._streams[2].submit(self._append, data)

    def _append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            room = self._chunk_size - self._buffer.tell() if self._segmented else len(view)
            self._buffer.write(view[:room])
            view = view[room:]
            if self._segmented and self._buffer.tell() >= self._chunk_size:
                self._put_segment()

    def _put_segment(self) -> None:
        name = f"{self.image_id}-{len(self._segments) + 1:05d}"
        self._put_buffer(name)
        self._segments.append(name)

    def _put_buffer(self, name: str) -> None:
        if not self._container_made:
            self._client.ensure_container(self._container)
            self._container_made = True
        size = self._buffer.tell()
        self._buffer.seek(0)
        self._client.put(self._container, name, self._buffer if size else b"",
                         headers={"Content-Length": str(size)})
        self._buffer.close()
        self._buffer = self._new_buffer()

    def _close_data(self) -> None:
        if not self._segmented:
            self._put_buffer(self.image_id)
            return
        if self._buffer.tell() or not self._segments:
            self._put_segment()
        self._client.put(self._container, self.image_id, b"", headers={
            "X-Object-Manifest": f"{self._container}/{self.image_id}-"})

    def commit(self, dest: str | None = None, inspect: bool = False) -> store.Written:
        written = self._finish()
        self.location = location(self._client, self.image_id)
        if inspect and config.CONF.image.require_image_format_match:
            reader = Reader(self.location)
            try:
                refused = formats.problem_at(self.disk_format, self.size, reader.read_at)
            finally:
                reader.close()
            if refused:
                self.undo_commit()
                raise exceptions.BadRequest(refused)
        return written

    def undo_commit(self) -> None:
        with contextlib.suppress(Exception):
            _remove(self._client, self._container, self.image_id)

    def abort(self) -> None:
        try:
            self._stop_streams()
            self._inflight.clear()
            with contextlib.suppress(Exception):
                self._buffer.close()
        finally:
            with contextlib.suppress(Exception):
                _remove(self._client, self._container, self.image_id)


class Reader:
    """Positional reads of an image's object (ranged GETs, read ahead). A download reads
    several spans at once: the read-ahead window is swapped whole, under a lock."""

    def __init__(self, url: str):
        self._client = _client()
        self._container, self._name = parse(url)
        self._window = (0, b"")
        self._lock = threading.Lock()

    def exists(self) -> bool:
        return self._client.head(self._container, self._name) is not None

    def read_at(self, length: int, offset: int) -> bytes:
        if not length:
            return b""
        end = offset + length
        with self._lock:
            start, data = self._window
            if start <= offset and end <= start + len(data):
                return data[offset - start:end - start]
            data = self._client.get(self._container, self._name, byte_range=(
                offset, offset + max(length, READ_AHEAD) - 1))
            self._window = (offset, data)
        return data[:length]

    def close(self) -> None:
        self._window = (0, b"")


def open_reader(url: str) -> Reader | None:
    reader = Reader(url)
    return reader if reader.exists() else None


def _remove(client: ObjectStoreClient, cont: str, image_id: str) -> None:
    """The image's object (a manifest or the whole data) and its segments."""
    client.delete(cont, image_id)
    for name in client.list(cont, prefix=f"{image_id}-"):
        client.delete(cont, name)


def delete(image_id: str, url: str) -> None:
    cont, name = parse(url)
    _remove(_client(), cont, name)


def import_file(image_id: str, path: str, chunk: int = 4 << 20) -> str:
    """Copy a staged file into the store (a glance-direct import); its location."""
    writer = SwiftWriter(image_id, size_hint=os.path.getsize(path))
    try:
        with open(path, "rb", buffering=0) as f:
            while data := f.read(chunk):
                writer.write(data)
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    return writer.location
