"""Other processes by pid: whether one runs, and stopping one.

A process that has exited but is not reaped yet (a zombie) does not run, though its
/proc entry stays: daemons this cloud starts (HAProxy, dnsmasq, the UDP balancer) are
reparented to PID 1, and in a container PID 1 may never reap them.
"""
from __future__ import annotations

import os
import signal
import time


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (one of another user counts)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def stop(pid: int, grace: float, kill: bool = False) -> bool:
    """SIGTERM, then wait up to ``grace`` seconds for it to go (and SIGKILL after that if
    ``kill``). Whether it is gone."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + grace
    while running(pid):
        if time.monotonic() > deadline:
            if not kill:
                return False
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return True
        time.sleep(0.02)
    return True
