"""[libvirt] host_netns without a guest: a tap made in this machine's namespace (as
libvirtd makes it) goes into the host's namespace and onto its bridge; a namespace that
does not exist is an error that names it. Real kernel devices; needs root and iproute2."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest

from pocketstack.compute.virt.libvirt import host_netns

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"),
                                reason="needs root and iproute2")


def ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@pytest.fixture
def host_ns():
    name = f"hn{uuid.uuid4().hex[:8]}"
    ip("netns", "add", name)
    ip("-n", name, "link", "add", "brqtest", "type", "bridge")
    try:
        yield name
    finally:
        ip("netns", "del", name, check=False)


def test_a_tap_moves_into_the_host_namespace_onto_its_bridge(host_ns, tmp_path):
    tap = f"tap{uuid.uuid4().hex[:11]}"
    ip("tuntap", "add", tap, "mode", "tap")
    try:
        host_netns.remember(str(tmp_path), {tap: "brqtest"})
        host_netns.bring_home(host_ns, host_netns.remembered(str(tmp_path)))
        assert ip("link", "show", "dev", tap, check=False).returncode != 0  # gone from here
        shown = ip("-n", host_ns, "-o", "link", "show", "dev", tap).stdout
        assert "master brqtest" in shown and ",UP" in shown, shown
        host_netns.bring_home(host_ns, {tap: "brqtest"})  # again (a restart): no error
    finally:
        ip("link", "del", tap, check=False)


def test_a_missing_namespace_is_an_error_that_names_it(tmp_path):
    missing = f"hn{uuid.uuid4().hex[:8]}"
    tap = f"tap{uuid.uuid4().hex[:11]}"
    ip("tuntap", "add", tap, "mode", "tap")
    try:
        with pytest.raises(host_netns.TapMoveError, match=missing):
            host_netns.bring_home(missing, {tap: "brqtest"})
        assert host_netns.remembered(str(tmp_path)) == {}  # nothing recorded: no taps
    finally:
        ip("link", "del", tap, check=False)
