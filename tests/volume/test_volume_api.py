"""The volume service: discovery, microversions, cinder's error bodies, volumes CRUD on
the file backend, and the attachments API nova uses — through keystoneauth1 and
openstacksdk against the in-process cloud."""
from __future__ import annotations

import os
import uuid

import httpx
import pytest

from volume_helpers import Raw, create, wait_gone, wait_status

LATEST = {"OpenStack-API-Version": "volume 3.60"}


@pytest.fixture(scope="module")
def admin_raw(cloud):
    return Raw(cloud.session())


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def raw(cloud, member):
    return Raw(cloud.user_session(member))


def test_version_discovery(cloud):
    root = httpx.get(cloud.url + "/volume/")
    assert root.status_code == 300
    v3 = root.json()["versions"][0]
    assert v3["id"] == "v3.0" and v3["min_version"] == "3.0" and v3["version"] == "3.71"
    assert v3["links"][-1]["href"].endswith("/volume/v3/")
    versioned = httpx.get(cloud.url + "/volume/v3/")
    assert versioned.status_code == 200
    assert versioned.json()["versions"][0]["version"] == "3.71"
    endpoint = cloud.session().get_endpoint(service_type="block-storage", interface="public")
    assert "/volume/v3/" in endpoint


def test_microversion_echo_and_bounds(admin_raw):
    status, _, headers = admin_raw("GET", "/volumes", version="3.27")
    assert status == 200
    assert headers["OpenStack-API-Version"] == "volume 3.27"
    assert "OpenStack-API-Version" in headers["Vary"]
    status, _, headers = admin_raw("GET", f"/volumes/{uuid.uuid4()}", version="3.27")
    assert status == 404 and headers["OpenStack-API-Version"] == "volume 3.27"
    status, body, _ = admin_raw("GET", "/volumes", version="3.99")
    assert status == 406 and "notAcceptable" in body
    status, body, _ = admin_raw("GET", "/volumes", version="3.x")
    assert status == 400 and "badRequest" in body
    status, _, headers = admin_raw("GET", "/volumes", headers={"OpenStack-API-Version": ""})
    assert headers["OpenStack-API-Version"] == "volume 3.0"


def test_both_url_forms(cloud, raw, member):
    volume = create(raw, name="forms")
    sess = raw.session
    url = cloud.url + "/volume/v3"
    with_project = sess.get(f"{url}/{member['project_id']}/volumes/{volume['id']}",
                            headers=LATEST, raise_exc=False)
    without = sess.get(f"{url}/volumes/{volume['id']}", headers=LATEST, raise_exc=False)
    assert with_project.status_code == without.status_code == 200
    assert with_project.json()["volume"]["id"] == without.json()["volume"]["id"]
    other = sess.get(f"{url}/{uuid.uuid4().hex}/volumes", raise_exc=False)
    assert other.status_code == 400 and "badRequest" in other.json()


def test_volume_lifecycle_on_file_backend(cloud, raw, admin_raw):
    volume = create(raw, name="data1", description="d", metadata={"a": "b"})
    assert volume["status"] == "creating" and volume["size"] == 1
    assert volume["bootable"] == "false" and volume["attachments"] == []
    assert "os-vol-host-attr:host" not in volume  # admin-only field
    volume = wait_status(raw, volume["id"], "available")
    assert volume["volume_type"] == "__DEFAULT__" and volume["availability_zone"] == "nova"
    assert volume["shared_targets"] is False and volume["group_id"] is None
    shown = admin_raw("GET", f"/volumes/{volume['id']}")[1]["volume"]
    assert shown["os-vol-host-attr:host"].endswith("@file#file")
    assert shown["os-vol-tenant-attr:tenant_id"] == volume["links"][0]["href"].split("/")[-3]
    path = os.path.join(cloud.data_dir, "volumes", f"volume-{volume['id']}")
    assert os.path.getsize(path) == 1 << 30
    assert os.stat(path).st_blocks == 0  # sparse: nothing written yet

    status, body, _ = raw("PUT", f"/volumes/{volume['id']}",
                          {"volume": {"name": "renamed", "description": None}})
    assert status == 200 and body["volume"]["name"] == "renamed"
    listed = raw("GET", "/volumes")[1]["volumes"]
    assert [v["name"] for v in listed] == ["renamed"] and set(listed[0]) == {"id", "name",
                                                                              "links"}
    detail = raw("GET", "/volumes/detail?name=renamed")[1]["volumes"]
    assert detail[0]["id"] == volume["id"]
    assert raw("GET", "/volumes/detail?name=other")[1]["volumes"] == []
    assert raw("GET", "/volumes/detail?metadata={'a':'b'}")[1]["volumes"][0]["id"] == \
        volume["id"]
    assert raw("GET", "/volumes/detail?status=error")[1]["volumes"] == []

    status, _, _ = raw("DELETE", f"/volumes/{volume['id']}")
    assert status == 202
    wait_gone(raw, volume["id"])
    assert not os.path.exists(path)


def test_errors_are_cinder_faults(cloud, raw, member):
    for size in (0, -1, "x", 1e999, 2**40, True, None, [1]):
        status, body, _ = raw("POST", "/volumes", {"volume": {"size": size}})
        assert status == 400 and "badRequest" in body, (size, body)
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1, "volume_type": "nope"}})
    assert status == 404 and "itemNotFound" in body
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1,
                                                          "availability_zone": "mars"}})
    assert status == 400
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1,
                                                          "snapshot_id": str(uuid.uuid4())}})
    assert status == 404
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1,
                                                          "source_volid": str(uuid.uuid4())}})
    assert status == 404
    status, body, _ = raw("POST", "/volumes", {"volume": {"size": 1,
                                                          "imageRef": str(uuid.uuid4())}})
    assert status == 404
    status, body, _ = raw("GET", "/volumes/detail?status=bogus")
    assert status == 200 and body["volumes"] == []  # cinder filters: none match
    status, body, _ = raw("GET", f"/volumes/{uuid.uuid4()}")
    assert status == 404 and body["itemNotFound"]["code"] == 404
    malformed = raw.session.post(cloud.url + "/volume/v3/volumes", data=b"{nope",
                                 headers={"Content-Type": "application/json"},
                                 raise_exc=False)
    assert malformed.status_code == 400 and "badRequest" in malformed.json()
    assert httpx.get(cloud.url + "/volume/v3/volumes").status_code == 401
    assert raw("GET", "/volumes")[1]["volumes"] == []  # nothing was written


def test_other_projects_volume_is_invisible(cloud, raw):
    volume = create(raw)
    stranger = Raw(cloud.user_session(cloud.make_user()))
    assert stranger("GET", f"/volumes/{volume['id']}")[0] == 404
    assert stranger("DELETE", f"/volumes/{volume['id']}")[0] == 404
    assert stranger("POST", "/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4())}})[0] == 404
    assert stranger("GET", "/volumes")[1]["volumes"] == []


CONNECTOR = {"host": "cmp-1", "platform": "x86_64", "os_type": "linux",
             "multipath": False, "mountpoint": "/dev/vdb", "initiator": None}


def test_attachments_api_flow(cloud, raw):
    volume = wait_status(raw, create(raw, name="att")["id"], "available")
    server = str(uuid.uuid4())
    status, body, _ = raw("POST", "/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": server}})
    assert status == 200, body
    attachment = body["attachment"]
    assert attachment["status"] == "reserved" and attachment["connection_info"] == {}
    assert wait_status(raw, volume["id"], "reserved")["attachments"] == []
    # a second server cannot take a reserved non-multiattach volume
    status, body, _ = raw("POST", "/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4())}})
    assert status == 400 and "badRequest" in body

    status, body, _ = raw("PUT", f"/attachments/{attachment['id']}",
                          {"attachment": {"connector": CONNECTOR}})
    assert status == 200, body
    info = body["attachment"]["connection_info"]
    assert info["driver_volume_type"] == "local"
    assert info["data"]["device_path"] == os.path.join(cloud.data_dir, "volumes",
                                                       f"volume-{volume['id']}")
    assert info["data"]["volume_id"] == volume["id"]
    assert info["data"]["access_mode"] == "rw" and info["data"]["encrypted"] is False
    assert raw("GET", f"/volumes/{volume['id']}")[1]["volume"]["status"] == "attaching"

    status, _, _ = raw("POST", f"/attachments/{attachment['id']}/action",
                       {"os-complete": None})
    assert status == 204
    shown = raw("GET", f"/volumes/{volume['id']}")[1]["volume"]
    assert shown["status"] == "in-use"
    assert shown["attachments"][0]["server_id"] == server
    assert shown["attachments"][0]["attachment_id"] == attachment["id"]
    assert shown["attachments"][0]["device"] == "/dev/vdb"
    listed = raw("GET", f"/attachments?volume_id={volume['id']}")[1]["attachments"]
    assert [a["status"] for a in listed] == ["attached"]

    status, body, _ = raw("DELETE", f"/volumes/{volume['id']}")
    assert status == 400 and "badRequest" in body
    status, body, _ = raw("POST", f"/volumes/{volume['id']}/action",
                          {"os-extend": {"new_size": 2}}, version="3.41")
    assert status == 400  # an attached volume grows only from 3.42 (in-use extend)

    status, body, _ = raw("DELETE", f"/attachments/{attachment['id']}")
    assert status == 200 and body == {"attachments": []}
    shown = raw("GET", f"/volumes/{volume['id']}")[1]["volume"]
    assert shown["status"] == "available" and shown["attachments"] == []
    assert raw("GET", f"/attachments/{attachment['id']}")[0] == 404


def test_attachments_need_3_27(raw):
    status, body, _ = raw("GET", "/attachments", version="3.26")
    assert status == 404


def test_legacy_attach_actions(raw):
    volume = wait_status(raw, create(raw)["id"], "available")
    act = lambda body: raw("POST", f"/volumes/{volume['id']}/action", body)  # noqa: E731
    assert act({"os-reserve": None})[0] == 202
    assert raw("GET", f"/volumes/{volume['id']}")[1]["volume"]["status"] == "attaching"
    assert act({"os-reserve": None})[0] == 400
    assert act({"os-unreserve": None})[0] == 202
    assert act({"os-reserve": {}})[0] == 202
    status, body, _ = act({"os-initialize_connection": {"connector": CONNECTOR}})
    assert status == 200 and body["connection_info"]["driver_volume_type"] == "local"
    server = str(uuid.uuid4())
    assert act({"os-attach": {"instance_uuid": server, "mountpoint": "/dev/vdc",
                              "mode": "rw"}})[0] == 202
    shown = raw("GET", f"/volumes/{volume['id']}")[1]["volume"]
    assert shown["status"] == "in-use" and shown["attachments"][0]["server_id"] == server
    assert act({"os-begin_detaching": None})[0] == 202
    assert raw("GET", f"/volumes/{volume['id']}")[1]["volume"]["status"] == "detaching"
    assert act({"os-roll_detaching": None})[0] == 202
    assert raw("GET", f"/volumes/{volume['id']}")[1]["volume"]["status"] == "in-use"
    assert act({"os-begin_detaching": None})[0] == 202
    assert act({"os-terminate_connection": {"connector": CONNECTOR}})[0] == 202
    attachment_id = shown["attachments"][0]["attachment_id"]
    assert act({"os-detach": {"attachment_id": attachment_id}})[0] == 202
    shown = raw("GET", f"/volumes/{volume['id']}")[1]["volume"]
    assert shown["status"] == "available" and shown["attachments"] == []
    assert act({"os-nonsense": None})[0] == 400


def test_sdk_volume_roundtrip(cloud, member):
    conn = cloud.user_sdk(member)
    volume = conn.block_storage.create_volume(size=1, name="sdk-vol")
    volume = conn.block_storage.wait_for_status(volume, "available", wait=30, interval=0.1)
    assert volume.size == 1 and volume.is_bootable is False
    assert [v.id for v in conn.block_storage.volumes()] == [volume.id]
    conn.block_storage.delete_volume(volume)
    conn.block_storage.wait_for_delete(volume, wait=30, interval=0.1)
