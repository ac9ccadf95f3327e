"""/v1/{account}/{container}: PUT (create, 201; 202 when it exists), POST (metadata),
HEAD/GET (usage, metadata, object listing), DELETE (404 missing, 409 not empty)."""
from __future__ import annotations

from pocketstack.objectstore import access, api, constraints, store
from pocketstack.objectstore.errors import SwiftError
from pocketstack.objectstore.rest import common, object_versioning, versioning
from pocketstack.wsgi import routing

# Container headers besides X-Container-Meta-* that PUT and POST keep (ACLs).
KEPT = ("x-container-read", "x-container-write", versioning.STACK, versioning.HISTORY)
ACLS = KEPT
TEMP_URL_KEYS = ("x-container-meta-temp-url-key", "x-container-meta-temp-url-key-2")
QUOTAS = ("x-container-meta-quota-bytes", "x-container-meta-quota-count")


def _changes(req) -> dict:
    constraints.check_metadata(req.headers, "container")
    changes = common.meta_changes(req.headers, "container", KEPT)
    versioning.check_headers(changes, {})
    object_versioning.container_changes(req.headers, changes)
    for key in QUOTAS:
        value = changes.get(key)
        if value:
            try:
                if int(value) < 0:
                    raise ValueError
            except ValueError:
                raise SwiftError(400, "Invalid quota value.") from None
    return changes


def _checker(changes: dict):
    def check(meta: dict) -> None:
        constraints.check_stored_metadata(meta, "container")
        versioning.check_headers({}, meta)
        object_versioning.check_container(changes, meta)
    return check


@routing.public
def create(req):
    account, container, _ = common.names(req)
    access.check_account(req.context, account, req.method)
    changes = _changes(req)
    created = api.put_container(account, container, changes, _checker(changes))
    return common.response(201 if created else 202)


@routing.public
def update(req):
    account, container, _ = common.names(req)
    access.check_account(req.context, account, req.method)
    changes = _changes(req)
    api.post_container(account, container, changes, _checker(changes))
    return common.response(204)


@routing.public
def show(req):
    account, container, _ = common.names(req)
    role = access.account_role(req.context, account)
    if role is not None:
        info = api.get_container(account, container)
    else:  # a stranger to the account: the container's read ACL decides
        info = _readable(req, account, container)
        access.check_container(req.context, account, info.meta, req.method, listing=True)
    hidden = object_versioning.HIDDEN + (() if role in ("owner", "reseller")
                                         else ACLS + TEMP_URL_KEYS)
    headers = {"X-Container-Object-Count": str(info.object_count),
               "X-Container-Bytes-Used": str(info.bytes_used
                                             + object_versioning.container_bytes(info)),
               "X-Timestamp": info.timestamp, "X-Put-Timestamp": info.put_timestamp,
               "Last-Modified": api.http_date(info.put_timestamp),
               "X-Storage-Policy": "Policy-0", "Accept-Ranges": "bytes",
               **common.meta_headers(info.meta, hidden)}
    if req.method == "HEAD":
        return common.head_response(req, headers)
    if "versions" in req.query:
        return object_versioning.listing(req, info, headers)
    entries = api.list_objects(info, **common.listing_params(req))
    return common.listing_response(req, "container", container, entries, headers)


def _readable(req, account: str, container: str) -> api.ContainerInfo:
    """The container for a request without a role on the account: 401/403 rather than
    a 404 that would tell a stranger whether it exists."""
    info = api.find_container(account, container)
    if info is None:
        raise access.denied(req.context)
    return info


@routing.public
def delete(req):
    account, container, _ = common.names(req)
    access.check_account(req.context, account, req.method)
    for file_id in api.delete_container(account, container):
        store.remove(file_id)
    return common.response(204)
