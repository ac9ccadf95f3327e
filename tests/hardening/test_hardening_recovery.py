"""Lost messages in a running cloud: one is found by the conductor's check for
builds without progress ([compute] build_stall_timeout), long before the build deadline
(set to ten minutes here, so only the stall check can settle them)."""
from __future__ import annotations

import uuid

import pytest

from pocketstack.common import config
from pocketstack.compute.scheduler import claims
from pocketstack.control import faults as fault_rules


@pytest.fixture
def stall_check():
    overrides = {"build_timeout": 600.0, "build_stall_timeout": 0.5,
                 "periodic_interval": 0.2}
    for name, value in overrides.items():
        config.CONF.set_override(name, value, group="compute")
    yield
    for name in overrides:
        config.CONF.clear_override(name, group="compute")
    fault_rules.reset()


@pytest.fixture(scope="module")
def image_id(cloud):
    sdk = cloud.sdk()
    image = sdk.image.create_image(name=f"stall-{uuid.uuid4().hex[:6]}", data=b"x" * 64,
                                   disk_format="raw", container_format="bare",
                                   visibility="public")
    yield image.id
    sdk.image.delete_image(image)


def _boot(sdk, image_id):
    return sdk.compute.create_server(name=f"stall-{uuid.uuid4().hex[:6]}", image_id=image_id,
                                     flavor_id="42", networks="none")


def _events(sdk, server_id):
    actions = list(sdk.compute.server_actions(server_id))
    action = sdk.compute.get_server_action(actions[-1].request_id, server_id)
    return [(e["event"], e.get("result")) for e in action.events]


def _wait_active(sdk, server):
    return sdk.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"],
                                       interval=0.1, wait=60)


def test_lost_build_message_to_a_host_is_rescheduled_without_waiting_for_the_deadline(
        cloud, stall_check, image_id):
    sdk = cloud.sdk()
    fault_rules.add(None, "build_message", "drop", times=1)
    server = _wait_active(sdk, _boot(sdk, image_id))
    events = [name for name, _ in _events(sdk, server.id)]
    assert "conductor_build_timeout" in events, events
    assert claims.holder_host(server.id) is not None
    sdk.compute.delete_server(server)
    sdk.compute.wait_for_delete(server, wait=60)


def test_lost_cast_to_the_conductor_is_scheduled_again(cloud, stall_check, image_id,
                                                       monkeypatch):
    """The API's cast to the conductor is lost (a broker restart in a scale-out cloud):
    the only fault here we cannot cause for real, so the cast is dropped in-process."""
    from pocketstack.compute.conductor.rpcapi import ConductorAPI

    dropped = []
    monkeypatch.setattr(ConductorAPI, "schedule_and_build_instances",
                        lambda self, ctx, instance_uuids: dropped.extend(instance_uuids))
    sdk = cloud.sdk()
    server = _boot(sdk, image_id)
    assert dropped == [server.id]
    server = _wait_active(sdk, server)
    events = [name for name, _ in _events(sdk, server.id)]
    assert "conductor_recover_build" in events, events
    sdk.compute.delete_server(server)
    sdk.compute.wait_for_delete(server, wait=60)
