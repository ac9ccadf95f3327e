"""Scale: a cloud with 200 simulated compute hosts in one process (one fleet:
one RPC pool, one heartbeat and one periodic loop for all of them). openstacksdk lists
every host page by page, servers boot onto them, and every host's heartbeat lands."""
from __future__ import annotations

import datetime as dt
import time

import pytest

from pocketstack import Cloud

pytestmark = pytest.mark.filterwarnings("ignore:The field .* has been deprecated")
HOSTS = 200
MV = {"OpenStack-API-Version": "compute 2.79"}


@pytest.fixture(scope="module")
def many():
    # Quick heartbeats, so the test sees several rounds of them in a second or two.
    with Cloud(hosts=HOSTS, overrides={"compute.report_interval": 0.2,
                                       "compute.periodic_interval": 0.3}) as cloud:
        yield cloud


@pytest.fixture(scope="module")
def conn(many):
    return many.connection()


def _get(many, path, version="2.79"):
    return many.session().get(many.url + "/compute/v2.1" + path, raise_exc=False,
                              headers={"OpenStack-API-Version": f"compute {version}"})


def test_sdk_lists_every_host_page_by_page(many, conn):
    names = [h.name for h in conn.compute.hypervisors(details=True, limit=37)]
    assert sorted(names) == sorted(f"cmp-{i}" for i in range(1, HOSTS + 1))
    # One page as the SDK saw it: 37 hosts and a link to the next.
    page = _get(many, "/os-hypervisors?limit=37", "2.53").json()
    assert len(page["hypervisors"]) == 37
    [link] = page["hypervisors_links"]
    assert link["rel"] == "next" and f"marker={page['hypervisors'][-1]['id']}" in link["href"]
    # Unpaged it is every host, with no next link under nova's 1,000 per page.
    whole = _get(many, "/os-hypervisors/detail").json()
    assert len(whole["hypervisors"]) == HOSTS and "hypervisors_links" not in whole
    assert {h["state"] for h in whole["hypervisors"]} == {"up"}


def test_hypervisor_paging_refuses_what_nova_refuses(many):
    assert _get(many, "/os-hypervisors?marker=not-a-host", "2.53").status_code == 400
    assert _get(many, "/os-hypervisors?marker=999999", "2.33").status_code == 400
    r = _get(many, "/os-hypervisors?hypervisor_hostname_pattern=cmp-1&limit=5", "2.53")
    assert r.status_code == 400 and "hypervisor_hostname_pattern" in r.text
    assert _get(many, "/os-hypervisors?limit=-1", "2.53").status_code == 400
    # Before 2.33 there is no paging: every host, whatever the query says.
    assert len(_get(many, "/os-hypervisors?limit=5", "2.1").json()["hypervisors"]) == HOSTS


def test_servers_boot_onto_the_hosts_and_are_counted_there(many, conn):
    image = conn.image.create_image(name="many-img", disk_format="raw",
                                    container_format="bare", data=b"\0" * 512)
    flavor = conn.compute.find_flavor("m1.nano")
    servers = [conn.compute.create_server(name=f"many-{i}", image_id=image.id,
                                          flavor_id=flavor.id, networks="none")
               for i in range(6)]
    servers = [conn.compute.wait_for_server(s, wait=60, interval=0.05) for s in servers]
    hosts = {s.compute_host for s in servers}
    assert {s.status for s in servers} == {"ACTIVE"}
    assert hosts <= {f"cmp-{i}" for i in range(1, HOSTS + 1)}
    detail = {h["hypervisor_hostname"]: h
              for h in _get(many, "/os-hypervisors/detail").json()["hypervisors"]}
    assert sum(detail[h]["running_vms"] for h in hosts) == len(servers)
    for s in servers:
        conn.compute.delete_server(s)
    for s in servers:
        conn.compute.wait_for_delete(s, wait=60, interval=0.05)
    detail = {h["hypervisor_hostname"]: h
              for h in _get(many, "/os-hypervisors/detail").json()["hypervisors"]}
    assert sum(detail[h]["running_vms"] for h in hosts) == 0


def _beats(many) -> dict[str, dt.datetime | None]:
    """Each host's last heartbeat (None: held down, the fault rule cleared it)."""
    services = _get(many, "/os-services?binary=nova-compute").json()["services"]
    return {s["host"]: s["updated_at"] and dt.datetime.fromisoformat(s["updated_at"])
            for s in services}


def _others_beat_after(many, before: dict) -> dict:
    """The beats once every host but cmp-7 has beaten since ``before`` (30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        now = _beats(many)
        late = [h for h in now if h != "cmp-7" and (now[h] is None or before[h] is not None
                                                     and now[h] <= before[h])]
        if not late:
            return now
        assert time.monotonic() < deadline, f"no new beat from {late}"
        time.sleep(0.2)


def test_every_host_beats_except_one_held_down(many):
    faults = many.session()
    base = many.url + "/pocketstack/v1/faults"
    r = faults.post(base, json={"fault": {"host": "cmp-7", "operation": "host",
                                          "action": "down"}}, raise_exc=False)
    assert r.status_code == 201, r.text
    try:
        first = _beats(many)
        assert len(first) == HOSTS
        # Every other host beats twice more: a beat of cmp-7 that was under way when the
        # rule came (it may write once, late, on a loaded machine) has ended by then.
        second = _others_beat_after(many, first)
        third = _others_beat_after(many, second)
        assert third["cmp-7"] == second["cmp-7"]  # a host held down stays silent
    finally:
        faults.delete(base, raise_exc=False)
