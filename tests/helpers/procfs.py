"""Processes as /proc shows them, for the tests of `pocketstack up` and its workers: the
children of a process, a command line, which of some pids still run."""
from __future__ import annotations

import os

from pocketstack.common import processes


def child_pids(pid: int) -> list[int]:
    """Pids whose parent is ``pid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(name))
    return found


def cmdline_of(pid: int) -> str:
    """The command line of ``pid``, its arguments joined by spaces ("" once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def alive_pids(pids) -> list[int]:
    """Those of ``pids`` that still run (not gone, not zombies)."""
    return [pid for pid in pids if processes.running(pid)]


def open_files(pid: int) -> set[str]:
    """What the descriptors of ``pid`` point at (paths, sockets, pipes)."""
    opened = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            opened.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue  # closed meanwhile
    return opened
