"""Every bad input below is a 4xx in nova's error format, never a 500, and
writes no server."""
import base64

import pytest
import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.compute.models import Instance

NIL = "00000000-0000-0000-0000-000000000000"


def _count():
    with db.reader() as s:
        return s.scalar(sa.select(sa.func.count()).select_from(Instance))


@pytest.fixture(scope="module")
def queued_image(cloud):
    r = cloud.session().post(cloud.url + "/image/v2/images",
                             json={"name": "never-uploaded", "disk_format": "qcow2",
                                   "visibility": "public", "container_format": "bare"})
    return r.json()["id"]


@pytest.fixture(scope="module")
def big_image(cloud):
    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images",
                   json={"name": "needs-ram", "disk_format": "raw", "container_format": "bare",
                         "visibility": "public", "min_ram": 100000, "min_disk": 500}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"x" * 512,
          headers={"Content-Type": "application/octet-stream"})
    return image["id"]


def _server(image_id, **over):
    server = {"name": "bad", "imageRef": image_id, "flavorRef": "42", "networks": "none"}
    server.update(over)
    return {"server": {k: v for k, v in server.items() if v is not Ellipsis}}


CASES = [
    ("flavorRef unknown", dict(flavorRef="nope"), 400, "Flavor nope could not be found"),
    ("imageRef not a uuid", dict(imageRef="cirros"), 400, "Invalid imageRef"),
    ("imageRef not found", dict(imageRef=NIL), 400, f"Image {NIL} could not be found"),
    ("network unknown", dict(networks=[{"uuid": NIL}]), 400, "could not be found"),
    ("key_name unknown", dict(key_name="nokey"), 400, "Invalid key_name"),
    ("metadata too many", dict(metadata={f"k{i}": "v" for i in range(129)}), 403,
     "metadata_items"),
    ("metadata value too long", dict(metadata={"k": "v" * 256}), 400, "too long"),
    ("metadata key too long", dict(metadata={"k" * 256: "v"}), 400, ""),
    ("user_data not base64", dict(user_data="@@not base64@@"), 400, "user_data"),
    ("user_data too big", dict(user_data=base64.b64encode(b"x" * 70000).decode()), 400,
     "user_data"),
    ("min_count > max_count", dict(min_count=3, max_count=2), 400, "min_count"),
    ("min_count zero", dict(min_count=0), 400, "min_count"),
    ("name missing", dict(name=...), 400, "'name' is a required property"),
    ("name blank", dict(name="  "), 400, "name"),
    ("networks missing at 2.37+", dict(networks=...), 400, "networks"),
    ("networks bogus string", dict(networks="some"), 400, "networks"),
    ("unknown field", dict(colour="blue"), 400, "colour"),
    ("zone unknown", dict(availability_zone="atlantis"), 400, "availability zone"),
    ("personality gone at 2.57", dict(personality=[{"path": "/a", "contents": "eA=="}]), 400,
     "personality"),
    ("bad fixed ip", dict(networks=[{"uuid": NIL, "fixed_ip": "10.0.0.300"}]), 400, "fixed_ip"),
    ("volume bdm with an unknown volume",
     dict(block_device_mapping_v2=[{"source_type": "volume", "uuid": NIL,
                                    "destination_type": "volume", "boot_index": 0}]), 400,
     f"failed to get volume {NIL}"),
    ("two boot_index 0",
     dict(block_device_mapping_v2=[{"source_type": "blank", "destination_type": "volume",
                                    "volume_size": 1, "boot_index": 0},
                                   {"source_type": "blank", "destination_type": "volume",
                                    "volume_size": 1, "boot_index": 0}]), 400,
     "Boot sequence"),
]


@pytest.mark.parametrize("label,over,status,text", CASES, ids=[c[0] for c in CASES])
def test_bad_create_input(api, image_id, label, over, status, text):
    before = _count()
    r = api.post("/servers", _server(image_id, **over))
    assert r.status_code == status, r.text
    key = {400: "badRequest", 403: "forbidden"}[status]
    body = r.json()[key]
    assert body["code"] == status and text in body["message"], body
    assert _count() == before


def test_image_not_active_and_too_big_for_flavor(api, queued_image, big_image):
    r = api.post("/servers", _server(queued_image))
    assert r.status_code == 400 and "is not active" in r.json()["badRequest"]["message"]
    r = api.post("/servers", _server(big_image))
    assert r.status_code == 400 and "too small" in r.json()["badRequest"]["message"]


def test_malformed_json_and_wrong_types(api):
    r = api.req("POST", "/servers", data=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "badRequest" in r.json()
    r = api.post("/servers", ["a", "list"])
    assert r.status_code == 400
    r = api.post("/servers", {"server": "string"})
    assert r.status_code == 400


def test_personality_limits_before_257(api, image_id):
    r = api.post("/servers", _server(image_id, networks=..., personality=[
        {"path": f"/f{i}", "contents": "eA=="} for i in range(6)]),
        headers={"OpenStack-API-Version": "compute 2.30"})
    assert r.status_code == 403, r.text


def test_bad_actions(api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    for body, status in (({"reboot": {"type": "SIDEWAYS"}}, 400), ({"explode": None}, 400),
                         ({}, 400), ({"os-stop": None, "os-start": None}, 400),
                         ({"os-resetState": {"state": "active"}}, 403),
                         ({"rebuild": {"imageRef": NIL}}, 400)):
        r = api.post(f"/servers/{sid}/action", body)
        assert r.status_code == status, (body, r.text)
    assert api.post(f"/servers/{NIL}/action", {"os-stop": None}).status_code == 404
    assert api.get(f"/servers/{NIL}").status_code == 404
    assert api.get("/servers/not-a-uuid").status_code == 404
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_flavor_and_keypair_bad_input(api, admin_api):
    assert api.post("/flavors", {"flavor": {"name": "x", "ram": 1, "vcpus": 1, "disk": 1}}
                    ).status_code == 403
    for bad in ({"name": "x", "ram": 0, "vcpus": 1, "disk": 1},
                {"name": "", "ram": 1, "vcpus": 1, "disk": 1},
                {"name": "x", "ram": "lots", "vcpus": 1, "disk": 1},
                {"ram": 1, "vcpus": 1, "disk": 1}):
        assert admin_api.post("/flavors", {"flavor": bad}).status_code == 400, bad
    assert admin_api.post("/flavors", {"flavor": {"name": "m1.nano", "ram": 1, "vcpus": 1,
                                                  "disk": 1}}).status_code == 409
    assert api.get("/flavors/nope").status_code == 404
    assert api.post("/os-keypairs", {"keypair": {"name": "k", "public_key": "garbage"}}
                    ).status_code == 400
    assert api.post("/os-keypairs", {"keypair": {"name": "bad/name"}}).status_code == 400
    r = api.post("/os-keypairs", {"keypair": {"name": "dup"}})
    assert r.status_code == 201 and r.json()["keypair"]["private_key"].startswith("-----BEGIN")
    assert api.post("/os-keypairs", {"keypair": {"name": "dup"}}).status_code == 409
    assert api.delete("/os-keypairs/dup").status_code == 204
    assert api.delete("/os-keypairs/dup").status_code == 404
