"""Large objects: static (SLO: a JSON manifest of segments, ``?multipart-manifest=put``,
checked against each segment's ETag and size) and dynamic (DLO: ``X-Object-Manifest:
<container>/<prefix>``, the segments being whatever that prefix lists). A GET streams the
segments one after the other; ``?multipart-manifest=get`` returns the manifest itself and
``?multipart-manifest=delete`` removes an SLO with its segments.

Segments are plain objects of the same account (a manifest among an SLO's segments is
refused: nested manifests are not supported here).
"""
from __future__ import annotations

import hashlib
import json
import urllib.parse

from pocketstack.objectstore import api, store
from pocketstack.objectstore.errors import SwiftError, bad_request

MAX_SEGMENTS = 1000
MAX_MANIFEST_SIZE = 8 * 1024 * 1024
SLO = "x-static-large-object"
DLO = "x-object-manifest"


def info() -> dict:
    return {"max_manifest_segments": MAX_SEGMENTS, "max_manifest_size": MAX_MANIFEST_SIZE,
            "min_segment_size": 1, "yield_frequency": 10}


def _split(path: str) -> tuple[str, str]:
    container, _, obj = urllib.parse.unquote(path).lstrip("/").partition("/")
    if not container or not obj:
        raise ValueError(path)
    return container, obj


def parse_manifest(body: bytes) -> list[dict]:
    """The segments a ``multipart-manifest=put`` body lists (400 as swift's slo says)."""
    if len(body) > MAX_MANIFEST_SIZE:
        raise SwiftError(413, f"Manifest File > {MAX_MANIFEST_SIZE} bytes")
    try:
        segments = json.loads(body)
    except ValueError:
        raise bad_request("Manifest must be valid JSON.\n") from None
    if not isinstance(segments, list) or not segments:
        raise bad_request("Manifest must be a list.\n" if not isinstance(segments, list)
                          else "Manifest must have at least one segment.\n")
    if len(segments) > MAX_SEGMENTS:
        raise SwiftError(413, f"Too many segments: max {MAX_SEGMENTS}\n")
    wanted = []
    for index, segment in enumerate(segments):
        if not isinstance(segment, dict) or not isinstance(segment.get("path"), str):
            raise bad_request(f"Index {index}: \"path\" must be a string.\n")
        extra = set(segment) - {"path", "etag", "size_bytes"}
        if extra:
            raise bad_request(f"Index {index}: extraneous keys "
                              + ", ".join(f'"{k}"' for k in sorted(extra)) + "\n")
        try:
            _split(segment["path"])
        except ValueError:
            raise bad_request(f"Index {index}: path does not refer to an object. Path must "
                              "be of the form /container/object.\n") from None
        size = segment.get("size_bytes")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool)
                                 or size < 0):
            raise bad_request(f"Index {index}: invalid size_bytes\n")
        etag = segment.get("etag")
        if etag is not None and not isinstance(etag, str):
            raise bad_request(f"Index {index}: invalid etag\n")
        wanted.append(segment)
    return wanted


def check_segments(account: str, segments: list[dict], lookup) -> tuple[list[dict], int, str]:
    """Each segment as it is now, checked against what the manifest says: (the stored
    manifest, total size, the SLO's ETag). ``lookup(account, container, obj)`` gives a
    segment's ObjectInfo (or raises). 400 with swift's list of errors."""
    errors, stored, hashes, total = [], [], [], 0
    for index, segment in enumerate(segments):
        container, obj = _split(segment["path"])
        path = f"/{container}/{obj}"
        try:
            found = lookup(account, container, obj)
        except SwiftError as error:
            errors.append((path, f"{error.code} {_reason(error.code)}"))
            continue
        if found is None:
            errors.append((path, "404 Not Found"))
            continue
        if found.meta.get(SLO) or found.meta.get(DLO):
            errors.append((path, "Nested manifests are not supported"))
            continue
        if segment.get("etag") and segment["etag"].strip('"') != found.etag:
            errors.append((path, "Etag Mismatch"))
        if segment.get("size_bytes") is not None and segment["size_bytes"] != found.size:
            errors.append((path, "Size Mismatch"))
        if found.size < 1 and index < len(segments) - 1:
            errors.append((path, "Too small; each segment must be at least 1 byte."))
        stored.append({"name": path, "bytes": found.size, "hash": found.etag,
                       "content_type": found.content_type,
                       "last_modified": api.listing_time(found.last_modified)})
        hashes.append(found.etag)
        total += found.size
    if errors:
        raise bad_request("Errors:\n" + "\n".join(f"{p}, {r}" for p, r in errors))
    return stored, total, hashlib.md5("".join(hashes).encode()).hexdigest()


def _reason(code: int) -> str:
    return {401: "Unauthorized", 403: "Forbidden", 404: "Not Found"}.get(code, "Error")


def read_manifest(obj: api.ObjectInfo) -> list[dict]:
    with store.open_file(obj.file) as f:
        return json.loads(f.read())


def raw_manifest(manifest: list[dict]) -> list[dict]:
    """``?multipart-manifest=get&format=raw``: the manifest as it was PUT."""
    return [{"path": s["name"], "etag": s["hash"], "size_bytes": s["bytes"]}
            for s in manifest]


def slo_sources(account: str, manifest: list[dict], lookup) -> list:
    """(file id, offset, length) of each segment, which must still be what the manifest
    recorded (409 otherwise, as swift answers a changed segment)."""
    sources = []
    for segment in manifest:
        container, obj = _split(segment["name"])
        found = lookup(account, container, obj)
        if found is None or found.etag != segment["hash"] or found.size != segment["bytes"]:
            raise SwiftError(409)
        sources.append((found.file, 0, found.size))
    return sources


def dlo_sources(account: str, manifest: str, list_segments) -> tuple[list, int, str]:
    """The segments under a DLO's ``<container>/<prefix>``: (sources, size, ETag — the
    quoted MD5 of the segments' ETags, as swift's dlo)."""
    container, _, prefix = urllib.parse.unquote(manifest).partition("/")
    sources, hashes, total = [], [], 0
    for found in list_segments(account, container, prefix):
        sources.append((found.file, 0, found.size))
        hashes.append(found.etag)
        total += found.size
    return sources, total, hashlib.md5("".join(hashes).encode()).hexdigest()


def segment_paths(manifest: list[dict]) -> list[tuple[str, str]]:
    return [_split(segment["name"]) for segment in manifest]
