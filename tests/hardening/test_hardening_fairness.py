"""The scheduler's per-host failed-build count stays fair. A success resets
it even when the count was left by an earlier run (or added by the conductor); a user's
bad input is refused at the API or, if it only fails during the build, is ERROR at once
without counting against any host."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.compute.models import ComputeNode, Instance


def _failed_builds() -> dict[str, int]:
    with db.reader() as s:
        return dict(s.execute(sa.select(ComputeNode.host, ComputeNode.failed_builds)).all())


def _set_failed_builds(value: int) -> None:
    with db.transaction() as s:
        s.execute(sa.update(ComputeNode).values(failed_builds=value))


@pytest.fixture(scope="module")
def setup(cloud):
    sdk = cloud.sdk()
    image = sdk.image.create_image(name=f"fair-{uuid.uuid4().hex[:6]}", data=b"x" * 64,
                                   disk_format="raw", container_format="bare",
                                   visibility="public")
    net = sdk.network.create_network(name="fair-net")
    subnet = sdk.network.create_subnet(network_id=net.id, cidr="10.55.0.0/24", ip_version=4)
    yield sdk, image, net, subnet
    for server in sdk.compute.servers(name="fair-"):
        sdk.compute.delete_server(server)
        sdk.compute.wait_for_delete(server, wait=60)
    sdk.network.delete_subnet(subnet)
    sdk.network.delete_network(net)
    sdk.image.delete_image(image)


def _boot(sdk, image, networks):
    return sdk.compute.create_server(name=f"fair-{uuid.uuid4().hex[:6]}", image_id=image.id,
                                     flavor_id="42", networks=networks)


def test_success_resets_a_count_left_by_an_earlier_run(cloud, setup):
    sdk, image, _net, _subnet = setup
    _set_failed_builds(17)  # what cmp-1 kept after a restart
    try:
        server = sdk.compute.wait_for_server(_boot(sdk, image, "none"), status="ACTIVE",
                                             wait=60, interval=0.1)
        host = sdk.compute.get_server(server.id).compute_host
        assert _failed_builds()[host] == 0
        assert sorted(_failed_builds().values())[-1] == 17  # the others keep theirs
    finally:
        _set_failed_builds(0)


def test_fixed_ip_outside_the_subnet_is_a_400_at_the_api(cloud, setup):
    sdk, image, net, _subnet = setup
    r = sdk.compute.post("/servers", json={"server": {
        "name": "fair-outside", "imageRef": image.id, "flavorRef": "42",
        "networks": [{"uuid": net.id, "fixed_ip": "192.0.2.10"}]}})
    assert r.status_code == 400, r.text
    assert "not in a subnet" in r.json()["badRequest"]["message"]
    with db.reader() as s:
        assert not s.scalar(sa.select(sa.func.count()).select_from(Instance)
                            .where(Instance.display_name == "fair-outside"))


def test_build_failing_on_user_input_is_error_at_once_and_counts_against_no_host(
        cloud, setup):
    """The subnet's broadcast address passes the API's check (it is in the subnet) but the
    network service refuses the port: that is the request's fault, not the host's."""
    sdk, image, net, _subnet = setup
    _set_failed_builds(0)
    server = _boot(sdk, image, [{"uuid": net.id, "fixed_ip": "10.55.0.255"}])
    server = sdk.compute.wait_for_server(server, status="ERROR", failures=["ACTIVE"],
                                         wait=60, interval=0.1)
    assert "attempt" not in (server.fault or {}).get("message", ""), server.fault
    assert set(_failed_builds().values()) == {0}
    actions = list(sdk.compute.server_actions(server.id))
    action = sdk.compute.get_server_action(actions[-1].request_id, server.id)
    builds = [e for e in action.events if e["event"] == "compute__do_build_and_run_instance"]
    assert len(builds) == 1, builds  # not tried on three hosts
