"""Compute + volume benchmark (issue 8's compute-side targets), on a fresh all-in-one cloud
in a child process (simulated hypervisor, file volume backend):

    .venv/bin/python bench/volume_compute_bench.py [--cycles 50] [--boots 15] [--record]

* attach + detach cycle through the compute API (POST then DELETE
  /servers/{id}/os-volume_attachments: both return once the volume is in-use / available
  again): median and p95 [target median ≤ 100 ms];
* boot from volume (image → new 1 GB volume, delete_on_termination) POST→ACTIVE, next to
  a boot from the same image in the same run, interleaved: medians.

The client runs in this process, the cloud in its own; both share the machine's CPUs, so
the load average is printed (and recorded) with the figures. Every loop is bounded in
count and in time.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import boot  # noqa: E402 - the local cloud and its admin token, as bench/boot.py starts it

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "compute_volumes.md")


class Cloud:
    def __init__(self, url: str):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        s = session.Session(auth=v3.Password(
            auth_url=url + "/identity", username="admin", password="bench",
            project_name="admin", user_domain_id="default", project_domain_id="default"))
        self.project = s.get_project_id()
        self.http = requests.Session()
        self.http.headers.update({"X-Auth-Token": s.get_token(),
                                  "Content-Type": "application/json"})
        self.compute = url + "/compute/v2.1"
        self.volume = url + f"/volume/v3/{self.project}"
        self.cv = {"OpenStack-API-Version": "compute 2.79"}
        self.vv = {"OpenStack-API-Version": "volume 3.60"}
        self.http.put(self.compute + f"/os-quota-sets/{self.project}", headers=self.cv,
                      json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}})
        self.http.put(self.volume + f"/os-quota-sets/{self.project}", headers=self.vv,
                      json={"quota_set": {"volumes": -1, "gigabytes": -1}})
        image = self.http.post(url + "/image/v2/images", json={
            "name": "cirros-raw", "disk_format": "raw", "container_format": "bare"}).json()
        self.http.put(url + f"/image/v2/images/{image['id']}/file", data=b"\0" * 65536,
                      headers={"Content-Type": "application/octet-stream"})
        self.image = image["id"]

    def server_status(self, sid: str) -> str:
        r = self.http.get(self.compute + f"/servers/{sid}", headers=self.cv)
        return r.json()["server"]["status"] if r.status_code == 200 else "GONE"

    def wait_server(self, sid: str, wanted: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        status = self.server_status(sid)
        while status not in (wanted, "ERROR") and time.monotonic() < deadline:
            time.sleep(0.002)
            status = self.server_status(sid)
        return status

    def boot(self, bfv: bool) -> tuple[str, float]:
        server = {"name": "bench", "flavorRef": "42", "networks": "none"}
        if bfv:
            server["block_device_mapping_v2"] = [{
                "source_type": "image", "uuid": self.image, "destination_type": "volume",
                "volume_size": 1, "boot_index": 0, "delete_on_termination": True}]
        else:
            server["imageRef"] = self.image
        t0 = time.perf_counter()
        r = self.http.post(self.compute + "/servers", headers=self.cv,
                           json={"server": server})
        r.raise_for_status()
        sid = r.json()["server"]["id"]
        status = self.wait_server(sid, "ACTIVE")
        took = (time.perf_counter() - t0) * 1000
        if status != "ACTIVE":
            raise SystemExit(f"server {sid} ended {status}")
        return sid, took

    def volume_create(self) -> str:
        r = self.http.post(self.volume + "/volumes", headers=self.vv,
                           json={"volume": {"size": 1, "name": "bench-data"}})
        r.raise_for_status()
        vid = r.json()["volume"]["id"]
        deadline = time.monotonic() + 30
        while self.http.get(self.volume + f"/volumes/{vid}", headers=self.vv).json()[
                "volume"]["status"] != "available":
            if time.monotonic() > deadline:
                raise SystemExit(f"volume {vid} never became available")
            time.sleep(0.01)
        return vid


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def run(url: str, cycles: int, boots: int) -> dict:
    c = Cloud(url)
    load_before = os.getloadavg()
    # attach + detach cycles on one server
    sid, _ = c.boot(bfv=False)
    vid = c.volume_create()
    cycle_ms = []
    base = c.compute + f"/servers/{sid}/os-volume_attachments"
    for _ in range(cycles):
        t0 = time.perf_counter()
        r = c.http.post(base, headers=c.cv, json={"volumeAttachment": {"volumeId": vid}})
        r.raise_for_status()
        r = c.http.delete(base + f"/{vid}", headers=c.cv)
        r.raise_for_status()
        cycle_ms.append((time.perf_counter() - t0) * 1000)
    c.http.delete(c.compute + f"/servers/{sid}", headers=c.cv)
    # boots, interleaved so both kinds see the same load
    image_ms, bfv_ms, made = [], [], []
    for _ in range(boots):
        for bfv, out in ((False, image_ms), (True, bfv_ms)):
            sid, took = c.boot(bfv)
            out.append(took)
            made.append(sid)
    for sid in made:
        c.http.delete(c.compute + f"/servers/{sid}", headers=c.cv)
    for sid in made:
        c.wait_server(sid, "GONE", timeout=30)
    return {"cycles": len(cycle_ms), "cycle_p50": statistics.median(cycle_ms),
            "cycle_p95": _p95(cycle_ms), "boots": boots,
            "image_p50": statistics.median(image_ms), "bfv_p50": statistics.median(bfv_ms),
            "bfv_p95": _p95(bfv_ms), "load_before": load_before,
            "load_after": os.getloadavg()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cycles", type=int, default=50)
    p.add_argument("--boots", type=int, default=15)
    p.add_argument("--record", action="store_true", help=f"append the figures to {RESULTS}")
    a = p.parse_args()
    proc, url = boot.start_local()
    try:
        out = run(url, a.cycles, a.boots)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except Exception:  # noqa: BLE001 - a cloud that does not stop is killed
            proc.kill()
    lines = [
        f"attach + detach cycle over {out['cycles']}: median {out['cycle_p50']:.1f} ms, "
        f"p95 {out['cycle_p95']:.1f} ms   [target median ≤ 100 ms]",
        f"boot POST→ACTIVE over {out['boots']} each: from image median "
        f"{out['image_p50']:.1f} ms, from a new 1 GB volume median {out['bfv_p50']:.1f} ms "
        f"(p95 {out['bfv_p95']:.1f} ms)",
        f"load average before {out['load_before'][0]:.2f}, after "
        f"{out['load_after'][0]:.2f} ({os.cpu_count()} CPUs)"]
    print("\n".join(lines))
    if a.record:
        with open(RESULTS, "a") as f:
            f.write(f"\n## {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC\n\n"
                    + "".join(f"* {line}\n" for line in lines))


if __name__ == "__main__":
    main()
