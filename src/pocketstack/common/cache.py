"""Small in-process caches for hot read paths (token validation, catalog rendering).

A thin thread-safe wrapper over cachetools' TTL cache: entries expire after ``ttl``
seconds and the least recently used go first beyond ``maxsize``. Cache only what may be
``ttl`` seconds stale, and keep the checks that must be exact (revocation) outside.
"""
from __future__ import annotations

import threading
from typing import Any, Hashable

import cachetools


class TTLCache:
    def __init__(self, ttl: float, maxsize: int = 4096):
        self._cache = cachetools.TTLCache(maxsize=maxsize, ttl=ttl)
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            return self._cache.get(key, default)

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._cache[key] = value

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)
