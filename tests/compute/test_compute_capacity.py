"""100 servers created concurrently on hosts that fit exactly 100: all ACTIVE, no host over
capacity; the 101st goes to ERROR with a NoValidHost that explains itself."""
import concurrent.futures
import time

import pytest
import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.compute.models import ComputeNode
from pocketstack.placement import direct

from compute_rest import public_image
from helpers.cloud import own_cloud


@pytest.fixture(scope="module")
def cloud():
    """A cloud of its own: the test needs four empty hosts, whatever other tests of the
    session's shared cloud left on theirs."""
    with own_cloud("capacity") as c, c.cloud.runtime.activated():
        yield c


@pytest.fixture(scope="module")
def image_id(cloud):
    return public_image(cloud, "capacity")


def test_hundred_concurrent_boots_fill_hosts_exactly(cloud, make_api, admin_api, image_id):
    user = cloud.make_user(roles=("member",))
    api = make_api(user)
    admin_api.req("PUT", f"/os-quota-sets/{user['project_id']}",
                  json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}})
    # Empty hosts: an earlier test's deletes may still be in flight (wait for them); a
    # server left behind for good fails the test.
    deadline = time.monotonic() + 60
    while True:
        with db.reader() as s:
            nodes = s.scalars(sa.select(ComputeNode)).all()
        if all(n.memory_mb_used == 0 for n in nodes) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    up = [n.host for n in nodes]
    assert len(up) == 4 and all(n.memory_mb_used == 0 for n in nodes), \
        "needs empty hosts: another test left servers behind"
    # 25 per host by RAM: capacity 65536 × 1.5 = 98304 MB; 25 × 3900 fits, 26 does not.
    r = admin_api.post("/flavors", {"flavor": {"name": "quarter-host", "ram": 3900, "vcpus": 1,
                                               "disk": 1}})
    fid = r.json()["flavor"]["id"]
    try:
        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            ids = list(pool.map(lambda i: api.boot(image_id, name=f"cap-{i}", flavor=fid),
                                range(100)))
        finals = [api.wait(sid, timeout=120) for sid in ids]
        assert [s["status"] for s in finals].count("ACTIVE") == 100, \
            [s.get("fault") for s in finals if s["status"] != "ACTIVE"][:3]
        with db.reader() as s:
            nodes = s.scalars(sa.select(ComputeNode)).all()
            per_host = {}
            for _, _, host, rc, _ in direct.all_allocations(s):
                if rc == "VCPU":
                    per_host[host] = per_host.get(host, 0) + 1
        for n in nodes:
            assert n.memory_mb_used <= n.memory_mb * n.ram_allocation_ratio
        assert sorted(per_host.values()) == [25, 25, 25, 25]
        extra = api.boot(image_id, name="cap-101", flavor=fid)
        s = api.wait(extra)
        assert s["status"] == "ERROR"
        msg = s["fault"]["message"]
        assert msg.startswith(
            "No valid host: 4 hosts; resource fit removed 4 (need 3900 MB RAM,"), msg
        ids.append(extra)
    finally:
        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            list(pool.map(lambda sid: api.delete(f"/servers/{sid}"), ids))
        for sid in ids:
            api.wait_gone(sid, timeout=60)
        admin_api.delete(f"/flavors/{fid}")
    with db.reader() as s:
        assert all(n.memory_mb_used == 0 for n in s.scalars(sa.select(ComputeNode)).all())
