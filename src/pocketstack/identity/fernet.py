"""The Fernet key repository, laid out as Keystone's: files named 0 (staged), N (primary,
the highest) and the rest secondary. Rotation promotes the staged key, stages a new one and
drops the oldest secondaries beyond ``max_active_keys``.
"""
from __future__ import annotations

import os
import threading
import time

from cryptography.fernet import Fernet, MultiFernet

from pocketstack.common import config, runtime

RECHECK_SECONDS = 1.0  # how often to look for a rotation made by another process


class _KeyCache:
    """One cloud's loaded keys (common/runtime.py)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.cache: tuple[tuple, MultiFernet] | None = None
        self.checked_at = 0.0


def _keys() -> _KeyCache:
    return runtime.current().slot(__name__, _KeyCache)


def repository() -> str:
    return config.CONF.fernet_tokens.key_repository


def _write_key(path: str) -> None:
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(Fernet.generate_key())
    os.replace(tmp, path)


def _key_indexes(repo: str) -> list[int]:
    return sorted(int(n) for n in os.listdir(repo) if n.isdigit())


def setup(repo: str | None = None) -> bool:
    """Create the repository with a staged and a primary key; False if it already exists."""
    repo = repo or repository()
    os.makedirs(repo, mode=0o700, exist_ok=True)
    if _key_indexes(repo):
        return False
    _write_key(os.path.join(repo, "0"))
    _write_key(os.path.join(repo, "1"))
    return True


def rotate(repo: str | None = None) -> list[int]:
    repo = repo or repository()
    keys = _key_indexes(repo)
    if not keys:
        setup(repo)
        return _key_indexes(repo)
    new_primary = keys[-1] + 1
    os.replace(os.path.join(repo, "0"), os.path.join(repo, str(new_primary)))
    _write_key(os.path.join(repo, "0"))
    keys = _key_indexes(repo)
    max_keys = config.CONF.fernet_tokens.max_active_keys
    secondaries = [k for k in keys if k not in (0, new_primary)]
    excess = len(keys) - max(max_keys, 2)
    for k in secondaries[:max(excess, 0)]:
        os.remove(os.path.join(repo, str(k)))
    reset_cache()
    return _key_indexes(repo)


def reset_cache() -> None:
    _keys().cache = None


def crypto() -> MultiFernet:
    """Primary key first (encrypts), then secondaries and the staged key (decrypt only).

    Cached by the directory's listing and mtimes so a rotation by another process is seen.
    """
    st = _keys()
    now = time.monotonic()
    if st.cache is not None and now - st.checked_at < RECHECK_SECONDS:
        return st.cache[1]
    st.checked_at = now
    repo = repository()
    try:
        stamp = tuple((n, os.stat(os.path.join(repo, n)).st_mtime_ns)
                      for n in sorted(os.listdir(repo)))
    except FileNotFoundError:
        stamp = ()
    if st.cache is not None and st.cache[0] == stamp:
        return st.cache[1]
    with st.lock:
        keys = sorted(_key_indexes(repo), reverse=True)
        if not keys:
            raise RuntimeError(f"No Fernet keys in {repo}: run `pocketstack up` or "
                               "`pocketstack fernet-setup` first.")
        fernets = []
        for k in keys:
            with open(os.path.join(repo, str(k)), "rb") as f:
                fernets.append(Fernet(f.read().strip()))
        # Index 0 (staged) sorts last: it decrypts tokens minted right after a rotation
        # elsewhere but never encrypts.
        multi = MultiFernet(fernets)
        st.cache = (stamp, multi)
        return multi
