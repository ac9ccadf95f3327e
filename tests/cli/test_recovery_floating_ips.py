"""kill -9 of `pocketstack up` while servers are still building, for real (SIGKILL of the
process, no mocks), with the state users make meanwhile: floating IPs put on the port
compute made for a building server, floating IPs on ports the user made and booted a
server on, blank volumes made for the servers (delete_on_termination). After the restart
every association is intact (the resumed build binds the server's ports again instead of
making new ones), no volume is left reserved or attaching, and a deleted server's volumes
are gone, not just freed.

Every build is held in `spawning` by a fault rule (hang, once per server: all of them are
used before the kill), so the kill meets every server mid-build, its ports made and its
volumes attached. Every wait is bounded; the timings are printed.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import uuid

import httpx
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.procfs import alive_pids, child_pids, cmdline_of  # noqa: E402
from helpers.up_process import UpProcess  # noqa: E402

VOLUME_API = {"OpenStack-API-Version": "volume 3.44"}
UNSETTLED = ("reserved", "attaching", "detaching", "creating", "downloading", "deleting")
# The volume service's [volume] orphaned_attachment_age and report_interval keep their
# defaults (120 s, 10 s): what a kill left is reaped this soon after the restart anyway.
REAPED_WITHIN = 10.0

CONF = """
[identity]
password_hash_rounds = 4
[fake]
hosts = 2
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
"""

# Builds last a second in the hypervisor: a burst's floating IPs go on while they build.
BURST_CONF = CONF.replace("[fake]\n", "[fake]\nspawn_delay = 1.0\n")
ON_USER_PORTS = 3  # servers booted on a port the user made, with a floating IP on it
ON_NOVA_PORTS = 6  # servers whose floating IP goes on the port compute made (half with
#                    a blank volume)
BURST = 20


class Api:
    """The REST APIs with one admin token."""

    def __init__(self, up: UpProcess):
        self.url = up.url
        self.http = httpx.Client(timeout=60, headers={
            "X-Auth-Token": up.session().get_token()})

    def call(self, method, path, body=None, ok=(200, 201, 202, 204), headers=None):
        r = self.http.request(method, self.url + path, json=body, headers=headers)
        assert r.status_code in ok, (method, path, r.status_code, r.text)
        return r.json() if r.content else None

    def network(self, name, cidr, external=False) -> str:
        net = self.call("POST", "/network/v2.0/networks", {"network": {
            "name": name, "router:external": external}})["network"]["id"]
        subnet = self.call("POST", "/network/v2.0/subnets", {"subnet": {
            "network_id": net, "ip_version": 4, "cidr": cidr}})["subnet"]["id"]
        return net, subnet

    def ports(self, server_id) -> list[dict]:
        return self.call("GET", f"/network/v2.0/ports?device_id={server_id}")["ports"]

    def floating_ip(self, external, port_id) -> dict:
        return self.call("POST", "/network/v2.0/floatingips", {"floatingip": {
            "floating_network_id": external, "port_id": port_id}})["floatingip"]

    def servers(self) -> dict:
        return {s["id"]: s for s in self.call("GET", "/compute/v2.1/servers/detail")["servers"]}

    def boot(self, name, image_id, network) -> str:
        """A server named vol-* gets a blank volume (delete_on_termination)."""
        server = {"name": name, "imageRef": image_id, "flavorRef": "42",
                  "networks": [network]}
        if name.startswith("vol-"):
            server["block_device_mapping_v2"] = [
                {"source_type": "image", "destination_type": "local", "uuid": image_id,
                 "boot_index": 0},
                {"source_type": "blank", "destination_type": "volume", "volume_size": 1,
                 "delete_on_termination": True, "boot_index": -1}]
        return self.call("POST", "/compute/v2.1/servers", {"server": server})["server"]["id"]

    def volume(self, **body) -> str:
        return self.call("POST", "/volume/v3/volumes", {"volume": body},
                         headers=VOLUME_API)["volume"]["id"]

    def volumes(self) -> dict:
        return {v["id"]: v for v in self.call("GET", "/volume/v3/volumes/detail",
                                              headers=VOLUME_API)["volumes"]}

    def attach(self, volume_id, server_id, connector=None) -> None:
        body = {"volume_uuid": volume_id, "instance_uuid": server_id}
        if connector:
            body["connector"] = connector
        self.call("POST", "/volume/v3/attachments", {"attachment": body},
                  headers=VOLUME_API)


def wait_for(what, check, bound: float, detail=lambda: ""):
    deadline = time.monotonic() + bound
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"{what}: not after {bound}s {detail()}"
        time.sleep(0.1)


def unsettled(api: Api) -> list:
    return [(v["id"], v["status"]) for v in api.volumes().values()
            if v["status"] in UNSETTLED]


def cloud_with_networks(api: Api) -> dict:
    """An external network with a router to a private one, and an image."""
    external, _ = api.network("public", "172.24.0.0/24", external=True)
    internal, subnet = api.network("private", "10.77.0.0/24")
    router = api.call("POST", "/network/v2.0/routers", {"router": {
        "name": "r", "external_gateway_info": {"network_id": external}}})["router"]["id"]
    api.call("PUT", f"/network/v2.0/routers/{router}/add_router_interface",
             {"subnet_id": subnet})
    image = api.call("POST", "/image/v2/images", {
        "name": "fip", "disk_format": "raw", "container_format": "bare",
        "visibility": "public"})["id"]
    api.http.put(api.url + f"/image/v2/images/{image}/file", content=b"x" * 64,
                 headers={"Content-Type": "application/octet-stream"})
    return {"external": external, "internal": internal, "image": image}


def kill(up: UpProcess) -> None:
    """SIGKILL the main process; its children (with --workers) go with it."""
    old_children = child_pids(up.proc.pid)
    if up.proc.poll() is None:
        up.proc.send_signal(signal.SIGKILL)
    up.proc.wait(10)
    up.stop()
    wait_for("the old processes gone", lambda: not alive_pids(old_children), 20)


def builds_held_then_killed(up: UpProcess, api: Api) -> dict:
    """Boot the servers with every build held in spawning, put the floating IPs and the
    volumes a kill can leave in place, then kill. Returns what the checks after the
    restart need."""
    cloud = cloud_with_networks(api)
    external, internal, image = cloud["external"], cloud["internal"], cloud["image"]
    running = api.boot("running", image, {"uuid": internal})
    wait_for("running", lambda: api.servers()[running]["status"] == "ACTIVE", 30)
    count = ON_USER_PORTS + ON_NOVA_PORTS
    api.call("POST", "/pocketstack/v1/faults", {"fault": {
        "operation": "spawn", "action": "hang", "times": count, "hang_seconds": 600}})
    api.call("POST", "/pocketstack/v1/faults", {"fault": {
        "operation": "attach_volume", "action": "hang", "times": 1, "hang_seconds": 600}})
    time.sleep(1.0)  # each process re-reads fault rules after 0.5 s (control/faults.py)

    fips = {}  # floating IP id -> (server id, port id)
    for i in range(ON_USER_PORTS):
        port = api.call("POST", "/network/v2.0/ports", {"port": {
            "network_id": internal, "name": f"own-{i}"}})["port"]["id"]
        fip = api.floating_ip(external, port)
        fips[fip["id"]] = (api.boot(f"own-{i}", image, {"port": port}), port)
    made = [api.boot(f"vol-{i}" if i % 2 == 0 else f"made-{i}", image, {"uuid": internal})
            for i in range(ON_NOVA_PORTS)]

    wait_for("every build held in spawning", lambda: sum(
        s.get("OS-EXT-STS:task_state") == "spawning" for s in api.servers().values())
        == count, 60, detail=lambda: [s.get("OS-EXT-STS:task_state")
                                      for s in api.servers().values()])
    for server_id in made:  # the user's floating IP on the port compute made
        [port] = api.ports(server_id)
        fip = api.floating_ip(external, port["id"])
        fips[fip["id"]] = (server_id, port["id"])
    # What a kill between the volume service's answer and the build's record leaves: a
    # volume made for the server and attached to it, its id never written down.
    lost = api.volume(size=1, name="made-for-build", metadata={"created_for_server": made[0]})
    wait_for("lost volume available",
             lambda: api.volumes()[lost]["status"] == "available", 30)
    api.attach(lost, made[0], connector={"host": "cmp-1", "mountpoint": "/dev/vdc"})
    # What a kill between a boot's reservation and its server row leaves: a volume
    # reserved for a server that never existed.
    orphan = api.volume(size=1, name="reserved-for-nobody")
    wait_for("orphan available", lambda: api.volumes()[orphan]["status"] == "available", 30)
    api.attach(orphan, str(uuid.uuid4()))
    # What a kill during an attach to a running server leaves: the volume reserved and
    # connected by the volume service, the guest never got it (the attach call hangs in
    # the hypervisor until the kill).
    cut_short = api.volume(size=1, name="attach-cut-short")
    wait_for("cut_short available",
             lambda: api.volumes()[cut_short]["status"] == "available", 30)

    def attach():
        try:
            api.http.post(api.url + f"/compute/v2.1/servers/{running}/os-volume_attachments",
                          json={"volumeAttachment": {"volumeId": cut_short}})
        except httpx.HTTPError:
            pass  # cut off by the kill
    threading.Thread(target=attach, daemon=True).start()
    wait_for("the attach in the hypervisor",
             lambda: api.volumes()[cut_short]["status"] == "attaching", 30)
    assert {api.volumes()[lost]["status"], api.volumes()[orphan]["status"]} == {
        "attaching", "reserved"}
    # A floating IP put on the running server's port just before the kill: the
    # network-changed event that tells compute is lost with the process (with --workers,
    # made certain: the process of its host is stopped before and killed after).
    [port] = api.ports(running)
    host = api.servers()[running]["OS-EXT-SRV-ATTR:host"]
    stopped = [p for p in child_pids(up.proc.pid)
               if f"--name compute-{host.rsplit('-', 1)[-1]} " in cmdline_of(p)]
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    fip = api.floating_ip(external, port["id"])
    fips[fip["id"]] = (running, port["id"])
    for pid in stopped:
        os.kill(pid, signal.SIGKILL)
    kill(up)
    return {"fips": fips, "servers": [s for s, _ in fips.values()],
            "lost": lost, "orphan": orphan, "cut_short": cut_short, "running": running}


def burst_then_killed(up: UpProcess, api: Api) -> dict:
    """A burst of boots on the private network (every third with a blank volume); beside
    it the user puts a floating IP on each server's port as soon as compute made it; the
    kill comes once half of them have one."""
    cloud = cloud_with_networks(api)
    external, internal, image = cloud["external"], cloud["internal"], cloud["image"]
    orphan = api.volume(size=1, name="reserved-for-nobody")
    wait_for("orphan available", lambda: api.volumes()[orphan]["status"] == "available", 30)
    api.attach(orphan, str(uuid.uuid4()))
    accepted, fips, building = [], {}, []
    booting = threading.Event()

    def boot(i):
        try:
            accepted.append(api.boot(f"vol-{i}" if i % 3 == 0 else f"srv-{i}", image,
                                     {"uuid": internal}))
        except (httpx.HTTPError, AssertionError):
            pass  # cut off by the kill

    def associate():
        """Floating IPs onto the servers' ports as they appear; the kill comes at half of
        them, or sooner if the builds are running out (a loaded machine associates
        slowly), so that it always meets builds in flight."""
        seen = set()
        while booting.is_set():
            try:
                ports = api.call("GET", f"/network/v2.0/ports?network_id={internal}"
                                        "&device_owner=compute:nova")["ports"]
            except (httpx.HTTPError, AssertionError):
                return  # the kill came from elsewhere
            for port in ports:
                if port["id"] in seen:
                    continue
                seen.add(port["id"])
                try:
                    fip = api.floating_ip(external, port["id"])
                except AssertionError:
                    continue  # this port went meanwhile (a build retried): the next one
                except httpx.HTTPError:
                    return
                fips[fip["id"]] = (port["device_id"], port["id"])
                try:
                    now = [i for i, srv in api.servers().items() if srv["status"] == "BUILD"]
                except (httpx.HTTPError, AssertionError):
                    return
                if len(fips) >= BURST // 2 or (len(now) <= 3 and len(accepted) >= BURST // 2):
                    building.extend(now)
                    up.proc.send_signal(signal.SIGKILL)
                    return
            time.sleep(0.02)

    booting.set()
    watcher = threading.Thread(target=associate, daemon=True)
    watcher.start()
    threads = [threading.Thread(target=boot, args=(i,), daemon=True) for i in range(BURST)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    watcher.join(30)
    booting.clear()
    print(f"{len(accepted)} boots accepted, {len(fips)} floating IPs associated, "
          f"{len(building)} servers building at the kill")
    assert building, "the kill met no build"
    kill(up)
    return {"fips": fips, "servers": accepted, "orphan": orphan}


def watch_reaped(api: Api, volume_id: str, restarted: float, bound: float):
    """Poll in the background from the restart on; returns a function that gives the
    seconds after the restart at which ``volume_id`` was available (None: not within
    ``bound``)."""
    seen = []

    def poll():
        while time.monotonic() - restarted < bound:
            try:
                if api.volumes()[volume_id]["status"] == "available":
                    seen.append(time.monotonic() - restarted)
                    return
            except (httpx.HTTPError, AssertionError):
                pass
            time.sleep(0.1)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()

    def result():
        thread.join()
        return seen[0] if seen else None
    return result


def after_restart(api: Api, held: dict, restarted: float) -> None:
    """Every server ACTIVE, every association intact and shown, every volume settled
    (the orphaned reservation reaped within REAPED_WITHIN), the servers' volumes deleted
    with them."""
    orphan, cut_short = held["orphan"], held.get("cut_short")
    reaped = watch_reaped(api, orphan, restarted, 60)
    given_back = watch_reaped(api, cut_short, restarted, 60) if cut_short else None

    def settled():
        servers = api.servers()
        return servers if all(s["status"] in ("ACTIVE", "ERROR") for s in servers.values()) \
            and all(i in servers for i in held["servers"]) else None
    servers = wait_for("servers settled", settled, 60,
                       detail=lambda: {i: s["status"] for i, s in api.servers().items()})
    print(f"{len(servers)} servers settled {time.monotonic() - restarted:.1f}s after the "
          f"restart")
    assert all(s["status"] == "ACTIVE" for s in servers.values()), \
        {i: (s["status"], s.get("fault")) for i, s in servers.items()}

    lost_fips = []
    for fip_id, (server_id, port_id) in held["fips"].items():
        fip = api.call("GET", f"/network/v2.0/floatingips/{fip_id}")["floatingip"]
        ports = {p["id"] for p in api.ports(server_id)}
        shown = [a["addr"] for net in servers[server_id]["addresses"].values() for a in net
                 if a.get("OS-EXT-IPS:type") == "floating"]
        if (fip["port_id"] != port_id or ports != {port_id}
                or shown != [fip["floating_ip_address"]]):
            lost_fips.append((server_id, port_id, fip["port_id"], sorted(ports), shown))
    assert not lost_fips, f"{len(lost_fips)} of {len(held['fips'])} associations lost: " \
                          f"{lost_fips}"

    wait_for("volumes settled", lambda: not unsettled(api), 15, detail=lambda: unsettled(api))
    print(f"volumes settled {time.monotonic() - restarted:.1f}s after the restart")
    volumes = api.volumes()
    assert held.get("lost") not in volumes, volumes.get(held.get("lost"))
    blank = {v["id"]: v for v in volumes.values() if v["name"].endswith("-blank-vol")}
    assert all(v["status"] == "in-use" for v in blank.values()), blank
    assert sorted(a["server_id"] for v in blank.values() for a in v["attachments"]) == \
        sorted(i for i, s in servers.items() if s["name"].startswith("vol-")), blank
    took = reaped()
    print(f"orphaned reservation reaped {took}s after the restart")
    assert took is not None and took <= REAPED_WITHIN, took
    if cut_short:
        took = given_back()
        print(f"the reservation of the attach cut short given back {took}s after the "
              "restart")
        assert took is not None and took <= REAPED_WITHIN, took
        assert servers[held["running"]]["os-extended-volumes:volumes_attached"] == []
    kept = {orphan, cut_short} - {None}

    for server_id in servers:
        api.call("DELETE", f"/compute/v2.1/servers/{server_id}")
    wait_for("servers deleted", lambda: not api.servers(), 60)
    # The blank volumes were delete_on_termination: gone, not just freed.
    wait_for("the servers' volumes deleted", lambda: set(api.volumes()) == kept, 30,
             detail=lambda: [(v["name"], v["status"]) for v in api.volumes().values()])


@pytest.mark.parametrize("args", [(), ("--workers", "2")], ids=["all-in-one", "workers"])
def test_killed_while_servers_with_floating_ips_are_held_building(root, args):
    """Every build held in spawning: with --workers the main process is killed, its
    children (the API worker, one process per compute host) go with it."""
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=CONF, args=args).start(timeout=120)
    try:
        held = builds_held_then_killed(up, Api(up))
        up = UpProcess(data_dir, conf=CONF, port=up.port, args=args).start(timeout=120)
        after_restart(Api(up), held, time.monotonic())
    finally:
        up.stop()


@pytest.mark.parametrize("args", [(), ("--workers", "2")], ids=["all-in-one", "workers"])
def test_killed_mid_burst_of_boots_getting_floating_ips(root, args):
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=BURST_CONF, args=args).start(timeout=120)
    try:
        held = burst_then_killed(up, Api(up))
        up = UpProcess(data_dir, conf=BURST_CONF, port=up.port, args=args).start(timeout=120)
        after_restart(Api(up), held, time.monotonic())
    finally:
        up.stop()
