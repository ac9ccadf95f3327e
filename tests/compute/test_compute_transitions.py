"""Transitional statuses last long enough for a client that polls every second.

Clients and the SDKs' own test suites wait for REBOOT, HARD_REBOOT, REBUILD, RESIZE,
MIGRATING, SHELVED... before they wait for the final status. The simulated hosts keep such a
status for [fake] transition_delay seconds (default 2); the test cloud runs with 0, so each
test here puts the default back for its own duration.
"""
from __future__ import annotations

import time

import pytest

from pocketstack.common import config
from pocketstack.compute.conf import OPTS

DEFAULT = next(o.default for o in OPTS["fake"] if o.name == "transition_delay")


@pytest.fixture
def transition_delay():
    """Set [fake] transition_delay for one test, then put back the test cloud's value
    (clear_override would drop the cloud's own override of 0 as well)."""
    before = config.CONF.fake.transition_delay
    yield lambda value: config.CONF.set_override("transition_delay", value, group="fake")
    config.CONF.set_override("transition_delay", before, group="fake")


@pytest.fixture
def observable(transition_delay):
    assert DEFAULT >= 1.5  # a client polling every second must be able to see it
    transition_delay(DEFAULT)


def poll_statuses(sdk, server_id, until, timeout=30.0, interval=1.0):
    """What a client polling every ``interval`` seconds sees, up to status ``until``."""
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = sdk.compute.get_server(server_id).status
        if not seen or seen[-1] != status:
            seen.append(status)
        if status in (until, "ERROR"):
            return seen
        time.sleep(interval)
    raise AssertionError(f"{server_id} never reached {until}: saw {seen}")


def boot(sdk, image_id):
    server = sdk.compute.create_server(name="transitions", image_id=image_id, flavor_id="42",
                                       networks="none")
    return sdk.compute.wait_for_server(server, wait=30, interval=0.05)


def test_reboot_and_hard_reboot_are_seen_by_a_polling_client(cloud, image_id, observable):
    sdk = cloud.sdk()
    server = boot(sdk, image_id)
    try:
        sdk.compute.reboot_server(server, "SOFT")
        assert poll_statuses(sdk, server.id, "ACTIVE")[:2] == ["REBOOT", "ACTIVE"]
        sdk.compute.reboot_server(server, "HARD")
        assert poll_statuses(sdk, server.id, "ACTIVE")[:2] == ["HARD_REBOOT", "ACTIVE"]
    finally:
        sdk.compute.delete_server(server)


def test_rebuild_resize_and_shelve_are_seen_by_a_polling_client(cloud, image_id,
                                                                 observable):
    sdk = cloud.sdk()
    server = boot(sdk, image_id)
    try:
        sdk.compute.rebuild_server(server, image=image_id)
        assert poll_statuses(sdk, server.id, "ACTIVE")[:2] == ["REBUILD", "ACTIVE"]
        sdk.compute.resize_server(server, "84")
        assert poll_statuses(sdk, server.id, "VERIFY_RESIZE")[:2] == ["RESIZE",
                                                                      "VERIFY_RESIZE"]
        sdk.compute.revert_server_resize(server)
        assert poll_statuses(sdk, server.id, "ACTIVE")[:2] == ["REVERT_RESIZE", "ACTIVE"]
        sdk.compute.shelve_server(server)
        seen = poll_statuses(sdk, server.id, "SHELVED_OFFLOADED")
        assert "SHELVED" in seen and seen[-1] == "SHELVED_OFFLOADED"
    finally:
        sdk.compute.delete_server(server)


def test_the_fast_setting_skips_the_wait(cloud, image_id, transition_delay):
    transition_delay(0.0)
    sdk = cloud.sdk()
    server = boot(sdk, image_id)
    try:
        started = time.monotonic()
        sdk.compute.reboot_server(server, "SOFT")
        sdk.compute.wait_for_server(server, status="ACTIVE", wait=10, interval=0.02)
        assert time.monotonic() - started < DEFAULT  # ACTIVE again before a default hold
    finally:
        sdk.compute.delete_server(server)
