"""Volume transfers (os-volume-transfer and 3.55+ /volume-transfers) as cinder's: the
owner offers a volume, the key is shown once, another project accepts it and gets the
volume (with its snapshots unless no_snapshots) and the quota it uses. The user flow goes
through the `openstack` CLI, the rest through openstacksdk and keystoneauth."""
from __future__ import annotations

import uuid

import pytest
from openstack import exceptions as sdk_exc

from volume_helpers import Raw

WAIT = {"wait": 60, "interval": 0.1}


@pytest.fixture
def giver(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def taker(cloud):
    return cloud.make_user(roles=("member",))


def _volume(conn, size=1):
    volume = conn.block_storage.create_volume(size=size)
    return conn.block_storage.wait_for_status(volume, "available", **WAIT)


def test_transfer_through_the_cli(cloud, giver, taker):
    conn = cloud.user_sdk(giver)
    volume = _volume(conn)
    offer = cloud.cli("volume", "transfer", "request", "create", "--name", "gift",
                      volume.id, "-f", "json", user=giver)
    assert offer["volume_id"] == volume.id and offer["name"] == "gift"
    assert len(offer["auth_key"]) == 16
    assert conn.block_storage.get_volume(volume.id).status == "awaiting-transfer"
    listed = cloud.cli("volume", "transfer", "request", "list", "-f", "json", user=giver)
    assert [(t["ID"], t["Volume"]) for t in listed] == [(offer["id"], volume.id)]
    shown = cloud.cli("volume", "transfer", "request", "show", offer["id"], "-f", "json",
                      user=giver)
    assert shown["name"] == "gift" and "auth_key" not in shown  # the key is shown once
    # the taker cannot see the offer, only accept it
    assert cloud.cli("volume", "transfer", "request", "list", "-f", "json",
                     user=taker) == []
    cloud.cli("volume", "transfer", "request", "accept", "--auth-key", offer["auth_key"],
              offer["id"], "-f", "json", user=taker)
    taken = cloud.user_sdk(taker)
    assert taken.block_storage.get_volume(volume.id).status == "available"
    assert [v.id for v in taken.block_storage.volumes()] == [volume.id]
    with pytest.raises(sdk_exc.NotFoundException):
        conn.block_storage.get_volume(volume.id)
    # a withdrawn offer gives the volume back
    other = _volume(conn)
    offer = cloud.cli("volume", "transfer", "request", "create", other.id, "-f", "json",
                      user=giver)
    cloud.cli("volume", "transfer", "request", "delete", offer["id"], user=giver)
    assert conn.block_storage.get_volume(other.id).status == "available"
    assert cloud.cli("volume", "transfer", "request", "list", "-f", "json",
                     user=giver) == []


def test_transfer_with_snapshots_and_quota_through_the_sdk(cloud, giver, taker):
    conn, taken = cloud.user_sdk(giver), cloud.user_sdk(taker)
    volume = _volume(conn, size=2)
    snap = conn.block_storage.wait_for_status(
        conn.block_storage.create_snapshot(volume_id=volume.id), "available", **WAIT)
    before = conn.block_storage.get_limits().absolute
    assert (before.total_volumes_used, before.total_snapshots_used,
            before.total_gigabytes_used) == (1, 1, 4)
    offer = conn.block_storage.create_transfer(volume_id=volume.id, name="with-snaps")
    assert offer.auth_key and offer.volume_id == volume.id and offer.no_snapshots is False
    assert conn.block_storage.get_transfer(offer.id).name == "with-snaps"
    assert [t.id for t in conn.block_storage.transfers()] == [offer.id]
    # a wrong key is cinder's 400 and changes nothing
    with pytest.raises(sdk_exc.BadRequestException, match="Invalid auth key"):
        taken.block_storage.accept_transfer(offer.id, "0" * 16)
    # the taker's quota must hold the volume and its snapshot (413 otherwise)
    admin = Raw(cloud.session())
    quota = f"/os-quota-sets/{taker['project_id']}"
    assert admin("PUT", quota, {"quota_set": {"snapshots": 0}})[0] == 200
    with pytest.raises(sdk_exc.HttpException) as err:
        taken.block_storage.accept_transfer(offer.id, offer.auth_key)
    assert err.value.status_code == 413
    assert conn.block_storage.get_volume(volume.id).status == "awaiting-transfer"
    assert admin("PUT", quota, {"quota_set": {"snapshots": 10}})[0] == 200
    taken.block_storage.accept_transfer(offer.id, offer.auth_key)
    assert [v.id for v in taken.block_storage.volumes()] == [volume.id]
    assert [s.id for s in taken.block_storage.snapshots()] == [snap.id]
    assert list(conn.block_storage.snapshots()) == []
    after = conn.block_storage.get_limits().absolute
    assert (after.total_volumes_used, after.total_gigabytes_used) == (0, 0)
    moved = taken.block_storage.get_limits().absolute
    assert (moved.total_volumes_used, moved.total_snapshots_used,
            moved.total_gigabytes_used) == (1, 1, 4)
    # the accepted offer is gone for everyone
    with pytest.raises(sdk_exc.NotFoundException):
        conn.block_storage.get_transfer(offer.id)
    with pytest.raises(sdk_exc.NotFoundException):
        taken.block_storage.accept_transfer(offer.id, offer.auth_key)


def test_transfer_without_snapshots_and_history_fields(cloud, giver, taker):
    raw, other = Raw(cloud.user_session(giver)), Raw(cloud.user_session(taker))
    conn = cloud.user_sdk(giver)
    volume = _volume(conn)
    snap = conn.block_storage.wait_for_status(
        conn.block_storage.create_snapshot(volume_id=volume.id), "available", **WAIT)
    status, body, _ = raw("POST", "/volume-transfers", {"transfer": {
        "volume_id": volume.id, "no_snapshots": True, "name": "  spaced  "}}, version="3.57")
    assert status == 202, body
    offer = body["transfer"]
    assert offer["no_snapshots"] is True and offer["name"] == "spaced"
    assert (offer["source_project_id"], offer["destination_project_id"],
            offer["accepted"]) == (giver["project_id"], None, False)
    assert offer["links"][0]["href"].endswith(f"/os-volume-transfer/{offer['id']}")
    shown = raw("GET", f"/volume-transfers/{offer['id']}", version="3.57")[1]["transfer"]
    assert "auth_key" not in shown and shown["source_project_id"] == giver["project_id"]
    old = raw("GET", f"/os-volume-transfer/{offer['id']}", version="3.54")[1]["transfer"]
    assert "no_snapshots" not in old and "accepted" not in old
    # another project sees no offer and cannot withdraw it
    assert other("GET", f"/volume-transfers/{offer['id']}", version="3.57")[0] == 404
    assert other("DELETE", f"/os-volume-transfer/{offer['id']}")[0] == 404
    assert other("GET", "/os-volume-transfer/detail")[1]["transfers"] == []
    status, body, _ = other("POST", f"/volume-transfers/{offer['id']}/accept",
                            {"accept": {"auth_key": offer["auth_key"]}}, version="3.57")
    assert status == 202 and body["transfer"]["volume_id"] == volume.id
    assert set(body["transfer"]) == {"id", "name", "volume_id", "links"}
    # the snapshot stayed behind, so the new owner cannot delete the volume yet
    assert other("GET", f"/snapshots/{snap.id}")[0] == 404
    assert raw("GET", f"/snapshots/{snap.id}")[0] == 200
    assert other("DELETE", f"/volumes/{volume.id}")[0] == 400


def test_transfer_errors_are_cinders(cloud, giver, taker):
    raw, admin = Raw(cloud.user_session(giver)), Raw(cloud.session())
    assert "os-volume-transfer" in {e["alias"] for e in raw("GET", "/extensions")[1][
        "extensions"]}
    conn = cloud.user_sdk(giver)
    volume = _volume(conn)
    missing = str(uuid.uuid4())
    for path in (f"/os-volume-transfer/{missing}", f"/volume-transfers/{missing}"):
        status, body, _ = raw("GET", path, version="3.55")
        assert status == 404 and body["itemNotFound"]["message"] == (
            f"Transfer {missing} could not be found.")
        assert raw("DELETE", path, version="3.55")[0] == 404
        assert raw("POST", path + "/accept", {"accept": {"auth_key": "k"}},
                   version="3.55")[0] == 404
    # /volume-transfers exists from 3.55; no_snapshots only there
    assert raw("GET", "/volume-transfers", version="3.54")[0] == 404
    status, body, _ = raw("POST", "/os-volume-transfer", {"transfer": {
        "volume_id": volume.id, "no_snapshots": True}}, version="3.55")
    assert status == 400 and "badRequest" in body
    for bad in (None, {}, {"transfer": None}, {"transfer": {}},
                {"transfer": {"volume_id": 5}}, {"transfer": {"volume_id": None}},
                {"transfer": {"volume_id": volume.id, "name": 5}},
                {"transfer": {"volume_id": volume.id, "name": "x" * 300}},
                {"transfer": {"volume_id": volume.id, "no_snapshots": "maybe"}},
                {"transfer": {"volume_id": volume.id, "other": 1}}):
        status, body, _ = raw("POST", "/volume-transfers", bad, version="3.55")
        assert status == 400 and "badRequest" in body, (bad, body)
    status, body, _ = raw("POST", "/volume-transfers", {"transfer": {"volume_id": missing}},
                          version="3.55")
    assert status == 404 and "itemNotFound" in body
    offer = raw("POST", "/os-volume-transfer", {"transfer": {"volume_id": volume.id}})[1][
        "transfer"]
    # one offer at a time, and the volume cannot be deleted while it is offered
    status, body, _ = raw("POST", "/os-volume-transfer", {"transfer": {"volume_id": volume.id}})
    assert status == 400 and body["badRequest"]["message"] == (
        "Invalid volume: status must be available")
    assert raw("DELETE", f"/volumes/{volume.id}")[0] == 400
    accept = f"/os-volume-transfer/{offer['id']}/accept"
    for bad in (None, {}, {"accept": {}}, {"accept": {"auth_key": None}},
                {"accept": {"auth_key": True}}, {"accept": {"auth_key": []}},
                {"accept": {"auth_key": "k", "x": 1}}, {"accept": "k"}):
        status, body, _ = raw("POST", accept, bad)
        assert status == 400 and "badRequest" in body, (bad, body)
    status, body, _ = raw("POST", accept, {"accept": {"auth_key": 10 ** 30}})
    assert status == 400 and "Invalid auth key" in body["badRequest"]["message"]
    # admins see every project's offers with all_tenants; readers may list, not create
    listed = admin("GET", "/os-volume-transfer?all_tenants=1")[1]["transfers"]
    assert offer["id"] in [t["id"] for t in listed]
    assert offer["id"] not in [t["id"] for t in admin("GET", "/os-volume-transfer")[1][
        "transfers"]]
    assert raw("DELETE", f"/os-volume-transfer/{offer['id']}")[0] == 202
    assert conn.block_storage.get_volume(volume.id).status == "available"


def test_transfer_list_pagination(cloud, giver):
    raw = Raw(cloud.user_session(giver))
    conn = cloud.user_sdk(giver)
    ids = []
    for _ in range(3):
        volume = _volume(conn)
        ids.append(raw("POST", "/volume-transfers", {"transfer": {"volume_id": volume.id}},
                       version="3.59")[1]["transfer"]["id"])
    page = raw("GET", "/volume-transfers?limit=2&sort=created_at:asc", version="3.59")[1]
    assert [t["id"] for t in page["transfers"]] == ids[:2]
    assert "marker=" + ids[1] in page["transfers_links"][0]["href"]
    rest = raw("GET", f"/volume-transfers/detail?marker={ids[1]}&sort=created_at:asc",
               version="3.59")[1]
    assert [t["id"] for t in rest["transfers"]] == ids[2:]
    # the old list is oldest first
    assert [t["id"] for t in raw("GET", "/os-volume-transfer")[1]["transfers"]] == ids
    for bad in ("limit=-1", "limit=x", "sort=bogus", "offset=x"):
        status, body, _ = raw("GET", f"/volume-transfers?{bad}", version="3.59")
        assert status == 400 and "badRequest" in body, bad
    assert raw("GET", f"/volume-transfers?marker={uuid.uuid4()}", version="3.59")[0] == 404
