"""The volume service on SQLite, PostgreSQL and MariaDB (``pocketstack up`` in a
subprocess): volume life cycle with metadata and types, race-safe quotas under concurrent
creates, and one attachment per volume under concurrent attaches."""
from __future__ import annotations

import concurrent.futures
import time
import uuid

EP = {"service_type": "block-storage", "interface": "public"}
HEADERS = {"OpenStack-API-Version": "volume 3.60"}


def _call(session, method, path, body=None):
    resp = session.request(path, method, json=body, endpoint_filter=EP, headers=HEADERS,
                           raise_exc=False)
    return resp.status_code, (resp.json() if resp.content else None)


def _wait(session, volume_id, wanted="available"):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status, body = _call(session, "GET", f"/volumes/{volume_id}")
        if body["volume"]["status"] == wanted:
            return body["volume"]
        time.sleep(0.05)
    raise AssertionError(body)


def test_volume_life_cycle_quota_and_attach_races(backend_cloud):
    admin = backend_cloud.session()
    conn = backend_cloud.sdk()
    project = conn.identity.create_project(name=f"vol-{uuid.uuid4().hex[:8]}",
                                           domain_id="default")
    status, _ = _call(admin, "PUT", f"/os-quota-sets/{project.id}",
                      {"quota_set": {"volumes": 5}})
    assert status == 200
    type_name = f"t-{uuid.uuid4().hex[:6]}"
    assert _call(admin, "POST", "/types", {"volume_type": {
        "name": type_name, "extra_specs": {"volume_backend_name": "file"}}})[0] == 200
    user = conn.identity.create_user(name=f"u-{uuid.uuid4().hex[:8]}", password="pw",
                                     default_project_id=project.id, domain_id="default")
    member = conn.identity.find_role("member")
    conn.identity.assign_project_role_to_user(project, user, member)

    def user_session():
        return backend_cloud.session(username=user.name, password="pw",
                                     project_name=project.name)

    def create(_):
        return _call(user_session(), "POST", "/volumes", {"volume": {
            "size": 1, "volume_type": type_name, "metadata": {"k": "é"}}})[0]

    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        statuses = sorted(pool.map(create, range(10)))
    assert statuses == [202] * 5 + [413] * 5
    session = user_session()
    volumes = _call(session, "GET", "/volumes/detail")[1]["volumes"]
    assert len(volumes) == 5 and all(v["metadata"] == {"k": "é"} for v in volumes)
    volume = _wait(session, volumes[0]["id"])
    assert volume["volume_type"] == type_name

    def attach(_):
        return _call(user_session(), "POST", "/attachments", {"attachment": {
            "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4()),
            "connector": {"host": "h"}}})[0]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert sorted(pool.map(attach, range(4))) == [200, 400, 400, 400]
    attachments = _call(session, "GET", f"/attachments?volume_id={volume['id']}")[1]
    assert len(attachments["attachments"]) == 1
    attachment_id = attachments["attachments"][0]["id"]
    assert _call(session, "DELETE", f"/attachments/{attachment_id}")[0] == 200
    for v in volumes:
        _wait(session, v["id"])
        assert _call(session, "DELETE", f"/volumes/{v['id']}")[0] == 202
