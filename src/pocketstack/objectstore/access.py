"""Who may do what, as swift's keystoneauth and tempurl middlewares decide.

* An account is ``AUTH_<project id>``. A token scoped to that project with an operator
  role (policy ``objectstore:operator``: member, admin) owns it; a reader role reads it;
  ``ResellerAdmin`` (``objectstore:reseller_admin``) reaches every account.
* Container ACLs: ``X-Container-Read`` (``.r:*`` lets anyone read objects, ``.rlistings``
  also list them; ``<project>:<user>``, ``<project>:*``, ``*:<user>``, ``*:*`` name
  token holders, by id, or by name for users and projects of the default domain) and
  ``X-Container-Write`` (token holders only).
* A temporary URL (``temp_url_sig``/``temp_url_expires``) signed with an account or
  container key grants one method on one object (or a prefix) until it expires.
Denied: 401 without a token, 403 with one.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import time

from pocketstack.common import config, policy
from pocketstack.objectstore.errors import SwiftError

READS = frozenset({"GET", "HEAD"})


def project_of(account: str) -> str | None:
    prefix = config.CONF.objectstore.reseller_prefix
    return account[len(prefix):] if account.startswith(prefix) else None


def denied(ctx) -> SwiftError:
    return SwiftError(403) if ctx.user_id else SwiftError(401)


def account_role(ctx, account: str) -> str | None:
    """"reseller", "owner", "reader" or None: what the token is to this account."""
    if not ctx.user_id:
        return None
    if policy.check(ctx, "objectstore:reseller_admin", {}):
        return "reseller"
    if ctx.project_id and project_of(account) == ctx.project_id:
        if policy.check(ctx, "objectstore:operator", {"project_id": ctx.project_id}):
            return "owner"
        if policy.check(ctx, "objectstore:reader", {"project_id": ctx.project_id}):
            return "reader"
    return None


def check_account(ctx, account: str, method: str) -> str:
    """Account-level requests (and container PUT/POST/DELETE): owners, reseller admins,
    and readers for reads."""
    role = account_role(ctx, account)
    if role in ("owner", "reseller") or (role == "reader" and method in READS):
        return role
    raise denied(ctx)


def parse_acl(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def _user_matches(ctx, item: str, names: bool) -> bool:
    """``<project>:<user>`` against the token: ids or ``*``, and names when ``names``."""
    if ":" not in item:
        return False
    project, user = item.split(":", 1)
    projects, users = ["*", ctx.project_id], ["*", ctx.user_id]
    if names:
        projects.append(ctx.project_name)
        users.append(ctx.user_name)
    return project in projects and user in users


def _names_allowed(ctx) -> bool:
    """Names are unique only inside a domain: as swift's keystoneauth (allow_names_in_acls),
    an ACL's names match only a user and project of the default domain."""
    default = config.CONF.identity.default_domain_id
    return all(domain in (None, default) for domain in (ctx.user_domain_id,
                                                        ctx.project_domain_id))


def _acl_grants(ctx, acl: list[str]) -> bool:
    if not ctx.user_id:
        return False
    names = _names_allowed(ctx)
    return any(_user_matches(ctx, item, names) for item in acl)


def check_container(ctx, account: str, container_meta: dict, method: str,
                    listing: bool) -> None:
    """Object requests and container reads: the account's owners, then the ACLs."""
    role = account_role(ctx, account)
    if role in ("owner", "reseller") or (role == "reader" and method in READS):
        return
    if method in READS:
        acl = parse_acl(container_meta.get("x-container-read"))
        # any referrer (host-specific referrer rules are not honoured: they let no one in)
        anyone = ".r:*" in acl or ".referrer:*" in acl
        if anyone and (not listing or ".rlistings" in acl):
            return
        if _acl_grants(ctx, acl):
            return
    elif not listing:
        acl = parse_acl(container_meta.get("x-container-write"))
        if _acl_grants(ctx, acl):
            return
    raise denied(ctx)


# --- temporary URLs ---------------------------------------------------------------------

DIGESTS = {"sha1": hashlib.sha1, "sha256": hashlib.sha256, "sha512": hashlib.sha512}
HEX_LENGTHS = {40: "sha1", 64: "sha256", 128: "sha512"}


def _signature(sig: str) -> tuple[str, bytes] | None:
    """(digest name, raw signature) from hex or ``<digest>:<base64>``."""
    if ":" in sig:
        name, _, encoded = sig.partition(":")
        if name not in DIGESTS:
            return None
        try:
            raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        except ValueError:
            return None
        return name, raw
    name = HEX_LENGTHS.get(len(sig))
    if name is None:
        return None
    try:
        return name, bytes.fromhex(sig)
    except ValueError:
        return None


ACCOUNT_SCOPE, CONTAINER_SCOPE = "account", "container"
KEY_NAMES = ("temp-url-key", "temp-url-key-2")


def temp_url_keys(account_meta: dict, container_meta: dict | None) -> list[tuple[str, str]]:
    """(key, scope) for the account's and the container's Temp-URL keys (tempurl's and
    formpost's ``_get_keys``)."""
    keys = [(account_meta[f"x-account-meta-{name}"], ACCOUNT_SCOPE) for name in KEY_NAMES
            if account_meta.get(f"x-account-meta-{name}")]
    if container_meta is not None:
        keys += [(container_meta[f"x-container-meta-{name}"], CONTAINER_SCOPE)
                 for name in KEY_NAMES if container_meta.get(f"x-container-meta-{name}")]
    return keys


def signed_scope(sig: str, bodies: list[bytes], keys: list[tuple[str, str]]) -> str | None:
    """The scope of the key whose HMAC of one of ``bodies`` is ``sig`` (hex or
    ``<digest>:<base64>``, a digest of ``[objectstore] tempurl_digests``), or None."""
    parsed = _signature(sig)
    if parsed is None or parsed[0] not in config.CONF.objectstore.tempurl_digests:
        return None
    digest, raw = parsed
    for key, scope in keys:
        for body in bodies:
            if hmac.compare_digest(hmac.new(key.encode(), body, DIGESTS[digest]).digest(), raw):
                return scope
    return None


def check_temp_url(query, method: str, paths: list[str], keys: list[tuple[str, str]]
                   ) -> str | None:
    """The scope (account or container) of the key that signed the query's temp_url_sig
    for ``method`` on one of ``paths`` (the object's path as swift sees it, and as the
    client reached it), None if none did. Raises 401 for an expired or malformed
    temporary URL."""
    sig, expires = query.get("temp_url_sig"), query.get("temp_url_expires")
    if sig is None or expires is None:
        raise SwiftError(401)
    try:
        expiry = int(expires)
    except ValueError:
        raise SwiftError(401) from None
    if expiry < time.time():
        raise SwiftError(401)
    if _signature(sig) is None:
        raise SwiftError(401)
    prefix = query.get("temp_url_prefix")
    methods = [method] + (["GET", "PUT", "POST"] if method == "HEAD" else [])
    bodies = []
    for path in paths:
        if prefix is not None:
            base = path.split("/", 4)
            if len(base) < 5 or not base[4].startswith(prefix):
                continue
            path = "prefix:" + "/".join(base[:4]) + "/" + prefix
        for m in methods:
            if m not in config.CONF.objectstore.tempurl_methods and m != "HEAD":
                continue
            bodies.append(f"{m}\n{expiry}\n{path}".encode())
    return signed_scope(sig, bodies, keys)
