"""Application credential access rules (/v3/users/{id}/access_rules), and their check.

As in Keystone a rule belongs to its user and is shared by that user's credentials: a
credential naming an identical rule (or an existing rule by id) reuses it. The credential
keeps the ids of its rules in its ``access_rules`` column. A rule in use cannot be deleted.

``check`` is keystonemiddleware's validate_allowed_request, run by every service's token
check: a token of a credential with access rules is good only for a request whose service
type, method and path one rule names (``*`` or ``{name}``: one path segment, ``**``: any
rest), the path as the service's router sees it (below the service's prefix, no trailing
slash). A request that also carries a valid service token is another service acting for
the user (nova asking neutron for the user's ports) and is not checked, as upstream.
"""
from __future__ import annotations

import re

import sqlalchemy as sa

from pocketstack.common import db, exceptions, runtime
from pocketstack.identity import base
from pocketstack.identity.models import AccessRule, ApplicationCredential, User


def _not_found(rule_id: str) -> exceptions.NotFound:
    return exceptions.NotFound(f"Could not find access rule: {rule_id}.")


def resolve(s, user_id: str, refs: list[dict]) -> list[str]:
    """The ids of the rules a new credential names, creating the new ones."""
    ids = []
    for ref in refs:
        rule = s.get(AccessRule, ref["id"]) if ref.get("id") else None
        if rule is not None and rule.user_id != user_id:
            rule = None  # another user's rule id: Keystone makes the rule anew
        if rule is None and not all(ref.get(k) for k in ("service", "path", "method")):
            raise exceptions.ValidationError(
                "Invalid access rule: service, path and method are required unless the "
                "id names an existing access rule of the user.")
        if rule is None:
            rule = s.scalar(sa.select(AccessRule).where(
                AccessRule.user_id == user_id, AccessRule.service == ref["service"],
                AccessRule.path == ref["path"], AccessRule.method == ref["method"]))
        if rule is None:
            taken = ref.get("id") and s.get(AccessRule, ref["id"]) is not None
            rule = AccessRule(id=base.new_id() if taken or not ref.get("id") else ref["id"],
                              user_id=user_id, service=ref["service"], path=ref["path"],
                              method=ref["method"])
            s.add(rule)
            s.flush()
        if rule.id not in ids:
            ids.append(rule.id)
    return ids


def rules_of(s, rule_ids: list) -> list[dict]:
    """What a credential shows: {"id", "service", "path", "method"} per rule."""
    if not rule_ids:
        return []
    ids = [r if isinstance(r, str) else r.get("id") for r in rule_ids]
    rows = {r.id: r for r in s.scalars(sa.select(AccessRule).where(AccessRule.id.in_(ids)))}
    return [{"id": r.id, "service": r.service, "path": r.path, "method": r.method}
            for r in (rows.get(i) for i in ids) if r is not None]


def describe(rule_ids: list) -> list[dict]:
    if not rule_ids:
        return []
    with db.reader() as s:
        return rules_of(s, rule_ids)


def list_for_user(user_id: str, filters: dict) -> list[AccessRule]:
    with db.reader() as s:
        base.get_or_404(s, User, user_id, "user")
        q = sa.select(AccessRule).where(AccessRule.user_id == user_id)
        for key in ("service", "path", "method"):
            if filters.get(key) is not None:
                q = q.where(getattr(AccessRule, key) == filters[key])
        return list(s.scalars(q.order_by(AccessRule.service, AccessRule.path)))


def get(user_id: str, rule_id: str) -> AccessRule:
    with db.reader() as s:
        rule = s.get(AccessRule, rule_id)
        if rule is None or rule.user_id != user_id:
            raise _not_found(rule_id)
        return rule


def delete(user_id: str, rule_id: str) -> None:
    with db.transaction() as s:
        rule = s.get(AccessRule, rule_id)
        if rule is None or rule.user_id != user_id:
            raise _not_found(rule_id)
        creds = s.scalars(sa.select(ApplicationCredential.access_rules).where(
            ApplicationCredential.user_id == user_id))
        if any(rule_id in (ids or []) for ids in creds):
            raise exceptions.Forbidden("May not delete access rule in use")
        s.delete(rule)


# --- enforcement ------------------------------------------------------------------------

_CACHE_MAX = 1024
_TOKEN = re.compile(r"(\{[^}]*\}|\*\*|\*)")


def path_matches(path: str, pattern: str) -> bool:
    """keystonemiddleware's _path_matches, with the literal parts matched literally."""
    regex = ""
    for part in _TOKEN.split(pattern):
        if part == "**":
            regex += ".*"
        elif part == "*" or (part.startswith("{") and part.endswith("}")):
            regex += "[^/]+"
        else:
            regex += re.escape(part)
    return re.fullmatch(regex, path, re.DOTALL) is not None


def _rules_by_credential() -> dict:
    # A credential's rules never change (credentials are immutable; a rule in use is
    # not deleted; deleting the credential revokes its tokens): kept per cloud.
    return runtime.current().slot(__name__ + ".by_credential", dict)


def credential_rules(app_cred_id: str) -> list[tuple[str, str, str]] | None:
    """(service, method, path) of each rule of the credential; None if it has none (the
    token is not limited by path); [] (nothing allowed) if the credential is gone."""
    cache = _rules_by_credential()
    if app_cred_id in cache:
        return cache[app_cred_id]
    with db.reader() as s:
        cred = s.get(ApplicationCredential, app_cred_id)
        if cred is None:
            return []
        rules = None if not cred.access_rules else [
            (r["service"], r["method"], r["path"]) for r in rules_of(s, cred.access_rules)]
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache[app_cred_id] = rules
    return rules


def allows(rules, service_types: tuple[str, ...], method: str, path: str) -> bool:
    return any(service in service_types and method == rule_method
               and path_matches(path, rule_path)
               for service, rule_method, rule_path in rules)


def check(app_cred_id: str | None, request: tuple | None) -> None:
    """Raise Unauthorized unless the credential's rules allow ``request``
    ((service types, method, path), None when the caller is no service's API)."""
    if not app_cred_id:
        return
    rules = credential_rules(app_cred_id)
    if rules is None:
        return
    service_types, method, path = request if request is not None else ((), "", "")
    # a token can always be validated, whatever its rules (keystonemiddleware)
    if "identity" in service_types and method == "GET" and path.endswith("/v3/auth/tokens"):
        return
    if not allows(rules, service_types, method, path):
        raise exceptions.Unauthorized("The request you have made requires authentication.")
