"""Guest taps for a compute host that is a network namespace on a shared machine
([libvirt] host_netns): a lab or test fabric of several "hosts" on one machine, each host's
bridges, VXLAN devices and network agent in a namespace of its own, all guests run by the
machine's one libvirtd.

libvirtd makes a guest's tap in its own (the machine's) namespace, where the host's bridges
are not, so the guest's interfaces are ``type='ethernet'`` (a bare tap) and this moves each
tap into the host's namespace and onto its network's bridge there before the guest runs —
what libvirt does itself for ``type='bridge'`` on a host of its own. The tap's file
descriptor stays QEMU's across the move. Which bridge each tap belongs on is kept in the
instance dir (``taps.json``): a restart or reboot makes the taps again.
"""
from __future__ import annotations

import json
import os
import subprocess
import time

from pocketstack.common import exceptions

TAPS_FILE = "taps.json"
BRIDGE_WAIT = 60.0  # seconds the host's agent gets to make a network's bridge


class TapMoveError(exceptions.PocketstackError):
    code = 500


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


def remember(inst_dir: str, taps: dict[str, str]) -> None:
    """Record {tap: bridge} of the guest (replacing what was there)."""
    path = os.path.join(inst_dir, TAPS_FILE)
    with open(path + ".tmp", "w") as f:
        json.dump(taps, f)
    os.replace(path + ".tmp", path)


def remembered(inst_dir: str) -> dict[str, str]:
    try:
        with open(os.path.join(inst_dir, TAPS_FILE)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def add(inst_dir: str, tap: str, bridge: str) -> None:
    remember(inst_dir, {**remembered(inst_dir), tap: bridge})


def forget(inst_dir: str, tap: str) -> None:
    taps = remembered(inst_dir)
    if taps.pop(tap, None) is not None:
        remember(inst_dir, taps)


def bring_home(netns: str, taps: dict[str, str]) -> None:
    """Each tap from the machine's namespace into ``netns``, up on its bridge there. A tap
    already there (moved before) is only put on its bridge."""
    for tap, bridge in taps.items():
        if _ip("link", "show", "dev", tap).returncode == 0:
            moved = _ip("link", "set", "dev", tap, "netns", netns)
            if moved.returncode != 0:
                raise TapMoveError(f"Moving {tap} into network namespace {netns} failed: "
                                   f"{moved.stderr.strip()}")
        _wait_for_bridge(netns, bridge)
        plugged = _ip("-n", netns, "link", "set", "dev", tap, "master", bridge, "up")
        if plugged.returncode != 0:
            raise TapMoveError(f"Plugging {tap} into {bridge} in network namespace {netns} "
                               f"failed: {plugged.stderr.strip()}")


def _wait_for_bridge(netns: str, bridge: str) -> None:
    """A guest moved here (a cold migration, an evacuation) may come before this host's
    network agent has made its network's bridge for the port just bound here: wait for
    it (a boot waited for network-vif-plugged before)."""
    deadline = time.monotonic() + BRIDGE_WAIT
    while _ip("-n", netns, "link", "show", "dev", bridge).returncode != 0:
        if time.monotonic() > deadline:
            return  # plugging says what is missing
        time.sleep(0.2)
