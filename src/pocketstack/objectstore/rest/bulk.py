"""Bulk delete: ``POST /v1/{account}?bulk-delete`` with a body of URL-encoded
``/container/object`` (or ``/container``) lines, as swift's bulk middleware; each is
deleted as its own DELETE would be, and the result is summed up in the body."""
from __future__ import annotations

import urllib.parse

from pocketstack.objectstore import access, api, store
from pocketstack.objectstore.errors import SwiftError
from pocketstack.objectstore.rest import common, object_versioning, objects

MAX_DELETES = 10000
REASONS = {401: "401 Unauthorized", 403: "403 Forbidden", 409: "409 Conflict",
           412: "412 Precondition Failed", 400: "400 Bad Request"}


def info() -> dict:
    return {"max_deletes_per_request": MAX_DELETES, "max_failed_deletes": 1000}


def delete(req, account: str):
    lines = [line.strip() for line in req.body.decode("utf-8", "replace").splitlines()]
    names = [urllib.parse.unquote(line) for line in lines if line]
    if len(names) > MAX_DELETES:
        raise SwiftError(413, f"Maximum Bulk Deletes: {MAX_DELETES} per request")
    deleted, missing, errors = 0, 0, []
    for name in names:
        container, _, obj = name.lstrip("/").partition("/")
        try:
            if not container or "\x00" in name:
                raise SwiftError(400)
            if obj:
                found = objects.authorized_container(req, account, container, obj, "DELETE")
                if object_versioning.delete_current(found, obj) is False:
                    store.remove(api.delete_object(found, obj))
            else:
                access.check_account(req.context, account, "DELETE")
                for file_id in api.delete_container(account, container):
                    store.remove(file_id)
            deleted += 1
        except SwiftError as error:
            if error.code == 404:
                missing += 1
            else:
                errors.append((urllib.parse.quote(name), REASONS.get(error.code,
                                                                     f"{error.code} Error")))
    return common.bulk_result(req, deleted, missing, errors)
