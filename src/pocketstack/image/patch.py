"""Parsing and checking of image JSON-patch documents, as glance's RequestDeserializer.

``application/openstack-images-v2.1-json-patch`` is RFC 6902 style ({"op": "add",
"path": "/name", "value": …}); the older ``…-v2.0-json-patch`` is draft 4
({"add": "/name", "value": …}), where ``add`` of an existing property is a conflict.
Anything else is 415 with an ``Accept-Patch`` header, like glance.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

from pocketstack.common import exceptions
from pocketstack.image import schemas

CONTENT_TYPES = {
    "application/openstack-images-v2.0-json-patch": 4,
    "application/openstack-images-v2.1-json-patch": 10,
}
OPERATIONS = ("add", "remove", "replace")
READONLY = ("created_at", "updated_at", "status", "checksum", "size", "virtual_size",
            "direct_url", "self", "file", "schema", "id", "os_hash_algo", "os_hash_value")
DISALLOWED = ("direct_url", "self", "file", "schema", "stores")
RESERVED = ("location", "deleted", "deleted_at")
RESERVED_NAMESPACE = "os_glance"
# glance lets /locations/N address one location; every other path has one level.
PATH_DEPTH = {"locations": {"add": 2, "remove": 2, "replace": 1}}


@dataclasses.dataclass
class Change:
    op: str
    path: list[str]
    value: Any = None
    draft: int = 10

    @property
    def root(self) -> str:
        return self.path[0]


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def check_content_type(content_type: str | None) -> int:
    draft = CONTENT_TYPES.get(media_type(content_type))
    if draft is None:
        allowed = ", ".join(sorted(CONTENT_TYPES))
        raise exceptions.UnsupportedMediaType(
            f"Image PATCH expects Content-Type one of: {allowed}",
            headers={"Accept-Patch": allowed})
    return draft


def check_reserved(key: str) -> None:
    if key in RESERVED or key.startswith(RESERVED_NAMESPACE):
        raise exceptions.Forbidden(f"Attribute '{key}' is reserved.")


def _decode_pointer(pointer: Any) -> list[str]:
    if not isinstance(pointer, str):
        raise exceptions.BadRequest("The JSON pointer of a change must be a string.")
    if not pointer.startswith("/"):
        raise exceptions.BadRequest(f'Pointer `{pointer}` does not start with "/".')
    if re.search(r"/\s*?/", pointer[1:]):
        raise exceptions.BadRequest(f'Pointer `{pointer}` contains adjacent "/".')
    if len(pointer) > 1 and pointer.endswith("/"):
        raise exceptions.BadRequest(f'Pointer `{pointer}` end with "/".')
    if pointer[1:].strip() == "/" or not pointer[1:].strip():
        raise exceptions.BadRequest(f"Pointer `{pointer}` does not contains valid token.")
    if re.search("~[^01]", pointer) or pointer.endswith("~"):
        raise exceptions.BadRequest(
            f'Pointer `{pointer}` contains "~" not part of a recognized escape sequence.')
    return [part.replace("~1", "/").replace("~0", "~").strip()
            for part in pointer.lstrip("/").split("/")]


def _operation(raw: dict, draft: int) -> tuple[str, Any]:
    if draft == 10:
        op = raw.get("op")
        if op not in OPERATIONS:
            what = "Unable to find `op` in JSON Schema change." if op is None else \
                f"Invalid operation: `{op}`."
            raise exceptions.BadRequest(
                f"{what} It must be one of the following: {', '.join(OPERATIONS)}.")
        if "path" not in raw:
            raise exceptions.BadRequest("Unable to find 'path' in JSON Schema change")
        return op, raw["path"]
    ops = [key for key in OPERATIONS if key in raw]
    if len(ops) != 1:
        raise exceptions.BadRequest('Operation objects must contain exactly one member '
                                    'named "add", "remove", or "replace".')
    return ops[0], raw[ops[0]]


def _check_change(change: Change) -> None:
    root = change.root
    if root in READONLY or root in DISALLOWED:
        raise exceptions.Forbidden(f"Attribute '{root}' is read-only.")
    check_reserved(root)
    if len(root) > 255:
        raise exceptions.BadRequest("Custom property should not be greater than 255 characters.")
    if change.op == "remove":
        return
    if len(change.path) == 1:
        schemas.validate_image({root: change.value})
    elif root == "tags":
        schemas.validate_image({root: [change.value]})


def parse(content_type: str | None, body: Any) -> list[Change]:
    draft = check_content_type(content_type)
    if not isinstance(body, list):
        raise exceptions.BadRequest("Request body must be a JSON array of operation objects.")
    changes = []
    for raw in body:
        if not isinstance(raw, dict):
            raise exceptions.BadRequest("Operations must be JSON objects.")
        op, pointer = _operation(raw, draft)
        path = _decode_pointer(pointer)
        depth = PATH_DEPTH.get(path[0], {}).get(op, 1)
        if len(path) != depth:
            raise exceptions.BadRequest(
                f"Invalid JSON pointer for this resource: '/{'/'.join(path)}'")
        change = Change(op=op, path=path, draft=draft)
        if op != "remove":
            if "value" not in raw:
                raise exceptions.BadRequest(f'Operation "{op}" requires a member named "value".')
            change.value = raw["value"]
        _check_change(change)
        changes.append(change)
    return changes
