"""bcrypt password hashes. Passwords longer than bcrypt's 72-byte input are pre-hashed
with SHA-256 so that every byte counts (bcrypt itself would refuse or truncate them)."""
from __future__ import annotations

import base64
import hashlib

import bcrypt

from pocketstack.common import config


def _prepare(password: str) -> bytes:
    raw = password.encode("utf-8")
    if len(raw) > 72:
        raw = base64.b64encode(hashlib.sha256(raw).digest())
    return raw


def hash_password(password: str, rounds: int | None = None) -> str:
    rounds = rounds or config.CONF.identity.password_hash_rounds
    return bcrypt.hashpw(_prepare(password), bcrypt.gensalt(rounds)).decode()


def check_password(password: str, hashed: str | None) -> bool:
    if not hashed or not isinstance(password, str):
        return False
    try:
        return bcrypt.checkpw(_prepare(password), hashed.encode())
    except ValueError:
        return False


# A hash to check against when the user does not exist, so that a login with an unknown
# name costs as much as one with a wrong password (no user enumeration by timing).
_DUMMY: dict[int, str] = {}


def dummy_check(password: str) -> None:
    rounds = config.CONF.identity.password_hash_rounds
    if rounds not in _DUMMY:
        _DUMMY[rounds] = bcrypt.hashpw(b"x", bcrypt.gensalt(rounds)).decode()
    check_password(password if isinstance(password, str) else "", _DUMMY[rounds])
