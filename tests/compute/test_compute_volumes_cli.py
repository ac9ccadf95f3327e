"""The server + volume flow with the real openstack CLI: server add/remove volume,
server create --volume (an existing bootable volume) and --boot-from-volume (image → new
volume), volume list showing in-use volumes and their attachments."""
import time
import uuid

import pytest

pytestmark = pytest.mark.cli


def _volume(cloud, user, name):
    return cloud.cli("volume", "show", name, "-f", "json", user=user)


def _wait_volume(cloud, user, name, status):
    deadline = time.monotonic() + 30
    while True:
        volume = _volume(cloud, user, name)
        if volume["status"] == status:
            return volume
        assert time.monotonic() < deadline, volume
        time.sleep(0.2)


def test_openstack_cli_server_volume_flow(cloud):
    user = cloud.make_user(roles=("member",))
    s = cloud.user_session(user)
    suffix = uuid.uuid4().hex[:4]
    net = s.post(cloud.url + "/network/v2.0/networks",
                 json={"network": {"name": f"private-{suffix}"}}).json()["network"]
    s.post(cloud.url + "/network/v2.0/subnets",
           json={"subnet": {"network_id": net["id"], "ip_version": 4,
                            "cidr": "10.0.0.0/26"}})
    image = s.post(cloud.url + "/image/v2/images",
                   json={"name": f"cirros-{suffix}", "disk_format": "raw",
                         "container_format": "bare"}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"cirros" * 512,
          headers={"Content-Type": "application/octet-stream"})
    nic = f"net-id={net['id']}"

    server = cloud.cli("server", "create", "--flavor", "m1.nano", "--image", image["id"],
                       "--nic", nic, "--wait", f"vm-{suffix}", "-f", "json", user=user)
    cloud.cli("volume", "create", "--size", "1", f"data1-{suffix}", "-f", "json", user=user)
    _wait_volume(cloud, user, f"data1-{suffix}", "available")
    cloud.cli("server", "add", "volume", server["id"], f"data1-{suffix}", user=user)
    data1 = _volume(cloud, user, f"data1-{suffix}")
    assert data1["status"] == "in-use"
    assert [a["server_id"] for a in data1["attachments"]] == [server["id"]]
    listed = cloud.cli("server", "volume", "list", server["id"], "-f", "json", user=user)
    assert [(v["Volume ID"], v["Device"]) for v in listed] == [(data1["id"], "/dev/vdb")]
    cloud.cli("server", "remove", "volume", server["id"], f"data1-{suffix}", user=user)
    data1 = _volume(cloud, user, f"data1-{suffix}")
    assert data1["status"] == "available" and data1["attachments"] == []

    cloud.cli("volume", "create", "--image", image["id"], "--size", "1", "--bootable",
              f"root1-{suffix}", "-f", "json", user=user)
    _wait_volume(cloud, user, f"root1-{suffix}", "available")
    bfv1 = cloud.cli("server", "create", "--flavor", "m1.nano", "--volume", f"root1-{suffix}",
                     "--nic", nic, "--wait", f"bfv1-{suffix}", "-f", "json", user=user)
    assert bfv1["status"] == "ACTIVE"
    bfv2 = cloud.cli("server", "create", "--flavor", "m1.nano", "--image", image["id"],
                     "--boot-from-volume", "1", "--delete-on-termination", "--nic", nic,
                     "--wait", f"bfv2-{suffix}", "-f", "json", user=user)
    assert bfv2["status"] == "ACTIVE"

    rows = cloud.cli("volume", "list", "--long", "-f", "json", user=user)
    by_id = {r["ID"]: r for r in rows}
    root1 = _volume(cloud, user, f"root1-{suffix}")
    assert by_id[root1["id"]]["Status"] == "in-use"
    assert root1["attachments"][0]["server_id"] == bfv1["id"]
    shown = cloud.cli("server", "show", bfv2["id"], "-f", "json", user=user)
    new_root = [v["id"] for v in shown["volumes_attached"]]
    assert len(new_root) == 1 and by_id[new_root[0]]["Status"] == "in-use"

    for name in (f"vm-{suffix}", f"bfv1-{suffix}", f"bfv2-{suffix}"):
        cloud.cli("server", "delete", "--wait", name, user=user)
    # root1 outlives its server; bfv2's volume was deleted with it (in the background)
    assert _volume(cloud, user, f"root1-{suffix}")["status"] == "available"
    deadline = time.monotonic() + 30
    while s.get(cloud.url + f"/volume/v3/volumes/{new_root[0]}",
                raise_exc=False).status_code != 404:
        assert time.monotonic() < deadline, "bfv2's root volume was not deleted"
        time.sleep(0.1)
