"""Measurement only, off unless POCKETSTACK_LOCK_PROBE names a directory:
how long each call site holds the write lock of db.transaction(), summed. Each process
writes <dir>/lock-<pid>.json at most once a second while it writes."""
from __future__ import annotations

import json
import os
import sys
import threading
import time

_DIR = os.environ.get("POCKETSTACK_LOCK_PROBE")
enabled = bool(_DIR)
now = time.perf_counter
_totals: dict[str, list] = {}  # call site -> [seconds held, transactions]
_guard = threading.Lock()
_last_dump = [0.0]
_SKIP = ("common/db.py", "contextlib.py", "common/lock_probe.py")


def _call_site() -> str:
    frame = sys._getframe(2)
    sites = []
    while frame is not None and len(sites) < 2:
        name = frame.f_code.co_filename
        if not name.endswith(_SKIP):
            short = name.split("pocketstack/", 1)[-1]
            sites.append(f"{short}:{frame.f_code.co_name}")
        frame = frame.f_back
    return " < ".join(sites)


def record(held_since: float) -> None:
    held = now() - held_since
    site = _call_site()
    with _guard:
        entry = _totals.setdefault(site, [0.0, 0])
        entry[0] += held
        entry[1] += 1
        if now() - _last_dump[0] > 1.0:
            _last_dump[0] = now()
            with open(os.path.join(_DIR, f"lock-{os.getpid()}.json"), "w") as f:
                json.dump(_totals, f)


def _dump_at_exit() -> None:
    if _totals:
        with open(os.path.join(_DIR, f"lock-{os.getpid()}.json"), "w") as f:
            json.dump(_totals, f)


if enabled:
    import atexit

    atexit.register(_dump_at_exit)
