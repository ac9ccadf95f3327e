"""One boot on a 1,000-host cloud: a boot with no hints, group or image/flavor
constraints is filtered and weighed by the database, which returns only the best few
hosts. What a user sees must not change: the RAM weigher spreads (or, negative, stacks)
servers by free RAM, and a disabled host is never chosen."""
from __future__ import annotations

import random

import pytest
import sqlalchemy as sa

from pocketstack import Cloud
from pocketstack.common import db
from pocketstack.compute.models import ComputeNode, Service
from pocketstack.compute.scheduler import filters, host_state, weighers

pytestmark = pytest.mark.filterwarnings("ignore:The field .* has been deprecated")


def _host(admin_api, sid):
    return admin_api.get(f"/servers/{sid}").json()["server"]["OS-EXT-SRV-ATTR:host"]


def _free_ram(admin_api) -> dict[str, int]:
    """Free RAM per host (every host of the all-in-one has the same size and ratio, so
    this orders them as the scheduler's free RAM does)."""
    hypervisors = admin_api.get("/os-hypervisors/detail").json()["hypervisors"]
    return {h["service"]["host"]: h["free_ram_mb"] for h in hypervisors
            if h["state"] == "up" and h["status"] == "enabled"}


def _only_ram_weigher(conf_override, ram_multiplier):
    conf_override("scheduler", "ram_weight_multiplier", ram_multiplier)
    for name in ("disk_weight_multiplier", "cpu_weight_multiplier",
                 "build_failure_weight_multiplier"):
        conf_override("scheduler", name, 0.0)


def test_ram_weigher_spreads_then_stacks(api, admin_api, image_id, conf_override):
    _only_ram_weigher(conf_override, 1.0)
    booted = []
    try:
        for _ in range(3):
            free = _free_ram(admin_api)
            sid = api.boot(image_id)
            booted.append(sid)
            assert api.wait(sid)["status"] == "ACTIVE"
            assert free[_host(admin_api, sid)] == max(free.values()), free
        _only_ram_weigher(conf_override, -1.0)
        free = _free_ram(admin_api)
        sid = api.boot(image_id)
        booted.append(sid)
        assert api.wait(sid)["status"] == "ACTIVE"
        assert free[_host(admin_api, sid)] == min(free.values()), free
    finally:
        for sid in booted:
            api.delete(f"/servers/{sid}")


def test_a_disabled_host_is_never_chosen(api, admin_api, image_id, conf_override):
    _only_ram_weigher(conf_override, 1.0)
    free = _free_ram(admin_api)
    best = max(free, key=free.get)
    [service] = [sv for sv in admin_api.get("/os-services?binary=nova-compute")
                 .json()["services"] if sv["host"] == best]
    assert admin_api.req("PUT", f"/os-services/{service['id']}",
                         json={"status": "disabled"}).status_code == 200
    booted = []
    try:
        for _ in range(2):
            sid = api.boot(image_id)
            booted.append(sid)
            assert api.wait(sid)["status"] == "ACTIVE"
            assert _host(admin_api, sid) != best
    finally:
        admin_api.req("PUT", f"/os-services/{service['id']}", json={"status": "enabled"})
        for sid in booted:
            api.delete(f"/servers/{sid}")


# Forty hosts of random usage, some disabled: more than the few rows the database path
# returns, so its choice of those few is what is checked.
HOSTS = 40


@pytest.fixture(scope="module")
def uneven():
    with Cloud(hosts=HOSTS) as cloud, cloud.runtime.activated():
        rnd = random.Random(13)
        with db.transaction() as s:
            for node in s.scalars(sa.select(ComputeNode)).all():
                node.memory_mb_used = rnd.choice([0, 256, 1024, 3000, node.memory_mb])
                node.vcpus_used = rnd.randrange(0, 30)
                node.local_gb_used = rnd.randrange(0, 8)
                node.failed_builds = rnd.choice([0, 0, 0, 1, 4])
            for sv in s.scalars(sa.select(Service)
                                .where(Service.binary == "nova-compute")).all()[::7]:
                sv.disabled = True
        yield cloud


def _python_order(spec, hosts):
    return [h.host for h in weighers.weigh(filters.run(spec, hosts, {})[0], spec, {})]


@pytest.mark.parametrize("vcpus,ram,disk", [(1, 64, 0), (1, 512, 1), (4, 2048, 5)])
def test_database_picks_the_hosts_python_weighing_puts_first(uneven, vcpus, ram, disk):
    spec = {"flavor": {"vcpus": vcpus, "memory_mb": ram, "root_gb": disk,
                       "ephemeral_gb": 0, "swap": 0}}
    with uneven.runtime.activated():
        every, _ = host_state.load()
        expected = _python_order(spec, every)
        assert 5 < len(expected) < HOSTS  # some hosts are full or disabled, most are not
        assert [h.host for h in host_state.best((vcpus, ram, disk), 1000, 5)] == expected[:5]
        # With fewer candidates allowed than hosts: the first 10 fitting, by host id.
        first, _ = host_state.load((vcpus, ram, disk), 10)
        assert ([h.host for h in host_state.best((vcpus, ram, disk), 10, 5)]
                == _python_order(spec, first)[:5])


def test_a_boot_lands_on_the_best_weighed_host(uneven):
    with uneven.runtime.activated():
        spec = {"flavor": {"vcpus": 1, "memory_mb": 128, "root_gb": 1, "ephemeral_gb": 0,
                           "swap": 0}}
        best = _python_order(spec, host_state.load()[0])[0]
    conn = uneven.connection()
    image = conn.image.create_image(name="uneven-img", disk_format="raw",
                                    container_format="bare", data=b"\0" * 512)
    flavor = conn.compute.create_flavor(name="uneven", ram=128, vcpus=1, disk=1)
    server = conn.compute.create_server(name="uneven-1", image_id=image.id,
                                        flavor_id=flavor.id, networks="none")
    server = conn.compute.wait_for_server(server, wait=60, interval=0.05)
    assert server.compute_host == best
