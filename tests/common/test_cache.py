"""common/cache.TTLCache: what policy decisions and rendered tokens rely on - an entry
lives ``ttl`` seconds, and beyond ``maxsize`` the least recently used goes first."""
from __future__ import annotations

import time

from pocketstack.common.cache import TTLCache


def test_least_recently_used_goes_first_beyond_maxsize():
    cache = TTLCache(ttl=60, maxsize=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    cache.put("a", 10)  # replacing keeps one entry
    assert len(cache) == 2 and cache.get("a") == 10


def test_entries_expire_after_ttl_and_clear_empties():
    cache = TTLCache(ttl=0.05)
    cache.put("a", False)
    assert cache.get("a", "missing") is False  # a falsy value is a hit
    time.sleep(0.1)
    assert cache.get("a", "missing") == "missing"
    cache.put("b", 1)
    cache.clear()
    assert cache.get("b") is None and len(cache) == 0
