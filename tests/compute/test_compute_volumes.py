"""Compute side, seed steps 25-27: volumes attached to servers and servers booted
from volumes, through openstacksdk and nova's REST API against the in-process cloud with
the real volume service — attach/detach, boot from an existing volume, image → new volume,
blank volumes, delete_on_termination, the cleanups of a failed build, and the 4xx a user
gets for bad requests."""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from compute_rest import Compute, Volumes

NIL = "00000000-0000-0000-0000-000000000000"
def _driver(cloud, host):
    return next(w.manager.driver for w in cloud.cloud.workers
                if getattr(w, "manager", None) is not None
                and getattr(w.manager, "host", None) == host)


def _host(api, sid):
    r = api.s.get(api.cloud.url + f"/compute/v2.1/servers/{sid}",
                  headers={"OpenStack-API-Version": "compute 2.79"})
    return r.json()["server"]


@pytest.fixture
def member(cloud):
    """A fresh project per test: the volume quota (10 volumes) is per project."""
    return cloud.make_user(roles=("member",))


@pytest.fixture
def api(cloud, member):
    return Compute(cloud, cloud.user_session(member))


@pytest.fixture
def vols(cloud, member):
    return Volumes(cloud.user_session(member))


@pytest.fixture(scope="module")
def raw_image(cloud):
    """A small raw image (the volume service writes raw images into volumes as they are)."""
    s = cloud.session()
    r = s.post(cloud.url + "/image/v2/images",
               json={"name": f"raw-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
                     "container_format": "bare", "visibility": "public"})
    image = r.json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"boot" * 1024,
          headers={"Content-Type": "application/octet-stream"})
    return image["id"]


@pytest.fixture(scope="module")
def admin_api(cloud):
    return Compute(cloud, cloud.session())


def _attached_host(admin_api, sid):
    return admin_api.server(sid)["OS-EXT-SRV-ATTR:host"]


def _bdm(source, uuid_=None, boot_index=0, **extra):
    out = {"source_type": source, "destination_type": "volume", "boot_index": boot_index}
    if uuid_:
        out["uuid"] = uuid_
    out.update(extra)
    return out


def _wait_volume_ids(vols, expected: set, why: str, timeout: float = 20.0) -> None:
    """The project's volumes become ``expected`` (the volume service deletes in the
    background: a volume being deleted is still listed for a moment)."""
    deadline = time.monotonic() + timeout
    while (ids := {v["id"] for v in vols.req("GET", "/volumes").json()["volumes"]}) != expected:
        assert time.monotonic() < deadline, f"{why}: {ids} != {expected}"
        time.sleep(0.05)


def _boot_volume(api, bdms, name=None, image=None):
    body = {"server": {"name": name or f"bfv-{uuid.uuid4().hex[:6]}", "flavorRef": "42",
                       "networks": "none", "block_device_mapping_v2": bdms}}
    if image:
        body["server"]["imageRef"] = image
    return api.post("/servers", body)


# --- attach and detach -----------------------------------------------------------------

def test_attach_and_detach_through_sdk(cloud, member, api, admin_api, vols, image_id):
    conn = cloud.user_sdk(member)
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = conn.block_storage.create_volume(size=1, name="data1")
    conn.block_storage.wait_for_status(volume, "available", wait=30)

    att = conn.compute.create_volume_attachment(sid, volume=volume)
    assert att.device == "/dev/vdb" and att.volume_id == volume.id and att.server_id == sid
    v = vols.get(volume.id)
    assert v["status"] == "in-use"
    assert [(a["server_id"], a["device"]) for a in v["attachments"]] == [(sid, "/dev/vdb")]
    server = api.server(sid)
    assert server["os-extended-volumes:volumes_attached"] == [
        {"id": volume.id, "delete_on_termination": False}]
    listed = list(conn.compute.volume_attachments(sid))
    assert [(a.volume_id, a.device) for a in listed] == [(volume.id, "/dev/vdb")]
    shown = api.get(f"/servers/{sid}/os-volume_attachments/{volume.id}").json()
    assert shown == {"volumeAttachment": {"id": volume.id, "volumeId": volume.id,
                                          "serverId": sid, "device": "/dev/vdb",
                                          "tag": None, "delete_on_termination": False}}
    driver = _driver(cloud, _attached_host(admin_api, sid))
    conn_info = driver.attached_volumes(sid)["/dev/vdb"]
    assert conn_info["data"]["volume_id"] == volume.id
    assert conn_info["driver_volume_type"] in ("local", "file")

    # a second volume gets the next device; the server's detail list shows both
    second = vols.create()
    r = api.post(f"/servers/{sid}/os-volume_attachments",
                 {"volumeAttachment": {"volumeId": second["id"], "tag": "logs",
                                       "delete_on_termination": True}})
    assert r.status_code == 200, r.text
    assert r.json()["volumeAttachment"] == {"id": second["id"], "serverId": sid,
                                            "volumeId": second["id"], "device": "/dev/vdc",
                                            "tag": "logs", "delete_on_termination": True}
    detail = api.get("/servers/detail").json()["servers"]
    mine = next(s for s in detail if s["id"] == sid)
    assert [v["id"] for v in mine["os-extended-volumes:volumes_attached"]] == [
        volume.id, second["id"]]

    conn.compute.delete_volume_attachment(sid, volume.id)
    assert vols.get(volume.id)["status"] == "available"
    assert vols.get(volume.id)["attachments"] == []
    assert "/dev/vdb" not in driver.attached_volumes(sid)
    r = api.get(f"/servers/{sid}/os-volume_attachments/{volume.id}")
    assert r.status_code == 404 and "is not attached to volume" in r.json()[
        "itemNotFound"]["message"]

    # deleting the server detaches the rest and honours delete_on_termination
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    vols.wait(second["id"], "deleted")
    assert vols.get(volume.id)["status"] == "available"


def test_attach_errors(cloud, member, api, vols, image_id):
    sid = api.boot(image_id)
    other_sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    api.wait(other_sid, ("ACTIVE",))
    volume = vols.create()

    def attach(server, volume_id, **extra):
        return api.post(f"/servers/{server}/os-volume_attachments",
                        {"volumeAttachment": dict({"volumeId": volume_id}, **extra)})

    assert attach(sid, volume["id"]).status_code == 200
    # an in-use volume cannot go to a second server; nothing changes
    r = attach(other_sid, volume["id"])
    assert r.status_code == 400 and "Invalid volume" in r.json()["badRequest"]["message"]
    v = vols.get(volume["id"])
    assert v["status"] == "in-use" and [a["server_id"] for a in v["attachments"]] == [sid]
    assert api.server(other_sid)["os-extended-volumes:volumes_attached"] == []
    # nor twice to the same one
    r = attach(sid, volume["id"])
    assert r.status_code == 400 and "already attached" in r.json()["badRequest"]["message"]
    # unknown volume, another project's volume: 404
    assert attach(sid, NIL).status_code == 404
    stranger = cloud.make_user()
    theirs = Volumes(cloud.user_session(stranger)).create()
    r = attach(sid, theirs["id"])
    assert r.status_code == 404 and "itemNotFound" in r.json(), r.text
    assert Volumes(cloud.user_session(stranger)).get(theirs["id"])["status"] == "available"
    # a device name already taken: 409; a malformed one: 400
    spare = vols.create()
    assert attach(sid, spare["id"], device="/dev/vdb").status_code == 409
    assert attach(sid, spare["id"], device="not a device").status_code == 400
    assert vols.get(spare["id"])["status"] == "available"
    # detach a volume the server does not have: 404, its state untouched
    r = api.delete(f"/servers/{other_sid}/os-volume_attachments/{spare['id']}")
    assert r.status_code == 404 and "is not attached" in r.json()["itemNotFound"]["message"]
    assert api.delete(f"/servers/{sid}/os-volume_attachments/{NIL}").status_code == 404
    # swap is not offered to members
    r = api.req("PUT", f"/servers/{sid}/os-volume_attachments/{volume['id']}",
                json={"volumeAttachment": {"volumeId": volume["id"]}})
    assert r.status_code == 403
    for s in (sid, other_sid):
        api.delete(f"/servers/{s}")
    api.wait_gone(sid)
    api.wait_gone(other_sid)
    assert vols.wait(volume["id"], "available")["attachments"] == []


def test_two_servers_race_for_one_volume(api, vols, image_id):
    servers = [api.boot(image_id) for _ in range(2)]
    for sid in servers:
        api.wait(sid, ("ACTIVE",))
    volume = vols.create()
    results = {}

    def attach(sid):
        results[sid] = api.post(f"/servers/{sid}/os-volume_attachments",
                                {"volumeAttachment": {"volumeId": volume["id"]}}).status_code

    threads = [threading.Thread(target=attach, args=(sid,)) for sid in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [200, 400], results
    winner = next(sid for sid, code in results.items() if code == 200)
    v = vols.get(volume["id"])
    assert v["status"] == "in-use" and [a["server_id"] for a in v["attachments"]] == [winner]
    for sid in servers:
        expected = [volume["id"]] if sid == winner else []
        assert [x["id"] for x in api.server(sid)[
            "os-extended-volumes:volumes_attached"]] == expected
        api.delete(f"/servers/{sid}")


# --- boot from volume --------------------------------------------------------------------

def test_boot_from_existing_volume(cloud, api, admin_api, vols, raw_image):
    root = vols.create(imageRef=raw_image)
    assert root["bootable"] == "true"
    r = _boot_volume(api, [_bdm("volume", root["id"])])
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    server = api.wait(sid)
    assert server["status"] == "ACTIVE", server
    assert server["image"] == ""
    assert server["os-extended-volumes:volumes_attached"] == [
        {"id": root["id"], "delete_on_termination": False}]
    v = vols.get(root["id"])
    assert v["status"] == "in-use" and v["attachments"][0]["device"] == "/dev/vda"
    driver = _driver(cloud, _attached_host(admin_api, sid))
    assert driver.attached_volumes(sid)["/dev/vda"]["data"]["volume_id"] == root["id"]
    # the guest booted the image the volume was made from
    assert root["volume_image_metadata"]["image_name"] in driver.get_console_output(sid)
    # the trace has the volume step of seed 25-27
    events = admin_api.get(f"/servers/{sid}/os-instance-actions").json()["instanceActions"]
    create = next(a for a in events if a["action"] == "create")
    detail = admin_api.get(f"/servers/{sid}/os-instance-actions/{create['request_id']}")
    names = [e["event"] for e in detail.json()["instanceAction"]["events"]]
    assert "compute_attach_volume" in names and "compute_prep_block_device" in names
    # the root volume cannot be detached
    r = api.delete(f"/servers/{sid}/os-volume_attachments/{root['id']}")
    assert r.status_code == 400 and "root device" in r.json()["badRequest"]["message"]
    # and it stays (delete_on_termination false) when the server goes
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert vols.wait(root["id"], "available")["attachments"] == []


def test_boot_from_image_to_new_volume_and_blank_volume(cloud, member, api, vols, raw_image):
    conn = cloud.user_sdk(member)
    server = conn.compute.create_server(
        name="bfv-sdk", flavor_id="42", networks="none",
        block_device_mapping=[_bdm("image", raw_image, volume_size=1,
                                   delete_on_termination=True),
                              _bdm("blank", None, boot_index=-1, volume_size=1)])
    server = conn.compute.wait_for_server(server, wait=60)
    attached = server.attached_volumes
    assert len(attached) == 2 and [a["delete_on_termination"] for a in attached] == [True,
                                                                                     False]
    root, blank = (vols.get(a["id"]) for a in attached)
    assert root["status"] == blank["status"] == "in-use"
    assert root["size"] == 1 and root["bootable"] == "true"
    assert root["volume_image_metadata"]["image_id"] == raw_image
    assert blank["name"] == f"{server.id}-blank-vol"
    assert {a["device"] for v in (root, blank) for a in v["attachments"]} == {"/dev/vda",
                                                                              "/dev/vdb"}
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=30)
    vols.wait(root["id"], "deleted")
    assert vols.wait(blank["id"], "available")["attachments"] == []
    vols.req("DELETE", f"/volumes/{blank['id']}")


def test_legacy_block_device_mapping_and_volumes_boot_url(api, vols):
    data = vols.create()
    vols.req("POST", f"/volumes/{data['id']}/action", {"os-set_bootable": {"bootable": True}})
    r = api.post("/os-volumes_boot", {"server": {
        "name": "legacy", "flavorRef": "42", "networks": "none",
        "block_device_mapping": [{"volume_id": data["id"], "device_name": "vda",
                                  "delete_on_termination": "true"}]}})
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    assert api.wait(sid)["status"] == "ACTIVE"
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    vols.wait(data["id"], "deleted")


BAD_BOOTS = [
    ("missing volume", [_bdm("volume", NIL)], "failed to get volume"),
    ("missing image", [_bdm("image", NIL, volume_size=1)], "failed to get image"),
    ("image without size", [_bdm("image", "{image}")], "non-zero size"),
    ("blank without size", [_bdm("blank")], "Blank device cannot be the boot device"),
    ("two boot_index 0", [_bdm("image", "{image}", volume_size=1),
                          _bdm("image", "{image}", volume_size=1)], "Boot sequence"),
    ("no boot device", [_bdm("blank", boot_index=-1, volume_size=1)], "Boot sequence"),
    ("volume without uuid", [_bdm("volume")], "Missing device UUID"),
    ("volume type on a volume", [_bdm("volume", NIL, volume_type="x")],
     "Specifying volume type to existing volume"),
]


@pytest.mark.parametrize("label,bdms,text", BAD_BOOTS, ids=[b[0] for b in BAD_BOOTS])
def test_bad_boot_from_volume(api, vols, raw_image, label, bdms, text):
    bdms = [{k: (v.format(image=raw_image) if isinstance(v, str) else v)
             for k, v in b.items()} for b in bdms]
    before = len(api.get("/servers").json()["servers"])
    r = _boot_volume(api, bdms)
    assert r.status_code == 400, r.text
    assert text in r.json()["badRequest"]["message"], r.json()
    assert len(api.get("/servers").json()["servers"]) == before


def test_with_an_image_the_root_volume_need_not_be_bootable(api, vols, image_id):
    """Nova checks a boot volume's bootable flag (and refuses a blank root) only when the
    request gives no image: with imageRef both boot, as SDK suites expect."""
    plain = vols.create()  # blank-made: not bootable
    made = []
    try:
        for bdms in ([_bdm("blank", volume_size=1)], [_bdm("volume", plain["id"])]):
            r = _boot_volume(api, bdms, image=image_id)
            assert r.status_code == 202, r.text
            made.append(r.json()["server"]["id"])
            assert api.wait(made[-1])["status"] == "ACTIVE"
        # without the image the same requests stay refused
        assert _boot_volume(api, [_bdm("blank", volume_size=1)]).status_code == 400
    finally:
        for sid in made:
            api.delete(f"/servers/{sid}")
        for sid in made:
            api.wait_gone(sid)


def test_boot_with_unusable_volumes(cloud, api, vols, image_id):
    # another project's volume is not there for this user; an in-use one is not available
    stranger = Volumes(cloud.user_session(cloud.make_user()))
    theirs = stranger.create()
    r = _boot_volume(api, [_bdm("volume", theirs["id"])])
    assert r.status_code == 400 and "failed to get volume" in r.json()["badRequest"]["message"]
    assert stranger.get(theirs["id"])["status"] == "available"
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    busy = vols.create()
    assert api.post(f"/servers/{sid}/os-volume_attachments",
                    {"volumeAttachment": {"volumeId": busy["id"]}}).status_code == 200
    r = _boot_volume(api, [_bdm("volume", busy["id"], boot_index=-1)], image=image_id)
    assert r.status_code == 400 and "status must be 'available'" in r.json()[
        "badRequest"]["message"]
    # a non-bootable root, a volume for several servers at once
    plain = vols.create()
    r = _boot_volume(api, [_bdm("volume", plain["id"])])
    assert r.status_code == 400 and "is not bootable" in r.json()["badRequest"]["message"]
    body = {"server": {"name": "many", "flavorRef": "42", "networks": "none",
                       "imageRef": image_id, "min_count": 2,
                       "block_device_mapping_v2": [_bdm("volume", plain["id"], -1)]}}
    r = api.post("/servers", body)
    assert r.status_code == 400 and "multiple instances" in r.json()["badRequest"]["message"]
    assert vols.get(plain["id"])["status"] == "available"
    api.delete(f"/servers/{sid}")


def test_failed_build_leaves_volumes_available(cloud, api, vols, raw_image, faults):
    """Every attempt fails at spawn: the server goes to ERROR, the volume it was given is
    available with no attachment, and the volume it created from the image is gone."""
    faults.add(operation="spawn", action="fail", times=None, message="hypervisor says no")
    existing = vols.create()
    before = {v["id"] for v in vols.req("GET", "/volumes").json()["volumes"]}
    r = _boot_volume(api, [_bdm("image", raw_image, volume_size=1),
                           _bdm("volume", existing["id"], boot_index=-1)])
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    server = api.wait(sid, ("ERROR",), timeout=60)
    assert "hypervisor says no" in server["fault"]["message"]
    v = vols.get(existing["id"])
    assert v["status"] == "available" and v["attachments"] == [], v
    _wait_volume_ids(vols, before, "the build's own volumes must be deleted")
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert vols.get(existing["id"])["status"] == "available"


def test_a_build_no_host_takes_gives_its_volume_back(api, admin_api, vols, image_id):
    """No host has room (NoValidHost in the conductor): the build never reaches a host,
    and the volume the API reserved for it is available again at once, not reserved
    until the server is deleted."""
    name = f"huge-{uuid.uuid4().hex[:6]}"
    r = admin_api.post("/flavors", {"flavor": {"name": name, "ram": 64, "vcpus": 1,
                                               "disk": 100000}})
    assert r.status_code == 200, r.text
    flavor = r.json()["flavor"]["id"]
    try:
        volume = vols.create()
        r = api.post("/servers", {"server": {
            "name": name, "imageRef": image_id, "flavorRef": flavor, "networks": "none",
            "block_device_mapping_v2": [_bdm("volume", volume["id"], boot_index=-1)]}})
        assert r.status_code == 202, r.text
        sid = r.json()["server"]["id"]
        server = api.wait(sid, ("ERROR",))
        assert "No valid host" in server["fault"]["message"]
        # The conductor writes ERROR, then gives the volume back: a client may look in
        # between (on two busy test workers it did), so allow it a moment.
        deadline = time.monotonic() + 5
        while (v := vols.get(volume["id"]))["status"] != "available" \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert v["status"] == "available" and v["attachments"] == [], v
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
        assert vols.get(volume["id"])["status"] == "available"
    finally:
        admin_api.delete(f"/flavors/{flavor}")


def test_a_build_that_gives_up_on_its_volume_cancels_the_image_copy(
        cloud, api, vols, conf_override):
    """Each attempt stops waiting for its boot volume while the image is still being
    copied into it (`downloading`, which a plain delete refuses): the cleanup
    force-deletes the volume, which stops the copy, instead of leaving it behind.
    The server ends in ERROR saying why; no volume is left."""
    s = cloud.session()
    r = s.post(cloud.url + "/image/v2/images", json={
        "name": f"big-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
        "container_format": "bare", "visibility": "public"})
    image = r.json()["id"]
    s.put(cloud.url + f"/image/v2/images/{image}/file", data=b"\x01" * (160 << 20),
          headers={"Content-Type": "application/octet-stream"})
    conf_override("compute", "block_device_allocate_timeout", 0.1)
    try:
        before = {v["id"] for v in vols.req("GET", "/volumes").json()["volumes"]}
        r = _boot_volume(api, [_bdm("image", image, volume_size=1)])
        assert r.status_code == 202, r.text
        sid = r.json()["server"]["id"]
        server = api.wait(sid, ("ERROR",), timeout=60)
        assert "did not finish being created" in server["fault"]["message"]
        _wait_volume_ids(vols, before, "the build's volumes must be deleted")
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
    finally:
        s.delete(cloud.url + f"/image/v2/images/{image}")


def test_failed_attach_leaves_volume_available(api, vols, image_id, faults):
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = vols.create()
    faults.add(operation="attach_volume", action="fail", times=1, message="no PCI slot")
    r = api.post(f"/servers/{sid}/os-volume_attachments",
                 {"volumeAttachment": {"volumeId": volume["id"]}})
    assert r.status_code == 500 and "no PCI slot" in r.text
    v = vols.get(volume["id"])
    assert v["status"] == "available" and v["attachments"] == []
    assert api.server(sid)["os-extended-volumes:volumes_attached"] == []
    # and it works the next time
    r = api.post(f"/servers/{sid}/os-volume_attachments",
                 {"volumeAttachment": {"volumeId": volume["id"]}})
    assert r.status_code == 200 and r.json()["volumeAttachment"]["device"] == "/dev/vdb"
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert vols.wait(volume["id"], "available")["attachments"] == []


def test_older_microversions_hide_new_fields(api, vols, image_id):
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = vols.create()
    old = Compute(api.cloud, api.s, version="2.1")
    r = old.post(f"/servers/{sid}/os-volume_attachments",
                 {"volumeAttachment": {"volumeId": volume["id"], "tag": "x"}})
    assert r.status_code == 400  # tag needs 2.49
    r = old.post(f"/servers/{sid}/os-volume_attachments",
                 {"volumeAttachment": {"volumeId": volume["id"]}})
    assert r.status_code == 200
    assert set(r.json()["volumeAttachment"]) == {"id", "serverId", "volumeId", "device"}
    assert old.server(sid)["os-extended-volumes:volumes_attached"] == [{"id": volume["id"]}]
    api.delete(f"/servers/{sid}")


def test_volume_backed_server_needs_no_flavor_disk(cloud, api, admin_api, vols):
    """An image whose min_disk exceeds the flavor boots onto a big enough volume; the host
    claims no disk for it; stop/start keep the volume; rebuild onto another image is
    refused (nova before 2.93)."""
    from pocketstack.placement import direct

    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images",
                   json={"name": f"big-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
                         "container_format": "bare", "visibility": "public",
                         "min_disk": 2}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"big" * 100,
          headers={"Content-Type": "application/octet-stream"})
    r = api.post("/servers", {"server": {"name": "too-small", "flavorRef": "42",
                                         "networks": "none", "imageRef": image["id"]}})
    assert r.status_code == 400 and "disk is too small" in r.json()["badRequest"]["message"]
    r = _boot_volume(api, [_bdm("image", image["id"], volume_size=1)])
    assert r.status_code == 400 and "Volume is smaller" in r.json()["badRequest"]["message"]
    r = _boot_volume(api, [_bdm("image", image["id"], volume_size=2,
                                delete_on_termination=True)])
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    server = api.wait(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    held = direct.held(sid)
    assert [e["resources"].get("DISK_GB", 0) for e in held.values()] == [0], held
    driver = _driver(cloud, _attached_host(admin_api, sid))
    api.post(f"/servers/{sid}/action", {"os-stop": None})
    api.wait(sid, ("SHUTOFF",))
    api.post(f"/servers/{sid}/action", {"os-start": None})
    api.wait(sid, ("ACTIVE",))
    assert "/dev/vda" in driver.attached_volumes(sid)
    other = s.post(cloud.url + "/image/v2/images",
                   json={"name": f"other-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
                         "container_format": "bare", "visibility": "public"}).json()
    s.put(cloud.url + f"/image/v2/images/{other['id']}/file", data=b"other" * 100,
          headers={"Content-Type": "application/octet-stream"})
    r = api.post(f"/servers/{sid}/action", {"rebuild": {"imageRef": other["id"]}})
    assert r.status_code == 400 and "volume-backed" in r.json()["badRequest"]["message"]
    s.delete(cloud.url + f"/image/v2/images/{other['id']}", raise_exc=False)
    # the volume's own image is accepted, as nova compares with the volume's image
    r = api.post(f"/servers/{sid}/action", {"rebuild": {"imageRef": image["id"]}})
    assert r.status_code == 202, r.text
    assert api.wait(sid)["status"] == "ACTIVE"
    assert "/dev/vda" in driver.attached_volumes(sid)
    root = api.server(sid)["os-extended-volumes:volumes_attached"][0]["id"]
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    vols.wait(root, "deleted")


def test_boot_from_snapshot_with_volume_type(cloud, api, vols, raw_image):
    """Source snapshot → a new volume of the snapshot's size (or more), of the requested
    type (2.67); an unknown type or snapshot is a 400 and writes nothing."""
    admin = Volumes(cloud.session())
    type_name = f"fast-{uuid.uuid4().hex[:4]}"
    r = admin.req("POST", "/types", {"volume_type": {"name": type_name}})
    assert r.status_code == 200, r.text
    origin = vols.create(imageRef=raw_image)
    r = vols.req("POST", "/snapshots", {"snapshot": {"volume_id": origin["id"],
                                                     "name": "snap1"}})
    assert r.status_code == 202, r.text
    snap = r.json()["snapshot"]
    deadline = time.monotonic() + 30
    while vols.req("GET", f"/snapshots/{snap['id']}").json()["snapshot"]["status"] != \
            "available":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r = _boot_volume(api, [_bdm("snapshot", NIL)])
    assert r.status_code == 400 and "failed to get snapshot" in r.json()["badRequest"][
        "message"]
    r = _boot_volume(api, [_bdm("snapshot", snap["id"], volume_type="no-such-type")])
    assert r.status_code == 400 and "no-such-type" in r.json()["badRequest"]["message"]
    r = _boot_volume(api, [_bdm("snapshot", snap["id"], volume_type=type_name,
                                delete_on_termination=True)])
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    assert api.wait(sid)["status"] == "ACTIVE"
    root = vols.get(api.server(sid)["os-extended-volumes:volumes_attached"][0]["id"])
    assert root["snapshot_id"] == snap["id"] and root["volume_type"] == type_name
    assert root["size"] == origin["size"] and root["status"] == "in-use"
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    vols.wait(root["id"], "deleted")
    vols.req("DELETE", f"/snapshots/{snap['id']}")


def test_failed_detach_keeps_volume_attached(cloud, api, admin_api, vols, image_id, faults):
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = vols.create()
    assert api.post(f"/servers/{sid}/os-volume_attachments",
                    {"volumeAttachment": {"volumeId": volume["id"]}}).status_code == 200
    faults.add(operation="detach_volume", action="fail", times=1, message="device busy")
    r = api.delete(f"/servers/{sid}/os-volume_attachments/{volume['id']}")
    assert r.status_code == 500 and "device busy" in r.text
    v = vols.get(volume["id"])
    assert v["status"] == "in-use" and len(v["attachments"]) == 1
    driver = _driver(cloud, _attached_host(admin_api, sid))
    assert "/dev/vdb" in driver.attached_volumes(sid)
    assert api.delete(f"/servers/{sid}/os-volume_attachments/{volume['id']}"
                      ).status_code == 202
    assert vols.get(volume["id"])["status"] == "available"
    api.delete(f"/servers/{sid}")


def test_attach_to_a_building_or_locked_server_is_a_conflict(api, admin_api, vols, image_id):
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = vols.create()
    assert admin_api.post(f"/servers/{sid}/action", {"lock": None}).status_code == 202
    r = api.post(f"/servers/{sid}/os-volume_attachments",
                 {"volumeAttachment": {"volumeId": volume["id"]}})
    assert r.status_code == 409, r.text
    assert vols.get(volume["id"])["status"] == "available"
    admin_api.post(f"/servers/{sid}/action", {"unlock": None})
    api.delete(f"/servers/{sid}")


def test_resize_and_rebuild_keep_volumes(cloud, api, admin_api, vols, image_id, raw_image):
    """Volumes stay with their server through resize (confirm) and rebuild, and can be
    detached afterwards; a volume-backed server resizes to another flavor too."""
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    data = vols.create()
    assert api.post(f"/servers/{sid}/os-volume_attachments",
                    {"volumeAttachment": {"volumeId": data["id"]}}).status_code == 200
    assert api.post(f"/servers/{sid}/action", {"resize": {"flavorRef": "84"}}
                    ).status_code == 202
    api.wait(sid, ("VERIFY_RESIZE",))
    assert api.post(f"/servers/{sid}/action", {"confirmResize": None}).status_code == 204
    api.wait(sid, ("ACTIVE",))
    assert [v["id"] for v in api.server(sid)["os-extended-volumes:volumes_attached"]] == [
        data["id"]]
    assert api.post(f"/servers/{sid}/action", {"rebuild": {"imageRef": image_id}}
                    ).status_code == 202
    api.wait(sid, ("ACTIVE",))
    driver = _driver(cloud, _attached_host(admin_api, sid))
    assert driver.attached_volumes(sid)["/dev/vdb"]["data"]["volume_id"] == data["id"]
    assert api.delete(f"/servers/{sid}/os-volume_attachments/{data['id']}"
                      ).status_code == 202
    assert vols.get(data["id"])["status"] == "available"
    api.delete(f"/servers/{sid}")

    r = _boot_volume(api, [_bdm("image", raw_image, volume_size=1,
                                delete_on_termination=True)])
    sid = r.json()["server"]["id"]
    api.wait(sid, ("ACTIVE",))
    assert api.post(f"/servers/{sid}/action", {"resize": {"flavorRef": "84"}}
                    ).status_code == 202
    assert api.wait(sid, ("VERIFY_RESIZE", "ERROR"))["status"] == "VERIFY_RESIZE"
    assert api.post(f"/servers/{sid}/action", {"confirmResize": None}).status_code == 204
    api.wait(sid, ("ACTIVE",))
    root = api.server(sid)["os-extended-volumes:volumes_attached"][0]["id"]
    assert vols.get(root)["status"] == "in-use"
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    vols.wait(root, "deleted")


def test_a_timed_out_build_gives_its_volumes_back_and_leaves_the_new_attempt_alone(
        cloud, api, vols, raw_image, faults, conf_override):
    """The first attempt hangs in spawn past the build deadline with its volumes attached:
    the conductor deletes its attachments and the root volume it made, the next attempt
    makes and attaches its own, and the hung attempt, when it wakes, takes nothing of the
    new one's. In the end: one root volume, one attachment per volume, nothing leaked."""
    conf_override("compute", "build_timeout", 2.0)
    conf_override("compute", "periodic_interval", 0.2)
    data = vols.create()
    faults.add(operation="spawn", action="hang", hang_seconds=4.0, times=1)
    r = _boot_volume(api, [_bdm("image", raw_image, volume_size=1, delete_on_termination=True),
                           _bdm("volume", data["id"], boot_index=-1)])
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    assert api.wait(sid, timeout=30)["status"] == "ACTIVE"

    def gave_up():
        trace = cloud.session().get(cloud.url + f"/pocketstack/v1/servers/{sid}/trace").json()
        return any(e["step"] == "compute__do_build_and_run_instance"
                   and "superseded" in (e["detail"] or "") for e in trace["events"])

    deadline = time.monotonic() + 20
    while not gave_up():
        assert time.monotonic() < deadline, "the hung build never gave up"
        time.sleep(0.1)
    attached = [v["id"] for v in api.server(sid)["os-extended-volumes:volumes_attached"]]
    assert len(attached) == 2 and attached[1] == data["id"]
    for volume_id in attached:
        v = vols.get(volume_id)
        assert v["status"] == "in-use" and [a["server_id"] for a in v["attachments"]] == [sid]
    _wait_volume_ids(vols, set(attached), "the first attempt's root volume must be gone")
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    vols.wait(attached[0], "deleted")
    assert vols.get(data["id"])["status"] == "available"


def test_delete_during_build_leaves_no_volume_behind(cloud, api, vols, raw_image, faults):
    """Deleted while its spawn hangs: the given volume ends available with no attachment,
    and the root volume the build made is deleted once the build notices (it never
    became a server's disk)."""
    data = vols.create()
    faults.add(operation="spawn", action="hang", hang_seconds=1.0, times=1)
    r = _boot_volume(api, [_bdm("image", raw_image, volume_size=1),
                           _bdm("volume", data["id"], boot_index=-1)])
    sid = r.json()["server"]["id"]
    deadline = time.monotonic() + 20
    while api.server(sid)["OS-EXT-STS:task_state"] != "spawning":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert api.delete(f"/servers/{sid}").status_code == 204
    api.wait_gone(sid)
    assert vols.get(data["id"])["status"] == "available"
    _wait_volume_ids(vols, {data["id"]}, "the build's root volume was left behind")
    assert vols.get(data["id"])["attachments"] == []


def test_restart_gives_back_an_attach_cut_short(cloud, api, admin_api, vols, image_id):
    """The host died between the API's reservation and the connection: when the compute
    service starts again the reservation is deleted — the volume is available and the
    server no longer lists it."""
    import datetime as dt

    import sqlalchemy as sa

    from pocketstack.common import db
    from pocketstack.compute.models import BlockDeviceMapping

    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = vols.create()
    r = vols.req("POST", "/attachments", {"attachment": {"volume_uuid": volume["id"],
                                                         "instance_uuid": sid}})
    assert r.status_code == 200, r.text
    host = _attached_host(admin_api, sid)
    manager = next(w.manager for w in cloud.cloud.workers
                   if getattr(getattr(w, "manager", None), "host", None) == host)
    # Written before the compute service (re)started: the start-up looks for those only.
    long_ago = manager.started_at - dt.timedelta(minutes=5)
    with db.transaction() as s:  # what the API writes before it calls the host
        s.execute(sa.insert(BlockDeviceMapping), [{
            "uuid": str(uuid.uuid4()), "instance_uuid": sid, "source_type": "volume",
            "destination_type": "volume", "device_name": "/dev/vdb",
            "volume_id": volume["id"], "attachment_id": r.json()["attachment"]["id"],
            "connection_info": None, "delete_on_termination": False, "created_at": long_ago,
            "updated_at": long_ago}])
    assert vols.get(volume["id"])["status"] == "reserved"
    manager.init_host()
    v = vols.get(volume["id"])
    assert v["status"] == "available" and v["attachments"] == []
    assert api.server(sid)["os-extended-volumes:volumes_attached"] == []
    assert api.server(sid)["status"] == "ACTIVE"
    api.delete(f"/servers/{sid}")


def test_concurrent_attaches_to_one_server_get_distinct_devices(api, vols, image_id):
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volumes = [vols.create() for _ in range(3)]
    results = {}

    def attach(volume_id):
        r = api.post(f"/servers/{sid}/os-volume_attachments",
                     {"volumeAttachment": {"volumeId": volume_id}})
        results[volume_id] = (r.status_code, r.json()["volumeAttachment"]["device"]
                              if r.status_code == 200 else r.text)

    threads = [threading.Thread(target=attach, args=(v["id"],)) for v in volumes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [(200, "/dev/vdb"), (200, "/dev/vdc"),
                                        (200, "/dev/vdd")], results
    listed = api.get(f"/servers/{sid}/os-volume_attachments").json()["volumeAttachments"]
    assert sorted((a["volumeId"], a["device"]) for a in listed) == sorted(
        (v, dev) for v, (_, dev) in results.items())
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    for v in volumes:
        assert vols.wait(v["id"], "available")["attachments"] == []


def test_two_boots_race_for_one_volume(api, vols, raw_image):
    """Both requests see the volume available; the reservation decides: one server boots
    from it, the other request is a 400 that writes nothing."""
    root = vols.create(imageRef=raw_image)
    codes = {}

    def boot(name):
        r = _boot_volume(api, [_bdm("volume", root["id"])], name=name)
        codes[name] = (r.status_code, r.json())

    threads = [threading.Thread(target=boot, args=(f"race-{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(code for code, _ in codes.values()) == [202, 400], codes
    loser = next(body for code, body in codes.values() if code == 400)
    assert "Invalid volume" in loser["badRequest"]["message"]
    sid = next(body["server"]["id"] for code, body in codes.values() if code == 202)
    assert api.wait(sid)["status"] == "ACTIVE"
    assert [s["id"] for s in api.get("/servers").json()["servers"]] == [sid]
    v = vols.get(root["id"])
    assert v["status"] == "in-use" and [a["server_id"] for a in v["attachments"]] == [sid]
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert vols.wait(root["id"], "available")["attachments"] == []


def test_285_update_delete_on_termination(cloud, api, vols, image_id):
    """2.85: a member's PUT naming the same volume changes delete_on_termination (202);
    the other fields cannot change (400); another volume is still the admin's swap."""
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = vols.create()
    new = Compute(cloud, api.s, "2.85")
    path = f"/servers/{sid}/os-volume_attachments/{volume['id']}"
    assert new.post(f"/servers/{sid}/os-volume_attachments",
                    {"volumeAttachment": {"volumeId": volume["id"]}}).status_code == 200
    assert new.get(path).json()["volumeAttachment"]["delete_on_termination"] is False
    r = new.req("PUT", path, json={"volumeAttachment": {"volumeId": volume["id"],
                                                          "delete_on_termination": True}})
    assert r.status_code == 202 and r.content == b"", r.text
    assert new.get(path).json()["volumeAttachment"]["delete_on_termination"] is True
    device = new.get(path).json()["volumeAttachment"]["device"]
    same = {"volumeId": volume["id"], "device": device, "serverId": sid, "id": volume["id"]}
    assert new.req("PUT", path, json={"volumeAttachment": same}).status_code == 202
    for bad in ({"device": "/dev/vdz"}, {"serverId": NIL}, {"id": NIL}, {"tag": "x"},
                {"delete_on_termination": "maybe"}, {"bogus": 1}):
        r = new.req("PUT", path, json={"volumeAttachment": dict(volumeId=volume["id"], **bad)})
        assert r.status_code == 400, (bad, r.text)
    # naming another volume is a swap: admin only
    spare = vols.create()
    r = new.req("PUT", path, json={"volumeAttachment": {"volumeId": spare["id"]}})
    assert r.status_code == 403
    # below 2.85 the field is not accepted at all
    old = Compute(cloud, api.s, "2.84")
    r = old.req("PUT", path, json={"volumeAttachment": {"volumeId": volume["id"],
                                                          "delete_on_termination": False}})
    assert r.status_code == 400
    # the server's delete now takes the volume with it
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)
    assert vols.wait(volume["id"], "deleted") is None


def test_287_rescue_volume_backed(cloud, api, vols, raw_image):
    """2.87: a volume-backed server can be rescued, with a rescue image that says where the
    rescue disk goes (hw_rescue_bus, hw_rescue_device); before 2.87 never (400)."""
    root = vols.create(imageRef=raw_image)
    r = _boot_volume(api, [_bdm("volume", root["id"])])
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    assert api.wait(sid)["status"] == "ACTIVE"
    s = cloud.session()
    rescue_image = s.post(cloud.url + "/image/v2/images", json={
        "name": f"rescue-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
        "container_format": "bare", "visibility": "public", "hw_rescue_bus": "scsi",
        "hw_rescue_device": "cdrom"}).json()["id"]
    try:
        old, new = Compute(cloud, api.s, "2.86"), Compute(cloud, api.s, "2.87")
        action = f"/servers/{sid}/action"
        r = old.post(action, {"rescue": {"rescue_image_ref": rescue_image}})
        assert r.status_code == 400 and "volume-backed" in r.text, r.text
        # the server's own image has no hw_rescue_* properties
        r = new.post(action, {"rescue": None})
        assert r.status_code == 400 and "volume-backed" in r.text, r.text
        assert new.post(action, {"rescue": {"rescue_image_ref": NIL}}).status_code == 400
        r = new.post(action, {"rescue": {"rescue_image_ref": rescue_image}})
        assert r.status_code == 200 and r.json()["adminPass"], r.text
        assert new.wait(sid, ("RESCUE", "ERROR"))["status"] == "RESCUE"
        assert new.post(action, {"unrescue": None}).status_code == 202
        assert new.wait(sid, ("ACTIVE", "ERROR"))["status"] == "ACTIVE"
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
        s.delete(cloud.url + f"/image/v2/images/{rescue_image}", raise_exc=False)


def test_289_attachment_ids(cloud, api, vols, image_id):
    """2.89: list and show have attachment_id (the volume service's attachment) and
    bdm_uuid, and no id; the attach answer is as before."""
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = vols.create()
    new, old = Compute(cloud, api.s, "2.89"), Compute(cloud, api.s, "2.88")
    r = new.post(f"/servers/{sid}/os-volume_attachments",
                 {"volumeAttachment": {"volumeId": volume["id"]}})
    assert r.status_code == 200 and r.json()["volumeAttachment"]["id"] == volume["id"]
    attached = vols.wait(volume["id"], "in-use")
    path = f"/servers/{sid}/os-volume_attachments"
    shown = new.get(f"{path}/{volume['id']}").json()["volumeAttachment"]
    assert "id" not in shown and shown["volumeId"] == volume["id"]
    assert shown["attachment_id"] == attached["attachments"][0]["attachment_id"]
    assert uuid.UUID(shown["bdm_uuid"])
    assert new.get(path).json()["volumeAttachments"] == [shown]
    before = old.get(f"{path}/{volume['id']}").json()["volumeAttachment"]
    assert before["id"] == volume["id"] and "attachment_id" not in before
    assert "bdm_uuid" not in before
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_293_rebuild_volume_backed(cloud, api, admin_api, vols, raw_image):
    """2.93: rebuilding a volume-backed server with another image writes that image over
    its root volume (the volume service's os-reimage and its volume-reimaged event);
    before 2.93 only the volume's own image is accepted (400)."""
    s = cloud.session()
    other = s.post(cloud.url + "/image/v2/images", json={
        "name": f"raw-new-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
        "container_format": "bare", "visibility": "public"}).json()
    s.put(cloud.url + f"/image/v2/images/{other['id']}/file", data=b"anew" * 1024,
          headers={"Content-Type": "application/octet-stream"})
    root = vols.create(imageRef=raw_image)
    r = _boot_volume(api, [_bdm("volume", root["id"])])
    assert r.status_code == 202, r.text
    sid = r.json()["server"]["id"]
    try:
        assert api.wait(sid)["status"] == "ACTIVE"
        action = f"/servers/{sid}/action"
        old, new = Compute(cloud, api.s, "2.92"), Compute(cloud, api.s, "2.93")
        r = old.post(action, {"rebuild": {"imageRef": other["id"]}})
        assert r.status_code == 400 and "volume-backed" in r.text, r.text
        assert new.post(action, {"rebuild": {"imageRef": NIL}}).status_code == 400
        # the volume service's os-reimage refuses an in-use volume and a bad body
        reimage = f"/volumes/{root['id']}/action"
        assert vols.req("POST", reimage, {"os-reimage": {"image_id": other["id"]}},
                        "3.68").status_code == 400
        assert vols.req("POST", reimage, {"os-reimage": {}}, "3.68").status_code == 400
        # as cinder's, the action exists from 3.68 on
        assert vols.req("POST", reimage, {"os-reimage": {"image_id": other["id"]}},
                        "3.67").status_code == 404
        r = new.post(action, {"rebuild": {"imageRef": other["id"]}})
        assert r.status_code == 202, r.text
        server = api.wait(sid)
        assert server["status"] == "ACTIVE", server
        assert server["image"] == ""  # still volume-backed, as nova shows it
        volume = vols.get(root["id"])
        assert volume["status"] == "in-use" and len(volume["attachments"]) == 1
        assert volume["volume_image_metadata"]["image_id"] == other["id"]
        driver = _driver(cloud, _attached_host(admin_api, sid))
        assert other["name"] in driver.get_console_output(sid)
        attached = driver.attached_volumes(sid)["/dev/vda"]["data"]["volume_id"]
        assert attached == root["id"]
        shown = new.get(f"/servers/{sid}/os-volume_attachments/{root['id']}").json()
        assert shown["volumeAttachment"]["attachment_id"] == \
            volume["attachments"][0]["attachment_id"]
        # and the volume's image is now the one a 2.92 rebuild must name
        assert old.post(action, {"rebuild": {"imageRef": raw_image}}).status_code == 400
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
        s.delete(cloud.url + f"/image/v2/images/{other['id']}", raise_exc=False)
