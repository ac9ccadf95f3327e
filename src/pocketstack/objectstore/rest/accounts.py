"""/v1/{account}: HEAD/GET (usage, metadata, container listing) and POST (metadata).
Accounts exist without being created (swift's account_autocreate); PUT and DELETE are
reseller operations swift turns off (allow_account_management): 405."""
from __future__ import annotations

from pocketstack.objectstore import access, api, constraints
from pocketstack.objectstore.errors import SwiftError
from pocketstack.objectstore.rest import bulk, common
from pocketstack.wsgi import routing

TEMP_URL_KEYS = ("x-account-meta-temp-url-key", "x-account-meta-temp-url-key-2")
QUOTA = "x-account-meta-quota-bytes"


def _headers(info: api.AccountInfo, role: str) -> dict:
    hidden = () if role in ("owner", "reseller") else TEMP_URL_KEYS
    return {"X-Account-Container-Count": str(info.container_count),
            "X-Account-Object-Count": str(info.object_count),
            "X-Account-Bytes-Used": str(info.bytes_used),
            "X-Timestamp": info.timestamp,
            "X-Put-Timestamp": info.timestamp,
            "Accept-Ranges": "bytes",
            **common.meta_headers(info.meta, hidden)}


@routing.public
def show(req):
    account, _, _ = common.names(req)
    role = access.check_account(req.context, account, req.method)
    info = api.get_account(account)
    headers = _headers(info, role)
    if req.method == "HEAD":
        return common.head_response(req, headers)
    entries = api.list_containers(account, **common.listing_params(req))
    return common.listing_response(req, "account", account, entries, headers)


@routing.public
def update(req):
    account, _, _ = common.names(req)
    if "bulk-delete" in req.query:
        return bulk.delete(req, account)
    role = access.check_account(req.context, account, req.method)
    constraints.check_metadata(req.headers, "account")
    changes = common.meta_changes(req.headers, "account")
    if QUOTA in changes and role != "reseller":
        raise SwiftError(403)  # account quotas are set by reseller admins only
    if changes.get(QUOTA):
        _quota_value(changes[QUOTA])
    api.update_account(account, changes,
                       lambda meta: constraints.check_stored_metadata(meta, "account"))
    return common.response(204)


def _quota_value(value: str) -> int:
    try:
        quota = int(value)
    except ValueError:
        raise SwiftError(400, "Invalid bytes quota.") from None
    if quota < 0:
        raise SwiftError(400, "Invalid bytes quota.")
    return quota


@routing.public
def not_allowed(req):
    common.names(req)
    raise SwiftError(405, headers={"Allow": "GET, HEAD, POST"})
