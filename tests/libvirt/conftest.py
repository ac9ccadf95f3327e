"""Fixtures for the libvirt driver tests (helpers are in libvirt_helpers.py)."""
from __future__ import annotations

import pytest


@pytest.fixture
def libvirt_conf(cloud):
    """[libvirt] options set for one test (the session cloud has loaded the config)."""
    from pocketstack.common import config

    changed = []

    def set_(name, value):
        config.CONF.set_override(name, value, group="libvirt")
        changed.append(name)

    yield set_
    for name in changed:
        config.CONF.clear_override(name, group="libvirt")
