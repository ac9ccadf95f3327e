"""Each service's own user, and its token from Keystone (seed step 1 for services).

As in a DevStack cloud, compute acts as ``nova``, network as ``neutron``, volume as
``cinder`` and image as ``glance``: users of the ``service`` project with the admin and
service roles, made by the API host's bootstrap. A service logs in through the identity
API with its password (keystoneauth1's v3 Password plugin, nova's ``[service_user]``),
wherever it runs; nothing here reads identity's tables or keys. A token is kept until
shortly before it expires: one login per service user and process an hour.

The passwords: ``[service_user] <name>_password`` in the config, or else the owner-only
file the API host writes at its first start (``[service_user] password_file``).
"""
from __future__ import annotations

import json
import os
import secrets
import threading
import time

from pocketstack.common import config, exceptions, runtime

USER_OF = {"compute": "nova", "network": "neutron", "volume": "cinder", "image": "glance",
           "loadbalancer": "octavia",
           "dns": "designate",
           "objectstore": "swift"}
RENEW_BEFORE = 120.0  # seconds before expiry a token is renewed (keystoneauth's margin)
# Generated passwords are 32 random bytes: no one can guess them however fast the hash,
# so their bcrypt cost stays the lowest (a login costs ~1 ms, not ~250 ms).
GENERATED_HASH_ROUNDS = 4
METADATA_SECRET = "metadata_proxy_shared_secret"  # its key in the password file


def password_file() -> str:
    return (config.CONF.service_user.password_file
            or os.path.join(config.data_dir(), "service-passwords"))


def _stored() -> dict:
    try:
        with open(password_file()) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise config.ConfigError(f"Cannot read the service users' passwords from "
                                 f"{password_file()}: {error}") from None


def secret(option: str, key: str, what: str, where: str | None = None) -> str:
    """``[service_user] option`` if set, else ``key`` of the password file."""
    value = getattr(config.CONF.service_user, option) or _stored().get(key)
    if not value:
        where = where or f"the API host's {password_file()} has it"
        raise config.ConfigError(f"No {what}: set [service_user] {option} ({where}).")
    return value


def password(user: str) -> str:
    return secret(f"{user}_password", user, f"password for the service user {user}")


def metadata_secret() -> str:
    """The secret the metadata proxy signs instance ids with and compute's metadata API
    checks them with (nova's and neutron's ``metadata_proxy_shared_secret``)."""
    return secret("metadata_proxy_shared_secret", METADATA_SECRET, "metadata proxy secret")


def ensure_passwords(users=config.SERVICE_USER_NAMES) -> dict[str, tuple[str, int]]:
    """For the API host's bootstrap: each of ``users``' password (the service users, or
    the host users of its own computes on the conductor: clients/host_users.py) and its
    bcrypt cost, generating (and storing, owner-only) those neither the config nor the
    file has; the metadata proxy's secret (metadata_secret) is generated into the file
    alongside."""
    stored, changed = _stored(), False
    out = {}
    for user in users:
        configured = getattr(config.CONF.service_user, f"{user}_password", None)
        if configured:
            out[user] = (configured, config.CONF.identity.password_hash_rounds)
            continue
        if not stored.get(user):
            stored[user], changed = secrets.token_urlsafe(32), True
        out[user] = (stored[user], GENERATED_HASH_ROUNDS)
    if not config.CONF.service_user.metadata_proxy_shared_secret \
            and not stored.get(METADATA_SECRET):
        stored[METADATA_SECRET], changed = secrets.token_hex(32), True
    if changed:
        _write(stored)
    return out


def store(key: str, value: str) -> None:
    """``key`` of the password file set to ``value`` (the file made if missing)."""
    stored = _stored()
    if stored.get(key) != value:
        _write(dict(stored, **{key: value}))


def _write(stored: dict) -> None:
    path = password_file()
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(stored, f, indent=1)
    os.replace(tmp, path)


def auth_url() -> str:
    return (config.CONF.service_user.auth_url
            or config.public_url() + "/identity/v3").rstrip("/")


class _Logins:
    """One cloud's service-user tokens (common/runtime.py)."""

    def __init__(self):
        self.tokens: dict[str, tuple[str, float]] = {}  # user -> (token, renew at)
        self.projects: dict[str, str] = {}  # user -> id of the project its tokens are for
        self.locks: dict[str, threading.Lock] = {}  # user -> its login's lock
        self.locks_lock = threading.Lock()

    def lock(self, user: str) -> threading.Lock:
        lock = self.locks.get(user)
        if lock is None:
            with self.locks_lock:
                lock = self.locks.setdefault(user, threading.Lock())
        return lock


def _logins() -> _Logins:
    return runtime.current().slot(__name__, _Logins)


def token(service: str) -> str:
    """A valid token of ``service``'s user (``compute`` -> nova, ...), from the cache or a
    fresh login."""
    user = USER_OF[service]
    return user_token(user, lambda: password(user))


def user_token(user: str, password_of) -> str:
    """A valid token of the Default domain's ``user`` on the service project, from the
    cache or a fresh login with ``password_of()``: a service's user, or a compute host's
    own (clients/host_users.py)."""
    logins = _logins()
    cached = logins.tokens.get(user)
    if cached and cached[1] > time.time():
        return cached[0]
    with logins.lock(user):
        cached = logins.tokens.get(user)
        if cached and cached[1] > time.time():
            return cached[0]
        value, expires, logins.projects[user] = _login(user, password_of())
        lifetime = expires - time.time()
        logins.tokens[user] = (value, expires - min(RENEW_BEFORE, lifetime / 2))
        return value


def project_id(service: str) -> str:
    """The project of ``service``'s user (the service project): its own storage account."""
    token(service)
    return _logins().projects[USER_OF[service]]


def forget(service: str, value: str) -> None:
    """A token the identity service no longer accepts (revoked: the password changed):
    the next call logs in again."""
    forget_user(USER_OF[service], value)


def forget_user(user: str, value: str) -> None:
    logins = _logins()
    if logins.tokens.get(user, ("",))[0] == value:
        logins.tokens.pop(user, None)


def _login(user: str, password: str) -> tuple[str, float, str]:
    from keystoneauth1 import exceptions as ks_exceptions
    from keystoneauth1.identity import v3

    from pocketstack.clients import transport

    domain = config.CONF.identity.default_domain_id
    plugin = v3.Password(auth_url=auth_url(), username=user, password=password,
                         user_domain_id=domain, project_name=config.CONF.service_user.project_name,
                         project_domain_id=domain, include_catalog=False)
    try:
        access = plugin.get_auth_ref(transport.session())
    except ks_exceptions.ClientException as error:
        raise exceptions.ServiceUnavailable(
            f"The service user {user} cannot log in at {auth_url()}: {error}") from None
    return access.auth_token, access.expires.timestamp(), access.project_id
