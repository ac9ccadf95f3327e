"""Server actions that answered 400 "no such action", through openstacksdk —
rescue/unrescue, changePassword, trigger_crash_dump, shelve/unshelve/shelveOffload,
migrate + confirm, os-migrateLive, evacuate (from a host that is down), createBackup."""
import time
import uuid

import pytest


@pytest.fixture(scope="module")
def conn(cloud, member):
    return cloud.user_sdk(member)


@pytest.fixture(scope="module")
def admin_conn(cloud):
    return cloud.sdk()


@pytest.fixture(scope="module")
def net(conn):
    network = conn.network.create_network(name=f"ccact-{uuid.uuid4().hex[:6]}")
    conn.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.64.0.0/24")
    yield network
    conn.network.delete_network(network, ignore_missing=True)


@pytest.fixture
def server(conn, image_id, net):
    s = conn.compute.create_server(name=f"ccact-{uuid.uuid4().hex[:6]}", image_id=image_id,
                                   flavor_id="42", networks=[{"uuid": net.id}])
    s = conn.compute.wait_for_server(s, wait=60, interval=0.1)
    yield s
    conn.compute.delete_server(s, ignore_missing=True)
    conn.compute.wait_for_delete(s, wait=60, interval=0.1)


def _wait(conn, server, status):
    return conn.compute.wait_for_server(server, status=status, wait=60, interval=0.1)


def _settled(conn, server):
    """The server once its current task is over (status alone does not show every task)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        s = conn.compute.get_server(server.id)
        if s.task_state is None:
            return s
        time.sleep(0.1)
    raise AssertionError(f"{server.id} still in task {s.task_state}")


def _port_host(admin_conn, server_id):
    return next(admin_conn.network.ports(device_id=server_id)).binding_host_id


def test_rescue_unrescue_change_password_crash_dump(conn, server):
    conn.compute.rescue_server(server)
    assert _wait(conn, server, "RESCUE").vm_state == "rescued"
    conn.compute.unrescue_server(server)
    _wait(conn, server, "ACTIVE")
    _settled(conn, server)
    conn.compute.change_server_password(server, "n3w-secret")
    _settled(conn, server)
    conn.compute.trigger_server_crash_dump(server)
    assert _settled(conn, server).status == "ACTIVE"
    actions = [a.action for a in conn.compute.server_actions(server)]
    assert {"rescue", "unrescue", "changePassword", "trigger_crash_dump"} <= set(actions)
    # unrescue of a server that is not rescued: nova's 409
    r = conn.compute.post(f"/servers/{server.id}/action", json={"unrescue": None})
    assert r.status_code == 409


def test_shelve_offload_and_unshelve(conn, admin_conn, server):
    conn.compute.shelve_server(server)
    s = _wait(conn, server, "SHELVED_OFFLOADED")
    assert s.power_state == 4 and not admin_conn.compute.get_server(server.id).compute_host
    assert _port_host(admin_conn, server.id) == ""
    shelved = list(conn.image.images(name=f"{server.name}-shelved"))
    assert len(shelved) == 1
    r = conn.compute.post(f"/servers/{server.id}/action", json={"shelveOffload": None})
    assert r.status_code in (403, 409)  # admin-only, and already offloaded
    conn.compute.unshelve_server(server)
    s = _wait(conn, server, "ACTIVE")
    assert s.addresses and _port_host(admin_conn, server.id).startswith("cmp-")
    assert list(conn.image.images(name=f"{server.name}-shelved")) == []
    console = conn.compute.get_server_console_output(server)["output"]
    assert "login:" in console
    # deleting a shelved server deletes the image it was kept in, as nova
    conn.compute.shelve_server(server)
    _wait(conn, server, "SHELVED_OFFLOADED")
    assert len(list(conn.image.images(name=f"{server.name}-shelved"))) == 1
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=60, interval=0.1)
    assert list(conn.image.images(name=f"{server.name}-shelved")) == []


def test_cold_migrate_and_confirm(admin_conn, server):
    source = admin_conn.compute.get_server(server.id).compute_host
    admin_conn.compute.migrate_server(server)
    s = _wait(admin_conn, server, "VERIFY_RESIZE")
    assert s.compute_host != source
    admin_conn.compute.confirm_server_resize(server)
    s = _wait(admin_conn, server, "ACTIVE")
    assert s.compute_host != source and _port_host(admin_conn, server.id) == s.compute_host
    migrations = [m for m in admin_conn.compute.migrations(instance_uuid=server.id)]
    assert migrations[0].migration_type == "migration" and migrations[0].status == "confirmed"


def test_live_migrate(admin_conn, server):
    source = admin_conn.compute.get_server(server.id).compute_host
    admin_conn.compute.live_migrate_server(server, block_migration="auto")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        s = admin_conn.compute.get_server(server.id)
        if s.task_state is None:
            break
        time.sleep(0.1)
    assert s.status == "ACTIVE" and s.compute_host != source
    assert _port_host(admin_conn, server.id) == s.compute_host
    m = next(admin_conn.compute.migrations(instance_uuid=server.id))
    assert (m.migration_type, m.status, m.dest_compute) == ("live-migration", "completed",
                                                          s.compute_host)
    # to a named host that is the source: 400
    r = admin_conn.compute.post(f"/servers/{server.id}/action", json={"os-migrateLive": {
        "host": s.compute_host, "block_migration": "auto"}}, microversion="2.30")
    assert r.status_code == 400


def test_evacuate_from_a_host_that_is_down(cloud, admin_conn, server):
    base = cloud.url + "/compute/v2.1"
    s = cloud.session()
    mv = {"OpenStack-API-Version": "compute 2.53"}
    source = admin_conn.compute.get_server(server.id).compute_host
    r = admin_conn.compute.post(f"/servers/{server.id}/action", json={"evacuate": {}},
                                microversion="2.68")
    assert r.status_code == 400  # the host is up
    service = [x for x in s.get(base + "/os-services", headers=mv).json()["services"]
               if x["host"] == source and x["binary"] == "nova-compute"][0]
    s.put(base + f"/os-services/{service['id']}", json={"forced_down": True}, headers=mv)
    try:
        admin_conn.compute.evacuate_server(server)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            after = admin_conn.compute.get_server(server.id)
            if after.task_state is None:
                break
            time.sleep(0.1)
        # the SDK speaks 2.95 here: an evacuated server comes up stopped (nova 2.95)
        assert after.status == "SHUTOFF" and after.compute_host != source
        assert _port_host(admin_conn, server.id) == after.compute_host
    finally:
        s.put(base + f"/os-services/{service['id']}", json={"forced_down": False},
              headers=mv)


def test_create_backup_with_rotation(conn, server):
    first = conn.compute.backup_server(server, f"{server.name}-b1", "daily", 1)
    _settled(conn, server)
    second = conn.compute.backup_server(server, f"{server.name}-b2", "daily", 1)
    _settled(conn, server)
    names = [i.name for i in conn.image.images() if i.name.startswith(server.name + "-b")]
    assert names == [f"{server.name}-b2"], (first, second)
    for image in conn.image.images(name=f"{server.name}-b2"):
        conn.image.delete_image(image)


@pytest.fixture
def reclaim_interval(cloud):
    """[compute] reclaim_instance_interval of the session's cloud, reset afterwards."""
    from pocketstack.common import config

    def set_interval(seconds):
        with cloud.cloud.runtime.activated():
            config.CONF.set_override("reclaim_instance_interval", seconds, group="compute")
    yield set_interval
    with cloud.cloud.runtime.activated():
        config.CONF.clear_override("reclaim_instance_interval", group="compute")


def test_soft_delete_restore_force_delete_and_reclaim(conn, api, image_id, reclaim_interval):
    reclaim_interval(3600)
    sid = api.boot(image_id)
    api.wait(sid)
    assert api.delete(f"/servers/{sid}").status_code == 204
    s = api.wait(sid, ("SOFT_DELETED",))
    assert s["OS-EXT-STS:power_state"] == 4
    conn.compute.restore_server(sid)
    assert api.wait(sid, ("ACTIVE",))["OS-EXT-STS:power_state"] == 1
    r = api.post(f"/servers/{sid}/action", {"restore": None})
    assert r.status_code == 409  # not soft-deleted
    api.delete(f"/servers/{sid}")
    api.wait(sid, ("SOFT_DELETED",))
    conn.compute.delete_server(sid, force=True)
    api.wait_gone(sid)

    reclaim_interval(1)  # the host's periodic task deletes it for good
    sid = api.boot(image_id)
    api.wait(sid)
    api.delete(f"/servers/{sid}")
    api.wait(sid, ("SOFT_DELETED",))
    api.wait_gone(sid, timeout=60)
