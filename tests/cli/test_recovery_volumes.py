"""Kill -9 of a pocketstack process in the middle of a burst of boots that use
volumes, for real (SIGKILL of the process, no mocks), and what a user then sees through
the API: every server ACTIVE (or ERROR with a reason), no volume left reserved,
attaching, downloading or in error without a reason, and `pocketstack audit` clean once
the servers are deleted.

Every wait is bounded; the bounds are for correctness on a loaded machine, the timings
are printed.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import os
import signal
import subprocess
import sys
import time
import uuid

import httpx

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.procfs import alive_pids, child_pids, cmdline_of  # noqa: E402
from helpers.up_process import EXE, UpProcess  # noqa: E402

VOLUME_API = {"OpenStack-API-Version": "volume 3.44"}
# No volume may be left in these once the cloud has settled.
UNSETTLED = ("reserved", "attaching", "detaching", "creating", "downloading", "deleting")

ORPHAN_AGE = 3.0
STALL = 3.0  # s: [compute] build_stall_timeout where a test needs lost casts recovered
CONF = f"""
[identity]
password_hash_rounds = 4
[fake]
hosts = 2
spawn_delay = 0.2
[compute]
build_timeout = 600
build_stall_timeout = 600
[quota]
instances = -1
cores = -1
ram = -1
[volume]
quota_volumes = -1
quota_gigabytes = -1
# Attachments of servers that do not exist are deleted this soon (default 120 s).
orphaned_attachment_age = {ORPHAN_AGE}
report_interval = 1
"""


class Api:
    """The REST APIs with one admin token (httpx: no SDK in the hot loops)."""

    def __init__(self, up: UpProcess):
        self.url = up.url
        self.token = up.session().get_token()
        self.http = httpx.Client(timeout=60, headers={"X-Auth-Token": self.token})

    def boot(self, name, image_id, volume_id=None):
        """POST a server with a pre-made volume (``volume_id``) or booted from a new
        volume made from the image. Returns the id if accepted, else None."""
        if volume_id:
            server = {"imageRef": image_id, "block_device_mapping_v2": [
                {"source_type": "volume", "destination_type": "volume", "uuid": volume_id,
                 "boot_index": -1}]}
        else:
            server = {"imageRef": "", "block_device_mapping_v2": [
                {"source_type": "image", "destination_type": "volume", "uuid": image_id,
                 "volume_size": 1, "boot_index": 0, "delete_on_termination": True}]}
        server.update(name=name, flavorRef="42", networks="none")
        try:
            r = self.http.post(self.url + "/compute/v2.1/servers", json={"server": server},
                               headers={"OpenStack-API-Version": "compute 2.37"})
        except httpx.HTTPError:
            return None
        return r.json()["server"]["id"] if r.status_code == 202 else None

    def servers(self) -> dict:
        r = self.http.get(self.url + "/compute/v2.1/servers/detail")
        return {s["id"]: s for s in r.json()["servers"]}

    def volume(self, **body) -> dict:
        r = self.http.post(self.url + "/volume/v3/volumes", json={"volume": body},
                           headers=VOLUME_API)
        assert r.status_code == 202, r.text
        return r.json()["volume"]

    def volumes(self) -> dict:
        r = self.http.get(self.url + "/volume/v3/volumes/detail", headers=VOLUME_API)
        return {v["id"]: v for v in r.json()["volumes"]}

    def reserve(self, volume_id, server_id) -> None:
        """What the compute API does first for a boot with a given volume."""
        r = self.http.post(self.url + "/volume/v3/attachments", headers=VOLUME_API, json={
            "attachment": {"volume_uuid": volume_id, "instance_uuid": server_id}})
        assert r.status_code == 200, r.text

    def attachments(self) -> list[dict]:
        r = self.http.get(self.url + "/volume/v3/attachments?all_tenants=1",
                          headers=VOLUME_API)
        return r.json()["attachments"]

    def messages(self, volume_id) -> list[str]:
        r = self.http.get(self.url + f"/volume/v3/messages?resource_uuid={volume_id}",
                          headers={"OpenStack-API-Version": "volume 3.3"})
        return [m["user_message"] for m in r.json()["messages"]]

    def reschedules(self, server_id) -> list[str]:
        """Why the server's build was rescheduled (its trace's conductor_reschedule steps)."""
        r = self.http.get(self.url + f"/pocketstack/v1/servers/{server_id}/trace")
        return [e["detail"] for e in r.json()["events"] if e["step"] == "conductor_reschedule"]

    def image(self, data: bytes = b"boot" * 1024) -> str:
        r = self.http.post(self.url + "/image/v2/images", json={
            "name": "recovery", "disk_format": "raw", "container_format": "bare",
            "visibility": "public"})
        image_id = r.json()["id"]
        r = self.http.put(self.url + f"/image/v2/images/{image_id}/file", content=data,
                          headers={"Content-Type": "application/octet-stream"})
        assert r.status_code == 204, r.text
        return image_id


def wait_for(what, check, bound: float, interval: float = 0.1, detail=lambda: ""):
    """``check()`` until it returns something true (returned), or fail after ``bound``
    saying ``detail()``."""
    deadline = time.monotonic() + bound
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"{what}: not after {bound}s {detail()}"
        time.sleep(interval)


def unsettled(api: Api) -> list:
    return [(v["id"], v["status"]) for v in api.volumes().values()
            if v["status"] in UNSETTLED]


def settle(api: Api, ids, bound: float) -> tuple[dict, float]:
    """Seconds until every server listed and every one of ``ids`` is ACTIVE or ERROR."""
    started = time.monotonic()
    last = {}

    def done():
        nonlocal last
        last = api.servers()
        pending = {i: s["status"] for i, s in last.items()
                   if s["status"] not in ("ACTIVE", "ERROR")}
        pending.update({i: "not listed" for i in ids if i not in last})
        return not pending

    deadline = started + bound
    while not done():
        busy = {i: s["status"] for i, s in last.items() if s["status"] not in ("ACTIVE", "ERROR")}
        assert time.monotonic() < deadline, (
            f"not settled after {bound}s: {busy}, not listed: {[i for i in ids if i not in last]}")
        time.sleep(0.1)
    return last, time.monotonic() - started


SETTLE_TIME = 15.0  # s: an interrupted attempt's volume is given back in the background


def assert_volumes_settled(api: Api) -> None:
    """No volume left in a transitional status (within SETTLE_TIME of the servers
    settling), none in error without a reason to read."""
    deadline = time.monotonic() + SETTLE_TIME
    while time.monotonic() < deadline and any(
            v["status"] in UNSETTLED for v in api.volumes().values()):
        time.sleep(0.2)
    for volume in api.volumes().values():
        assert volume["status"] not in UNSETTLED, volume
        if volume["status"].startswith("error"):
            assert api.messages(volume["id"]), volume


def delete_all_and_audit(api: Api, up: UpProcess, data_dir: str) -> None:
    for server_id in api.servers():
        api.http.delete(api.url + f"/compute/v2.1/servers/{server_id}")
    wait_for("servers deleted", lambda: not api.servers(), 60)
    # Volumes made for the servers go in the background; the others are available.
    wait_for("volumes back", lambda: all(v["status"] == "available"
                                         for v in api.volumes().values()), 30)
    audit = subprocess.run([EXE, "audit", "--data-dir", data_dir, "--config-file",
                            up.config_file], capture_output=True, text=True, timeout=120)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def image_and_volumes(api: Api, count: int) -> tuple[str, list[str]]:
    """An image and ``count`` pre-made volumes, all available."""
    image_id = api.image()
    volumes = [api.volume(size=1, name=f"pre-{i}")["id"] for i in range(count)]
    wait_for("volumes available", lambda: all(
        v["status"] == "available" for v in api.volumes().values()), 30)
    return image_id, volumes


def burst(api: Api, image_id: str, volume_ids: list, extra: int, on_accepted,
          threads: int = 4) -> list[str]:
    """One boot per pre-made volume plus ``extra`` booted from new volumes, concurrently;
    ``on_accepted(n)`` after the n-th 202. Returns the accepted ids."""
    accepted = []
    given = [(f"pre-{i}", v) for i, v in enumerate(volume_ids)]
    made = [(f"bfv-{i}", None) for i in range(extra)]
    jobs = [job for pair in itertools.zip_longest(given, made) for job in pair if job]

    def boot(job):
        server_id = api.boot(job[0], image_id, job[1])
        if server_id:
            accepted.append(server_id)
            on_accepted(len(accepted))

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(boot, jobs))
    return accepted


def test_compute_child_killed_mid_burst_of_boots_with_volumes(root):
    """`up --workers 2`: the process of host cmp-1 is killed while boots are being cast to
    it. A cast to a host nobody serves is rescheduled with the dead host's claim given
    back first (it failed with a UNIQUE constraint on compute_allocations before); builds
    it had in hand are rescheduled by its restarted process. Every server ends ACTIVE
    with its volume in-use."""
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=CONF, args=("--workers", "2")).start(timeout=120)
    try:
        api = Api(up)
        image_id, volumes = image_and_volumes(api, 8)
        [compute] = [p for p in child_pids(up.proc.pid) if "--name compute-1 " in cmdline_of(p)]

        def nothing(_n):
            pass

        started = time.monotonic()
        ids = burst(api, image_id, volumes[:4], extra=4, on_accepted=nothing)
        # Killed while the first half is still being built and before the second half is
        # cast. (A kill from inside the burst, after its 4th 202, could run so late on a
        # loaded machine that cmp-1 had finished its builds and no build met the kill.)
        os.kill(compute, signal.SIGKILL)
        ids += burst(api, image_id, volumes[4:], extra=4, on_accepted=nothing)
        assert len(ids) == 16 and not alive_pids([compute])
        servers, took = settle(api, ids, 90)
        print(f"16 boots settled {took:.1f}s after the burst "
              f"({time.monotonic() - started:.1f}s in all)")
        assert all(s["status"] == "ACTIVE" for s in servers.values()), \
            [(i, (s.get("fault") or {}).get("message")) for i, s in servers.items()
             if s["status"] != "ACTIVE"]
        reasons = [r for i in ids for r in api.reschedules(i)]
        print("rescheduled:", reasons)
        # The kill met builds, and they were rescheduled: a cast to the dead host failed
        # ("No service is listening on compute.cmp-1", or "RPC to compute.cmp-1 failed" on
        # a pooled connection), or the restarted process found a build it had in hand
        # ("compute service on cmp-1 restarted during ...").
        assert any("compute.cmp-1" in r or "compute service on cmp-1 restarted" in r
                   for r in reasons), reasons
        shown = api.volumes()
        for volume_id in volumes:
            assert shown[volume_id]["status"] == "in-use", shown[volume_id]
        assert_volumes_settled(api)
        delete_all_and_audit(api, up, data_dir)
    finally:
        up.stop()


def test_all_in_one_killed_between_a_volume_reservation_and_the_server_row(root):
    """The all-in-one is killed mid-burst of boots with volumes. A boot's API request
    reserves its volumes before it writes the server, so a kill in between leaves an
    attachment naming a server that never existed; one is made for certain here the way
    the compute API makes it (POST /attachments without a connector, for a server id
    nobody wrote). After the restart every server settles and, once such attachments
    are older than [volume] orphaned_attachment_age, they are deleted: no volume stays
    reserved for good."""
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=CONF).start(timeout=120)
    try:
        api = Api(up)
        image_id, volumes = image_and_volumes(api, 7)
        orphan = volumes.pop()
        api.reserve(orphan, str(uuid.uuid4()))

        def kill(n):
            if n == 3:
                up.proc.send_signal(signal.SIGKILL)

        ids = burst(api, image_id, volumes, extra=4, on_accepted=kill)
        up.proc.wait(10)
        up.stop()
        up = UpProcess(data_dir, conf=CONF, port=up.port).start(timeout=120)
        api = Api(up)
        servers, took = settle(api, ids, 30)
        strays = [a["volume_id"] for a in api.attachments() if a["instance"] not in servers]
        print(f"{len(servers)} servers ({len(ids)} acknowledged) settled {took:.1f}s after "
              f"the restart; volumes reserved for no server: {len(strays)}")
        for s in servers.values():
            assert s["status"] == "ACTIVE" or (s.get("fault") or {}).get("message"), s

        # One more for a server about to be written: left alone while it is young.
        young, made = api.volume(size=1, name="young")["id"], time.monotonic()
        wait_for("young available", lambda: api.volumes()[young]["status"] == "available", 30)
        api.reserve(young, str(uuid.uuid4()))
        status = api.volumes()[young]["status"]
        if time.monotonic() - made < ORPHAN_AGE:  # (else this machine was too slow to tell)
            assert status == "reserved"
        wait_for("orphans deleted", lambda: all(
            api.volumes()[v]["status"] == "available" for v in (orphan, young)), 30)
        wait_for("volumes settled", lambda: not unsettled(api), 30,
                 detail=lambda: unsettled(api))
        assert_volumes_settled(api)
        listed = api.servers()
        for attachment in api.attachments():
            assert attachment["instance"] in listed, attachment
        delete_all_and_audit(api, up, data_dir)
    finally:
        up.stop()


def test_main_process_killed_while_images_are_copied_into_new_volumes(root):
    """`up --workers 2`: the main process (which runs the volume manager) is killed while
    builds' boot volumes are being written from an image. The restarted hosts clean the
    builds up while those volumes still show `creating` or `downloading` (a plain delete
    is refused then; they became `error` and stayed): the cleanup force-deletes the
    volumes it made, also those whose id the killed build never got back (found by
    their created_for_server metadata). Every server settles, no volume is left
    downloading or in error, and audit is clean once the servers are deleted."""
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=CONF, args=("--workers", "2")).start(timeout=120)
    try:
        api = Api(up)
        image_id = api.image(b"\x01" * (32 << 20))  # long enough a copy to kill during
        old_children = child_pids(up.proc.pid)
        ids = burst(api, image_id, [], extra=6, on_accepted=lambda n: None)
        assert len(ids) == 6
        wait_for("a volume downloading", lambda: any(
            v["status"] == "downloading" for v in api.volumes().values()), 30, 0.02)
        up.proc.send_signal(signal.SIGKILL)
        up.proc.wait(10)
        up.stop()
        up = UpProcess(data_dir, conf=CONF, port=up.port,
                       args=("--workers", "2")).start(timeout=120)
        assert not alive_pids(old_children), [cmdline_of(p) for p in alive_pids(old_children)]
        api = Api(up)
        servers, took = settle(api, ids, 60)
        print(f"{len(servers)} servers settled {took:.1f}s after the restart")
        for s in servers.values():
            assert s["status"] == "ACTIVE" or (s.get("fault") or {}).get("message"), s
        wait_for("volumes settled", lambda: not unsettled(api), 30,
                 detail=lambda: unsettled(api))
        assert_volumes_settled(api)
        assert not [v for v in api.volumes().values() if v["status"] == "error"]
        delete_all_and_audit(api, up, data_dir)
    finally:
        up.stop()


def test_a_restart_waits_for_the_children_of_a_killed_main_process(root):
    """`up --workers 2`, the main process SIGKILLed mid-burst of boots with volumes,
    while one of its children cannot run (SIGSTOP, as a child still busy would be). The
    cloud started again does not serve beside it: it waits (bounded) until the old
    children are gone - they exit as soon as they notice the main process is - then
    recovers every build."""
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=CONF, args=("--workers", "2")).start(timeout=120)
    stopped = None
    try:
        api = Api(up)
        image_id, volumes = image_and_volumes(api, 4)
        old = child_pids(up.proc.pid)
        [stopped] = [p for p in old if "--name compute-1 " in cmdline_of(p)]

        def kill(n):
            if n == 4:
                os.kill(stopped, signal.SIGSTOP)
                up.proc.send_signal(signal.SIGKILL)

        ids = burst(api, image_id, volumes, extra=4, on_accepted=kill)
        up.proc.wait(10)
        up.stop()
        wait_for("the other children gone", lambda: alive_pids(old) == [stopped], 10)

        again = UpProcess(data_dir, conf=CONF, port=up.port, args=("--workers", "2"))
        up = again.spawn()
        wait_for("waiting for the old children", lambda: "worker processes to exit"
                 in up.output(), 60, detail=up.output)
        time.sleep(1.0)
        assert "pocketstack is up at" not in up.output()
        assert not child_pids(up.proc.pid), "started children beside the old ones"
        os.kill(stopped, signal.SIGCONT)
        wait_for("up", lambda: "pocketstack is up at" in up.output()
                 or up.proc.poll() is not None, 60)
        assert up.proc.poll() is None, up.output()
        assert not alive_pids(old)
        stopped = None
        api = Api(up)
        servers, took = settle(api, ids, 30)
        print(f"{len(servers)} servers ({len(ids)} acknowledged) settled {took:.1f}s after "
              "the restart")
        for s in servers.values():
            assert s["status"] == "ACTIVE" or (s.get("fault") or {}).get("message"), s
        wait_for("volumes settled", lambda: not unsettled(api), 30,
                 detail=lambda: unsettled(api))
        assert_volumes_settled(api)
        delete_all_and_audit(api, up, data_dir)
    finally:
        if stopped is not None:
            os.kill(stopped, signal.SIGKILL)
        up.stop()


def test_api_child_killed_mid_burst_of_boots_with_volumes(root):
    """`up --workers 2`: the API worker process is killed mid-burst (the main process
    starts it again). Requests it was serving are cut off - one may have reserved its
    volume and never written its server; that reservation is deleted once older than
    [volume] orphaned_attachment_age. A request cut off after writing its server but
    before casting the build leaves a build nobody has in hand: the conductor's stalled-
    build check (here after STALL seconds, 10 by default) schedules it again. Every server
    settles, no volume stays reserved."""
    data_dir = os.path.join(root, "data")
    conf = CONF.replace("build_stall_timeout = 600", f"build_stall_timeout = {STALL}")
    up = UpProcess(data_dir, conf=conf, args=("--workers", "2")).start(timeout=120)
    try:
        api = Api(up)
        image_id, volumes = image_and_volumes(api, 8)
        [child] = [p for p in child_pids(up.proc.pid) if "--name api-1 " in cmdline_of(p)]

        def kill(n):
            if n == 3:
                os.kill(child, signal.SIGKILL)

        ids = burst(api, image_id, volumes, extra=4, on_accepted=kill)
        assert not alive_pids([child])
        servers, took = settle(api, ids, 30)
        print(f"{len(servers)} servers ({len(ids)} acknowledged) settled {took:.1f}s after "
              "the burst")
        for s in servers.values():
            assert s["status"] == "ACTIVE" or (s.get("fault") or {}).get("message"), s
        wait_for("volumes settled", lambda: not unsettled(api), 30,
                 detail=lambda: unsettled(api))
        assert_volumes_settled(api)
        delete_all_and_audit(api, up, data_dir)
    finally:
        up.stop()
