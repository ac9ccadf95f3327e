"""Extending a volume a server has attached (cinder 3.42's in-use extend): the volume grows,
stays in-use, and the volume service tells compute (volume-extended), whose host grows the
guest's disk and records the step on the server's trace."""
from __future__ import annotations

import time
import uuid

WAIT = {"wait": 60, "interval": 0.05}


def _extend(conn, volume_id: str, size: int, version: str):
    return conn.block_storage.post(
        f"/volumes/{volume_id}/action", json={"os-extend": {"new_size": size}},
        headers={"OpenStack-API-Version": f"volume {version}"}, raise_exc=False)


def _wait(what: str, check, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_attached_volume_grows_and_the_guest_follows(cloud, member, api, image_id):
    conn = cloud.user_sdk(member)
    sid = api.boot(image_id)
    api.wait(sid, ("ACTIVE",))
    volume = conn.block_storage.create_volume(size=1, name=f"grow-{uuid.uuid4().hex[:6]}")
    conn.block_storage.wait_for_status(volume, "available", **WAIT)
    conn.compute.create_volume_attachment(sid, volume=volume)
    conn.block_storage.wait_for_status(volume, "in-use", **WAIT)

    # before 3.42 only an available volume may grow, as cinder
    r = _extend(conn, volume.id, 2, "3.41")
    assert r.status_code == 400, r.text
    assert "must be available to extend" in r.json()["badRequest"]["message"]

    r = _extend(conn, volume.id, 2, "3.42")
    assert r.status_code == 202, r.text
    grown = _wait("the volume to be in-use at 2 GiB", lambda: (
        lambda v: v if v.status == "in-use" and v.size == 2 else None)(
        conn.block_storage.get_volume(volume.id)))
    assert grown.attachments[0]["server_id"] == sid

    console = _wait("the guest's disk to grow", lambda: (
        lambda out: out if f"/dev/vdb: volume grew to {2 << 30} bytes" in out else None)(
        conn.compute.get_server_console_output(sid)["output"]))
    assert "volume grew" in console
    trace = cloud.session().get(cloud.url + f"/pocketstack/v1/servers/{sid}/trace").json()
    steps = [e for e in trace["events"] if e["step"] == "compute_extend_volume"]
    assert steps and steps[-1]["result"] == "Success", steps
    assert f"{volume.id} at /dev/vdb: 2 GiB" in steps[-1]["detail"]

    # smaller or equal is refused; the volume stays as it is
    r = _extend(conn, volume.id, 2, "3.42")
    assert r.status_code == 400 and "greater than current size" in r.text
    assert conn.block_storage.get_volume(volume.id).status == "in-use"
    conn.compute.delete_volume_attachment(sid, volume.id)
    conn.block_storage.wait_for_status(volume, "available", **WAIT)
    conn.block_storage.delete_volume(volume)
