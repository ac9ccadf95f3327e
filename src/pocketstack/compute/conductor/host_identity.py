"""Which compute host asks the conductor: the host named in a ``host_db`` call is
believed only when the call's context carries a token of that host's own identity user
(clients/host_users.py: ``nova-compute-<host>`` of the Default domain, scoped to the
service project with the ``service`` role). A host holding its own credential can then
claim no other host's name, and the shared ``nova`` user's token speaks for no host.

The token is validated as keystonemiddleware validates one: through the identity API
(``GET /v3/auth/tokens`` with ``X-Subject-Token``), with the conductor's own ``nova``
token: a conductor process of its own need not hold the identity service's token keys,
and the API applies revocations (a password reset, a disabled or deleted user). A
conductor in the process that serves the APIs (the all-in-one, `service api --with
conductor`) asks the same function that answers that request, without the socket: its
compute hosts may call before the API listens (a cloud started as a library). Each answer
is kept per token until the token expires or ``TTL`` passes, whichever is first: the hot
path is a dict lookup (a host logs in once an hour), and a revoked token, or a removed
role, stops working within ``TTL``.
"""
from __future__ import annotations

import datetime as dt
import re
import threading
import time

from pocketstack.clients import host_users
from pocketstack.common import config, exceptions, runtime

TTL = 300.0  # seconds a validation is believed at most
REFUSED_TTL = 10.0  # seconds a token the identity API refused is refused without asking
MAX_ENTRIES = 10_000  # tokens remembered (a host has one or two at a time)
# What can travel as an HTTP header value: anything else is no token (and must not reach
# the identity API's request as a header).
_TOKEN = re.compile(r"[\x21-\x7e]{1,8192}")
INVALID = "the token is not valid (expired, revoked or made up)"  # the host logs in again


class _Validations:
    """One cloud's validations (common/runtime.py): token -> (its user's name, or None
    when it speaks for no host, why not, believed until)."""

    def __init__(self):
        self.entries: dict[str, tuple[str | None, str, float]] = {}
        self.lock = threading.Lock()

    def put(self, token: str, entry: tuple) -> None:
        with self.lock:
            if len(self.entries) >= MAX_ENTRIES:
                now = time.time()
                self.entries = {k: v for k, v in self.entries.items() if v[2] > now}
                if len(self.entries) >= MAX_ENTRIES:
                    self.entries.clear()
            self.entries[token] = entry


def _validations() -> _Validations:
    return runtime.current().slot(__name__, _Validations)


def refusal(ctx, host) -> str | None:
    """Why the call's context does not prove it comes from compute host ``host``, or
    None when it does."""
    token = getattr(ctx, "auth_token", None)
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return "the call carries no host user's token"
    now = time.time()
    entry = _validations().entries.get(token)
    if entry is None or entry[2] <= now:
        entry = _validate(token, now)
        _validations().put(token, entry)
    user, why, _until = entry
    if user is None:
        return why
    if not isinstance(host, str) or user != host_users.user_name(host):
        return f"the token is user {user}'s, not {host_users.user_name(str(host))}'s"
    return None


def _validate(token: str, now: float) -> tuple[str | None, str, float]:
    body = _token_body(token)
    if body is None:
        return None, INVALID, now + REFUSED_TTL
    why = _not_a_host_token(body)
    if why:
        return None, why, now + REFUSED_TTL
    try:
        expires = dt.datetime.fromisoformat(body["expires_at"]).timestamp()
    except (KeyError, TypeError, ValueError):
        raise exceptions.ServiceUnavailable("The identity API answered a token without "
                                            "its expiry") from None
    return body["user"]["name"], "", min(expires, now + TTL)


def _token_body(token: str) -> dict | None:
    """The identity service's view of ``token`` (GET /v3/auth/tokens), None if invalid."""
    from pocketstack.wsgi import inprocess

    if inprocess.serves_here():
        from pocketstack.wsgi import app

        return app.token_body(token)
    from pocketstack.clients.base import Client

    identity = Client(caller="compute", as_service=True)
    identity.base_path = "/identity/v3"
    resp = identity.request("GET", "/auth/tokens", params={"nocatalog": "1"},
                            headers={"X-Subject-Token": token}, ok=(200, 404))
    return resp.json()["token"] if resp.status_code == 200 else None


def _not_a_host_token(body: dict) -> str | None:
    """Why a valid token's body is not a compute host user's own, or None."""
    domain = config.CONF.identity.default_domain_id
    user = body.get("user") or {}
    name = user.get("name") or ""
    if not name.startswith(host_users.PREFIX) or (user.get("domain") or {}).get("id") \
            != domain:
        return f"the token is user {name}'s, not a compute host user's"
    if "OS-TRUST:trust" in body or "OS-OAUTH1" in body:
        return "the token is delegated (a trust or OAuth), not the host user's own"
    project = body.get("project") or {}
    if project.get("name") != config.CONF.service_user.project_name \
            or (project.get("domain") or {}).get("id") != domain:
        return "the token is not scoped to the service project"
    if host_users.ROLE not in {r.get("name") for r in body.get("roles") or []}:
        return f"the token has no {host_users.ROLE} role"
    return None
