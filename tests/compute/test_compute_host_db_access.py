"""A compute host reaches the cloud's state through named operations the conductor checks
(compute/hostdb.py, compute/conductor/hostdb.py): a hostile host that asks the conductor
to change another host's server, a table it may not touch, or another host's service row
is refused, and the server is unchanged. The host's name is believed only with its own
identity user's token (compute/conductor/host_identity.py): another host's, the shared
nova user's, a revoked or made-up token, or none is refused. A cloud whose hosts use the
conductor ([compute] database_access = conductor) runs power actions and heartbeats
through it."""
from __future__ import annotations

import time
import uuid

import pytest
from helpers.cloud import own_cloud, wait_for
from compute_rest import Compute

from pocketstack.clients import host_users, service_users
from pocketstack.common import exceptions, rpc
from pocketstack.common.context import RequestContext

_PASSWORDS: dict[tuple[str, str], str] = {}  # (data dir, host) -> its user's password


def _host_password(cloud, host):
    """Host ``host``'s own user, made once per cloud through the identity API as the
    operator's `pocketstack host-credential` makes it."""
    key = (cloud.data_dir, host)
    if key not in _PASSWORDS:
        _PASSWORDS[key] = host_users.provision(cloud.session(), cloud.url + "/identity/v3",
                                               host)
    return _PASSWORDS[key]


def _host_token(cloud, host):
    return cloud.session(username=host_users.user_name(host),
                         password=_host_password(cloud, host),
                         project_name="service").get_token()


def _host_db(cloud, host, op, args, token=None):
    """``op`` asked by ``host`` (with its own user's token unless ``token`` is given)."""
    ctx = RequestContext(auth_token=token if token is not None else _host_token(cloud, host))
    with cloud.cloud.runtime.activated():
        return rpc.RPCClient("conductor").call(ctx, "host_db", host=host, op=op, args=args)


@pytest.fixture(scope="module")
def server(cloud, admin_api, image_id):
    sid = admin_api.boot(image_id)
    assert admin_api.wait(sid)["status"] == "ACTIVE"
    yield admin_api.server(sid)
    admin_api.delete(f"/servers/{sid}")


def _event(host, sid, request_id):
    return {"event": "compute_hostile_step", "host": host, "result": "Success",
            "service": "compute", "seed_step": "", "start_time": "2026-01-01T00:00:00",
            "finish_time": "2026-01-01T00:00:01", "request_id": request_id,
            "instance_uuid": sid, "detail": "", "traceback": None}


def _stop_values(sid, request_id="req-hostile"):
    return {"instance_uuid": sid, "values": {"vm_state": "error", "task_state": None},
            "expect_task": None, "events": [], "request_id": request_id}


def _volumes_api(s):
    """The block storage API through keystoneauth session ``s``: (method, path, body)."""
    def volumes(method, path, body=None):
        return s.request(path, method, json=body, raise_exc=False, endpoint_filter={
            "service_type": "block-storage", "interface": "public"})
    return volumes


def _available_volume(volumes) -> str:
    vid = volumes("POST", "/volumes", {"volume": {"size": 1}}).json()["volume"]["id"]
    wait_for(lambda: volumes("GET", f"/volumes/{vid}").json()["volume"]["status"]
             == "available", 30, "the volume")
    return vid


def test_a_host_may_not_change_a_server_of_another_host(cloud, admin_api, server):
    owner = server["OS-EXT-SRV-ATTR:host"]
    other = next(h["service"]["host"] for h in admin_api.get(
        "/os-hypervisors/detail").json()["hypervisors"] if h["service"]["host"] != owner)
    with pytest.raises(exceptions.Forbidden) as refused:
        _host_db(cloud, other, "finish_action", _stop_values(server["id"]))
    assert server["id"] in refused.value.message and other in refused.value.message
    assert admin_api.server(server["id"])["status"] == "ACTIVE"
    # Nor read it: to another host it is not there (a late event for a server that moved
    # on is dropped quietly), while its own host reads it.
    assert _host_db(cloud, other, "load_instance", {"instance_uuid": server["id"]}) is None
    assert _host_db(cloud, owner, "peek_instance", {"instance_uuid": server["id"],
                                                    "columns": ["host"]}) == {"host": owner}
    # Nor a server that does not exist, nor without naming one.
    for args in (_stop_values(str(uuid.uuid4())), {"values": {}}):
        with pytest.raises(exceptions.Forbidden):
            _host_db(cloud, owner, "finish_action", args)


def test_a_host_may_not_name_another_servers_claim_or_migration(cloud, admin_api, image_id,
                                                                server):
    owner = server["OS-EXT-SRV-ATTR:host"]
    other = admin_api.boot(image_id)
    try:
        assert admin_api.wait(other)["status"] == "ACTIVE"
        for op, args in (("release_claim", {"instance_uuid": server["id"], "consumer": other}),
                         ("get_migration", {"instance_uuid": server["id"],
                                            "migration_uuid": str(uuid.uuid4())})):
            with pytest.raises(exceptions.Forbidden):
                _host_db(cloud, owner, op, args)
        hypervisors = admin_api.get("/os-hypervisors/detail").json()["hypervisors"]
        assert sum(h["running_vms"] for h in hypervisors) >= 2  # both claims still held
    finally:
        admin_api.delete(f"/servers/{other}")


@pytest.mark.parametrize("op", ["flavor_create", "instances", "__init__", "update", ""])
def test_a_host_may_ask_only_the_operations_compute_hosts_have(cloud, server, op):
    with pytest.raises(exceptions.Forbidden):
        _host_db(cloud, server["OS-EXT-SRV-ATTR:host"], op, {"uuid": server["id"]})


def test_a_host_may_not_beat_or_register_for_another(cloud, server):
    owner = server["OS-EXT-SRV-ATTR:host"]
    for op, args in (("heartbeats", {"hosts": [owner, "cmp-other"], "binary": "nova-compute"}),
                     ("heartbeats", {"hosts": [], "binary": "nova-compute"}),
                     ("register_services", {"hosts": ["nova-api-host"],
                                            "binary": "nova-conductor", "topic": "conductor"})):
        with pytest.raises(exceptions.Forbidden):
            _host_db(cloud, owner, op, args)
    _host_db(cloud, owner, "heartbeats", {"hosts": [owner], "binary": "nova-compute"})


def test_a_host_may_not_delete_build_or_report_for_another(cloud, admin_api, server):
    """The build's, the delete's and the periodic tasks' operations: another host's
    server, node rows, provider, claim or fault rules are refused, and nothing moved."""
    owner = server["OS-EXT-SRV-ATTR:host"]
    other = next(h["service"]["host"] for h in admin_api.get(
        "/os-hypervisors/detail").json()["hypervisors"] if h["service"]["host"] != owner)
    sid = server["id"]
    owner_node = next(h for h in admin_api.get("/os-hypervisors/detail").json()[
        "hypervisors"] if h["service"]["host"] == owner)
    refused = (
        ("finish_delete", {"instance_uuid": sid, "events": [], "request_id": None,
                           "cleanup": {}}),
        ("forget_block_devices", {"instance_uuid": sid}),
        ("update_instance", {"instance_uuid": sid, "values": {"vm_state": "error"}}),
        ("finish_build", {"instance_uuid": sid, "hosts": [owner], "values": {},
                          "attempt": 0, "events": []}),
        ("release_own_claim", {"hosts": [owner], "instance_uuid": sid}),
        ("owned_instances", {"hosts": [owner]}),
        ("register_nodes", {"hosts": [owner], "resources": {}, "ratios": {}}),
        ("reconcile_resources", {"hosts": [owner]}),
        ("fault_rules", {"hosts": [owner]}),
    )
    for op, args in refused:
        with pytest.raises(exceptions.Forbidden):
            _host_db(cloud, other, op, args)
    server_now = admin_api.server(sid)
    assert server_now["status"] == "ACTIVE" and server_now["OS-EXT-SRV-ATTR:host"] == owner
    node = next(h for h in admin_api.get("/os-hypervisors/detail").json()["hypervisors"]
                if h["service"]["host"] == owner)
    assert node["running_vms"] >= 1 and node["vcpus"] == owner_node["vcpus"]
    # A build's check of a server that is not its own answers what stops it quietly,
    # and its own claim released on its own provider only: nothing of the owner's.
    assert _host_db(cloud, other, "take_over", {"instance_uuid": sid, "attempt": 0}) is False
    attempt = _host_db(cloud, owner, "load_instance", {"instance_uuid": sid})["attempt"]
    create = next(a for a in admin_api.get(f"/servers/{sid}/os-instance-actions").json()[
        "instanceActions"] if a["action"] == "create")["request_id"]
    for op, extra in (("advance_build", {"expect_task": None}),
                      ("finish_build", {"hosts": [other]})):
        # The compare-and-swap names the asking host: another's server matches nothing,
        # and its events are not stored either.
        assert _host_db(cloud, other, op, {
            "instance_uuid": sid, "values": {"task_state": None}, "attempt": attempt,
            "events": [_event(other, sid, create)], **extra}) is False
    # The owner's superseded step keeps its events (the trace says what it did).
    assert _host_db(cloud, owner, "advance_build", {
        "instance_uuid": sid, "values": {"task_state": None}, "expect_task": "networking",
        "attempt": attempt, "events": [dict(_event(owner, sid, create),
                                            event="compute_own_step")]}) is False
    events = admin_api.get(f"/servers/{sid}/os-instance-actions/{create}").json()[
        "instanceAction"]["events"]
    assert "compute_own_step" in {e["event"] for e in events}
    assert "compute_hostile_step" not in {e["event"] for e in events}
    with pytest.raises(exceptions.Forbidden):
        _host_db(cloud, other, "advance_build", {
            "instance_uuid": sid, "values": {"task_state": None}, "expect_task": None,
            "attempt": attempt, "events": [], "asker": owner})
    assert _host_db(cloud, other, "is_live", {"instance_uuid": sid}) is True
    # The build's first load and step: nothing for another host; for the owner, the row
    # and no step (the server's build is long over); the row is the conductor's to read.
    assert _host_db(cloud, other, "begin_build", {"instance_uuid": sid,
                                                  "attempt": attempt}) is None
    row, advanced = _host_db(cloud, owner, "begin_build", {"instance_uuid": sid,
                                                           "attempt": attempt})
    assert (row["uuid"], row["task_state"], advanced) == (sid, None, False)
    with pytest.raises(exceptions.Forbidden):
        _host_db(cloud, owner, "begin_build", {"instance_uuid": sid, "attempt": attempt,
                                               "row": {"host": owner}})
    assert _host_db(cloud, other, "block_devices_of", {"instance_uuid": sid}) == []
    assert _host_db(cloud, other, "release_own_claim", {"hosts": [other],
                                                        "instance_uuid": sid}) is False
    assert _host_db(cloud, owner, "owned_instances", {"hosts": [owner]})[0]["host"] == owner
    assert next(h for h in admin_api.get("/os-hypervisors/detail").json()["hypervisors"]
                if h["service"]["host"] == owner)["running_vms"] == node["running_vms"]


def test_a_host_may_not_move_its_own_server_into_another_project_or_host(cloud, admin_api,
                                                                       server):
    """Even on its own server a host writes only the columns its operation's work writes:
    not the project, the user or the key of the server, and its host only to itself or
    none; each refused with a 403, and the server is unchanged."""
    owner = server["OS-EXT-SRV-ATTR:host"]
    other = next(h["service"]["host"] for h in admin_api.get(
        "/os-hypervisors/detail").json()["hypervisors"] if h["service"]["host"] != owner)
    sid = server["id"]
    hostile = ({"project_id": "another-project"}, {"user_id": "another-user"},
               {"host": other}, {"node": other}, {"host": owner, "node": "no-such-node"},
               {"host": ["a", "list"]}, {"key_data": "ssh-ed25519 AAAA attacker"},
               {"deleted": True}, {"task_state": None, "project_id": "another-project"})
    for values in hostile:
        for op, args in (
                ("update_instance", {"instance_uuid": sid, "values": values}),
                ("finish_action", dict(_stop_values(sid), values=values)),
                ("advance_build", {"instance_uuid": sid, "values": values,
                                   "expect_task": None, "attempt": 0, "events": []}),
                ("finish_build", {"instance_uuid": sid, "hosts": [owner], "values": values,
                                  "attempt": 0, "events": []})):
            with pytest.raises(exceptions.Forbidden) as refused:
                _host_db(cloud, owner, op, args)
            assert owner in refused.value.message, (op, values)
    with pytest.raises(exceptions.Forbidden):
        _host_db(cloud, owner, "update_instance", {"instance_uuid": sid, "values": "x"})
    now = admin_api.server(sid)
    assert (now["tenant_id"], now["user_id"], now["OS-EXT-SRV-ATTR:host"],
            now["status"]) == (server["tenant_id"], server["user_id"], owner, "ACTIVE")
    # What its work writes it may: the compare-and-swap runs (and matches nothing here).
    assert _host_db(cloud, owner, "update_instance", {
        "instance_uuid": sid, "values": {"vm_state": "error", "power_state": 0},
        "expect_task": "powering-off"}) is False
    assert _host_db(cloud, owner, "finish_action", dict(
        _stop_values(sid), values={"task_state": None, "host": None, "node": None},
        expect_task="shelving-offloading")) is False
    assert admin_api.server(sid)["status"] == "ACTIVE"


def test_a_host_may_not_speak_for_another_host_without_its_token(cloud, admin_api, server,
                                                                 monkeypatch):
    """Host A's own credential claiming host B, the shared nova user's token, no token,
    a made-up or malformed one: each a 403 before anything runs (a read too: not the
    None of a server that is not there), and the server is unchanged."""
    owner = server["OS-EXT-SRV-ATTR:host"]
    other = next(h["service"]["host"] for h in admin_api.get(
        "/os-hypervisors/detail").json()["hypervisors"] if h["service"]["host"] != owner)
    sid = server["id"]
    with cloud.cloud.runtime.activated():
        nova = service_users.token("compute")
    for token, why in ((_host_token(cloud, other), f"{host_users.user_name(other)}'s"),
                       (nova, "user nova's"), ("", "no host user's token"),
                       ("gAAAAAmade-up-token", "not valid"), ("a token\nX-Evil: 1", "no host"),
                       ("x" * 9000, "no host")):
        for op, args in (("finish_action", _stop_values(sid)),
                         ("load_instance", {"instance_uuid": sid}),
                         ("heartbeats", {"hosts": [owner], "binary": "nova-compute"})):
            with pytest.raises(exceptions.Forbidden) as refused:
                _host_db(cloud, owner, op, args, token=token)
            assert why in refused.value.message, (why, refused.value.message)
    with pytest.raises(exceptions.Forbidden):  # a context without a token at all
        with cloud.cloud.runtime.activated():
            rpc.RPCClient("conductor").call(RequestContext.admin(), "host_db", host=owner,
                                            op="load_instance", args={"instance_uuid": sid})
    assert admin_api.server(sid)["status"] == "ACTIVE"
    # The owner's own token works; once revoked (or its role removed) it stops working
    # within the conductor's validation bound (here none).
    from pocketstack.compute.conductor import host_identity

    monkeypatch.setattr(host_identity, "TTL", 0.0)
    token = _host_token(cloud, owner)
    assert _host_db(cloud, owner, "load_instance", {"instance_uuid": sid},
                    token=token)["uuid"] == sid
    s = cloud.session()
    assert s.delete(cloud.url + "/identity/v3/auth/tokens", headers={
        "X-Subject-Token": token}).status_code == 204
    with pytest.raises(exceptions.Forbidden) as refused:
        _host_db(cloud, owner, "load_instance", {"instance_uuid": sid}, token=token)
    assert "not valid" in refused.value.message
    identity = cloud.url + "/identity/v3"
    user = s.get(identity + "/users", params={"name": host_users.user_name(owner)}
                 ).json()["users"][0]
    project = s.get(identity + "/projects", params={"name": "service"}).json()["projects"][0]
    role = s.get(identity + "/roles", params={"name": "service"}).json()["roles"][0]
    grant = f"{identity}/projects/{project['id']}/users/{user['id']}/roles/{role['id']}"
    member = s.get(identity + "/roles", params={"name": "member"}).json()["roles"][0]
    s.put(f"{identity}/projects/{project['id']}/users/{user['id']}/roles/{member['id']}")
    assert s.delete(grant).status_code == 204
    try:
        with pytest.raises(exceptions.Forbidden) as refused:
            _host_db(cloud, owner, "load_instance", {"instance_uuid": sid})
        assert "no service role" in refused.value.message
    finally:
        s.put(grant)
        s.delete(f"{identity}/projects/{project['id']}/users/{user['id']}/roles/"
                 f"{member['id']}")
    # A compromised host is cut off by disabling its user: its token stops working.
    token = _host_token(cloud, owner)
    assert _host_db(cloud, owner, "load_instance", {"instance_uuid": sid},
                    token=token)["uuid"] == sid
    assert s.patch(f"{identity}/users/{user['id']}", json={"user": {"enabled": False}}
                   ).status_code == 200
    try:
        with pytest.raises(exceptions.Forbidden) as refused:
            _host_db(cloud, owner, "load_instance", {"instance_uuid": sid}, token=token)
        assert "not valid" in refused.value.message
    finally:
        s.patch(f"{identity}/users/{user['id']}", json={"user": {"enabled": True}})
    assert _host_db(cloud, owner, "load_instance", {"instance_uuid": sid})["uuid"] == sid


def test_a_host_whose_token_was_revoked_logs_in_again(cloud, server, monkeypatch):
    """The host's side (hostdb.ConductorRPC): its own user's token on every call, and a
    fresh login, once, when the conductor says its token is no longer valid."""
    from pocketstack.compute import hostdb
    from pocketstack.compute.conductor import host_identity

    monkeypatch.setattr(host_identity, "TTL", 0.0)
    owner, sid = server["OS-EXT-SRV-ATTR:host"], server["id"]
    with cloud.cloud.runtime.activated():
        # its password where a host reads it: the password file's nova-compute-<host>
        service_users.store(host_users.user_name(owner), _host_password(cloud, owner))
        host = hostdb.ConductorRPC(owner)
        assert host.call("peek_instance", instance_uuid=sid, columns=["host"]).host == owner
        first = host_users.token(owner)
    assert cloud.session().delete(cloud.url + "/identity/v3/auth/tokens", headers={
        "X-Subject-Token": first}).status_code == 204
    with cloud.cloud.runtime.activated():
        assert host.call("peek_instance", instance_uuid=sid, columns=["host"]).host == owner
        assert host_users.token(owner) != first


def test_a_host_writes_only_what_its_work_writes_of_a_block_device(cloud, admin_api, server):
    """update_block_device: the mapping's attachment, connection and a volume the host
    created; never its server, its source, its deletion, nor another volume."""
    owner = server["OS-EXT-SRV-ATTR:host"]
    sid = server["id"]
    s = cloud.session()

    volumes = _volumes_api(s)
    vid = _available_volume(volumes)
    r = admin_api.post(f"/servers/{sid}/os-volume_attachments",
                       {"volumeAttachment": {"volumeId": vid}})
    assert r.status_code == 200, r.text
    try:
        _refuses_hostile_block_device_writes(cloud, owner, sid, vid)
    finally:
        admin_api.delete(f"/servers/{sid}/os-volume_attachments/{vid}")
        wait_for(lambda: volumes("GET", f"/volumes/{vid}").json()["volume"]["status"]
                 == "available", 30, "the volume detached")
        volumes("DELETE", f"/volumes/{vid}")


def _refuses_hostile_block_device_writes(cloud, owner, sid, vid):
    root = _host_db(cloud, owner, "block_devices_of", {"instance_uuid": sid})[0]
    assert (root["volume_id"], root["source_type"]) == (vid, "volume")
    for values, expect in (({"instance_uuid": str(uuid.uuid4())}, None),
                           ({"deleted": True}, None), ({"boot_index": 5}, None),
                           ({"source_type": "image"}, None),
                           ({"volume_id": str(uuid.uuid4())}, None),  # the user's volume
                           ({"attachment_id": ["a", "list"]}, None),
                           ({"connection_info": "text"}, None),
                           ({"connection_info": None}, {"instance_uuid": sid}),
                           ({"connection_info": None}, {"attachment_id": {"a": 1}}),
                           ({"connection_info": None}, "x"), ("values", None), (None, None)):
        args = {"instance_uuid": sid, "bdm_id": root["id"], "values": values}
        if expect is not None:
            args["expect"] = expect
        with pytest.raises(exceptions.Forbidden):
            _host_db(cloud, owner, "update_block_device", args)
    after = _host_db(cloud, owner, "block_devices_of", {"instance_uuid": sid})[0]
    assert after == root
    # What its work writes it may: the compare-and-swap runs (and matches nothing here).
    assert _host_db(cloud, owner, "update_block_device", {
        "instance_uuid": sid, "bdm_id": root["id"],
        "values": {"attachment_id": None, "connection_info": None},
        "expect": {"attachment_id": str(uuid.uuid4())}}) is False


def test_the_owner_host_is_answered_and_bad_arguments_are_a_400(cloud, admin_api, server):
    owner = server["OS-EXT-SRV-ATTR:host"]
    with pytest.raises(exceptions.BadRequest):
        _host_db(cloud, owner, "finish_action", {"instance_uuid": server["id"], "table": "x"})
    # A real answer for the real host: the compare-and-swap does not match (the server has
    # no task), so nothing changes.
    assert _host_db(cloud, owner, "finish_action", dict(
        _stop_values(server["id"]), expect_task="powering-off")) is False
    assert admin_api.server(server["id"])["status"] == "ACTIVE"


def test_hosts_that_use_the_conductor_run_power_actions_and_beat_through_it(image_id):
    with own_cloud("hostdb", **{"compute.database_access": "conductor",
                                "compute.report_interval": 0.2,
                                "compute.periodic_interval": 0.3}) as c:
        api = Compute(c, c.session())
        # Its bootstrap made each host it runs its own user: the service role on the
        # service project only.
        identity = c.url + "/identity/v3"
        users = c.session().get(identity + "/users").json()["users"]
        hosts = {u["name"] for u in users if u["name"].startswith(host_users.PREFIX)}
        assert hosts and hosts == {host_users.user_name(h["service"]["host"]) for h in
                                   api.get("/os-hypervisors/detail").json()["hypervisors"]}
        grants = c.session().get(identity + "/role_assignments", params={
            "user.id": next(u["id"] for u in users if u["name"] in hosts),
            "include_names": 1}).json()["role_assignments"]
        assert [(g["role"]["name"], g["scope"]["project"]["name"]) for g in grants] == [
            ("service", "service")]
        # The hosts reported their providers over placement's REST API (the nova service
        # user, as nova's report client): made with the COMPUTE_NODE trait, and an
        # operator's allocation ratio stays through the periodic reports that follow.
        p = c.session()
        placement = c.url + "/placement"
        mv = {"OpenStack-API-Version": "placement 1.26"}
        node = api.get("/os-hypervisors/detail").json()["hypervisors"][0]
        wait_for(lambda: p.get(f"{placement}/resource_providers/{node['id']}/inventories"
                               "/VCPU", headers=mv, raise_exc=False).status_code == 200,
                 30, "the host's provider (reported once the API listens)")
        traits = p.get(f"{placement}/resource_providers/{node['id']}/traits",
                       headers=mv).json()
        assert traits["traits"] == ["COMPUTE_NODE"]
        inventory = p.get(f"{placement}/resource_providers/{node['id']}/inventories/VCPU",
                          headers=mv).json()
        assert inventory["total"] == node["vcpus"]
        r = p.put(f"{placement}/resource_providers/{node['id']}/inventories/VCPU",
                  headers=mv, json=dict(inventory, allocation_ratio=7.0))
        assert r.status_code == 200, r.text
        generation = r.json()["resource_provider_generation"]
        time.sleep(1.0)  # a few periodic reports (nothing to wait for: nothing changes)
        kept = p.get(f"{placement}/resource_providers/{node['id']}/inventories/VCPU",
                     headers=mv).json()
        assert kept["allocation_ratio"] == 7.0 and kept["total"] == node["vcpus"]
        assert kept["resource_provider_generation"] == generation  # nothing rewritten
        r = c.session().post(c.url + "/image/v2/images", json={
            "name": "cirros", "disk_format": "qcow2", "container_format": "bare"})
        image = r.json()["id"]
        from pocketstack.common.image_formats import qcow2_header

        with c.cloud.runtime.activated():
            c.session().put(c.url + f"/image/v2/images/{image}/file",
                            data=qcow2_header(1 << 20),
                            headers={"Content-Type": "application/octet-stream"})
        sid = api.boot(image)
        assert api.wait(sid)["status"] == "ACTIVE"
        assert api.post(f"/servers/{sid}/action", {"os-stop": None}).status_code == 202
        assert api.wait(sid, ("SHUTOFF", "ERROR"))["status"] == "SHUTOFF"
        assert api.post(f"/servers/{sid}/action", {"os-start": None}).status_code == 202
        assert api.wait(sid, ("ACTIVE", "ERROR"))["status"] == "ACTIVE"
        # The shelve family: the claim is given back and taken again on unshelve, whose
        # host is known to the conductor by that claim before the server names it.
        for action, status in (("shelve", "SHELVED_OFFLOADED"), ("unshelve", "ACTIVE"),
                               ("rescue", "RESCUE"), ("unrescue", "ACTIVE"),
                               ("reboot", "ACTIVE")):
            body = {"reboot": {"type": "HARD"}} if action == "reboot" else {action: None}
            r = api.post(f"/servers/{sid}/action", body)
            assert r.status_code in (200, 202), r.text
            server = api.wait(sid, (status, "ERROR"), timeout=60)
            assert server["status"] == status and server["OS-EXT-STS:task_state"] is None, \
                (action, server)
        # A resize confirmed, then one reverted: the migration and the claims through the
        # conductor, each step checked against the host that asks.
        for flavor, finish, status in (("84", "confirmResize", "ACTIVE"),
                                       ("1", "revertResize", "ACTIVE")):
            r = api.post(f"/servers/{sid}/action", {"resize": {"flavorRef": flavor}})
            assert r.status_code == 202, r.text
            assert api.wait(sid, ("VERIFY_RESIZE", "ERROR"), 60)["status"] == "VERIFY_RESIZE"
            assert api.post(f"/servers/{sid}/action", {finish: None}).status_code in (202, 204)
            server = api.wait(sid, (status, "ERROR"), 60)
            assert server["status"] == status and server["OS-EXT-STS:task_state"] is None
        assert server["flavor"]["original_name"] == "m1.micro"
        # An interface attached and detached: the server's network_info through the
        # conductor, row-locked there.
        s = c.session()
        net = s.post(c.url + "/network/v2.0/networks", json={"network": {"name": "if"}}
                     ).json()["network"]
        s.post(c.url + "/network/v2.0/subnets", json={"subnet": {
            "network_id": net["id"], "ip_version": 4, "cidr": "10.9.0.0/24"}})
        r = api.post(f"/servers/{sid}/os-interface", {"interfaceAttachment": {
            "net_id": net["id"]}})
        assert r.status_code == 200, r.text
        port = r.json()["interfaceAttachment"]["port_id"]
        assert "if" in api.server(sid)["addresses"]
        assert api.delete(f"/servers/{sid}/os-interface/{port}").status_code == 202
        wait_for(lambda: "if" not in api.server(sid)["addresses"], 30, "the port detached")
        # A volume attached and detached, and a server booted from a new volume and
        # deleted with it: the mappings through the conductor.
        volumes = _volumes_api(s)
        vid = _available_volume(volumes)
        r = api.post(f"/servers/{sid}/os-volume_attachments",
                     {"volumeAttachment": {"volumeId": vid}})
        assert r.status_code == 200, r.text
        assert volumes("GET", f"/volumes/{vid}").json()["volume"]["status"] == "in-use"
        assert api.delete(f"/servers/{sid}/os-volume_attachments/{vid}").status_code == 202
        wait_for(lambda: volumes("GET", f"/volumes/{vid}").json()["volume"]["status"]
                 == "available", 30, "the volume detached")
        raw = s.post(c.url + "/image/v2/images", json={
            "name": "raw", "disk_format": "raw", "container_format": "bare"}).json()["id"]
        s.put(c.url + f"/image/v2/images/{raw}/file", data=b"boot" * 1024,
              headers={"Content-Type": "application/octet-stream"})
        bfv = api.post("/servers", {"server": {
            "name": "bfv", "flavorRef": "42", "networks": "none",
            "block_device_mapping_v2": [{"source_type": "image", "uuid": raw,
                                         "destination_type": "volume", "boot_index": 0,
                                         "volume_size": 1, "delete_on_termination": True}]}})
        assert bfv.status_code == 202, bfv.text
        bfv = bfv.json()["server"]["id"]
        attached = api.wait(bfv)["os-extended-volumes:volumes_attached"]
        assert api.server(bfv)["status"] == "ACTIVE" and len(attached) == 1
        assert api.delete(f"/servers/{bfv}").status_code == 204
        wait_for(lambda: volumes("GET", f"/volumes/{attached[0]['id']}").status_code == 404,
                 30, "the boot volume deleted with its server")
        actions = api.get(f"/servers/{sid}/os-instance-actions").json()["instanceActions"]
        start = next(a for a in actions if a["action"] == "start")
        events = api.get(f"/servers/{sid}/os-instance-actions/{start['request_id']}",
                         headers={"OpenStack-API-Version": "compute 2.51"}).json()
        by_name = {e["event"]: e for e in events["instanceAction"]["events"]}
        assert by_name["compute_power_on_instance"]["result"] == "Success"

        # Live-migrated, then evacuated from its host forced down: the migration's status,
        # its claims and the server's new host through the conductor, asked by each host.
        for action, body, mv in (("os-migrateLive", {"host": None,
                                                     "block_migration": "auto"}, "2.30"),
                                 ("evacuate", {}, "2.68")):
            source = api.server(sid)["OS-EXT-SRV-ATTR:host"]
            service = None
            if action == "evacuate":
                service = next(x for x in api.get("/os-services?binary=nova-compute").json()[
                    "services"] if x["host"] == source)
                api.req("PUT", f"/os-services/{service['id']}", {"forced_down": True})
            try:
                r = api.post(f"/servers/{sid}/action", {action: body},
                             headers={"OpenStack-API-Version": f"compute {mv}"})
                assert r.status_code in (200, 202), r.text
                server = wait_for(lambda: (lambda x: x["OS-EXT-STS:task_state"] is None
                                           and x)(api.server(sid)), 60, action)
            finally:
                if service is not None:
                    api.req("PUT", f"/os-services/{service['id']}", {"forced_down": False})
            assert server["status"] == "ACTIVE" and \
                server["OS-EXT-SRV-ATTR:host"] != source, (action, server)
        # Deleted on its host through the conductor: claim, row and action in one commit.
        before = api.get("/os-hypervisors/detail").json()["hypervisors"]
        assert api.delete(f"/servers/{sid}").status_code == 204
        wait_for(lambda: api.get(f"/servers/{sid}").status_code == 404, 30, "the delete")
        after = api.get("/os-hypervisors/detail").json()["hypervisors"]
        assert sum(h["running_vms"] for h in after) == sum(h["running_vms"]
                                                          for h in before) - 1
        actions = api.get(f"/servers/{sid}/os-instance-actions").json()["instanceActions"]
        assert next(a for a in actions if a["action"] == "delete")["message"] is None

        def beats():
            rows = api.get("/os-services?binary=nova-compute").json()["services"]
            return rows and all(s["state"] == "up" for s in rows) and rows

        first = {s["host"]: s["updated_at"] for s in wait_for(beats, 30, "computes up")}
        wait_for(lambda: all(s["updated_at"] != first[s["host"]] for s in beats()), 30,
                 "a heartbeat through the conductor")
