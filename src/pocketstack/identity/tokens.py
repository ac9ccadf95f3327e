"""Fernet tokens: issued by POST /v3/auth/tokens, validated locally by every API process.

The payload carries what a service needs to build a RequestContext — user, scope, role
names, expiry, audit ids, the user's and project's names (as keystonemiddleware hands
services X-User-Name and X-Project-Name; as at issue: a rename shows in tokens issued
after it) — so validation is one decryption plus a look at the revocation
events, never a database round trip or an HTTP call. Roles are fixed at issue time;
revoking an assignment, disabling or deleting a user or project, or changing a password
writes a revocation event, so a token whose roles went stale stops validating at once.
"""
from __future__ import annotations

import base64
import datetime as dt
import json
import threading
import time
import uuid

import sqlalchemy as sa
from cryptography.fernet import InvalidToken

from pocketstack.common import config, db, exceptions, runtime
from pocketstack.common.context import RequestContext
from pocketstack.common.timeutils import utcnow
from pocketstack.identity import access_rules, fernet
from pocketstack.identity.models import RevocationEvent

PAYLOAD_VERSION = 1
INVALID = "The request you have made requires authentication."


def new_audit_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class TokenData(dict):
    """The decrypted payload, with accessors (keys are kept short to keep tokens short)."""

    user_id = property(lambda self: self["u"])
    user_name = property(lambda self: self.get("un"))
    user_domain_id = property(lambda self: self.get("ud"))
    methods = property(lambda self: self["m"])
    project_id = property(lambda self: self.get("p"))
    project_domain_id = property(lambda self: self.get("pd"))
    project_name = property(lambda self: self.get("pn"))
    domain_id = property(lambda self: self.get("d"))
    system = property(lambda self: self.get("s"))
    roles = property(lambda self: self.get("r", []))
    audit_ids = property(lambda self: self["a"])
    app_cred_id = property(lambda self: self.get("ac"))
    # A trust-scoped token: [trust id, trustor id, trustee id, impersonation].
    trust = property(lambda self: self.get("t"))
    trust_id = property(lambda self: self["t"][0] if self.get("t") else None)
    # An OAuth1 token: [access token id, consumer id].
    oauth = property(lambda self: self.get("o"))
    access_token_id = property(lambda self: self["o"][0] if self.get("o") else None)

    @property
    def delegated(self) -> bool:
        """Issued through a delegation (trust, application credential, OAuth1), which
        may not delegate further."""
        return bool(self.get("t") or self.get("ac") or self.get("o"))

    @property
    def user_ids(self) -> set[str]:
        """The users whose revocation events apply: with a trust, trustor and trustee."""
        return {self.user_id, *self["t"][1:3]} if self.get("t") else {self.user_id}

    @property
    def expires_at(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self["e"], dt.timezone.utc).replace(tzinfo=None)

    @property
    def issued_at(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self["i"], dt.timezone.utc).replace(tzinfo=None)


def issue(*, user_id: str, user_domain_id: str, methods: list[str], roles: list[str],
          project_id: str | None = None, project_domain_id: str | None = None,
          domain_id: str | None = None, system: str | None = None,
          expires_at: dt.datetime | None = None, parent_audit_id: str | None = None,
          app_cred_id: str | None = None, trust: list | None = None,
          oauth: list | None = None, user_name: str | None = None,
          project_name: str | None = None) -> tuple[str, TokenData]:
    now = time.time()
    expires = (expires_at.replace(tzinfo=dt.timezone.utc).timestamp() if expires_at
               else now + config.CONF.token.expiration)
    payload = {"v": PAYLOAD_VERSION, "u": user_id, "ud": user_domain_id, "m": methods,
               "r": roles, "e": round(expires, 6), "i": round(now, 6),
               "a": [new_audit_id()] + ([parent_audit_id] if parent_audit_id else [])}
    for key, value in (("p", project_id), ("pd", project_domain_id), ("d", domain_id),
                       ("s", system), ("ac", app_cred_id), ("t", trust), ("o", oauth),
                       ("un", user_name), ("pn", project_name)):
        if value:
            payload[key] = value
    token = fernet.crypto().encrypt(json.dumps(payload, separators=(",", ":")).encode())
    return token.decode(), TokenData(payload)


def validate(token: str, allow_expired: bool = False) -> TokenData:
    """Decrypt and check a token; raise Unauthorized if invalid, expired or revoked.
    ``allow_expired``: expired up to ``[token] allow_expired_window`` ago is still valid
    (a user's token that comes with a service token, as keystonemiddleware allows)."""
    data = _decrypt(token)
    now = time.time()
    if allow_expired:
        now -= config.CONF.token.allow_expired_window
    if data.get("v") != PAYLOAD_VERSION or data["e"] <= now:
        raise exceptions.Unauthorized(INVALID)
    if REVOCATIONS.is_revoked(data):
        raise exceptions.Unauthorized(INVALID)
    return data


def _decrypt(token: str) -> TokenData:
    cached = _service_payloads().get(token)
    if cached is not None:
        return cached
    crypto = fernet.crypto()
    decrypted = _decrypted(crypto)
    data = decrypted.get(token)
    if data is not None:
        return data
    try:
        data = TokenData(json.loads(crypto.decrypt(token.encode())))
    except (InvalidToken, ValueError, UnicodeError, TypeError):
        raise exceptions.Unauthorized(INVALID) from None
    if len(decrypted) >= _DECRYPTED_MAX:
        decrypted.clear()
    decrypted[token] = data
    return data


_DECRYPTED_MAX = 1024


class _Decrypted:
    __slots__ = ("state",)

    def __init__(self):
        self.state: tuple = (None, {})  # (the keys, their payloads): replaced as one


def _decrypted(crypto) -> dict[str, TokenData]:
    """The payloads of tokens this process decrypted with the current keys: a client
    sends the same token with every request, and its decryption (HMAC, AES, JSON) is
    most of a validation. Only what the token says is kept; its expiry and revocations
    are checked every time. A key rotation (a new ``crypto``) starts afresh, so a token
    of a removed key is decrypted again, and refused."""
    cache = runtime.current().slot(__name__ + ".decrypted", _Decrypted)
    keys, payloads = cache.state
    if keys is not crypto:
        payloads = {}
        cache.state = (crypto, payloads)
    return payloads


_SERVICE_PAYLOADS_MAX = 256


def _service_payloads() -> dict[str, TokenData]:
    """Decrypted service tokens: each service sends the same one beside every user's token
    for an hour, so its payload is kept (expiry and revocations are still checked every
    time). One cloud's (common/runtime.py): another cloud's keys never made these."""
    return runtime.current().slot(__name__ + ".service_payloads", dict)


def to_context(data: TokenData, token: str | None = None) -> RequestContext:
    return RequestContext(
        user_id=data.user_id, user_name=data.user_name, user_domain_id=data.user_domain_id,
        project_id=data.project_id, project_name=data.project_name,
        project_domain_id=data.project_domain_id,
        domain_id=data.domain_id, system_scope=data.system, roles=list(data.roles),
        auth_token=token, audit_ids=list(data.audit_ids))


def validate_to_context(token: str, service_token: str | None = None,
                        request: tuple | None = None) -> RequestContext:
    """What the auth middleware calls for every request carrying X-Auth-Token (and, from
    another service acting for a user, X-Service-Token: then the user's token may have
    expired, as keystonemiddleware accepts it; the service token must be valid and hold
    the service role). ``request``: (the service's catalog types, method, path below the
    service's prefix), which an application credential's access rules must allow when no
    service token comes with it."""
    if not service_token:
        data = validate(token)
        access_rules.check(data.app_cred_id, request)
        return to_context(data, token)
    service = validate(service_token)
    if "service" not in service.roles:
        raise exceptions.Unauthorized(INVALID)
    cache = _service_payloads()
    if len(cache) >= _SERVICE_PAYLOADS_MAX:
        cache.clear()
    cache[service_token] = service
    return to_context(validate(token, allow_expired=True), token)


# --- revocation -------------------------------------------------------------------------

class RevocationCache:
    """The revocation events, indexed for an O(1) check per token.

    Reloaded when this process records an event, and otherwise at most every
    ``[token] revocation_cache_time`` seconds if another process added one.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.loaded_at = -1e9
        self.last_id: tuple = ()
        self.by_user: dict[str, list] = {}
        self.by_project: dict[str, list] = {}
        self.by_audit: dict[str, list] = {}
        self.by_app_cred: dict[str, list] = {}
        self.by_domain: dict[str, list] = {}
        self.by_trust: dict[str, list] = {}
        self.by_access_token: dict[str, list] = {}

    def invalidate(self):
        self.loaded_at = -1e9

    def _refresh(self):
        now = time.monotonic()
        if now - self.loaded_at < config.CONF.token.revocation_cache_time:
            return
        with self.lock:
            if now - self.loaded_at < config.CONF.token.revocation_cache_time:
                return
            horizon = utcnow() - dt.timedelta(seconds=config.CONF.token.expiration + 60)
            with db.reader() as s:
                # (max id, count): on PostgreSQL/MariaDB an event with a lower id can commit
                # after a higher one was seen; the count still changes.
                last = tuple(s.execute(sa.select(sa.func.max(RevocationEvent.id),
                                                 sa.func.count(RevocationEvent.id))).one())
                if last != self.last_id:
                    events = s.scalars(sa.select(RevocationEvent).where(
                        RevocationEvent.revoked_at >= horizon)).all()
                    self._index(events)
                    self.last_id = last
            self.loaded_at = now

    def _index(self, events):
        indexes = {"user_id": {}, "project_id": {}, "audit_id": {}, "app_cred_id": {},
                   "domain_id": {}, "trust_id": {}, "access_token_id": {}}
        for e in events:
            event = (e.user_id, e.project_id, e.audit_id, e.app_cred_id, e.domain_id,
                     e.trust_id, e.access_token_id,
                     e.issued_before.replace(tzinfo=dt.timezone.utc).timestamp())
            # Index each event under its most selective field.
            for field in ("audit_id", "trust_id", "access_token_id", "user_id",
                          "app_cred_id", "project_id", "domain_id"):
                value = getattr(e, field)
                if value:
                    indexes[field].setdefault(value, []).append(event)
                    break
        self.by_audit, self.by_user = indexes["audit_id"], indexes["user_id"]
        self.by_project, self.by_app_cred = indexes["project_id"], indexes["app_cred_id"]
        self.by_domain, self.by_trust = indexes["domain_id"], indexes["trust_id"]
        self.by_access_token = indexes["access_token_id"]

    def is_revoked(self, data: TokenData) -> bool:
        self._refresh()
        candidates = []
        for audit_id in data.audit_ids:
            candidates += self.by_audit.get(audit_id, ())
        user_ids = data.user_ids
        for user_id in user_ids:
            candidates += self.by_user.get(user_id, ())
        if data.trust_id:
            candidates += self.by_trust.get(data.trust_id, ())
        if data.access_token_id:
            candidates += self.by_access_token.get(data.access_token_id, ())
        if data.project_id:
            candidates += self.by_project.get(data.project_id, ())
        if data.app_cred_id:
            candidates += self.by_app_cred.get(data.app_cred_id, ())
        for domain in {data.domain_id, data.user_domain_id, data.project_domain_id} - {None}:
            candidates += self.by_domain.get(domain, ())
        issued = data["i"]
        for user_id, project_id, audit_id, app_cred_id, domain_id, trust_id, access_token_id, \
                before in candidates:
            if issued > before:
                continue
            if access_token_id and access_token_id != data.access_token_id:
                continue
            if user_id and user_id not in user_ids:
                continue
            if trust_id and trust_id != data.trust_id:
                continue
            if project_id and project_id != data.project_id:
                continue
            if audit_id and audit_id not in data.audit_ids:
                continue
            if app_cred_id and app_cred_id != data.app_cred_id:
                continue
            if domain_id and domain_id not in (data.domain_id, data.user_domain_id,
                                               data.project_domain_id):
                continue
            return True
        return False


REVOCATIONS = RevocationCache()


def revoke(session=None, *, user_id=None, project_id=None, domain_id=None, audit_id=None,
           app_cred_id=None, trust_id=None, access_token_id=None) -> None:
    """Record a revocation event; tokens issued until now that match it stop validating."""
    event = RevocationEvent(user_id=user_id, project_id=project_id, domain_id=domain_id,
                            audit_id=audit_id, app_cred_id=app_cred_id, trust_id=trust_id,
                            access_token_id=access_token_id,
                            issued_before=utcnow() + dt.timedelta(microseconds=1))
    if session is not None:
        session.add(event)
        # Reload the cache only once the event is committed, or a concurrent reload could
        # miss it and trust the stale copy for revocation_cache_time.
        sa.event.listen(session, "after_commit", lambda _s: REVOCATIONS.invalidate(), once=True)
    else:
        with db.transaction() as s:
            s.add(event)
        REVOCATIONS.invalidate()
